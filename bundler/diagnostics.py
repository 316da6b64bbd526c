"""Diagnostics are data: every finding is a value with a stable code.

Verification never raises for a problem *in the bundle*; it records a
``Diagnostic`` and carries on (or stops the step, failing closed).  Only the
CLI decides what a set of diagnostics means for the exit code, which keeps
the library usable from other tools (CI annotators, the site builder).
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field


class Severity(enum.IntEnum):
    """Ordered so that ``max()`` over a report gives its worst finding."""

    INFO = 0
    WARNING = 1
    ERROR = 2

    @property
    def label(self) -> str:
        return self.name.lower()

    @classmethod
    def parse(cls, text: str) -> Severity:
        try:
            return cls[text.strip().upper()]
        except KeyError:
            raise ValueError(f"unknown severity {text!r} (use error, warning or info)") from None


@dataclass(frozen=True, slots=True)
class Location:
    """Where a finding points: an event (seq and 1-based line) and/or a file."""

    path: str | None = None
    line: int | None = None
    seq: int | None = None

    def __str__(self) -> str:
        parts: list[str] = []
        if self.path:
            parts.append(self.path + (f":{self.line}" if self.line is not None else ""))
        elif self.line is not None:
            parts.append(f"line {self.line}")
        if self.seq is not None:
            parts.append(f"seq {self.seq}")
        return " ".join(parts) if parts else "bundle"

    def as_dict(self) -> dict[str, object]:
        return {k: v for k, v in (("path", self.path), ("line", self.line), ("seq", self.seq))
                if v is not None}


@dataclass(frozen=True, slots=True)
class Diagnostic:
    code: str
    severity: Severity
    message: str
    location: Location = field(default_factory=Location)

    def as_dict(self) -> dict[str, object]:
        return {
            "code": self.code,
            "severity": self.severity.label,
            "title": CODES[self.code].title if self.code in CODES else self.code,
            "message": self.message,
            "location": self.location.as_dict(),
        }


@dataclass(frozen=True, slots=True)
class CodeInfo:
    code: str
    severity: Severity
    title: str
    step: str


def _c(code: str, severity: Severity, title: str, step: str) -> tuple[str, CodeInfo]:
    return code, CodeInfo(code, severity, title, step)


E, W, I = Severity.ERROR, Severity.WARNING, Severity.INFO  # noqa: E741

#: The registry of every code the verifier can emit.  Codes are stable: never
#: renumber one, only add.  ``docs/diagnostics.md`` is generated from this.
CODES: dict[str, CodeInfo] = dict(
    [
        # RB1xx: reading the bundle container and its files
        _c("RB100", E, "bundle path does not exist", "open"),
        _c("RB101", E, "unsupported bundle container", "open"),
        _c("RB102", E, "unsafe archive entry (absolute path or '..')", "open"),
        _c("RB103", E, "symlink or special file in bundle", "open"),
        _c("RB104", E, "archive exceeds declared expansion limits", "open"),
        _c("RB105", E, "bundle metadata file missing", "open"),
        _c("RB106", E, "payload manifest missing", "open"),
        _c("RB107", E, "event log missing", "open"),
        _c("RB108", E, "bundle metadata invalid", "open"),
        _c("RB109", E, "payload manifest invalid", "open"),
        _c("RB110", E, "empty event log", "parse"),
        _c("RB111", E, "event line is not valid UTF-8", "parse"),
        _c("RB112", E, "event line is not valid JSON", "parse"),
        _c("RB113", E, "event line exceeds the size limit", "parse"),
        _c("RB114", W, "truncated last line (no trailing newline): ignored", "parse"),
        _c("RB115", E, "duplicate key in JSON object", "parse"),
        _c("RB116", E, "event line is not in RFC 8785 canonical form", "parse"),
        _c("RB117", E, "archive is corrupt or unreadable", "open"),
        _c("RB118", E, "archive entry conflicts with an earlier one (a path given twice)",
           "open"),
        # RB2xx: structure and schema of events
        _c("RB200", E, "unknown event type", "schema"),
        _c("RB201", E, "event does not match the schema", "schema"),
        _c("RB202", E, "duplicate object id", "structure"),
        _c("RB203", E, "seq is not contiguous", "structure"),
        _c("RB204", E, "unsupported format version", "structure"),
        _c("RB205", W, "event time goes backwards", "structure"),
        _c("RB206", E, "events out of order", "structure"),
        _c("RB207", E, "seq repeated (event inserted)", "structure"),
        # RB3xx: hash chain, Merkle tree and signed checkpoints
        _c("RB300", E, "prev does not match the previous event's leaf hash", "chain"),
        _c("RB301", E, "checkpoint root does not match the event log", "chain"),
        _c("RB302", E, "checkpoint signature invalid", "chain"),
        _c("RB303", E, "checkpoint covers more events than the log holds", "chain"),
        _c("RB304", E, "checkpoint is malformed", "chain"),
        _c("RB305", W, "events after the last checkpoint are not signed", "chain"),
        _c("RB306", E, "no signed checkpoint", "chain"),
        _c("RB307", W, "checkpoint signed by a key found only in the bundle", "trust"),
        _c("RB308", E, "checkpoint not signed by any pinned key", "trust"),
        _c("RB309", E, "checkpoint signed by an unknown key", "chain"),
        _c("RB310", E, "checkpoint origin does not match the bundle", "chain"),
        _c("RB311", E, "verification key is malformed", "trust"),
        # RB4xx: payloads, manifest and redaction (DESIGN-NOTES section 3)
        _c("RB400", E, "payload corrupt: digest does not match the bytes", "payloads"),
        _c("RB401", E, "payload missing without a redaction record", "payloads"),
        _c("RB402", E, "redacted payload bytes still shipped (leaked)", "payloads"),
        _c("RB403", E, "payload size does not match the manifest", "payloads"),
        _c("RB405", E, "payload referenced by an event is not in the manifest", "payloads"),
        _c("RB406", W, "manifest lists a payload no event refers to", "payloads"),
        _c("RB407", E, "unsafe payload path in manifest", "payloads"),
        _c("RB408", E, "manifest entry disagrees with the event commitment", "payloads"),
        _c("RB410", E, "manifest redaction state disagrees with the log", "payloads"),
        _c("RB411", W, "unexpected file in the bundle", "payloads"),
        _c("RB412", E, "salt of a redacted payload still shipped: redaction not final",
           "payloads"),
        _c("RB413", W, "payload committed after the last checkpoint is not in the manifest",
           "payloads"),
        # RB5xx: the five invariants of the profile (Appendix A) and graph rules
        _c("RB501", E, "reference does not resolve to an earlier event", "invariants"),
        _c("RB502", E, "derivation cycle", "invariants"),
        _c("RB503", W, "final claim has no evidence binding, failed verification "
                       "or explicit unsupported status", "invariants"),
        _c("RB504", E, "evaluator output lacks evaluator version or target", "invariants"),
        _c("RB505", E, "redaction targets a payload no event commits to", "invariants"),
        _c("RB506", E, "reference has the wrong kind of target", "invariants"),
        _c("RB507", E, "inferred edge lacks tracer or confidence", "invariants"),
        _c("RB508", I, "reference to an external import", "invariants"),
        _c("RB509", E, "run or stream not declared before use", "invariants"),
        _c("RB510", W, "evidence binding cites evidence the claim does not list", "invariants"),
    ]
)


def default_severity(code: str) -> Severity:
    return CODES[code].severity


@dataclass
class DiagnosticSink:
    """Collects diagnostics, applying per-code severity overrides on entry.

    Overrides live here rather than at report time so that every consumer
    (text, JSON, SARIF, the site) sees the same effective severity.
    """

    overrides: Mapping[str, Severity] = field(default_factory=dict)
    items: list[Diagnostic] = field(default_factory=list)
    limit_per_code: int = 1000
    _counts: dict[str, int] = field(default_factory=dict)
    suppressed: dict[str, int] = field(default_factory=dict)
    _hidden: dict[Severity, int] = field(default_factory=dict)

    def emit(self, code: str, message: str, location: Location | None = None,
             severity: Severity | None = None) -> None:
        sev = self.overrides.get(code, severity if severity is not None else default_severity(code))
        n = self._counts.get(code, 0) + 1
        self._counts[code] = n
        if n > self.limit_per_code:
            # A hostile log can produce millions of identical findings; keep the
            # count honest but bound memory.
            self.suppressed[code] = self.suppressed.get(code, 0) + 1
            self._hidden[sev] = self._hidden.get(sev, 0) + 1
            return
        self.items.append(Diagnostic(code, sev, message, location or Location()))

    def extend(self, diags: Iterable[Diagnostic]) -> None:
        for d in diags:
            self.emit(d.code, d.message, d.location, d.severity)

    def __iter__(self) -> Iterator[Diagnostic]:
        return iter(self.items)

    def count(self, severity: Severity) -> int:
        return sum(1 for d in self.items if d.severity == severity) + self._hidden.get(severity, 0)

    def has_errors(self) -> bool:
        return self.count(Severity.ERROR) > 0

    def codes(self) -> list[str]:
        return [d.code for d in self.items]


def parse_overrides(pairs: Iterable[str]) -> dict[str, Severity]:
    """Parse ``CODE=severity`` strings from the command line."""
    out: dict[str, Severity] = {}
    for pair in pairs:
        code, sep, sev = pair.partition("=")
        if not sep:
            raise ValueError(f"bad severity override {pair!r}: expected CODE=error|warning|info")
        if code not in CODES:
            raise ValueError(f"bad severity override {pair!r}: {code!r} is no diagnostic code "
                             "(they are listed in docs/diagnostics.md)")
        out[code] = Severity.parse(sev)
    return out
