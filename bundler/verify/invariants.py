"""The profile's five invariants (Appendix A) and the graph's reference rules.

Checked while streaming: each event's references are resolved against the ids
seen so far, which is exactly invariant 1 ("resolves to an *earlier* event").
Claim support (invariant 3) and cycles (invariant 2) need the whole log and
are settled in :meth:`InvariantChecker.finish`.

The checker runs once per event of logs with millions of them, so it keeps
line numbers rather than ``Location`` objects and builds a location only for
a finding.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from bundler import layout
from bundler.diagnostics import DiagnosticSink, Location
from bundler.model.events import (
    ArchiveEvent,
    ClaimEvent,
    EdgeEvent,
    EventBase,
    EvidenceNodeEvent,
    FitnessEvent,
    IndividualEvent,
    OperatorEvent,
    SteeringEvent,
    WorkflowNodeEvent,
)

ARTIFACT = frozenset({"individual", "claim"})
ANY_OBJECT = frozenset({"individual", "claim", "operator", "fitness", "archive", "steering",
                        "trace_record", "evidence_node", "workflow_node", "edge", "run",
                        "stream", "redaction"})
EVIDENCE = ANY_OBJECT - {"run", "stream", "edge", "redaction"}
FAILED_VERDICTS = frozenset({"unsupported", "contradicted", "needs_human_review"})


def references(ev: EventBase) -> Iterator[tuple[str, str, frozenset[str], bool]]:
    """Yield ``(field, target_id, allowed_types, is_derivation)`` for every reference."""
    if ev.type != "run":
        yield "run", ev.run, frozenset({"run"}), False
        if ev.type != "stream":
            yield "stream", ev.stream, frozenset({"stream"}), False
    if isinstance(ev, IndividualEvent):
        if ev.supersedes:
            yield "supersedes", ev.supersedes, ARTIFACT, True
        if ev.produced_by:
            yield "produced_by", ev.produced_by, frozenset({"operator"}), True
        for t in ev.trace:
            yield "trace", t, frozenset({"trace_record"}), False
        if isinstance(ev, ClaimEvent):
            for e in ev.evidence:
                yield "evidence", e, EVIDENCE, False
            for b in ev.bindings:
                yield "bindings.evidence", b.evidence, EVIDENCE, False
            for d in ev.derived_from:
                yield "derived_from", d, frozenset({"claim"}), True
    elif isinstance(ev, OperatorEvent):
        for p in ev.parents:
            yield "parents", p, ARTIFACT, True
        if ev.steering:
            yield "steering", ev.steering, frozenset({"steering"}), False
        for t in ev.trace:
            yield "trace", t, frozenset({"trace_record"}), False
    elif isinstance(ev, FitnessEvent):
        yield "target", ev.target, ARTIFACT, False
        if ev.operator:
            yield "operator", ev.operator, frozenset({"operator"}), False
        for e in ev.evidence:
            yield "evidence", e, EVIDENCE, False
    elif isinstance(ev, ArchiveEvent):
        yield "member", ev.member, ARTIFACT, False
        if ev.operator:
            yield "operator", ev.operator, frozenset({"operator"}), False
    elif isinstance(ev, SteeringEvent):
        if ev.target:
            yield "target", ev.target, ANY_OBJECT, False
    elif isinstance(ev, EvidenceNodeEvent):
        for r in ev.records:
            yield "records", r, frozenset({"trace_record"}), False
        if ev.individual:
            yield "individual", ev.individual, ARTIFACT, False
    elif isinstance(ev, WorkflowNodeEvent):
        for m in ev.members:
            yield "members", m, frozenset({"evidence_node", "workflow_node"}), False
    elif isinstance(ev, EdgeEvent):
        yield "source", ev.source, EVIDENCE, False
        yield "target", ev.target, EVIDENCE, False


def _fast_references(ev: EventBase) -> list[tuple[str, str, frozenset[str], bool]]:
    """``list(references(ev))``, several times faster: dispatch on the type once.

    The generator above stays the public form (pages use it); a test checks
    that both give the same list for every event of a synthetic log.
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


def event_location(line: int, seq: int | None) -> Location:
    return Location(path=layout.EVENTS, line=line, seq=seq)


