"""Give every committed payload exactly one state (DESIGN-NOTES §3).

Bytes are hashed in 1 MiB chunks, so memory does not grow with payload size.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass, field

from bundler import layout
from bundler.diagnostics import DiagnosticSink, Location
from bundler.load.paths import is_safe_relpath
from bundler.load.source import BundleSource
from bundler.model.events import RedactionEvent
from bundler.model.metadata import Manifest, ManifestEntry
from bundler.verify.facts import Commitment, CommitmentValues
from bundler.verify.result import PayloadState, PayloadStatus

KNOWN_TOP = {layout.METADATA, layout.EVENTS, layout.MANIFEST}


@dataclass
class PayloadLedger:
    """Commitments and redactions seen while streaming the log."""

    commitments: dict[str, tuple[Commitment, int]] = field(default_factory=dict)
    redactions: dict[str, tuple[RedactionEvent, int]] = field(default_factory=dict)

    conflicts: list[tuple[Commitment, Commitment, int]] = field(default_factory=list)

    def commit(self, values: CommitmentValues, seq: int) -> None:
        """The first commitment to a digest is the one checked; a later one that differs
        in size, media type or salting is a conflict."""
        got = self.commitments.get(values[0])
        if got is None:
            self.commitments[values[0]] = (Commitment._make(values), seq)
            return
        first = got[0]
        if (first.size, first.media_type, first.salted) != (values[1], values[2], values[4]):
            self.conflicts.append((first, Commitment._make(values), seq))

    def redact(self, ev: RedactionEvent) -> None:
        self.redactions.setdefault(ev.target, (ev, ev.seq))


def _read_salt(path: str | os.PathLike[str]) -> bytes:
    """A salt file's first 17 bytes: enough to tell a 16-byte salt from a longer file,
    without reading a hostile large one whole."""
    with open(path, "rb") as fh:
        return fh.read(17)


#: Lengths of the heads the build reads of a larger payload to show it (a code viewer's
#: 32 KiB, a text viewer's 256 KiB, what a JSON or CSV viewer parses).  Verification
#: takes the SHA-256 of each prefix as it passes, so that a head read again is held to
#: bytes verified too, without reading the rest of a multi-GB file a second time.
HEAD_PREFIXES = (32 << 10, 256 << 10, 1 << 20)
_CHUNK = 1 << 20


def _hash_file(src: BundleSource, rel: str, salt: bytes) -> FileHashes | None:
    """(digest, size, the file's own hex SHA-256, its prefix hashes).  A salted digest is
    not the file's hash, and the build holds what it reads again to the file's hash, so
    a salted file is hashed twice in the one read (salted payloads are few: secrets)."""
    p = src.regular_file_name(rel)
    if p is None:
        return None
    h = hashlib.sha256(salt)
    own = hashlib.sha256() if salt else h
    size = 0
    heads: list[tuple[int, str]] = []
    with open(p, "rb") as fh:
        while chunk := fh.read(min([_CHUNK] + [m - size for m in HEAD_PREFIXES if m > size])):
            h.update(chunk)
            if own is not h:
                own.update(chunk)
            size += len(chunk)
            if size in HEAD_PREFIXES:
                heads.append((size, own.hexdigest()))
    return ("sha256:" + h.hexdigest(), size, own.hexdigest(),
            tuple((n, hexdigest) for n, hexdigest in heads if n < size))


#: What :func:`_hash_file` gives: (digest, size, own hex SHA-256, (prefix, hex) pairs).
FileHashes = tuple[str, int, str, tuple[tuple[int, str], ...]]
#: (path, salt) -> what :func:`_hash_file` gives for them
Hashes = dict[tuple[str, bytes], "FileHashes | None"]


def manifest_files(manifest: Manifest | None) -> list[tuple[str, bool]]:
    """(path, salted) of each distinct payload file the manifest names at a safe path
    under ``payloads/``: what :func:`hash_share` hashes ahead of :func:`check_payloads`."""
    if manifest is None:
        return []
    return sorted({(e.path, e.salted) for e in manifest.payloads
                   if is_safe_relpath(e.path) and e.path.startswith(layout.PAYLOADS + "/")})


def hash_share(src: BundleSource, files: list[tuple[str, bool]], k: int, n: int) -> Hashes:
    """Share ``k`` of ``n`` of ``files`` hashed, keyed as :func:`check_payloads` looks them
    up (a salted file with the salt beside it).

    Verification workers run this once their part of the log is done, so that hashing
    the payloads overlaps the ordered checks instead of following them (a tenth of
    ``validate`` at 100k events).  Only the manifest's own files are hashed: a name the
    log alone commits to, or a different salt, is hashed by the caller as before.
    """
    out: Hashes = {}
    with src.remembering_folders():
        for rel, salted in files[k::n]:
            salt = b""
            if salted and (sp := src.regular_file_name(rel + ".salt")) is not None:
                salt = _read_salt(sp)
            out[(rel, salt)] = _hash_file(src, rel, salt)
    return out


def check_payloads(src: BundleSource, manifest: Manifest | None, ledger: PayloadLedger,
                   sink: DiagnosticSink, *, signed_size: int | None = None,
                   hashes: Hashes | None = None) -> dict[str, PayloadStatus]:
    """``signed_size``: events at or past it are the unsigned tail of a log whose
    writer stopped between checkpoints (the manifest is written at checkpoints).
    ``hashes``: files already hashed (by :func:`hash_share`); the rest are hashed here."""
    entries: dict[str, ManifestEntry] = {e.digest: e for e in manifest.payloads} if manifest \
        else {}
    with src.remembering_folders():
        states = _payload_states(src, manifest, entries, ledger, sink, signed_size,
                                 hashes or {})
    _unexpected_files(src, entries, set(ledger.commitments), sink)
    return states


def _payload_states(src: BundleSource, manifest: Manifest | None,
                    entries: dict[str, ManifestEntry], ledger: PayloadLedger,
                    sink: DiagnosticSink, signed_size: int | None,
                    hashes: Hashes) -> dict[str, PayloadStatus]:
    states: dict[str, PayloadStatus] = {}
    for digest, (ev, seq) in sorted(ledger.redactions.items()):
        if digest not in ledger.commitments:
            sink.emit("RB505", f"redaction {ev.id!r} targets {digest}, which no event commits "
                      "to: the committing event is gone", Location(seq=seq))
        elif ledger.commitments[digest][1] > seq:
            sink.emit("RB505", f"redaction {ev.id!r} comes before the event that commits to "
                      f"{digest} (seq {ledger.commitments[digest][1]})", Location(seq=seq))
    for first, other, seq in ledger.conflicts:
        sink.emit("RB408", f"{first.digest} is committed again with {other.size} bytes "
                  f"{other.media_type} (salted={other.salted}); first commitment says "
                  f"{first.size} bytes {first.media_type} (salted={first.salted})",
                  Location(seq=seq))
    for digest, (ref, seq) in sorted(ledger.commitments.items()):
        loc = Location(seq=seq)
        entry = entries.get(digest)
        rel = entry.path if entry else layout.payload_path(digest)
        if entry is None and manifest is not None:
            if signed_size is not None and seq >= signed_size:
                sink.emit("RB413", f"{digest} is committed at seq {seq}, after the last "
                          "checkpoint, and is not in manifest.json yet", loc)
            else:
                sink.emit("RB405", f"{digest} is committed by an event but not in "
                          "manifest.json", loc)
        if entry is not None:
            if not is_safe_relpath(entry.path) or not entry.path.startswith(
                    layout.PAYLOADS + "/"):
                sink.emit("RB407", f"manifest path {entry.path!r} is not a safe path under "
                          "payloads/", Location(path=layout.MANIFEST))
                rel = layout.payload_path(digest)
            if entry.size != ref.size or entry.media_type != ref.media_type or \
                    entry.salted != ref.salted:
                sink.emit("RB408", f"{digest}: manifest says {entry.size} bytes "
                          f"{entry.media_type} (salted={entry.salted}), the event says "
                          f"{ref.size} bytes {ref.media_type} (salted={ref.salted})", loc)
        redaction = ledger.redactions.get(digest)
        salt = b""
        salt_rel = rel + ".salt"
        # A salt only matters for a salted commitment or a redacted payload.
        sp = src.regular_file(salt_rel) if ref.salted or redaction is not None else None
        if ref.salted and sp is not None:
            salt = _read_salt(sp)
            if len(salt) != 16:
                sink.emit("RB400", f"{salt_rel}: a salt must be exactly 16 bytes", loc)
        if redaction is not None and sp is not None:
            sink.emit("RB412", f"{digest} is redacted but its salt {salt_rel} is still shipped; "
                      "delete it to make the redaction final", loc)
        key = (rel, salt)
        got = hashes[key] if key in hashes else _hash_file(src, rel, salt)
        state = _state(digest, got, ref, redaction is not None, sink, loc, rel)
        if entry is not None and (entry.state == "redacted") != (redaction is not None):
            sink.emit("RB410", f"{digest}: manifest state {entry.state!r} but the log "
                      + ("redacts it" if redaction else "has no redaction record"), loc)
        states[digest] = PayloadStatus(
            digest, state, ref.size, ref.media_type,
            rel if state in (PayloadState.VERIFIED, PayloadState.LEAKED) else None,
            redaction[1] if redaction else None,
            redaction[0].reason if redaction else None,
            redaction[0].authority if redaction else None,
            *((got[2], got[3]) if got is not None and state is PayloadState.VERIFIED else ()))
    for digest in sorted(entries):
        if digest not in ledger.commitments:
            sink.emit("RB406", f"manifest lists {digest}, which no event commits to",
                      Location(path=layout.MANIFEST))
    return states


def _state(digest: str, got: FileHashes | None, ref: Commitment, redacted: bool,
           sink: DiagnosticSink, loc: Location, rel: str) -> PayloadState:
    if got is None:
        if redacted:
            return PayloadState.REDACTED
        sink.emit("RB401", f"{digest} ({ref.name or ref.media_type}) is missing from {rel} and "
                  "no redaction record explains it", loc)
        return PayloadState.MISSING
    actual, size = got[0], got[1]
    if actual != digest:
        sink.emit("RB400", f"{rel}: expected {digest}, computed {actual}", loc)
        return PayloadState.CORRUPT
    if size != ref.size:
        sink.emit("RB403", f"{rel}: {size} bytes, the event commits to {ref.size}", loc)
    if redacted:
        sink.emit("RB402", f"{digest} was redacted but its bytes are still shipped at {rel}", loc)
        return PayloadState.LEAKED
    return PayloadState.VERIFIED


def _unexpected_files(src: BundleSource, entries: dict[str, ManifestEntry],
                      committed: set[str], sink: DiagnosticSink) -> None:
    allowed = {e.path for e in entries.values()}
    # a committed payload at its content address is expected even when a crash
    # kept it out of the manifest (reported once, as RB413 or RB405)
    allowed |= {layout.payload_path(d) for d in committed}
    allowed |= {e.path + ".salt" for e in entries.values()}
    for rel in src.files():
        if rel in KNOWN_TOP or rel.startswith(layout.CHECKPOINTS + "/") or rel in allowed:
            continue
        if rel.startswith(layout.PAYLOADS + "/") and rel.removesuffix(".salt") in allowed:
            continue
        sink.emit("RB411", f"unexpected file {rel!r}", Location(path=rel))
