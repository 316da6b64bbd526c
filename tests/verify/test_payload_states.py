"""Every committed payload gets exactly one state (DESIGN-NOTES §3 table)."""

from __future__ import annotations

import json
from hashlib import sha256
from pathlib import Path

import pytest
from fixtures.builders import (
    BASE_EVENTS,
    SECRET_BYTES,
    TABLE_BYTES,
    BuiltBundle,
    StepClock,
    codes,
    ev,
    make_signer,
    make_valid_bundle,
    payload_ref,
    sha256_digest,
    verify,
    write_chained_bundle,
)

from bundler import layout
from bundler.author import BundleWriter
from bundler.verify import PayloadState
from bundler.verify.payloads import HEAD_PREFIXES

KEY = make_signer().verifier().to_text()


@pytest.fixture
def built(tmp_path: Path) -> BuiltBundle:
    return make_valid_bundle(tmp_path / "bundle")


def test_verified(built: BuiltBundle) -> None:
    report = verify(built.path, pin=built.verifier_key_text)
    status = report.bundle.payloads[built.digests["table"]]
    assert status.state is PayloadState.VERIFIED
    assert status.path == layout.payload_path(built.digests["table"])
    assert (status.size, status.media_type) == (len(TABLE_BYTES), "application/json")


def test_corrupt(built: BuiltBundle) -> None:
    built.payload_file("table").write_bytes(TABLE_BYTES.replace(b"0.93", b"0.39"))
    report = verify(built.path, pin=built.verifier_key_text)
    status = report.bundle.payloads[built.digests["table"]]
    assert status.state is PayloadState.CORRUPT
    assert status.path is None  # never offer corrupt bytes for viewing
    assert codes(report) == {"RB400"}


def test_missing(built: BuiltBundle) -> None:
    built.payload_file("dataset").unlink()
    report = verify(built.path, pin=built.verifier_key_text)
    assert report.bundle.payloads[built.digests["dataset"]].state is PayloadState.MISSING
    assert codes(report) == {"RB401"}


def test_redacted(built: BuiltBundle) -> None:
    report = verify(built.path, pin=built.verifier_key_text)
    status = report.bundle.payloads[built.redacted_digest]
    assert status.state is PayloadState.REDACTED
    assert (status.reason, status.authority, status.redaction_seq) == (
        "personal data", "privacy officer", built.seq_of["redaction-1"])
    assert status.path is None
    assert not (built.path / layout.payload_path(built.redacted_digest)).exists()


def test_leaked(built: BuiltBundle) -> None:
    (built.path / layout.payload_path(built.redacted_digest)).write_bytes(SECRET_BYTES)
    report = verify(built.path, pin=built.verifier_key_text)
    assert report.bundle.payloads[built.redacted_digest].state is PayloadState.LEAKED
    assert codes(report) == {"RB402"}


def test_each_payload_has_exactly_one_state(built: BuiltBundle) -> None:
    report = verify(built.path, pin=built.verifier_key_text)
    assert sorted(report.bundle.payloads) == sorted(built.digests.values())
    assert sorted(s.state.value for s in report.bundle.payloads.values()) == [
        "redacted", "verified", "verified"]


# ---------------------------------------------------------------- salted
def _salted(tmp_path: Path) -> tuple[Path, str]:
    path = tmp_path / "salted"
    with BundleWriter.create(path, title="salted", signer=make_signer(),
                             origin="test.invalid/salted", clock=StepClock()) as w:
        w.append("run", id="run-1", stream="agent-1", title="t")
        w.append("stream", id="agent-1", run="run-1", kind="agent", name="a")
        ref = w.put_payload(b"yes", "text/plain", salt=bytes(range(16)))
        w.append("individual", id="answer", run="run-1", stream="agent-1", kind="report",
                 name="a guessable answer", payload=ref.model_dump())
    return path, ref.digest


def test_salted_payload_verifies_with_its_salt(tmp_path: Path) -> None:
    path, digest = _salted(tmp_path)
    assert digest != sha256_digest(b"yes")  # the commitment does not confirm a guess
    report = verify(path, pin=KEY)
    assert report.bundle.payloads[digest].state is PayloadState.VERIFIED
    assert report.diagnostics == []


def test_salted_payload_without_its_salt_is_corrupt(tmp_path: Path) -> None:
    path, digest = _salted(tmp_path)
    (path / layout.salt_path(digest)).unlink()
    report = verify(path, pin=KEY)
    assert report.bundle.payloads[digest].state is PayloadState.CORRUPT
    assert codes(report) == {"RB400"}


def test_salted_redaction_deletes_bytes_and_salt(tmp_path: Path) -> None:
    path, digest = _salted(tmp_path)
    w = BundleWriter.open(path, signer=make_signer(), clock=StepClock("2026-06-01T00:00:00Z"))
    with w:
        w.redact(digest, reason="guessable", authority="dpo", run="run-1", stream="agent-1")
    assert not (path / layout.payload_path(digest)).exists()
    assert not (path / layout.salt_path(digest)).exists()
    report = verify(path, pin=KEY)
    assert report.bundle.payloads[digest].state is PayloadState.REDACTED
    assert report.diagnostics == []