@dataclass
class InvariantChecker:
    """Per-event checks in :meth:`observe`, whole-log checks in :meth:`finish`.

    Locations are kept as ``(line, seq)`` and built only for a finding.
    """

    sink: DiagnosticSink
    types: dict[str, str] = field(default_factory=dict)
    versions: dict[str, int] = field(default_factory=dict)
    final_claims: dict[str, tuple[int, int, bool]] = field(default_factory=dict)
    failed_verification: set[str] = field(default_factory=set)
    derivations: dict[str, list[str]] = field(default_factory=dict)
    #: (line, seq) of every event that derives from another: cycles are reported there.
    derivation_lines: dict[str, tuple[int, int]] = field(default_factory=dict)
    run_streams: list[tuple[str, str, int, int]] = field(default_factory=list)
    #: one shared copy of each type name, instead of one string per event
    _type_names: dict[str, str] = field(default_factory=dict)

    def observe(self, ev: EventBase, line: int) -> None:
        """Check one schema-valid event found at ``line`` (1-based) of the log."""
        eid = ev.id
        types = self.types
        if eid in types:
            self.sink.emit("RB202", f"id {eid!r} is already used by an earlier "
                           f"{types[eid]} event", event_location(line, ev.seq))
            return
        etype = ev.type
        if etype == "run":
            if ev.run != eid:
                self.sink.emit("RB509", f"a run event's run ({ev.run!r}) must equal its id",
                               event_location(line, ev.seq))
            # The run comes before its streams, so its stream is checked at the end.
            self.run_streams.append((eid, ev.stream, line, ev.seq))
        elif etype == "stream" and ev.stream != eid:
            self.sink.emit("RB509", f"a stream event's stream ({ev.stream!r}) must equal its id",
                           event_location(line, ev.seq))
        derived: list[str] | None = None
        for fname, target, allowed, derivation in _fast_references(ev):
            if derivation:
                if derived is None:
                    derived = self.derivations.setdefault(eid, [])
                    self.derivation_lines[eid] = (line, ev.seq)
                derived.append(target)
            found = types.get(target)
            if found is None or found not in allowed:  # ids never start with "ext:"
                self._resolve(ev, fname, target, allowed, line)
        name = self._type_names.setdefault(etype, etype)
        types[eid] = name
        if etype == "individual" or etype == "claim":
            assert isinstance(ev, IndividualEvent)
            self._individual(ev, line)
        elif etype == "fitness":
            assert isinstance(ev, FitnessEvent)
            if ev.verdict in FAILED_VERDICTS or ev.passed is False:
                self.failed_verification.add(ev.target)
        elif etype == "edge":
            assert isinstance(ev, EdgeEvent)
            if ev.provenance == "inferred" and (not ev.inferred_by or ev.confidence is None):
                self.sink.emit("RB507", f"inferred edge {eid!r} must name inferred_by and give "
                               "a confidence", event_location(line, ev.seq))

    def _resolve(self, ev: EventBase, fname: str, target: str, allowed: frozenset[str],
                 line: int) -> None:
        loc = event_location(line, ev.seq)
        if target.startswith("ext:"):
            self.sink.emit("RB508", f"{ev.type} {ev.id!r} {fname} -> external import "
                           f"{target!r}", loc)
            return
        found = self.types.get(target)
        if found is None:
            code = "RB509" if fname in ("run", "stream") else "RB501"
            self.sink.emit(code, f"{ev.type} {ev.id!r}: {fname} -> {target!r} does not resolve "
                           "to an earlier event", loc)
        elif found not in allowed:
            self.sink.emit("RB506", f"{ev.type} {ev.id!r}: {fname} -> {target!r} is a {found}, "
                           f"expected {' or '.join(sorted(allowed))}", loc)

    def _individual(self, ev: IndividualEvent, line: int) -> None:
        self.versions[ev.id] = ev.version
        if ev.supersedes and ev.supersedes in self.versions and \
                self.versions[ev.supersedes] >= ev.version:
            self.sink.emit("RB502", f"{ev.id!r} (version {ev.version}) supersedes "
                           f"{ev.supersedes!r} (version {self.versions[ev.supersedes]}): "
                           "versions must increase along a derivation",
                           event_location(line, ev.seq))
        if isinstance(ev, ClaimEvent):
            if ev.bindings:
                cited = set(ev.evidence)
                for b in ev.bindings:
                    if b.evidence not in cited:
                        self.sink.emit("RB510", f"claim {ev.id!r} binds {b.evidence!r}, which "
                                       "is not in its evidence list",
                                       event_location(line, ev.seq))
            if ev.final:
                supported = bool(ev.bindings) or ev.claim_status == "unsupported"
                self.final_claims[ev.id] = (line, ev.seq, supported)

    def finish(self) -> None:
        for run_id, stream, line, seq in self.run_streams:
            if self.types.get(stream) != "stream":
                self.sink.emit("RB509", f"run {run_id!r} names stream {stream!r}, which is never "
                               "declared by a stream event", event_location(line, seq))
        for cid, (line, seq, supported) in sorted(self.final_claims.items()):
            if not supported and cid not in self.failed_verification:
                self.sink.emit("RB503", f"final claim {cid!r} has no evidence binding, no failed "
                               "verification record and no explicit unsupported status",
                               event_location(line, seq))
        for cycle in _cycles(self.derivations):
            first = cycle[0]
            at = self.derivation_lines.get(first)
            self.sink.emit("RB502", "derivation cycle: " + " -> ".join([*cycle, first]),
                           event_location(*at) if at else Location())


def _cycles(graph: dict[str, list[str]]) -> list[list[str]]:
    """Iterative DFS; returns one representative cycle per strongly connected loop."""
    white, grey, black = 0, 1, 2
    color: dict[str, int] = {}
    found: list[list[str]] = []
    for start in sorted(graph):
        if color.get(start, white) != white:
            continue
        stack: list[tuple[str, Iterator[str]]] = [(start, iter(graph.get(start, ())))]
        path = [start]
        color[start] = grey
        while stack:
            node, it = stack[-1]
            nxt = next(it, None)
            if nxt is None:
                color[node] = black
                stack.pop()
                path.pop()
                continue
            c = color.get(nxt, white)
            if c == grey:
                found.append(path[path.index(nxt):])
            elif c == white:
                color[nxt] = grey
                path.append(nxt)
                stack.append((nxt, iter(graph.get(nxt, ()))))
    return found
