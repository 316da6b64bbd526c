"""Event models: one class per ``type``.

Design choices worth knowing:

* Every event has an ``id`` (the object it introduces).  References between
  events are by id and must point *backwards* in the log (invariant 1), so a
  child individual names the operator that ``produced_by`` it rather than the
  operator listing children it has not seen yet.
* Ids starting with ``ext:`` are external imports (a DOI, a URL, a dataset
  outside the run) and are allowed to be unresolved.
* Payload bytes never appear in events, only commitments (``PayloadRef``), so
  redacting bytes never changes a leaf hash.
* Times are RFC 3339 strings because JCS cannot carry integers above 2^53.
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator
from pydantic_core import ErrorDetails

FORMAT_VERSION = "review-bundle/1"

ID_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._:@/+\-]{0,199}$"

HEX64 = r"^[0-9a-f]{64}$"
DIGEST_PATTERN = r"^sha256:[0-9a-f]{64}$"
RFC3339 = re.compile(
    r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?(Z|[+-]\d{2}:\d{2})", re.ASCII
)


def parse_time(value: str) -> datetime:
    """Parse an RFC 3339 timestamp (the subset the format allows) to an aware datetime.

    Fractions beyond microseconds are truncated for comparison only; the
    string in the log is never rewritten.
    """
    if not RFC3339.fullmatch(value):
        raise ValueError("time must be an RFC 3339 string such as 2026-05-01T12:00:00Z")
    head, _, frac_tz = value.partition(".")
    if frac_tz:
        digits = re.match(r"\d+", frac_tz, re.ASCII)
        assert digits is not None
        value = f"{head}.{digits.group(0)[:6].ljust(6, '0')}{frac_tz[digits.end():]}"
    return datetime.fromisoformat(value.replace("Z", "+00:00"))

# The same strings, every field in range (the days of each month, leap years, offsets
# under 24 hours): what parse_time accepts, as one pattern that pydantic-core matches in
# its regex engine, instead of a Python validator per event (a fifth of validating a
# trace record).  tests/model/test_time_pattern.py compares the two on every month and
# day number of years around each leap-year rule, and on every time field's edges.
_YEAR = r"(?:000[1-9]|00[1-9][0-9]|0[1-9][0-9]{2}|[1-9][0-9]{3})"
_LEAP_YEAR = r"(?:[0-9]{2}(?:0[48]|[2468][048]|[13579][26])|(?:0[48]|[2468][048]|[13579][26])00)"
_DATE = (rf"(?:{_YEAR}-(?:(?:0[13578]|1[02])-(?:0[1-9]|[12][0-9]|3[01])"
         rf"|(?:0[469]|11)-(?:0[1-9]|[12][0-9]|30)|02-(?:0[1-9]|1[0-9]|2[0-8]))"
         rf"|{_LEAP_YEAR}-02-29)")
_TIME = r"(?:[01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9](?:\.[0-9]{1,9})?"
_ZONE = r"(?:Z|[+-](?:[01][0-9]|2[0-3]):[0-5][0-9])"
RFC3339_PATTERN = rf"^{_DATE}T{_TIME}{_ZONE}$"
TIME_MESSAGE = ("must be an RFC 3339 time such as 2026-05-01T12:00:00Z, with a real date and "
                "every field in range")
Timestamp = Annotated[str, Field(pattern=RFC3339_PATTERN)]


def error_message(err: ErrorDetails) -> str:
    """pydantic's message for one validation error, except that a time failing its
    pattern is named for what it must be, not by a regular expression."""
    ctx = err.get("ctx") or {}
    if err["type"] == "string_pattern_mismatch" and ctx.get("pattern") == RFC3339_PATTERN:
        return TIME_MESSAGE
    return err["msg"]


ObjectId = Annotated[str, Field(pattern=ID_PATTERN)]
Digest = Annotated[str, Field(pattern=DIGEST_PATTERN)]
JsonScalar = str | int | float | bool | None

WORKFLOW_PHASES = ("context", "plan", "inspect", "execute", "validate", "claim")
EDGE_RELATIONS = ("uses", "produces", "checked_by", "supports", "informs", "frames")
VERDICTS = ("supported", "unsupported", "contradicted", "needs_human_review")
OPERATOR_TYPES = ("refine", "mutate", "crossover", "synthesize", "extract", "review", "verify",
                  "select", "plan_update", "execute", "inspect", "revise", "custom")


class _Strict(BaseModel):
    """Unknown fields are errors: a typo must not silently drop evidence."""

    # strict: a JSON "3" is not the integer 3, and "yes" is not true.  Lax
    # coercion would let two different byte strings mean the same event.
    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)


class PayloadRef(_Strict):
    """A commitment to payload bytes; the bytes themselves live in ``payloads/``."""

    digest: Digest
    size: int = Field(ge=0)
    media_type: str = Field(min_length=1, max_length=200)
    name: str | None = Field(default=None, max_length=500,
                             description="original file name, for display and download")
    salted: bool = Field(default=False, description=(
        "digest is SHA-256(salt16 || bytes); the salt sits beside the payload"))


class Evaluator(_Strict):
    name: str = Field(min_length=1, max_length=200)
    version: str = Field(min_length=1, max_length=200)


class SpanRef(_Strict):
    """An OpenTelemetry span that executed an operator (low-level evidence)."""

    trace_id: str = Field(pattern=r"^[0-9a-f]{32}$")
    span_id: str = Field(pattern=r"^[0-9a-f]{16}$")


class EventBase(_Strict):
    seq: int = Field(ge=0)
    prev: str = Field(pattern=HEX64)
    type: str
    id: ObjectId
    time: Timestamp = Field(description="RFC 3339 timestamp")
    run: ObjectId
    stream: ObjectId
    attributes: dict[str, Any] = Field(default_factory=dict, description=(
        "free-form extra data; shown on the site, never interpreted"))

    @field_validator("id")
    @classmethod
    def _own_id(cls, v: str) -> str:
        if v.startswith("ext:"):
            raise ValueError("an event's own id may not use the external-import prefix 'ext:'")
        return v


class RunEvent(EventBase):
    """Frames one autonomous process.  ``run`` must equal ``id``."""

    type: Literal["run"]
    title: str = Field(max_length=500)
    objective: str = Field(default="", max_length=20_000)
    agent: str | None = Field(default=None, max_length=200)


class StreamEvent(EventBase):
    """A worker, agent role, tool, instrument or human interface.  ``stream`` must equal ``id``."""

    type: Literal["stream"]
    kind: Literal["worker", "agent", "tool", "instrument", "human", "evaluator", "tracer",
                  "system"]
    name: str = Field(max_length=200)
    description: str = Field(default="", max_length=5_000)


class IndividualEvent(EventBase):
    """Any artifact under inspection; versioned, and points at its payload by digest."""

    type: Literal["individual"]
    kind: str = Field(min_length=1, max_length=100, description=(
        "program, draft, table, figure, plan, sample, dataset, patch, command_output, "
        "agent_version, protocol, measurement, report, ..."))
    name: str = Field(max_length=500)
    version: int = Field(default=1, ge=1)
    supersedes: ObjectId | None = Field(default=None, description="the previous version")
    produced_by: ObjectId | None = Field(default=None, description="the operator that derived it")
    payload: PayloadRef | None = None
    external: str | None = Field(default=None, max_length=2_000, description=(
        "URI of an artifact imported from outside the run"))
    status: Literal["candidate", "accepted", "rejected", "final", "superseded"] | None = None
    trace: list[ObjectId] = Field(default_factory=list, description="source trace records")


class EvidenceBinding(_Strict):
    """How one piece of evidence was used by a claim."""

    evidence: ObjectId
    field: str = Field(max_length=1_000, description=(
        "the field read: for CSV '<column>@<key_column>=<key_value>' or '#rows', for JSON a "
        "dotted path such as 'metrics.accuracy'"))
    value: JsonScalar = Field(description="the value extracted")
    comparison: str = Field(default="equals", max_length=500, description=(
        "the comparison made, e.g. 'equals', '>= threshold 0.9'"))
    stance: Literal["supports", "weakens"] = "supports"
    note: str = Field(default="", max_length=5_000)


class ClaimEvent(IndividualEvent):
    """A claim is an individual with text, evidence references and bindings."""

    type: Literal["claim"]  # type: ignore[assignment]
    kind: str = "claim"
    text: str = Field(min_length=1, max_length=50_000, description="Markdown")
    evidence: list[ObjectId] = Field(default_factory=list)
    bindings: list[EvidenceBinding] = Field(default_factory=list)
    final: bool = False
    claim_status: Literal["asserted", "unsupported", "retracted"] = "asserted"
    derived_from: list[ObjectId] = Field(default_factory=list, description=(
        "earlier claims this one inherits or revises"))


class OperatorEvent(EventBase):
    """A derivation from parents to (later) children, or an act on existing records."""

    type: Literal["operator"]
    op: str = Field(min_length=1, max_length=100, description=(
        "refine, mutate, crossover, synthesize, extract, review, verify, select, "
        "plan_update, execute, inspect, revise, or custom"))
    custom_type: str | None = Field(default=None, max_length=100)
    parents: list[ObjectId] = Field(default_factory=list)
    tool: str | None = Field(default=None, max_length=500)
    agent: str | None = Field(default=None, max_length=500)
    params: dict[str, Any] = Field(default_factory=dict)
    spans: list[SpanRef] = Field(default_factory=list)
    outcome: Literal["success", "failure"] = "success"
    steering: ObjectId | None = Field(default=None, description="steering command it applied")
    trace: list[ObjectId] = Field(default_factory=list)
    summary: str = Field(default="", max_length=5_000)

    @model_validator(mode="after")
    def _custom(self) -> OperatorEvent:
        if self.op == "custom" and not self.custom_type:
            raise ValueError("op 'custom' needs custom_type")
        return self


class FitnessEvent(EventBase):
    """An evaluator's output about one individual (invariant 4)."""

    type: Literal["fitness"]
    target: ObjectId
    evaluator: Evaluator
    metric: str | None = Field(default=None, max_length=200)
    score: float | None = None
    threshold: float | None = None
    higher_is_better: bool = True
    passed: bool | None = None
    verdict: Literal["supported", "unsupported", "contradicted", "needs_human_review"] | None = None
    review: str | None = Field(default=None, max_length=50_000, description="Markdown review")
    operator: ObjectId | None = None
    evidence: list[ObjectId] = Field(default_factory=list)
    note: str = Field(default="", max_length=5_000)

    @model_validator(mode="after")
    def _has_value(self) -> FitnessEvent:
        if self.score is None and self.passed is None and self.verdict is None and not self.review:
            raise ValueError("fitness needs a score, passed, verdict or review")
        return self


