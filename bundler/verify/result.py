"""Typed outputs of the verify stage, consumed by the graph and render stages."""

from __future__ import annotations

import enum
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO

from bundler.diagnostics import Diagnostic, DiagnosticSink, Severity
from bundler.load.events import leaf_hashes
from bundler.load.limits import DEFAULT_LIMITS
from bundler.model.events import EventBase
from bundler.model.metadata import BundleMetadata, Manifest


class Trust(enum.StrEnum):
    """The three outcomes a reviewer must be able to tell apart."""

    PINNED = "pinned"          # valid, signed by a key the reviewer pinned
    BUNDLE_ONLY = "bundle-only"  # valid, signed by a key found only in the bundle
    INVALID = "invalid"        # errors found: do not rely on this record


class PayloadState(enum.StrEnum):
    VERIFIED = "verified"
    CORRUPT = "corrupt"
    MISSING = "missing"
    REDACTED = "redacted"
    LEAKED = "leaked"
    EXTERNAL = "external"


@dataclass(frozen=True, slots=True)
class PayloadStatus:
    digest: str
    state: PayloadState
    size: int
    media_type: str
    path: str | None
    redaction_seq: int | None = None
    reason: str | None = None
    authority: str | None = None
    #: The hex SHA-256 of the file's own bytes, read while verifying them (a salted
    #: digest is not it): what a later read of a verified file is held to.
    file_sha256: str | None = None
    #: (n, hex SHA-256 of the first n bytes) for the ``HEAD_PREFIXES`` shorter than the
    #: file, taken in the same read: what a later read of a head is held to.
    head_sha256: tuple[tuple[int, str], ...] = ()

    def held_hash(self, n: int) -> str | None:
        """The hex SHA-256 that the first ``n`` bytes of the file were verified to have
        (the whole file's when ``n`` covers it), or None when no such hash was taken."""
        # a prefix first: ``size`` is the committed size, which RB403 may have found wrong
        for m, hexdigest in self.head_sha256:
            if m == n:
                return hexdigest
        return self.file_sha256 if n >= self.size else None


@dataclass(frozen=True, slots=True)
class SignatureCheck:
    key_name: str
    key_id: str
    valid: bool
    pinned: bool
    declared: bool


@dataclass(frozen=True, slots=True)
class CheckpointCheck:
    path: str
    origin: str
    size: int
    root_hex: str
    note: str
    root_matches: bool
    signatures: tuple[SignatureCheck, ...]

    @property
    def pinned_ok(self) -> bool:
        return any(s.valid and s.pinned for s in self.signatures)

    @property
    def any_ok(self) -> bool:
        return any(s.valid for s in self.signatures)


class EventLines(Mapping[int, int]):
    """seq -> line number of the event, without a dict entry per event when it can.

    In a well-formed log seq ``s`` is on line ``s + k`` for one ``k`` (1 when
    every line is an event), so the mapping is just ``n`` and ``k``.  A dict of
    a million entries, with an int object for each key and value, would cost
    about 100 MB, held through the whole build.  The first entry that breaks
    the pattern (a gap, a reorder, a repeated seq, a rejected line) turns it
    into a plain dict, with the same answers as if it had been one from the
    start (a repeated seq keeps its last line).
    """

    __slots__ = ("_map", "_n", "_offset")

    def __init__(self) -> None:
        self._n = 0                     # seqs 0 .. n-1, each on line seq + offset
        self._offset = 0
        self._map: dict[int, int] | None = None

    def __setitem__(self, seq: int, line: int) -> None:
        if self._map is None:
            if seq == self._n and (seq == 0 or line - seq == self._offset):
                self._offset = line - seq
                self._n += 1
                return
            self._map = {s: s + self._offset for s in range(self._n)}
        self._map[seq] = line

    def __getitem__(self, seq: int) -> int:
        if self._map is not None:
            return self._map[seq]
        if type(seq) is int and 0 <= seq < self._n:
            return seq + self._offset
        raise KeyError(seq)

    def get(self, seq: int, default: int | None = None) -> int | None:   # type: ignore[override]
        """As ``Mapping.get``, without its exception (page records look up ~25k)."""
        if self._map is not None:
            return self._map.get(seq, default)
        if type(seq) is int and 0 <= seq < self._n:
            return seq + self._offset
        return default

    def __contains__(self, seq: object) -> bool:
        if self._map is not None:
            return seq in self._map
        return type(seq) is int and 0 <= seq < self._n

    def __len__(self) -> int:
        return self._n if self._map is None else len(self._map)

    def __iter__(self) -> Iterator[int]:
        return iter(range(self._n) if self._map is None else self._map)

    @property
    def dense(self) -> bool:
        """True while no dict was needed."""
        return self._map is None


