"""What the order-dependent checks need to know about one event.

The verifier splits its work in two.  What depends on one line alone (parse,
canonical form, schema, the list of references) can run anywhere, also in a
worker process; what depends on the order of events (ids seen so far, seq,
the hash chain, time) runs in one place, in log order.  :class:`EventFacts`
is what crosses that line: a plain tuple, cheap to send between processes,
with just the fields the ordered checks read.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

from bundler.model.events import (
    ArchiveEvent,
    ClaimEvent,
    EdgeEvent,
    EventBase,
    EvidenceNodeEvent,
    FitnessEvent,
    IndividualEvent,
    OperatorEvent,
    PayloadRef,
    RedactionEvent,
    SteeringEvent,
    WorkflowNodeEvent,
)

ARTIFACT = frozenset({"individual", "claim"})
ANY_OBJECT = frozenset({"individual", "claim", "operator", "fitness", "archive", "steering",
                        "trace_record", "evidence_node", "workflow_node", "edge", "run",
                        "stream", "redaction"})
EVIDENCE = ANY_OBJECT - {"run", "stream", "edge", "redaction"}

#: (field, target id, types the target may have, is it a derivation?)
Reference = tuple[str, str, frozenset[str], bool]
#: :class:`Commitment`'s values as a plain tuple.
CommitmentValues = tuple[str, int, str, str | None, bool]


class Commitment(NamedTuple):
    """The fields of a :class:`~bundler.model.events.PayloadRef`, which the payload checks
    read.  Facts carry them as a plain tuple: pickling the pydantic model took a fifth of
    a worker's pickling and a third of this process's unpickling, for one event in eight."""

    digest: str
    size: int
    media_type: str
    name: str | None
    salted: bool


def commitment(ref: PayloadRef | None) -> CommitmentValues | None:
    return None if ref is None else (ref.digest, ref.size, ref.media_type, ref.name, ref.salted)


class EventFacts(NamedTuple):
    """The fields of a schema-valid event that the ordered checks read."""

    id: str
    type: str
    seq: int
    time: str
    run: str
    stream: str
    #: the references in order, as columns: ``zip`` them for (field, target, allowed)
    ref_fields: tuple[str, ...]
    ref_targets: tuple[str, ...]
    ref_allowed: tuple[frozenset[str], ...]
    #: targets of the references that are derivations (lineage), in order
    derived: tuple[str, ...]
    version: int = 1
    supersedes: str | None = None
    evidence: list[str] | None = None
    bound_evidence: list[str] | None = None
    final: bool = False
    claim_status: str | None = None
    verdict: str | None = None
    passed: bool | None = None
    target: str | None = None
    provenance: str | None = None
    inferred_by: str | None = None
    confidence: float | None = None
    #: the payload commitment, as :class:`Commitment`'s values
    payload: CommitmentValues | None = None
    redaction: RedactionEvent | None = None
    #: the event itself, only when the caller keeps events (it is the costly part to send)
    model: EventBase | None = None


def facts_of(ev: EventBase, keep_model: bool) -> EventFacts:
    return EventFacts._make(facts_tuple(ev, keep_model))


def facts_tuple(ev: EventBase, keep_model: bool) -> tuple[Any, ...]:
    """The values of :func:`facts_of` as a plain tuple (``EventFacts._make`` revives it).

    Worker processes send these: pickle writes a plain tuple in C, while a named
    tuple goes through ``__getnewargs__`` and back through its Python ``__new__``,
    which tripled the cost of sending an event.
    """
    model = ev if keep_model else None
    etype = ev.type
    columns = _COLUMNS_BY_TYPE.get(etype)
    if columns is not None:
        fields, targets, allowed, derived = columns(ev)
    elif etype == "run":
        fields = targets = allowed = derived = ()
    elif etype == "stream":
        fields, targets, allowed, derived = ("run",), (ev.run,), (_RUN,), ()
    else:  # no references of its own
        fields, targets, allowed, derived = _BASE_F, (ev.run, ev.stream), _BASE_A, ()
    head = (ev.id, etype, ev.seq, ev.time, ev.run, ev.stream, fields, targets, allowed, derived)
    # The rest in field order: version, supersedes, evidence, bound_evidence, final,
    # claim_status, verdict, passed, target, provenance, inferred_by, confidence, payload,
    # redaction, model.
    if etype == "claim":
        assert isinstance(ev, ClaimEvent)
        return (*head, ev.version, ev.supersedes, ev.evidence,
                [b.evidence for b in ev.bindings], ev.final, ev.claim_status,
                None, None, None, None, None, None, commitment(ev.payload), None, model)
    if etype == "individual":
        assert isinstance(ev, IndividualEvent)
        return (*head, ev.version, ev.supersedes, None, None, False, None,
                None, None, None, None, None, None, commitment(ev.payload), None, model)
    if etype == "fitness":
        assert isinstance(ev, FitnessEvent)
        return (*head, 1, None, None, None, False, None,
                ev.verdict, ev.passed, ev.target, None, None, None, None, None, model)
    if etype == "edge":
        assert isinstance(ev, EdgeEvent)
        return (*head, 1, None, None, None, False, None, None, None, None,
                ev.provenance, ev.inferred_by, ev.confidence, None, None, model)
    if etype == "redaction":
        assert isinstance(ev, RedactionEvent)
        return (*head, *_NOTHING_ELSE[:-2], ev, model)
    return (*head, *_NOTHING_ELSE[:-1], model)


#: The defaults of every field after ``derived``, in order.
_NOTHING_ELSE = tuple(EventFacts._field_defaults.values())


def reference_list(ev: EventBase) -> list[tuple[str, str, frozenset[str], bool]]:
    """``list(invariants.references(ev))``, several times faster: dispatch on the type once.

    The generator stays the public form (pages use it); a test checks that
    both give the same list for every event of several logs.
    """
    etype = ev.type
    out: list[tuple[str, str, frozenset[str], bool]]
    if etype == "run":
        out = []
    elif etype == "stream":
        out = [("run", ev.run, _RUN, False)]
    else:
        out = [("run", ev.run, _RUN, False), ("stream", ev.stream, _STREAM, False)]
    extra = _REFS_BY_TYPE.get(etype)
    if extra is not None:
        extra(ev, out)
    return out


_RUN, _STREAM, _OPERATOR = frozenset({"run"}), frozenset({"stream"}), frozenset({"operator"})
_TRACE, _CLAIM, _STEERING = (frozenset({"trace_record"}), frozenset({"claim"}),
                             frozenset({"steering"}))
_MEMBERS = frozenset({"evidence_node", "workflow_node"})
_Refs = list[tuple[str, str, frozenset[str], bool]]


def _individual_refs(ev: IndividualEvent, out: _Refs) -> None:
    if ev.supersedes:
        out.append(("supersedes", ev.supersedes, ARTIFACT, True))
    if ev.produced_by:
        out.append(("produced_by", ev.produced_by, _OPERATOR, True))
    for t in ev.trace:
        out.append(("trace", t, _TRACE, False))


def _claim_refs(ev: ClaimEvent, out: _Refs) -> None:
    _individual_refs(ev, out)
    for e in ev.evidence:
        out.append(("evidence", e, EVIDENCE, False))
    for b in ev.bindings:
        out.append(("bindings.evidence", b.evidence, EVIDENCE, False))
    for d in ev.derived_from:
        out.append(("derived_from", d, _CLAIM, True))


def _operator_refs(ev: OperatorEvent, out: _Refs) -> None:
    for p in ev.parents:
        out.append(("parents", p, ARTIFACT, True))
    if ev.steering:
        out.append(("steering", ev.steering, _STEERING, False))
    for t in ev.trace:
        out.append(("trace", t, _TRACE, False))


def _fitness_refs(ev: FitnessEvent, out: _Refs) -> None:
    out.append(("target", ev.target, ARTIFACT, False))
    if ev.operator:
        out.append(("operator", ev.operator, _OPERATOR, False))
    for e in ev.evidence:
        out.append(("evidence", e, EVIDENCE, False))


def _archive_refs(ev: ArchiveEvent, out: _Refs) -> None:
    out.append(("member", ev.member, ARTIFACT, False))
    if ev.operator:
        out.append(("operator", ev.operator, _OPERATOR, False))


def _steering_refs(ev: SteeringEvent, out: _Refs) -> None:
    if ev.target:
        out.append(("target", ev.target, ANY_OBJECT, False))


def _evidence_node_refs(ev: EvidenceNodeEvent, out: _Refs) -> None:
    for r in ev.records:
        out.append(("records", r, _TRACE, False))
    if ev.individual:
        out.append(("individual", ev.individual, ARTIFACT, False))


def _workflow_node_refs(ev: WorkflowNodeEvent, out: _Refs) -> None:
    for m in ev.members:
        out.append(("members", m, _MEMBERS, False))


def _edge_refs(ev: EdgeEvent, out: _Refs) -> None:
    out.append(("source", ev.source, EVIDENCE, False))
    out.append(("target", ev.target, EVIDENCE, False))


_REFS_BY_TYPE: dict[str, Callable[[Any, _Refs], None]] = {
    "individual": _individual_refs, "claim": _claim_refs, "operator": _operator_refs,
    "fitness": _fitness_refs, "archive": _archive_refs, "steering": _steering_refs,
    "evidence_node": _evidence_node_refs, "workflow_node": _workflow_node_refs,
    "edge": _edge_refs,
}


# The same references as reference_list, built as the four columns of EventFacts
# (fields, targets, allowed types, derivation targets) with tuple arithmetic: half
# the cost of building tuples per reference and transposing them.  A test checks
# both against each other on every event of several logs.
_Columns = tuple[tuple[str, ...], tuple[str, ...], tuple[frozenset[str], ...], tuple[str, ...]]
_BASE_F = ("run", "stream")
_BASE_A = (_RUN, _STREAM)


def _maybe(value: str | None) -> tuple[str, ...]:
    return (value,) if value else ()


def _individual_columns(ev: IndividualEvent) -> _Columns:
    sup, prod, trace = _maybe(ev.supersedes), _maybe(ev.produced_by), tuple(ev.trace)
    return (_BASE_F + ("supersedes",) * len(sup) + ("produced_by",) * len(prod)
            + ("trace",) * len(trace),
            (ev.run, ev.stream, *sup, *prod, *trace),
            _BASE_A + (ARTIFACT,) * len(sup) + (_OPERATOR,) * len(prod) + (_TRACE,) * len(trace),
            sup + prod)


def _claim_columns(ev: ClaimEvent) -> _Columns:
    fields, targets, allowed, derived = _individual_columns(ev)
    evidence, derived_from = tuple(ev.evidence), tuple(ev.derived_from)
    bound = tuple(b.evidence for b in ev.bindings)
    return (fields + ("evidence",) * len(evidence) + ("bindings.evidence",) * len(bound)
            + ("derived_from",) * len(derived_from),
            targets + evidence + bound + derived_from,
            allowed + (EVIDENCE,) * (len(evidence) + len(bound)) + (_CLAIM,) * len(derived_from),
            derived + derived_from)


def _operator_columns(ev: OperatorEvent) -> _Columns:
    parents, steering, trace = tuple(ev.parents), _maybe(ev.steering), tuple(ev.trace)
    return (_BASE_F + ("parents",) * len(parents) + ("steering",) * len(steering)
            + ("trace",) * len(trace),
            (ev.run, ev.stream, *parents, *steering, *trace),
            _BASE_A + (ARTIFACT,) * len(parents) + (_STEERING,) * len(steering)
            + (_TRACE,) * len(trace),
            parents)


def _fitness_columns(ev: FitnessEvent) -> _Columns:
    operator, evidence = _maybe(ev.operator), tuple(ev.evidence)
    return (_BASE_F + ("target",) + ("operator",) * len(operator) + ("evidence",) * len(evidence),
            (ev.run, ev.stream, ev.target, *operator, *evidence),
            _BASE_A + (ARTIFACT,) + (_OPERATOR,) * len(operator) + (EVIDENCE,) * len(evidence),
            ())


def _archive_columns(ev: ArchiveEvent) -> _Columns:
    operator = _maybe(ev.operator)
    return (_BASE_F + ("member",) + ("operator",) * len(operator),
            (ev.run, ev.stream, ev.member, *operator),
            _BASE_A + (ARTIFACT,) + (_OPERATOR,) * len(operator), ())


def _steering_columns(ev: SteeringEvent) -> _Columns:
    target = _maybe(ev.target)
    return (_BASE_F + ("target",) * len(target), (ev.run, ev.stream, *target),
            _BASE_A + (ANY_OBJECT,) * len(target), ())


def _evidence_node_columns(ev: EvidenceNodeEvent) -> _Columns:
    records, individual = tuple(ev.records), _maybe(ev.individual)
    return (_BASE_F + ("records",) * len(records) + ("individual",) * len(individual),
            (ev.run, ev.stream, *records, *individual),
            _BASE_A + (_TRACE,) * len(records) + (ARTIFACT,) * len(individual), ())


def _workflow_node_columns(ev: WorkflowNodeEvent) -> _Columns:
    members = tuple(ev.members)
    return (_BASE_F + ("members",) * len(members), (ev.run, ev.stream, *members),
            _BASE_A + (_MEMBERS,) * len(members), ())


_EDGE_F = ("run", "stream", "source", "target")
_EDGE_A = (_RUN, _STREAM, EVIDENCE, EVIDENCE)


def _edge_columns(ev: EdgeEvent) -> _Columns:
    return _EDGE_F, (ev.run, ev.stream, ev.source, ev.target), _EDGE_A, ()


_COLUMNS_BY_TYPE: dict[str, Callable[[Any], _Columns]] = {
    "individual": _individual_columns, "claim": _claim_columns,
    "operator": _operator_columns, "fitness": _fitness_columns,
    "archive": _archive_columns, "steering": _steering_columns,
    "evidence_node": _evidence_node_columns, "workflow_node": _workflow_node_columns,
    "edge": _edge_columns,
}
