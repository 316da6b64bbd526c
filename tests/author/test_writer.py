"""The append-only writer: integrity details, refusals, and crash behaviour.

Crash tests run the writer in a subprocess that ends with ``os._exit`` (no
``close()``, no finalisers, no flush beyond what the writer already did), so
what is on disk is exactly what a killed producer leaves behind.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from fixtures.builders import (
    START,
    StepClock,
    codes,
    make_signer,
    make_valid_bundle,
    read_lines,
    verify,
)

from bundler import layout
from bundler.author import BundleWriter
from bundler.errors import WriterError
from bundler.integrity.canonical import canonicalize
from bundler.integrity.merkle import leaf_hash
from bundler.verify import PayloadState, Trust

TESTS_DIR = Path(__file__).resolve().parents[1]
KEY = make_signer().verifier().to_text()


def _writer(path: Path, every: int = 4) -> BundleWriter:
    return BundleWriter.create(path, title="t", signer=make_signer(), origin="test.invalid/w",
                               created=START, checkpoint_every=every, clock=StepClock())


def _start(w: BundleWriter) -> None:
    w.append("run", id="run-1", stream="agent-1", title="t")
    w.append("stream", id="agent-1", run="run-1", kind="agent", name="a")


# ------------------------------------------------------------------ format
def test_lines_are_canonical_and_chained(tmp_path: Path) -> None:
    built = make_valid_bundle(tmp_path / "b")
    prev = layout.ZERO_HASH
    for seq, line in enumerate(read_lines(built.path)):
        obj = json.loads(line)
        assert canonicalize(obj) == line
        assert (obj["seq"], obj["prev"]) == (seq, prev)
        prev = leaf_hash(line).hex()


@pytest.mark.parametrize(("every", "sizes"), [(4, [4, 8, 12, 13]), (13, [13]), (1, list(
    range(1, 14))), (100, [13])])
def test_checkpoint_every_n_and_at_the_end(tmp_path: Path, every: int, sizes: list[int]) -> None:
    built = make_valid_bundle(tmp_path / "b", checkpoint_every=every)
    assert list(built.checkpoint_sizes) == sizes
    assert codes(verify(built.path, pin=built.verifier_key_text)) == set()


def test_output_is_deterministic(tmp_path: Path) -> None:
    a = make_valid_bundle(tmp_path / "a").path
    b = make_valid_bundle(tmp_path / "b").path
    files_a = sorted(p.relative_to(a) for p in a.rglob("*") if p.is_file())
    files_b = sorted(p.relative_to(b) for p in b.rglob("*") if p.is_file())
    assert files_a == files_b
    for rel in files_a:
        assert (a / rel).read_bytes() == (b / rel).read_bytes(), rel


def test_empty_bundle_still_gets_a_signed_checkpoint(tmp_path: Path) -> None:
    _writer(tmp_path / "e").close()
    assert sorted(p.name for p in (tmp_path / "e" / layout.CHECKPOINTS).iterdir()) == [
        "0000000000.note"]


# ---------------------------------------------------------------- refusals
def test_refuses_a_non_empty_folder(tmp_path: Path) -> None:
    (tmp_path / "x").mkdir()
    (tmp_path / "x" / "keep.txt").write_text("mine")
    with pytest.raises(WriterError, match="not empty"):
        _writer(tmp_path / "x")
    assert [p.name for p in (tmp_path / "x").iterdir()] == ["keep.txt"]


def test_refuses_bad_checkpoint_interval(tmp_path: Path) -> None:
    with pytest.raises(WriterError, match="checkpoint_every"):
        _writer(tmp_path / "x", every=0)


def test_refuses_unknown_type_duplicate_id_and_bad_fields(tmp_path: Path) -> None:
    with _writer(tmp_path / "w") as w:
        _start(w)
        with pytest.raises(WriterError, match="unknown event type"):
            w.append("telepathy", id="x", run="run-1", stream="agent-1")
        with pytest.raises(WriterError, match="duplicate object id 'agent-1'"):
            w.append("stream", id="agent-1", run="run-1", kind="agent", name="again")
        with pytest.raises(WriterError, match="invalid claim event"):
            w.append("claim", id="c", run="run-1", stream="agent-1", name="c", text="t",
                     confidence="high")
        assert w.size == 2  # nothing half-written
    assert codes(verify(tmp_path / "w", pin=KEY)) == set()


@pytest.mark.parametrize("number", [2**53, -(2**53), 10**30])
def test_refuses_a_number_outside_json_s_exact_integers(tmp_path: Path, number: int) -> None:
    """The schema takes any int, but a canonical line (JCS) only integers a double holds
    exactly: the writer says which event, as a WriterError, and writes nothing."""
    with _writer(tmp_path / "w") as w:
        _start(w)
        with pytest.raises(WriterError, match=r"invalid individual event 'a-1': .*safe integer"):
            w.append("individual", id="a-1", run="run-1", stream="agent-1", kind="dataset",
                     name="a", attributes={"n": number})
        assert w.size == 2
        w.append("individual", id="a-1", run="run-1", stream="agent-1", kind="dataset",
                 name="a", attributes={"n": 2**53 - 1})
    assert codes(verify(tmp_path / "w", pin=KEY)) == set()


def test_refuses_after_close(tmp_path: Path) -> None:
    w = _writer(tmp_path / "w")
    _start(w)
    w.close()
    w.close()  # idempotent
    with pytest.raises(WriterError, match="closed"):
        w.append("steering", id="s", run="run-1", stream="agent-1", command="x", issuer="me")
    with pytest.raises(WriterError, match="closed"):
        w.put_payload(b"x", "text/plain")


def test_redaction_refusals(tmp_path: Path) -> None:
    with _writer(tmp_path / "w") as w:
        _start(w)
        ref = w.put_payload(b"secret", "text/plain")
        w.append("individual", id="i", run="run-1", stream="agent-1", kind="report", name="i",
                 payload=ref.model_dump())
        with pytest.raises(WriterError, match="no payload"):
            w.redact("sha256:" + "0" * 64, reason="r", authority="a", run="run-1",
                     stream="agent-1")
        w.redact(ref.digest, reason="r", authority="a", run="run-1", stream="agent-1")
        with pytest.raises(WriterError, match="already redacted"):
            w.redact(ref.digest, reason="r", authority="a", run="run-1", stream="agent-1")
        with pytest.raises(WriterError, match="cannot be stored again"):
            w.put_payload(b"secret", "text/plain")
        with pytest.raises(WriterError, match="16 bytes"):
            w.put_payload(b"x", "text/plain", salt=b"short")
    report = verify(tmp_path / "w", pin=KEY)
    assert codes(report) == set()
    assert report.bundle.payloads[ref.digest].state is PayloadState.REDACTED


def test_reopen_appends_and_verifies(tmp_path: Path) -> None:
    built = make_valid_bundle(tmp_path / "b")
    with BundleWriter.open(built.path, signer=built.signer,
                           clock=StepClock("2026-05-02T00:00:00Z")) as w:
        assert (w.size, w.first_run) == (13, "run-1")
        w.append("steering", id="steer-late", run="run-1", stream="agent-1", command="stop",
                 issuer="reviewer")
    report = verify(built.path, pin=built.verifier_key_text)
    assert codes(report) == set()
    assert report.signed_prefix == 14


def test_reopen_with_an_undeclared_signer_is_refused(tmp_path: Path) -> None:
    built = make_valid_bundle(tmp_path / "b")
    with pytest.raises(WriterError, match="not one of the bundle's declared keys"):
        BundleWriter.open(built.path, signer=make_signer("someone else"))


# ------------------------------------------------------------------ crashes
_CRASH = textwrap.dedent("""
    import os, sys
    from pathlib import Path
    from fixtures.builders import START, StepClock, make_signer
    from bundler.author import BundleWriter

    path, mode = Path(sys.argv[1]), sys.argv[2]
    w = BundleWriter.create(path, title="crash", signer=make_signer(),
                            origin="test.invalid/crash", created=START, checkpoint_every=4,
                            clock=StepClock())
    w.append("run", id="run-1", stream="agent-1", title="t")
    w.append("stream", id="agent-1", run="run-1", kind="agent", name="a")
    early = w.put_payload(b"early bytes", "text/plain")
    w.append("individual", id="early", run="run-1", stream="agent-1", kind="report",
             name="early", payload=early.model_dump())
    w.append("steering", id="s-0", run="run-1", stream="agent-1", command="go", issuer="me")
    # the writer signed checkpoint 4 here
    w.append("steering", id="s-1", run="run-1", stream="agent-1", command="go", issuer="me")
    w.append("steering", id="s-2", run="run-1", stream="agent-1", command="go", issuer="me")
    if mode == "cut":
        with open(path / "events.jsonl", "ab") as fh:
            fh.write(b'{"command":"go","id":"s-3","issuer":"me","prev":"')
    elif mode == "late-payload":
        late = w.put_payload(b"late bytes", "text/plain")
        w.append("individual", id="late", run="run-1", stream="agent-1", kind="report",
                 name="late", payload=late.model_dump())
    elif mode == "mid-redaction":
        # redact() appends the record first, then deletes the bytes: die in between.
        w.append("redaction", id="red-1", target=early.digest, reason="privacy",
                 authority="dpo", run="run-1", stream="agent-1")
    os._exit(0)
