"""What a coarse file-system clock hides from the bundle's stamp, the hashes catch.

The stamp (:mod:`bundler.load.stamp`) sees a rewrite by its change time, but on a
file system whose clock ticks coarsely a same-size rewrite within one tick of an
earlier write is invisible to it.  So every byte a build reads from the bundle
after verifying it, for a page or for the site's copy, is also held to a hash
taken while verifying: a payload's own SHA-256 (salted or not) and the hashes of
its heads, the chain's leaf hashes for the log and its lines, and the SHA-256 of
the bytes read of the side files.  The tests take the stamp's check out to show it.
"""

from __future__ import annotations

import dataclasses
import hashlib
import io
import tarfile
import zipfile
from pathlib import Path
from typing import Any

import pytest
from fixtures.bad import bundle_files
from fixtures.builders import BuiltBundle, StepClock, make_signer, make_valid_bundle

from bundler import layout
from bundler.author import BundleWriter
from bundler.errors import InputError
from bundler.output import writer as writer_module
from bundler.render import site as site_module
from bundler.render import viewer_jobs
from bundler.render.incremental import Inputs
from bundler.render.site import BuildOptions, build_site
from bundler.render.urls import artifact_href, payload_href
from bundler.verify.payloads import HEAD_PREFIXES
from bundler.verify.verifier import VerifyOptions, verify_bundle

from .conftest import AfterVerification, rebuild_stops
from .test_stamp import _rewrite_in_place


@pytest.fixture(autouse=True)
def coarse_clock(monkeypatch: pytest.MonkeyPatch) -> None:
    """The stamp sees nothing, as on a coarse clock."""
    monkeypatch.setattr(site_module, "require_unchanged", lambda *args: None)


def _rewrite_claim_line(bundle: Path) -> None:
    """A claim's line rewritten in place, same length (its text changed)."""
    log = bundle / layout.EVENTS
    lines = log.read_bytes().split(b"\n")
    no = next(i for i, line in enumerate(lines) if b'"type":"claim"' in line)
    old = lines[no]
    lines[no] = old.replace(b"claim-1", b"claim-X")
    assert len(lines[no]) == len(old) and lines[no] != old
    log.write_bytes(b"\n".join(lines))


def _first_checkpoint(bundle: Path) -> Path:
    return sorted((bundle / layout.CHECKPOINTS).iterdir())[0]


#: Same-size rewrites of every kind of file a build reads again, or copies, after
#: verifying it.
_COARSE = {
    "payload": lambda b: _rewrite_in_place(next(p for p in sorted((b / layout.PAYLOADS).rglob(
        "*")) if p.is_file() and p.suffix != ".salt")),
    "claim line": _rewrite_claim_line,
    "first line": lambda b: _rewrite_in_place(b / layout.EVENTS),
    "manifest": lambda b: _rewrite_in_place(b / layout.MANIFEST),
    "metadata": lambda b: _rewrite_in_place(b / layout.METADATA),
    "checkpoint": lambda b: _rewrite_in_place(_first_checkpoint(b)),
}


@pytest.mark.parametrize("incremental", [True, False], ids=["cached", "no-cache"])
@pytest.mark.parametrize("change", sorted(_COARSE))
def test_what_a_coarse_clock_misses_the_hashes_catch(
        change: str, incremental: bool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        after_verification: AfterVerification) -> None:
    """On a file system whose change times are too coarse to show a same-size rewrite
    (the stamp sees nothing: taken out here), every file the build reads again or
    copies is held to what verification read: a payload (its viewer and its copy), a
    claim line (its proof), any other line (the log's copy), and the manifest, the
    metadata and a checkpoint (their copies).  The build stops, the previous site
    stays, and the rewritten bytes reach no file of it."""
    rebuild_stops(tmp_path, incremental, after_verification, _COARSE[change])


def test_a_log_copy_is_held_line_by_line(tmp_path: Path) -> None:
    """The log has no hash of its own: its copy is held to the chain's leaf hashes, with
    the verifier's reading of an overlong line (hashed as empty) and of a cut-off last
    line (not hashed)."""
    ref = make_valid_bundle(tmp_path / "bundle")
    report = verify_bundle(ref.path, VerifyOptions())
    data = (ref.path / layout.EVENTS).read_bytes()
    bundle = report.bundle
    assert bundle.is_log_verified(io.BytesIO(data))
    assert not bundle.is_log_verified(io.BytesIO(data[:-1]))        # last line cut off
    assert not bundle.is_log_verified(io.BytesIO(data + data[:40] + b"\n"))  # one more
    assert not bundle.is_log_verified(io.BytesIO(data.replace(b"claim-1", b"claim-X", 1)))
    widest = max(len(line) for line in data.split(b"\n"))
    longer = dataclasses.replace(bundle, max_line_bytes=widest)     # every line fits
    tail = b"x" * (widest + 1) + b"\n" + b"cut off, no newline"
    assert not longer.is_log_verified(io.BytesIO(data + tail))
    longer.leaf_hashes = bundle.leaf_hashes + hashlib.sha256(b"\x00").digest()
    assert longer.is_log_verified(io.BytesIO(data + tail))


