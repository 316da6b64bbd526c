"""The synthetic bundle generator: determinism, validity, mix, exact size, bounded memory."""

from __future__ import annotations

import hashlib
import json
import os
import resource
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from bundler.cli import main
from bundler.errors import UsageError
from bundler.model.events import EVENT_MODELS
from bundler.synth import generate, synthetic_signer
from bundler.verify import VerifyOptions, verify_bundle
from bundler.verify.result import PayloadState, Trust


def _files(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes()
            for p in sorted(root.rglob("*")) if p.is_file()}


def _events(root: Path) -> list[dict[str, object]]:
    with open(root / "events.jsonl", "rb") as fh:
        return [json.loads(line) for line in fh]


def _pinned(seed: int) -> VerifyOptions:
    return VerifyOptions(trusted_keys=(synthetic_signer(seed).verifier().to_text(),),
                         keep_events=False)


@pytest.fixture(scope="module")
def bundle_5k(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return generate(tmp_path_factory.mktemp("synth") / "b5k", events=5_000, seed=11)


def test_same_seed_gives_identical_bytes(tmp_path: Path) -> None:
    """Also across processes with different string hash seeds (no set order leaks)."""
    a = generate(tmp_path / "a", events=2_000, seed=5)
    b = tmp_path / "b"
    subprocess.run([sys.executable, "-m", "bundler", "generate", str(b), "--events", "2000",
                    "--seed", "5"], check=True, capture_output=True,
                   env={**os.environ, "PYTHONHASHSEED": "12345"})
    fa, fb = _files(a), _files(b)
    assert sorted(fa) == sorted(fb)
    assert [k for k in fa if fa[k] != fb[k]] == []
    assert any(k.startswith("payloads/") for k in fa)
    assert len([k for k in fa if k.startswith("checkpoints/")]) == 2


def test_different_seed_gives_different_bundle(tmp_path: Path) -> None:
    a = generate(tmp_path / "a", events=2_000, seed=5)
    b = generate(tmp_path / "b", events=2_000, seed=6)
    assert (a / "events.jsonl").read_bytes() != (b / "events.jsonl").read_bytes()
    assert (a / "manifest.json").read_bytes() != (b / "manifest.json").read_bytes()
    assert json.loads((a / "bundle.json").read_bytes())["keys"] != \
        json.loads((b / "bundle.json").read_bytes())["keys"]


def test_5k_bundle_validates_without_any_diagnostic_and_pinned(bundle_5k: Path) -> None:
    report = verify_bundle(bundle_5k, _pinned(11))
    assert [(d.code, str(d.location), d.message) for d in report.diagnostics] == []
    assert report.valid
    assert report.trust is Trust.PINNED
    assert report.bundle.line_count == 5_000
    assert report.signed_prefix == 5_000
    states = Counter(s.state for s in report.bundle.payloads.values())
    assert states[PayloadState.REDACTED] >= 1
    assert set(states) <= {PayloadState.VERIFIED, PayloadState.REDACTED}


def test_without_pin_the_only_finding_is_bundle_only_trust(bundle_5k: Path) -> None:
    report = verify_bundle(bundle_5k, VerifyOptions(keep_events=False))
    assert [d.code for d in report.diagnostics] == ["RB307"]
    assert report.trust is Trust.BUNDLE_ONLY


def test_event_mix_covers_every_type_in_realistic_shares(bundle_5k: Path) -> None:
    events = _events(bundle_5k)
    types = Counter(str(e["type"]) for e in events)
    assert set(types) == set(EVENT_MODELS)
    assert 0.02 <= types["claim"] / len(events) <= 0.05
    finals = [e for e in events if e["type"] == "claim" and e.get("final")]
    assert finals
    assert all(e.get("bindings") or e.get("claim_status") == "unsupported" for e in finals)
    verdicts = {e.get("verdict") for e in events if e["type"] == "fitness"}
    assert {"supported", "unsupported", "contradicted", "needs_human_review"} <= verdicts
    ops = {e["op"] for e in events if e["type"] == "operator"}
    assert {"mutate", "crossover", "refine", "extract", "verify", "select",
            "plan_update"} <= ops
    assert any(e["type"] == "operator" and e.get("steering") for e in events)
    assert {e["action"] for e in events if e["type"] == "archive"} == {"add", "remove"}
    edges = Counter(e.get("provenance", "recorded") for e in events if e["type"] == "edge")
    assert edges["recorded"] > 0
    assert edges["inferred"] > 0
    kinds = {e["kind"] for e in events if e["type"] == "individual"}
    assert len(kinds) >= 8
    streams = {e["kind"] for e in events if e["type"] == "stream"}
    assert {"agent", "tool", "evaluator", "human"} <= streams


def test_payloads_vary_in_format_and_size_and_are_deduplicated(bundle_5k: Path) -> None:
    events = _events(bundle_5k)
    refs = [e["payload"] for e in events if e["type"] == "individual"]
    digests = Counter(str(r["digest"]) for r in refs)  # type: ignore[index]
    assert max(digests.values()) > 1  # identical bytes are shared, not stored twice
    manifest = json.loads((bundle_5k / "manifest.json").read_bytes())["payloads"]
    assert len(manifest) == len(digests)
    media = {str(r["media_type"]) for r in refs}  # type: ignore[index]
    assert {"text/csv", "application/json", "text/markdown", "text/x-python"} <= media
    sizes = sorted(int(r["size"]) for r in refs)  # type: ignore[index]
    assert sizes[0] < 500
    assert sizes[-1] > 5_000


@pytest.mark.parametrize("n", [2, 3, 9, 10, 11, 137])
def test_exact_event_count_and_still_valid(tmp_path: Path, n: int) -> None:
    out = generate(tmp_path / "b", events=n, seed=2, checkpoint_every=4)
    assert len(_events(out)) == n
    report = verify_bundle(out, _pinned(2))
    assert [d.code for d in report.diagnostics] == []
    assert report.signed_prefix == n


def test_large_variant_has_the_same_events_with_bigger_payloads(tmp_path: Path) -> None:
    small = _events(generate(tmp_path / "s", events=2_000, seed=4))
    large_dir = generate(tmp_path / "l", events=2_000, seed=4, payload_bytes="large")
    large = _events(large_dir)
    assert [(e["type"], e["id"]) for e in small] == [(e["type"], e["id"]) for e in large]
    big = [e["payload"]["size"] for e in large  # type: ignore[index]
           if e["type"] == "individual" and e["kind"] == "dataset"]
    assert big
    assert min(big) >= 1 << 20
    assert max(e["payload"]["size"] for e in small  # type: ignore[index]
               if e["type"] == "individual") < 1 << 20
    assert verify_bundle(large_dir, _pinned(4)).diagnostics == []


def test_signer_is_derived_from_the_seed() -> None:
    key = synthetic_signer(7)
    assert key.name == "synthetic"
    assert key.private_key == hashlib.sha256(b"review-bundler synthetic7").digest()
    assert synthetic_signer(7).verifier() == key.verifier()
    assert synthetic_signer(8).verifier() != key.verifier()


def test_bad_arguments_are_usage_errors(tmp_path: Path) -> None:
    with pytest.raises(UsageError):
        generate(tmp_path / "a", events=1)
    with pytest.raises(UsageError):
        generate(tmp_path / "b", events=5, payload_bytes="huge")  # type: ignore[arg-type]


def test_cli_prints_path_and_key_and_validates(tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "cli"
    assert main(["generate", str(out), "--events", "300", "--seed", "3",
                 "--checkpoint-every", "50"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines == [str(out), synthetic_signer(3).verifier().to_text()]
    assert len(list((out / "checkpoints").iterdir())) == 6
    assert main(["validate", str(out), "--strict", "--trust-key", lines[1]]) == 0


def test_cli_refuses_bad_input_without_traceback(tmp_path: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "x"
    out.mkdir()
    (out / "keep.txt").write_text("not a bundle", encoding="utf-8")
    assert main(["generate", str(out), "--events", "10"]) == 2
    assert main(["generate", str(tmp_path / "y"), "--events", "0"]) == 2
    assert main(["generate", str(tmp_path / "z"), "--events", "5",
                 "--checkpoint-every", "0"]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err
    assert err.count("review-bundler: error") == 3
    assert (out / "keep.txt").read_text(encoding="utf-8") == "not a bundle"


def _limit_address_space(limit: int) -> None:
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))


@pytest.mark.slow
def test_generation_runs_in_bounded_memory(tmp_path: Path) -> None:
    """100k events through the CLI under a 160 MiB address-space cap (RLIMIT_AS).

    Measured here: the CLI generates 100k events within a 100 MiB cap (VmPeak
    about 76 MiB when called as a library, 50 MiB of it just the imports);
    the same generator keeping every event model it appended dies with
    MemoryError under 160 MiB (it peaks at about 287 MiB).  Takes about 20 s
    on an idle 2-core machine.
    """
    limit = 160 << 20
    out = tmp_path / "big"
    proc = subprocess.run(
        [sys.executable, "-m", "bundler", "generate", str(out), "--events", "100000"],
        capture_output=True, text=True, timeout=300,
        preexec_fn=lambda: _limit_address_space(limit))
    assert proc.returncode == 0, proc.stderr[-2000:]
    with open(out / "events.jsonl", "rb") as fh:
        assert sum(1 for _ in fh) == 100_000
    assert proc.stdout.splitlines()[1] == synthetic_signer(0).verifier().to_text()
