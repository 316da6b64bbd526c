"""Bundle text printed to a terminal is shown, never acted on (:mod:`bundler.shown`).

A hostile title, claim text or binding value must not reach the reviewer's
terminal as escape sequences (erase the verdict line, retitle the window), as
a newline (forge a line such as a pinned verdict), or as bidi overrides.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from fixtures.builders import START, StepClock, make_signer

from bundler.author import BundleWriter
from bundler.cli import main
from bundler.query.format import to_table
from bundler.query.model import QueryResult, QueryRow
from bundler.shown import shown

#: Every kind of character that acts on a terminal or reorders text.
HOSTILE = ("\x1b[1A\x1b[2K\x1b]0;owned\x07 \n  INVALID (a forged line)\r\t"
           "\u202egnp.exe\u2066\u200b\x9b31m\x7f\x00\ufeff")
ACTIVE = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f\u061c\u200b-\u200f\u2028-\u202e"
                    "\u2060-\u2069\ufeff]")


def test_each_active_character_is_escaped_and_the_rest_kept() -> None:
    assert shown("a\x1b[2Jb") == "a\\x1b[2Jb"
    assert shown("x\ny\r\tz") == "x\\ny\\r\\tz"
    assert shown("\u202e\u2066\u200b\ufeff\x9b\x7f") == "\\u202e\\u2066\\u200b\\ufeff\\x9b\\x7f"
    assert shown("café 中文 🙂 — “quoted”") == "café 中文 🙂 — “quoted”"
    assert shown("a\nb\x1b", lines=True) == "a\nb\\x1b"
    assert not ACTIVE.search(shown(HOSTILE)) and "\n" not in shown(HOSTILE)


def _hostile_bundle(path: Path) -> tuple[Path, str]:
    signer = make_signer()
    with BundleWriter.create(path, title="Study " + HOSTILE, signer=signer, description=HOSTILE,
                             origin="test.invalid/shown", created=START, clock=StepClock(),
                             checkpoint_every=4, generator="tests") as w:
        w.append("run", id="run-1", stream="agent-1", title=HOSTILE, objective=HOSTILE)
        w.append("stream", id="agent-1", run="run-1", kind="agent", name=HOSTILE)
        w.append("claim", id="claim-1", run="run-1", stream="agent-1", name=HOSTILE,
                 text=HOSTILE, evidence=[], final=True)
    return path, signer.verifier().to_text()


def test_validate_prints_a_hostile_title_on_one_line(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bundle, key = _hostile_bundle(tmp_path / "b")
    main(["validate", str(bundle), "--trust-key", key])
    out = capsys.readouterr().out
    assert not ACTIVE.search(out)
    lines = out.split("\n")
    assert lines[0].startswith(f"{bundle}: Study \\x1b[1A")
    assert lines[1] == "  VALID, signed by a pinned key"
    assert not any(line.startswith("  INVALID") for line in lines)


def test_a_query_table_shows_hostile_cells_on_their_row() -> None:
    result = QueryResult("demo", ("claim", "text"), (
        QueryRow({"claim": "claim-1", "text": HOSTILE}, "why", (1,)),
        QueryRow({"claim": "claim-2", "text": "plain"}, "why", (2,))))
    out = to_table(result)
    assert not ACTIVE.search(out)
    assert len(out.split("\n")) == 6     # header, rule, two rows, count, final newline


def test_verify_proof_prints_the_proven_line_escaped(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The proof's extra data (base64 in the file) is the event line: canonical JSON
    escapes C0 controls, but not bidi overrides or C1 controls, which were printed
    as they are."""
    bundle, key = _hostile_bundle(tmp_path / "b")
    assert main(["prove", str(bundle), "--id", "claim-1"]) == 0
    proof = tmp_path / "p.tlog-proof"
    proof.write_text(capsys.readouterr().out, encoding="utf-8")
    assert main(["verify-proof", str(proof), "--trust-key", key]) == 0
    out = capsys.readouterr().out
    assert out.startswith("VALID: leaf 2 is included in test.invalid/shown")
    assert "\\u202egnp.exe" in out and not ACTIVE.search(out)