# ---------------------------------------------------------- manifest rules
DATA = b"some bytes\n"


def _raw(tmp_path: Path, ref: dict[str, object], payloads: list[tuple[bytes, str]]) -> Path:
    path = tmp_path / "raw"
    write_chained_bundle(path, [*BASE_EVENTS, ev("individual", "d-1", kind="table",
                                                 name="d", payload=ref)], payloads=payloads)
    return path


def test_size_disagreeing_with_the_commitment(tmp_path: Path) -> None:
    ref = dict(payload_ref(DATA), size=len(DATA) + 1)
    path = _raw(tmp_path, ref, [(DATA, "text/plain")])
    # manifest says len(DATA), event says len(DATA)+1: both the bytes and the entry disagree
    assert codes(verify(path, pin=KEY)) == {"RB403", "RB408"}


def test_payload_not_in_the_manifest(tmp_path: Path) -> None:
    path = _raw(tmp_path, payload_ref(DATA), [])
    (path / layout.payload_path(sha256_digest(DATA))).parent.mkdir(parents=True)
    (path / layout.payload_path(sha256_digest(DATA))).write_bytes(DATA)
    report = verify(path, pin=KEY)
    assert codes(report) == {"RB405"}  # inside the signed prefix: an error, not RB413
    assert report.bundle.payloads[sha256_digest(DATA)].state is PayloadState.VERIFIED


def test_manifest_entry_nobody_commits_to(tmp_path: Path) -> None:
    path = _raw(tmp_path, payload_ref(DATA), [(DATA, "text/plain"), (b"orphan", "text/plain")])
    assert codes(verify(path, pin=KEY)) == {"RB406"}


def test_unsafe_manifest_path(tmp_path: Path) -> None:
    path = _raw(tmp_path, payload_ref(DATA), [(DATA, "text/plain")])
    manifest = json.loads((path / layout.MANIFEST).read_text())
    manifest["payloads"][0]["path"] = "../../etc/passwd"
    (path / layout.MANIFEST).write_text(json.dumps(manifest))
    report = verify(path, pin=KEY)
    # The unsafe path is refused and the canonical location used instead.
    assert codes(report) == {"RB407"}
    assert report.bundle.payloads[sha256_digest(DATA)].state is PayloadState.VERIFIED


def test_manifest_claims_redacted_but_log_does_not(tmp_path: Path) -> None:
    path = _raw(tmp_path, payload_ref(DATA), [(DATA, "text/plain")])
    manifest = json.loads((path / layout.MANIFEST).read_text())
    manifest["payloads"][0]["state"] = "redacted"
    (path / layout.MANIFEST).write_text(json.dumps(manifest))
    assert codes(verify(path, pin=KEY)) == {"RB410"}


def test_a_verified_file_keeps_its_own_hash_and_its_heads(tmp_path: Path) -> None:
    """Verification keeps, from its one read of each file, the file's own SHA-256 (not
    the digest when salted) and the SHA-256 of each head prefix shorter than the file:
    what the build holds later reads to.  A file not verified keeps none."""
    sizes = {"exact": HEAD_PREFIXES[0], "one more": HEAD_PREFIXES[0] + 1,
             "salted": HEAD_PREFIXES[-1] + 5, "corrupt": HEAD_PREFIXES[1] + 7}
    blobs = {k: bytes(i % 251 for i in range(n)) for k, n in sizes.items()}
    signer = make_signer()
    refs = {}
    with BundleWriter.create(tmp_path / "b", title="heads", signer=signer,
                             clock=StepClock()) as w:
        w.append("run", id="run-1", title="t", objective="o", run="run-1", stream="agent-1")
        w.append("stream", id="agent-1", kind="agent", name="a", run="run-1")
        for k, data in blobs.items():
            refs[k] = w.put_payload(data, "application/octet-stream",
                                    salt=bytes(16) if k == "salted" else None)
            w.append("individual", id=f"blob-{k.replace(' ', '-')}", kind="report", name=k,
                     payload=refs[k].model_dump(), run="run-1", stream="agent-1")
    corrupt = tmp_path / "b" / layout.payload_path(refs["corrupt"].digest)
    corrupt.write_bytes(b"\xff" + blobs["corrupt"][1:])
    payloads = verify(tmp_path / "b", pin=signer.verifier().to_text()).bundle.payloads
    for k, data in blobs.items():
        status = payloads[refs[k].digest]
        if k == "corrupt":
            assert status.state is PayloadState.CORRUPT
            assert (status.file_sha256, status.head_sha256) == (None, ())
            continue
        assert status.file_sha256 == sha256(data).hexdigest()
        assert status.head_sha256 == tuple((n, sha256(data[:n]).hexdigest())
                                           for n in HEAD_PREFIXES if n < len(data))
        assert status.held_hash(len(data)) == status.file_sha256
        assert status.held_hash(HEAD_PREFIXES[0]) == sha256(data[:HEAD_PREFIXES[0]]).hexdigest()
        assert status.held_hash(10) is None
    assert refs["salted"].digest != "sha256:" + sha256(blobs["salted"]).hexdigest()
    assert len(payloads[refs["salted"].digest].head_sha256) == 3
    assert payloads[refs["exact"].digest].head_sha256 == ()
