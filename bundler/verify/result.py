"""Typed outputs of the verify stage, consumed by the graph and render stages."""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from pathlib import Path

from bundler.diagnostics import Diagnostic, DiagnosticSink, Severity
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
    event_lines: dict[int, int] = field(default_factory=dict)  # seq -> line number
    payloads: dict[str, PayloadStatus] = field(default_factory=dict)
    checkpoints: list[CheckpointCheck] = field(default_factory=list)

    def leaf_hash(self, index: int) -> bytes:
        return bytes(self.leaf_hashes[index * 32:(index + 1) * 32])

    def leaves(self) -> list[bytes]:
        return [self.leaf_hash(i) for i in range(len(self.leaf_hashes) // 32)]


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