def test_a_salted_payload_is_held_to_its_own_hash(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        after_verification: AfterVerification) -> None:
    """A salted commitment hashes the salt before the bytes, so its digest is not the
    file's SHA-256: verification takes that too, in the same read, and the build holds
    the viewer and the copy to it."""
    signer = make_signer()
    with BundleWriter.create(tmp_path / "b", title="salted", signer=signer,
                             clock=StepClock()) as w:
        w.append("run", id="run-1", title="salted", objective="o", run="run-1",
                 stream="agent-1")
        w.append("stream", id="agent-1", kind="agent", name="agent", run="run-1")
        ref = w.put_payload(b"print('salted')\n", "text/x-python", "s.py", salt=bytes(16))
        w.append("individual", id="prog-1", kind="program", name="s.py", payload=ref.model_dump(),
                 run="run-1", stream="agent-1")
    opts = BuildOptions(output=tmp_path / "site", trusted_keys=(signer.verifier().to_text(),),
                        jobs=1)
    result = build_site(tmp_path / "b", opts)
    assert result.report is not None and result.report.sink.codes() == []
    status = result.report.bundle.payloads[ref.digest]
    assert ref.digest != "sha256:" + hashlib.sha256(b"print('salted')\n").hexdigest()
    assert status.file_sha256 == hashlib.sha256(b"print('salted')\n").hexdigest()
    page = (tmp_path / "site" / artifact_href("prog-1")).read_text(encoding="utf-8")
    assert "salted" in page
    assert (tmp_path / "site" / payload_href(ref.digest)).read_bytes() == b"print('salted')\n"
    assert status.path is not None
    salted = tmp_path / "b" / status.path
    after_verification(lambda: _rewrite_in_place(salted))
    with pytest.raises(InputError, match="changed during the build"):
        build_site(tmp_path / "b", dataclasses.replace(opts, title="again", incremental=False))


#: One payload of each viewer kind, larger than what its viewer reads.
_LARGE = {
    "code": ("big.py", "text/x-python", b"x = 1  # a line of code\n", 40_000),
    "text": ("big.txt", "text/plain", b"a line of plain text\n", 300_000),
    "json": ("big.json", "application/json", b'{"a line": "of JSON"},\n', 1_200_000),
    "csv": ("big.csv", "text/csv", b"a,line,of,csv\n", 1_200_000),
}


