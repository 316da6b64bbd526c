"""Verification workers hash the manifest's payloads: the report does not change.

Once its part of the log is done, each worker hashes a share of the files the
manifest names (``payloads.hash_share``), and the main process looks them up
instead of hashing them itself.  Every payload state and finding must be the
same as when this process hashes everything.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path

import pytest
from fixtures.builders import (
    SECRET_BYTES,
    TABLE_BYTES,
    StepClock,
    make_signer,
    make_valid_bundle,
)

import bundler.verify.payloads as payloads
import bundler.verify.stream as stream
import bundler.verify.verifier as verifier
from bundler import layout
from bundler.author import BundleWriter
from bundler.diagnostics import DiagnosticSink
from bundler.load.source import open_bundle
from bundler.model.metadata import Manifest
from bundler.verify import VerifyOptions, verify_bundle


def _salted(path: Path, *, redact: bool = False) -> Path:
    with BundleWriter.create(path, title="salted", signer=make_signer(),
                             origin="test.invalid/salted", clock=StepClock()) as w:
        w.append("run", id="run-1", stream="agent-1", title="t")
        w.append("stream", id="agent-1", run="run-1", kind="agent", name="a")
        for i in range(6):
            ref = w.put_payload(b"yes %d" % i, "text/plain", salt=bytes(range(i, i + 16)))
            w.append("individual", id=f"answer-{i}", run="run-1", stream="agent-1",
                     kind="report", name=f"answer {i}", payload=ref.model_dump())
        plain = w.put_payload(b"plain bytes", "text/plain")
        w.append("individual", id="plain", run="run-1", stream="agent-1", kind="report",
                 name="plain", payload=plain.model_dump())
        if redact:
            w.redact(ref.digest, reason="guessable", authority="dpo", run="run-1",
                     stream="agent-1")
    return path


def _corrupt(p: Path) -> None:
    built = make_valid_bundle(p)
    built.payload_file("table").write_bytes(TABLE_BYTES.replace(b"0.93", b"0.39"))


def _missing(p: Path) -> None:
    make_valid_bundle(p).payload_file("dataset").unlink()


def _leaked(p: Path) -> None:
    built = make_valid_bundle(p)
    (p / layout.payload_path(built.redacted_digest)).write_bytes(SECRET_BYTES)


def _salted_entries(p: Path) -> list[dict[str, object]]:
    return [e for e in json.loads((p / layout.MANIFEST).read_text())["payloads"]
            if e.get("salted")]


def _salt_lost(p: Path) -> None:
    _salted(p)
    for entry in _salted_entries(p)[:3]:
        (p / f"{entry['path']}.salt").unlink()


def _salt_too_short(p: Path) -> None:
    _salted(p)
    (p / f"{_salted_entries(p)[0]['path']}.salt").write_bytes(b"short")


def _salt_kept_after_redaction(p: Path) -> None:
    _salted(p, redact=True)
    redacted = next(e for e in json.loads((p / layout.MANIFEST).read_text())["payloads"]
                    if e["state"] == "redacted")
    (p / (redacted["path"] + ".salt")).write_bytes(bytes(16))


def _symlinked(p: Path) -> None:
    built = make_valid_bundle(p)
    target = p.parent / f"{p.name}-outside"
    target.write_bytes(TABLE_BYTES)
    built.payload_file("table").unlink()
    built.payload_file("table").symlink_to(target)


def _unsafe_path(p: Path) -> None:
    make_valid_bundle(p)
    manifest = json.loads((p / layout.MANIFEST).read_text())
    manifest["payloads"][0]["path"] = "../../etc/passwd"
    (p / layout.MANIFEST).write_text(json.dumps(manifest))


CASES: dict[str, Callable[[Path], object]] = {
    "valid": make_valid_bundle, "salted": _salted, "corrupt": _corrupt, "missing": _missing,
    "leaked": _leaked, "salt_lost": _salt_lost, "salt_too_short": _salt_too_short,
    "salt_kept_after_redaction": _salt_kept_after_redaction, "symlinked": _symlinked,
    "unsafe_path": _unsafe_path,
}


@pytest.fixture
def tiny_ranges(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(stream, "RANGE_BYTES", 900)
    monkeypatch.setattr(stream, "MIN_RANGE_BYTES", 900)


def _summary(path: Path, workers: int) -> list[object]:
    report = verify_bundle(path, VerifyOptions(keep_events=False, workers=workers))
    return [[(d.code, d.severity, d.message, str(d.location)) for d in report.diagnostics],
            sorted((k, v.state, v.path, v.size, v.file_sha256, v.head_sha256)
                   for k, v in report.bundle.payloads.items())]


def _count_main_hashes(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, bytes]]:
    """The (path, salt) of every payload hashed in this process (a forked worker's calls
    land in its own copy of the list, which this process never sees)."""
    calls: list[tuple[str, bytes]] = []
    real = payloads._hash_file
    pid = os.getpid()

    def spy(src: object, rel: str, salt: bytes) -> tuple[str, int] | None:
        if os.getpid() == pid:
            calls.append((rel, salt))
        return real(src, rel, salt)  # type: ignore[arg-type]

    monkeypatch.setattr(payloads, "_hash_file", spy)
    return calls


@pytest.mark.usefixtures("tiny_ranges")
@pytest.mark.parametrize("name", sorted(CASES))
def test_same_payload_findings_when_workers_hash(tmp_path: Path, name: str,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / name
    CASES[name](path)
    calls = _count_main_hashes(monkeypatch)
    single = _summary(path, 0)
    here = len(calls)
    assert here > 0
    calls.clear()
    assert _summary(path, 2) == single
    # With workers, this process hashed at most what the manifest does not list safely.
    assert len(calls) < here


@pytest.mark.usefixtures("tiny_ranges")
def test_workers_leave_no_payload_to_hash_here(tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    path = _salted(tmp_path / "b")
    calls = _count_main_hashes(monkeypatch)
    _summary(path, 2)
    assert calls == []
    _summary(path, 0)
    assert len(calls) == 7


def test_shares_cover_the_manifest_once_with_the_same_answers(tmp_path: Path) -> None:
    path = tmp_path / "b"
    _salt_too_short(path)
    (path / layout.payload_path(
        json.loads((path / layout.MANIFEST).read_text())["payloads"][1]["digest"])).unlink()
    manifest = Manifest.model_validate_json((path / layout.MANIFEST).read_bytes())
    files = payloads.manifest_files(manifest)
    assert len(files) == 7
    with open_bundle(path, DiagnosticSink()) as src:
        for n in (1, 2, 3, 5):
            shares = [payloads.hash_share(src, files, k, n) for k in range(n)]
            assert sum(len(s) for s in shares) == len(files)
            merged = {key: value for share in shares for key, value in share.items()}
            for (rel, salt), got in merged.items():
                assert got == payloads._hash_file(src, rel, salt)
                assert len(salt) in (0, 5, 16)
            assert sum(got is None for got in merged.values()) == 1
            assert {len(salt) for _, salt in merged} == {0, 5, 16}


def test_unsafe_manifest_paths_are_not_hashed_ahead(tmp_path: Path) -> None:
    path = tmp_path / "b"
    _unsafe_path(path)
    manifest = Manifest.model_validate_json((path / layout.MANIFEST).read_bytes())
    assert all(rel.startswith("payloads/") for rel, _ in payloads.manifest_files(manifest))
    assert payloads.manifest_files(None) == []


@pytest.mark.usefixtures("tiny_ranges")
def test_a_worker_dying_while_hashing_costs_speed_only(tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    path = _salted(tmp_path / "b")
    expected = _summary(path, 0)

    def die(*args: object) -> None:
        os._exit(3)

    monkeypatch.setattr(verifier, "hash_share", die)
    assert _summary(path, 2) == expected


def test_workers_are_reaped_when_no_line_is_read(tmp_path: Path) -> None:
    """Workers now start when the stream is made, before any line is asked for."""
    path = _salted(tmp_path / "b")
    lines = stream.line_results(path / "events.jsonl", 1 << 20, keep_models=False, workers=2)
    assert lines._pool is not None
    pids = list(lines._pool.pids)
    assert len(pids) == 2
    lines.close()
    for pid in pids:
        with pytest.raises(ChildProcessError):
            os.waitpid(pid, os.WNOHANG)