class ArchiveEvent(EventBase):
    type: Literal["archive"]
    archive: str = Field(min_length=1, max_length=200)
    action: Literal["add", "remove"]
    member: ObjectId
    reason: str = Field(default="", max_length=5_000)
    operator: ObjectId | None = None


class SteeringEvent(EventBase):
    """A human or external command; the operator that applies it names it."""

    type: Literal["steering"]
    command: str = Field(min_length=1, max_length=100, description=(
        "pause, resume, force_plan, approve, reject, stop, ..."))
    text: str = Field(default="", max_length=20_000)
    issuer: str = Field(min_length=1, max_length=200)
    target: ObjectId | None = None


class RedactionEvent(EventBase):
    type: Literal["redaction"]
    target: Digest
    reason: str = Field(min_length=1, max_length=5_000)
    authority: str = Field(min_length=1, max_length=500)


class SourceRef(_Strict):
    transcript: str = Field(max_length=2_000, description="source transcript path or name")
    line: int | None = Field(default=None, ge=1)
    format: str = Field(default="jsonl", max_length=100)


class TraceRecordEvent(EventBase):
    """A raw source record kept unchanged (LEDGER's source of truth)."""

    type: Literal["trace_record"]
    source: SourceRef
    record_kind: Literal["message", "tool_call", "tool_result", "file_read", "file_write",
                         "search", "command", "hook", "error", "unrecognized", "parse_error"]
    raw: str = Field(max_length=200_000, description="the source record, verbatim")
    error: str | None = Field(default=None, max_length=5_000)

    @model_validator(mode="after")
    def _error_kinds(self) -> TraceRecordEvent:
        if self.record_kind in ("parse_error", "unrecognized") and not self.error:
            raise ValueError(f"record_kind {self.record_kind!r} needs an error message")
        return self


