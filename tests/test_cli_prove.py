"""`prove` and `verify-proof`: an event's inclusion proof survives a round trip,
and any change to it is caught."""

from __future__ import annotations

from pathlib import Path

import pytest

from bundler.cli import main

REPO = Path(__file__).resolve().parent.parent
BUNDLE = REPO / "example_bundles" / "unsupported-gain"
KEY = REPO / "example_bundles" / "demo-key.pub"


def _prove(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    code = main(["prove", str(BUNDLE), *args])
    return code, capsys.readouterr().out


def test_proof_round_trip_by_id_and_by_seq(tmp_path: Path,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    code, by_id = _prove(capsys, "--id", "claim:gain-v1")
    assert code == 0 and by_id.startswith("c2sp.org/tlog-proof@v1\nextra ")
    code, by_seq = _prove(capsys, "--seq", "13")
    assert code == 0 and by_seq == by_id
    proof = tmp_path / "p.tlog-proof"
    proof.write_text(by_id, encoding="utf-8")
    assert main(["verify-proof", str(proof), "--trust-key", str(KEY)]) == 0
    out = capsys.readouterr().out
    assert out.startswith("VALID: leaf 13 is included in ")
    assert '"id":"claim:gain-v1"' in out


@pytest.mark.parametrize("mutate", ["index", "hash", "extra"])
def test_tampered_proof_is_invalid(mutate: str, tmp_path: Path,
                                   capsys: pytest.CaptureFixture[str]) -> None:
    _, text = _prove(capsys, "--id", "claim:gain-v1")
    lines = text.split("\n")
    if mutate == "index":
        lines[2] = "index 12"
    elif mutate == "hash":
        h = lines[3]
        lines[3] = ("B" if h[0] != "B" else "C") + h[1:]
    else:
        lines[1] = lines[1].replace("4.2", "1.5") if "4.2" in lines[1] else lines[1][:-4] + "AAA="
    proof = tmp_path / "p.tlog-proof"
    proof.write_text("\n".join(lines), encoding="utf-8")
    assert main(["verify-proof", str(proof), "--trust-key", str(KEY)]) == 1
    assert capsys.readouterr().out.startswith("INVALID:")


def test_unknown_event_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["prove", str(BUNDLE), "--seq", "999"]) == 2
    assert "no valid event with seq 999" in capsys.readouterr().err
    assert main(["prove", str(BUNDLE), "--id", "nope"]) == 2