def _large_bundle(path: Path, kind: str) -> tuple[Path, str]:
    name, media_type, line, size = _LARGE[kind]
    data = (line * (size // len(line) + 1))[:size]
    if kind == "json":
        data = b"[" + data[1:-2] + b"]"
    signer = make_signer()
    with BundleWriter.create(path, title="large", signer=signer, clock=StepClock()) as w:
        w.append("run", id="run-1", title="large", objective="o", run="run-1",
                 stream="agent-1")
        w.append("stream", id="agent-1", kind="agent", name="agent", run="run-1")
        ref = w.put_payload(data, media_type, name)
        w.append("individual", id="big-1", kind="program", name=name,
                 payload=ref.model_dump(), run="run-1", stream="agent-1")
    return path / layout.payload_path(ref.digest), signer.verifier().to_text()


@pytest.mark.parametrize("kind", sorted(_LARGE))
def test_the_head_a_viewer_shows_is_held_to_a_prefix_hash(
        kind: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        after_verification: AfterVerification) -> None:
    """A viewer reads only the head of a larger payload; that head is held to the hash
    verification took of the prefix, so a rewrite inside it stops the build even where
    the copy of the whole file is not checked (taken out here)."""
    payload, key = _large_bundle(tmp_path / "b", kind)
    opts = BuildOptions(output=tmp_path / "site", trusted_keys=(key,), jobs=1,
                        incremental=False)
    result = build_site(tmp_path / "b", opts)
    assert result.report is not None and result.report.sink.codes() == []
    status = next(iter(result.report.bundle.payloads.values()))
    size = payload.stat().st_size
    assert status.head_sha256 == tuple(
        (n, hashlib.sha256(payload.read_bytes()[:n]).hexdigest())
        for n in HEAD_PREFIXES if n < size)
    monkeypatch.setattr(writer_module, "require_digest", lambda *args: None)
    monkeypatch.setattr(viewer_jobs, "_memo", {})   # viewers made in this process are kept
    after_verification(lambda: _rewrite_in_place(payload))
    with pytest.raises(InputError, match="no longer have the SHA-256 verified"):
        build_site(tmp_path / "b", dataclasses.replace(opts, title="again"))


def test_the_cache_pins_only_a_digest_of_the_bytes_verified(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A rebuild of the same inputs (content digest) skips verification, so a digest is
    recorded only if it describes what verification read.  Here the bundle is scanned
    with a corrupt payload, the good bytes are put back before verification (within one
    tick of a coarse clock: the stamp sees nothing), and the corrupt bytes after it.
    The site is of the good bytes; the next build of the corrupt bundle must verify it
    again, not carry that site over as if it were of these bytes."""
    ref = make_valid_bundle(tmp_path / "bundle")
    payload = ref.payload_file("table")
    good = payload.read_bytes()
    _swapped_around_verification(monkeypatch, ref, ref.path, payload, good,
                                 bytes([good[0] ^ 1]) + good[1:])


def _swapped_around_verification(monkeypatch: pytest.MonkeyPatch, ref: BuiltBundle, bundle: Path,
                                 where: Path, good: bytes, bad: bytes) -> None:
    """Build ``bundle`` with ``bad`` in ``where`` when the inputs digest is taken and
    ``good`` when it is verified (the stamp sees nothing, as on a coarse clock), then
    put ``bad`` back: the next build must verify it, and find the corrupt payload."""
    where.write_bytes(bad)
    monkeypatch.setattr(Inputs, "unchanged", lambda self: True)   # the clock saw nothing
    real_verify = site_module.verify_bundle

    def good_bytes_back(*args: Any, **kwargs: Any) -> Any:
        where.write_bytes(good)
        return real_verify(*args, **kwargs)
    monkeypatch.setattr(site_module, "verify_bundle", good_bytes_back)
    opts = BuildOptions(output=bundle.parent / "site", trusted_keys=(ref.verifier_key_text,),
                        jobs=1)
    first = build_site(bundle, opts)
    assert first.report is not None and "RB400" not in first.report.sink.codes()
    where.write_bytes(bad)          # what the inputs digest was taken of
    monkeypatch.setattr(site_module, "verify_bundle", real_verify)
    again = build_site(bundle, opts)
    assert again.report is not None, "carried over a site of bytes the bundle no longer has"
    assert "RB400" in again.report.sink.codes()


def _pack(folder: Path, archive: Path) -> bytes:
    """``folder`` as the bytes of a tar.gz or zip archive named like ``archive``."""
    if archive.name.endswith(".zip"):
        with zipfile.ZipFile(archive, "w") as zf:
            for rel, data in bundle_files(folder):
                zf.writestr(rel, data)
    else:
        with tarfile.open(archive, "w:gz") as tf:
            tf.add(folder, arcname=".")
    return archive.read_bytes()


@pytest.mark.parametrize("name", ["bundle.tar.gz", "bundle.zip"])
def test_an_archive_is_pinned_only_as_the_bytes_expanded(
        name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The test above for an archive bundle: the rebuild cache digests the archive file
    whole before the build.  The good archive is put back before it is expanded and
    verified, and the corrupt one after, all within one tick of a coarse clock.  The
    digest is recorded only if the bytes expanded are the bytes digested, so the next
    build of the corrupt archive verifies it, and finds the corrupt payload."""
    ref = make_valid_bundle(tmp_path / "bundle")
    archive = tmp_path / name
    good = _pack(ref.path, archive)
    payload = ref.payload_file("table")
    data = payload.read_bytes()
    payload.write_bytes(bytes([data[0] ^ 1]) + data[1:])
    bad = _pack(ref.path, archive)
    _swapped_around_verification(monkeypatch, ref, archive, archive, good, bad)


@pytest.mark.parametrize("name", ["bundle.tar.gz", "bundle.zip"])
def test_an_unchanged_archive_is_pinned_and_not_verified_again(
        name: str, tmp_path: Path) -> None:
    """The other side of the test above: the hash of the expanded copy is the one the
    cache took, so an archive rebuilt unchanged still skips verification."""
    ref = make_valid_bundle(tmp_path / "bundle")
    archive = tmp_path / name
    _pack(ref.path, archive)
    opts = BuildOptions(output=tmp_path / "site", trusted_keys=(ref.verifier_key_text,),
                        jobs=1)
    first = build_site(archive, opts)
    assert first.report is not None and first.report.valid
    assert first.report.bundle.file_sha256[""] == hashlib.sha256(archive.read_bytes()
                                                                 ).hexdigest()
    again = build_site(archive, opts)
    assert again.report is None and again.reused == again.pages == first.pages