class EvidenceNodeEvent(EventBase):
    type: Literal["evidence_node"]
    node_type: Literal["action", "artifact"]
    category: str = Field(min_length=1, max_length=100, description=(
        "user_message, tool_call, control, artifact, ..."))
    label: str = Field(max_length=1_000)
    records: list[ObjectId] = Field(default_factory=list)
    individual: ObjectId | None = None


class WorkflowNodeEvent(EventBase):
    type: Literal["workflow_node"]
    phase: Literal["context", "plan", "inspect", "execute", "validate", "claim"]
    label: str = Field(max_length=1_000)
    members: list[ObjectId] = Field(default_factory=list)


class EdgeEvent(EventBase):
    """A typed semantic edge, recorded or inferred (LEDGER future work, made explicit)."""

    type: Literal["edge"]
    relation: Literal["uses", "produces", "checked_by", "supports", "informs", "frames"]
    source: ObjectId
    target: ObjectId
    provenance: Literal["recorded", "inferred"] = "recorded"
    inferred_by: str | None = Field(default=None, max_length=200)
    confidence: float | None = Field(default=None, ge=0.0, le=1.0)
    rationale: str = Field(default="", max_length=5_000)


Event = (RunEvent | StreamEvent | IndividualEvent | ClaimEvent | OperatorEvent | FitnessEvent
         | ArchiveEvent | SteeringEvent | RedactionEvent | TraceRecordEvent | EvidenceNodeEvent
         | WorkflowNodeEvent | EdgeEvent)

EVENT_MODELS: dict[str, type[EventBase]] = {
    "run": RunEvent,
    "stream": StreamEvent,
    "individual": IndividualEvent,
    "claim": ClaimEvent,
    "operator": OperatorEvent,
    "fitness": FitnessEvent,
    "archive": ArchiveEvent,
    "steering": SteeringEvent,
    "redaction": RedactionEvent,
    "trace_record": TraceRecordEvent,
    "evidence_node": EvidenceNodeEvent,
    "workflow_node": WorkflowNodeEvent,
    "edge": EdgeEvent,
}