""")


def _crash(tmp_path: Path, mode: str) -> Path:
    path = tmp_path / f"crash-{mode}"
    env = dict(os.environ, PYTHONPATH=str(TESTS_DIR))
    subprocess.run([sys.executable, "-c", _CRASH, str(path), mode], check=True, env=env,
                   timeout=60)
    return path


def test_writer_never_closed(tmp_path: Path) -> None:
    path = _crash(tmp_path, "plain")
    report = verify(path, pin=KEY)
    assert codes(report) == {"RB305"}  # the 2 events after checkpoint 4 are unsigned
    assert report.valid and report.trust is Trust.PINNED
    assert report.signed_prefix == 4
    assert [e.id for e in report.bundle.events][-1] == "s-2"
    assert len(report.bundle.leaf_hashes) // 32 == 6


def test_writer_killed_mid_line(tmp_path: Path) -> None:
    path = _crash(tmp_path, "cut")
    report = verify(path, pin=KEY)
    assert codes(report) == {"RB114", "RB305"}
    assert report.valid  # both are warnings: the crashed bundle verifies up to line 6
    assert [(d.location.line, d.location.seq) for d in report.diagnostics
            if d.code == "RB114"] == [(7, None)]
    assert report.signed_prefix == 4
    assert len(report.bundle.leaf_hashes) // 32 == 6  # every complete line, no more
    with pytest.raises(WriterError, match="partial line"):
        BundleWriter.open(path, signer=make_signer())


def test_writer_killed_between_redaction_record_and_deletion(tmp_path: Path) -> None:
    """The record comes first, so the crash leaves a loud *leaked*, not a silent gap."""
    path = _crash(tmp_path, "mid-redaction")
    report = verify(path, pin=KEY)
    assert codes(report) == {"RB402", "RB410", "RB305"}
    assert [p.state for p in report.bundle.payloads.values()] == [PayloadState.LEAKED]


def test_writer_killed_after_an_unsigned_payload(tmp_path: Path) -> None:
    """The manifest is only rewritten at checkpoints, so a payload stored after the
    last one is on disk and committed to, but not listed yet: a warning (RB413) about
    the unsigned tail, not an error, so the crashed bundle still verifies."""
    path = _crash(tmp_path, "late-payload")
    report = verify(path, pin=KEY)
    assert codes(report) == {"RB413", "RB305"}
    assert report.valid
    assert sorted(p.state.value for p in report.bundle.payloads.values()) == [
        "verified", "verified"]


def test_reopen_after_a_clean_crash_resumes_the_log(tmp_path: Path) -> None:
    path = _crash(tmp_path, "plain")
    with BundleWriter.open(path, signer=make_signer(),
                           clock=StepClock("2026-05-02T00:00:00Z")) as w:
        w.append("steering", id="s-after", run="run-1", stream="agent-1", command="go",
                 issuer="me")
    report = verify(path, pin=KEY)
    assert codes(report) == set()
    assert report.signed_prefix == 7


def test_incremental_manifest_bytes_equal_the_model_dump(tmp_path: Path) -> None:
    """The writer caches per-entry JSON; the file must equal a plain dump of the model."""
    import json as _json

    from bundler.model.metadata import Manifest

    signer = make_signer()
    with BundleWriter.create(tmp_path / "b", title="m", signer=signer, checkpoint_every=2,
                             origin="test/manifest", created="2026-01-01T00:00:00Z") as w:
        w.append("run", id="r", title="r", stream="s")
        w.append("stream", id="s", run="r", kind="agent", name="s")
        refs = [w.put_payload(f"payload {i} é".encode(), "text/plain", f"p{i}.txt")
                for i in range(5)]
        for i, ref in enumerate(refs):
            w.append("individual", id=f"i{i}", run="r", stream="s", kind="table", name="n",
                     payload=ref)
        w.redact(refs[2].digest, reason="r", authority="a", run="r", stream="s")
    text = (tmp_path / "b" / "manifest.json").read_text("utf-8")
    model = Manifest.model_validate_json(text)
    expected = _json.dumps(model.model_dump(mode="json"), indent=2, sort_keys=True,
                           ensure_ascii=False) + "\n"
    assert text == expected
    assert [e.state for e in model.payloads].count("redacted") == 1
