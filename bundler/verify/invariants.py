"""The profile's five invariants (Appendix A) and the graph's reference rules.

Checked while streaming: each event's references are resolved against the ids
seen so far, which is exactly invariant 1 ("resolves to an *earlier* event").
Claim support (invariant 3) and cycles (invariant 2) need the whole log and
are settled in :meth:`InvariantChecker.finish`.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

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


@dataclass
class InvariantChecker:
    sink: DiagnosticSink
    types: dict[str, str] = field(default_factory=dict)
    versions: dict[str, int] = field(default_factory=dict)
    final_claims: dict[str, tuple[Location, bool]] = field(default_factory=dict)
    failed_verification: set[str] = field(default_factory=set)
    derivations: dict[str, list[str]] = field(default_factory=dict)
    locations: dict[str, Location] = field(default_factory=dict)
    run_streams: list[tuple[str, str, Location]] = field(default_factory=list)

    def observe(self, ev: EventBase, loc: Location) -> None:
        if ev.id in self.types:
            self.sink.emit("RB202", f"id {ev.id!r} is already used by an earlier "
                           f"{self.types[ev.id]} event", loc)
            return
        if ev.type == "run":
            if ev.run != ev.id:
                self.sink.emit("RB509", f"a run event's run ({ev.run!r}) must equal its id", loc)
            # The run comes before its streams, so its stream is checked at the end.
            self.run_streams.append((ev.id, ev.stream, loc))
        if ev.type == "stream" and ev.stream != ev.id:
            self.sink.emit("RB509", f"a stream event's stream ({ev.stream!r}) must equal its id",
                           loc)
        for fname, target, allowed, derivation in references(ev):
            if derivation:
                self.derivations.setdefault(ev.id, []).append(target)
            self._resolve(ev, fname, target, allowed, loc)
        self.types[ev.id] = ev.type
        self.locations[ev.id] = loc
        if isinstance(ev, IndividualEvent):
            self._individual(ev, loc)
        elif isinstance(ev, FitnessEvent):
            if ev.verdict in FAILED_VERDICTS or ev.passed is False:
                self.failed_verification.add(ev.target)
        elif isinstance(ev, EdgeEvent) and ev.provenance == "inferred" and (
                not ev.inferred_by or ev.confidence is None):
            self.sink.emit("RB507", f"inferred edge {ev.id!r} must name inferred_by and give "
                           "a confidence", loc)

    def _resolve(self, ev: EventBase, fname: str, target: str, allowed: frozenset[str],
                 loc: Location) -> None:
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

    def _individual(self, ev: IndividualEvent, loc: Location) -> None:
        self.versions[ev.id] = ev.version
        if ev.supersedes and ev.supersedes in self.versions and \
                self.versions[ev.supersedes] >= ev.version:
            self.sink.emit("RB502", f"{ev.id!r} (version {ev.version}) supersedes "
                           f"{ev.supersedes!r} (version {self.versions[ev.supersedes]}): "
                           "versions must increase along a derivation", loc)
        if isinstance(ev, ClaimEvent):
            cited = set(ev.evidence)
            for b in ev.bindings:
                if b.evidence not in cited:
                    self.sink.emit("RB510", f"claim {ev.id!r} binds {b.evidence!r}, which is "
                                   "not in its evidence list", loc)
            if ev.final:
                supported = bool(ev.bindings) or ev.claim_status == "unsupported"
                self.final_claims[ev.id] = (loc, supported)

    def finish(self) -> None:
        for run_id, stream, loc in self.run_streams:
            if self.types.get(stream) != "stream":
                self.sink.emit("RB509", f"run {run_id!r} names stream {stream!r}, which is never "
                               "declared by a stream event", loc)
        for cid, (loc, supported) in sorted(self.final_claims.items()):
            if not supported and cid not in self.failed_verification:
                self.sink.emit("RB503", f"final claim {cid!r} has no evidence binding, no failed "
                               "verification record and no explicit unsupported status", loc)
        for cycle in _cycles(self.derivations):
            first = cycle[0]
            self.sink.emit("RB502", "derivation cycle: " + " -> ".join([*cycle, first]),
                           self.locations.get(first, Location()))


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
