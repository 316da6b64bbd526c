"""Evidence paths and lineage: the sub-graphs a claim or artifact page draws.

Edges are stored in the direction information flows (upstream -> downstream),
so a claim sits at the sink of its evidence graph.  Traversal goes upstream
from the claim, bounded in depth and size: evolutionary lineages can reach
thousands of ancestors and a page must stay readable (and fast to lay out).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass, field

from bundler.graph.index import BundleIndex
from bundler.graph.tracking import query
from bundler.model.events import (
    ClaimEvent,
    EventBase,
    EvidenceNodeEvent,
    FitnessEvent,
    IndividualEvent,
    OperatorEvent,
    WorkflowNodeEvent,
)
from bundler.verify.result import PayloadState

UPSTREAM_EDGE_TARGETS = frozenset({"produces", "supports", "informs", "frames"})
UPSTREAM_EDGE_SOURCES = frozenset({"uses", "checked_by"})


@dataclass(frozen=True, slots=True)
class GNode:
    id: str
    kind: str            # event type, or "missing" for an unresolved id
    label: str
    state: str = ""      # payload state or claim status, for styling


@dataclass(frozen=True, slots=True)
class GEdge:
    src: str
    dst: str
    relation: str
    inferred: bool = False
    confidence: float | None = None
    by: str | None = None   # tracer that inferred it
    edge_id: str | None = None


@dataclass
class EvidenceGraph:
    root: str
    nodes: dict[str, GNode] = field(default_factory=dict)
    edges: list[GEdge] = field(default_factory=list)
    paths: list[list[tuple[str, GEdge | None]]] = field(default_factory=list)
    gaps: list[str] = field(default_factory=list)
    truncated: bool = False
    paths_truncated: bool = False

    @property
    def only_inferred(self) -> bool:
        """True when every edge into the root is inferred (LEDGER: say so)."""
        into = [e for e in self.edges if e.dst == self.root and e.relation != "checked_by"]
        return bool(into) and all(e.inferred for e in into)


#: Beyond this depth only derivation (produced_by, parents, trace records,
#: steering) is followed: semantic edges and evaluations of distant ancestors
#: add breadth without answering "what supports this claim".
WIDE_DEPTH = 2
#: Upstream edges looked at per node of an evidence or lineage graph.  A benchmark
#: input that every candidate of a search is evaluated on has as many evaluations as
#: there are candidates, and every claim citing it walked all of them to fill a graph
#: of 40 nodes: the build grew with the square of the bundle (10,000 evaluations,
#: 102 s).  An operator may likewise have thousands of parents.
MAX_UPSTREAM = 200


def _upstream(idx: BundleIndex, oid: str, depth: int = 0) -> Iterator[GEdge]:
    """Edges (u -> oid) for everything directly upstream of ``oid``."""
    ev = idx.get(oid)
    wide = depth <= WIDE_DEPTH
    if isinstance(ev, ClaimEvent):
        bound = {b.evidence: b for b in ev.bindings}
        for e in dict.fromkeys([*ev.evidence, *bound]):
            b = bound.get(e)
            rel = f"{b.stance}: {b.field} = {b.value!r}" if b else "cited"
            yield GEdge(e, oid, rel)
    if wide:
        for fit in idx.fitness_by_target.get(oid, []):
            yield GEdge(oid, fit.id, "checked_by")
    if isinstance(ev, FitnessEvent):
        for e in ev.evidence:
            yield GEdge(e, oid, "evidence")
        if ev.operator:
            yield GEdge(ev.operator, oid, "produces")
    if isinstance(ev, IndividualEvent):
        if ev.produced_by:
            yield GEdge(ev.produced_by, oid, "produces")
        for t in ev.trace:
            yield GEdge(t, oid, "trace")
        node = idx.node_of_individual.get(oid) if wide else None
        if node:
            yield GEdge(node, oid, "groups")
    elif isinstance(ev, OperatorEvent):
        for p in ev.parents:
            yield GEdge(p, oid, "uses")
        for t in ev.trace:
            yield GEdge(t, oid, "trace")
        if ev.steering:
            yield GEdge(ev.steering, oid, "steers")
    elif isinstance(ev, EvidenceNodeEvent):
        for r in ev.records:
            yield GEdge(r, oid, "records")
    if not wide:
        return
    for se in idx.edges_in.get(oid, []):
        if se.relation in UPSTREAM_EDGE_TARGETS:
            yield GEdge(se.source, oid, se.relation, se.provenance == "inferred", se.confidence,
                        se.inferred_by, se.id)
    for se in idx.edges_out.get(oid, []):
        if se.relation in UPSTREAM_EDGE_SOURCES:
            # "X uses Y": Y flows into X.  "X checked_by Y": drawn X -> Y like fitness.
            src, dst = (se.target, oid) if se.relation == "uses" else (oid, se.target)
            yield GEdge(src, dst, se.relation, se.provenance == "inferred", se.confidence,
                        se.inferred_by, se.id)


def node_for(idx: BundleIndex, oid: str) -> GNode:
    """The graph node of ``oid``: one read ``("node", oid)`` for dependency records."""
    return query("node", oid, lambda: _node(idx, oid))


def _node(idx: BundleIndex, oid: str) -> GNode:
    ev = idx.get(oid)
    if ev is None:
        return GNode(oid, "external" if oid.startswith("ext:") else "missing", oid, "missing")
    state = ""
    if isinstance(ev, ClaimEvent):
        state = idx.claim_status(ev).value
    elif isinstance(ev, IndividualEvent):
        st = idx.payload_state(ev)
        state = st.value if st else ""
    elif isinstance(ev, FitnessEvent):
        state = ev.verdict or ("pass" if ev.passed else "fail" if ev.passed is False else "")
    elif isinstance(ev, OperatorEvent):
        state = ev.outcome
    return GNode(oid, ev.type, idx.label(oid), state)


def evidence_graph(idx: BundleIndex, root: str, *, max_nodes: int = 40, max_depth: int = 8,
                   max_paths: int = 20) -> EvidenceGraph:
    g = EvidenceGraph(root)
    g.nodes[root] = node_for(idx, root)
    depth = {root: 0}
    queue = deque([root])
    seen_edges: set[tuple[str, str, str]] = set()
    while queue:
        cur = queue.popleft()
        if depth[cur] >= max_depth:
            g.truncated = True
            continue
        for i, e in enumerate(_upstream(idx, cur, depth[cur])):
            if i >= MAX_UPSTREAM:
                g.truncated = True
                break
            key = (e.src, e.dst, e.relation)
            if key in seen_edges:
                continue
            other = e.dst if e.relation == "checked_by" else e.src
            if other not in g.nodes:
                if len(g.nodes) >= max_nodes:
                    g.truncated = True
                    continue
                g.nodes[other] = node_for(idx, other)
                depth[other] = depth[cur] + 1
                if idx.get(other) is not None:
                    queue.append(other)
            seen_edges.add(key)
            g.edges.append(e)
    g.paths, g.paths_truncated = _paths(g, max_paths)
    g.gaps = _gaps(idx, g)
    return g


def _paths(g: EvidenceGraph, limit: int) -> tuple[list[list[tuple[str, GEdge | None]]], bool]:
    """Root-to-source paths (each listed from the claim backwards)."""
    into: dict[str, list[GEdge]] = {}
    for e in g.edges:
        if e.relation == "checked_by":
            into.setdefault(e.dst, []).append(GEdge(e.dst, e.src, "checks"))
        else:
            into.setdefault(e.dst, []).append(e)
    out: list[list[tuple[str, GEdge | None]]] = []
    stack: list[tuple[str, list[tuple[str, GEdge | None]]]] = [(g.root, [(g.root, None)])]
    while stack:
        node, path = stack.pop()
        ups = [e for e in into.get(node, []) if all(e.src != p for p, _ in path)]
        if not ups:
            if len(path) > 1:
                out.append(path)
                if len(out) >= limit:
                    return out, True
            continue
        for e in reversed(ups):
            stack.append((e.src, [*path, (e.src, e)]))
    return out, False


def _gaps(idx: BundleIndex, g: EvidenceGraph) -> list[str]:
    """Missing support, stated explicitly (never left as silence)."""
    gaps: list[str] = []
    ev = idx.get(g.root)
    if isinstance(ev, ClaimEvent):
        supporting = [e for e in g.edges if e.dst == g.root and e.relation != "checked_by"]
        if not supporting:
            gaps.append("No evidence is cited or linked to this claim.")
        elif g.only_inferred:
            gaps.append("Every link to this claim's evidence was inferred by a tracer, "
                        "none was recorded.")
        if not ev.bindings:
            gaps.append("No evidence binding records which field or value supports the claim.")
        if not idx.fitness_by_target.get(ev.id):
            parent = idx.inherited_from(ev)
            if parent is None:
                gaps.append("No evaluator or verifier has checked this claim.")
            else:
                gaps.append(f"No evaluator checked this claim itself; it repeats {parent.id} "
                            "unchanged and carries that claim's verdict.")
    for node in g.nodes.values():
        target = idx.get(node.id)
        if node.kind == "missing":
            gaps.append(f"{node.id} is referenced but does not exist in the log.")
        elif isinstance(target, IndividualEvent) and (status := idx.payload_status(target)):
            if status.state is PayloadState.REDACTED:
                gaps.append(f"The payload of {node.id} is redacted ({status.reason}; "
                            f"authority: {status.authority}). Its commitment remains.")
            elif status.state in (PayloadState.MISSING, PayloadState.CORRUPT,
                                  PayloadState.LEAKED):
                gaps.append(f"The payload of {node.id} is {status.state.value}.")
    return gaps


def _ancestry(ev: EventBase | None, oid: str) -> Iterator[GEdge]:
    """Edges (u -> oid) to what ``oid`` derives from, lazily: an operator may have
    thousands of parents, and each of its products draws the same lineage graph."""
    if isinstance(ev, IndividualEvent):
        if ev.produced_by:
            yield GEdge(ev.produced_by, oid, "produces")
        if ev.supersedes:
            yield GEdge(ev.supersedes, oid, "next version")
        if isinstance(ev, ClaimEvent):
            for d in ev.derived_from:
                yield GEdge(d, oid, "derived")
    elif isinstance(ev, OperatorEvent):
        for p in ev.parents:
            yield GEdge(p, oid, "uses")
        if ev.steering:
            yield GEdge(ev.steering, oid, "steers")


def lineage_graph(idx: BundleIndex, root: str, *, max_nodes: int = 60) -> EvidenceGraph:
    """Ancestry through operators, earlier versions and earlier claims."""
    g = EvidenceGraph(root)
    g.nodes[root] = node_for(idx, root)
    queue = deque([root])
    while queue:
        cur = queue.popleft()
        for i, e in enumerate(_ancestry(idx.get(cur), cur)):
            if i >= MAX_UPSTREAM:
                g.truncated = True
                break
            if e.src not in g.nodes:
                if len(g.nodes) >= max_nodes:
                    g.truncated = True
                    continue
                g.nodes[e.src] = node_for(idx, e.src)
                queue.append(e.src)
            g.edges.append(e)
    return g


def workflow_members(idx: BundleIndex, wf: WorkflowNodeEvent) -> list[str]:
    return [m for m in wf.members if m in idx.evidence_nodes or m in idx.workflow_nodes]
