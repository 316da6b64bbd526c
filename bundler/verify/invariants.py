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

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field

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
from bundler.verify.facts import ANY_OBJECT, ARTIFACT, EVIDENCE, EventFacts

_ALLOWS = frozenset.__contains__
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
    #: id -> the ids it derives from (tuples of strings: no list per event, and the
    #: cyclic GC stops scanning them after one look)
    derivations: dict[str, tuple[str, ...]] = field(default_factory=dict)
    #: (line, seq) of every event that derives from another: cycles are reported there.
    derivation_lines: dict[str, tuple[int, int]] = field(default_factory=dict)
    run_streams: list[tuple[str, str, int, int]] = field(default_factory=list)
    #: one shared copy of each type name, instead of one string per event
    _type_names: dict[str, str] = field(default_factory=dict)

    def observe(self, ev: EventFacts, line: int) -> None:
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
        if ev.derived:
            self.derivations[eid] = ev.derived  # a new id: nothing stored for it yet
            self.derivation_lines[eid] = (line, ev.seq)
        targets = ev.ref_targets
        # Every target an earlier event of an allowed type: one pass in C.  Else find
        # which, in order.  (Ids never start with "ext:", so external refs land here.)
        if not all(map(_ALLOWS, ev.ref_allowed, map(types.get, targets))):
            for fname, target, allowed in zip(ev.ref_fields, targets, ev.ref_allowed,
                                              strict=True):
                found = types.get(target)
                if found is None or found not in allowed:
                    self._resolve(ev, fname, target, allowed, line)
        types[eid] = self._type_names.setdefault(etype, etype)
        if etype == "individual" or etype == "claim":
            self._individual(ev, line)
        elif etype == "fitness":
            if ev.verdict in FAILED_VERDICTS or ev.passed is False:
                assert ev.target is not None
                self.failed_verification.add(ev.target)
        elif etype == "edge" and ev.provenance == "inferred" and (
                not ev.inferred_by or ev.confidence is None):
            self.sink.emit("RB507", f"inferred edge {eid!r} must name inferred_by and give "
                           "a confidence", event_location(line, ev.seq))

    def _resolve(self, ev: EventFacts, fname: str, target: str, allowed: frozenset[str],
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

    def _individual(self, ev: EventFacts, line: int) -> None:
        self.versions[ev.id] = ev.version
        if ev.supersedes and ev.supersedes in self.versions and \
                self.versions[ev.supersedes] >= ev.version:
            self.sink.emit("RB502", f"{ev.id!r} (version {ev.version}) supersedes "
                           f"{ev.supersedes!r} (version {self.versions[ev.supersedes]}): "
                           "versions must increase along a derivation",
                           event_location(line, ev.seq))
        if ev.type == "claim":
            if ev.bound_evidence:
                cited = set(ev.evidence or ())
                for bound in ev.bound_evidence:
                    if bound not in cited:
                        self.sink.emit("RB510", f"claim {ev.id!r} binds {bound!r}, which "
                                       "is not in its evidence list",
                                       event_location(line, ev.seq))
            if ev.final:
                supported = bool(ev.bound_evidence) or ev.claim_status == "unsupported"
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


def _cycles(graph: Mapping[str, Sequence[str]]) -> list[list[str]]:
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