@dataclass
class LoadedBundle:
    """Everything the later stages need, already checked."""

    source_path: Path
    root: Path
    metadata: BundleMetadata | None
    manifest: Manifest | None
    events: list[EventBase] = field(default_factory=list)
    leaf_hashes: bytearray = field(default_factory=bytearray)
    line_count: int = 0
    event_lines: EventLines = field(default_factory=EventLines)  # seq -> line number
    payloads: dict[str, PayloadStatus] = field(default_factory=dict)
    checkpoints: list[CheckpointCheck] = field(default_factory=list)
    #: Bundle-relative path -> hex SHA-256 of the bytes verification read from it, for
    #: the files read whole (bundle.json, manifest.json, checkpoints): what the site's
    #: copy of each is held to.  An archive bundle adds itself, under ``""``.
    file_sha256: dict[str, str] = field(default_factory=dict)
    #: The longest line read (``Limits.max_line_bytes``); a longer one was hashed as empty.
    max_line_bytes: int = DEFAULT_LIMITS.max_line_bytes

    def leaf_hash(self, index: int) -> bytes:
        return bytes(self.leaf_hashes[index * 32:(index + 1) * 32])

    def leaves(self) -> list[bytes]:
        return [self.leaf_hash(i) for i in range(len(self.leaf_hashes) // 32)]

    def is_log_verified(self, fh: BinaryIO) -> bool:
        """``fh`` holds exactly the lines verified: a copy of the log is held to the
        chain itself, since no single hash of the whole file was ever taken."""
        want, n = memoryview(self.leaf_hashes), 0
        for n, leaf in enumerate(leaf_hashes(fh, self.max_line_bytes), start=1):
            if want[(n - 1) * 32:n * 32] != leaf:   # past the end: empty, never equal
                return False
        return n * 32 == len(want)


@dataclass
class VerificationReport:
    bundle: LoadedBundle
    sink: DiagnosticSink
    pinned_keys: tuple[str, ...] = ()
    steps_completed: list[str] = field(default_factory=list)

    @property
    def diagnostics(self) -> list[Diagnostic]:
        order = {s: i for i, s in enumerate(reversed(Severity))}
        return sorted(self.sink.items, key=lambda d: (order[d.severity], d.code,
                                                      d.location.seq or -1,
                                                      d.location.line or -1,
                                                      d.location.path or ""))

    def count(self, severity: Severity) -> int:
        return self.sink.count(severity)

    @property
    def valid(self) -> bool:
        return not self.sink.has_errors()

    def ok(self, strict: bool = False) -> bool:
        return self.valid and not (strict and self.count(Severity.WARNING) > 0)

    @property
    def trust(self) -> Trust:
        if not self.valid:
            return Trust.INVALID
        cps = self.bundle.checkpoints
        if self.pinned_keys and cps and all(c.pinned_ok for c in cps):
            return Trust.PINNED
        return Trust.BUNDLE_ONLY

    @property
    def signed_prefix(self) -> int:
        """Events covered by the last checkpoint whose root and a signature verified."""
        good = [c.size for c in self.bundle.checkpoints if c.root_matches and c.any_ok]
        return max(good, default=0)

    def summary(self) -> dict[str, int]:
        return {s.label: self.count(s) for s in reversed(Severity)}

    def verdict(self) -> Verdict:
        return Verdict(self.trust, self.count(Severity.ERROR), self.count(Severity.WARNING))


@dataclass(frozen=True, slots=True)
class Verdict:
    """The outcome of a verification in three numbers: what the CLI prints and its exit
    code.  Small enough to keep beside the inputs it came from, so a rebuild of
    unchanged inputs can report it without verifying again."""

    trust: Trust
    errors: int
    warnings: int

    def ok(self, strict: bool = False) -> bool:
        return self.trust is not Trust.INVALID and not (strict and self.warnings > 0)

    def words(self) -> tuple[str, ...]:
        return (self.trust.value, str(self.errors), str(self.warnings))

    @classmethod
    def from_words(cls, words: tuple[str, ...]) -> Verdict | None:
        """The verdict :meth:`words` wrote, or None for anything else."""
        try:
            trust, errors, warnings = words
            verdict = cls(Trust(trust), int(errors), int(warnings))
        except ValueError:
            return None
        if verdict.errors < 0 or verdict.warnings < 0 or (
                (verdict.trust is Trust.INVALID) != (verdict.errors > 0)):
            return None
        return verdict
