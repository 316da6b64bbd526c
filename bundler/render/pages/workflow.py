"""LEDGER's two-level view: workflow phases, then each phase's evidence graph.

The workflow level stays small by construction (one node per workflow node,
or one per phase past ``MAX_WORKFLOW_GRAPH_NODES``).  The evidence level is
drawn per workflow node and cut at ``MAX_EVIDENCE_NODES`` rather than laid out
as one huge graph (DESIGN-NOTES §6: dot slows sharply past ~1,000 nodes); the
page's lists, themselves cut at ``MAX_LISTED``, say what the graph leaves out.
"""

from __future__ import annotations

import itertools
from collections import Counter

from bundler.graph.paths import EvidenceGraph, GEdge, GNode, node_for
from bundler.model.events import WORKFLOW_PHASES, WorkflowNodeEvent
from bundler.render.pages.base import (
    BuildContext,
    Page,
    graph_spec,
    listed,
    listing_path,
    n_pages,
    pager,
)
from bundler.render.pages.lists import cut
from bundler.render.urls import workflow_href

MAX_EVIDENCE_NODES = 150
#: Above this many workflow nodes the workflow-level graph draws one node per
#: phase (with counts) instead of one per workflow node: Graphviz lays out a few
#: hundred nodes in well under a second, thousands take minutes (DESIGN-NOTES §6).
MAX_WORKFLOW_GRAPH_NODES = 400
#: Workflow nodes per page of the workflow index, and members listed for each there
#: (its own page lists up to ``MAX_LISTED``).
PHASES_PER_PAGE = 200
MEMBERS_ON_INDEX = 50
#: Characters of raw trace records one phase page shows in all.  Evidence nodes may
#: share records, and showing each record again under every node that cites it let a
#: bundle of under 1 MB make a phase page of 90 MB; a record appears verbatim once,
#: and once the budget is spent only as a link to its event.
RAW_BUDGET = 256 * 1024


def workflow_level_graph(ctx: BuildContext) -> EvidenceGraph:
    idx = ctx.idx
    g = EvidenceGraph(root="")
    wfs = list(idx.workflow_nodes.values())
    for wf in wfs:
        g.nodes[wf.id] = GNode(wf.id, "workflow_node", f"{wf.phase}: {wf.label}", wf.phase)
    # edges between phases: aggregated semantic edges among their members
    counts: Counter[tuple[str, str, str]] = Counter()
    for e in idx.edges:
        a = idx.workflow_of_node.get(e.source, e.source if e.source in idx.workflow_nodes else "")
        b = idx.workflow_of_node.get(e.target, e.target if e.target in idx.workflow_nodes else "")
        if a and b and a != b:
            counts[(a, b, e.relation)] += 1
    if len(wfs) > MAX_WORKFLOW_GRAPH_NODES:
        return _by_phase(wfs, counts)
    for (a, b, rel), n in sorted(counts.items()):
        g.edges.append(GEdge(a, b, rel if n == 1 else f"{rel} ×{n}"))
    if not counts:  # no semantic edges between phases: show the order instead
        for prev, nxt in itertools.pairwise(wfs):
            g.edges.append(GEdge(prev.id, nxt.id, "then"))
    return g


def _by_phase(wfs: list[WorkflowNodeEvent],
              counts: Counter[tuple[str, str, str]]) -> EvidenceGraph:
    """The workflow level collapsed to its phases: one node per phase with the number
    of workflow nodes in it, edges summed over the workflow nodes they join."""
    g = EvidenceGraph(root="")
    g.truncated = True
    phase_of = {wf.id: wf.phase for wf in wfs}
    sizes: Counter[str] = Counter(wf.phase for wf in wfs)
    for phase in WORKFLOW_PHASES:
        if sizes[phase]:
            g.nodes[f"phase:{phase}"] = GNode(f"phase:{phase}", "workflow_node",
                                              f"{phase}: {sizes[phase]:,} workflow nodes", phase)
    summed: Counter[tuple[str, str, str]] = Counter()
    for (a, b, rel), n in counts.items():
        if phase_of[a] != phase_of[b]:
            summed[(f"phase:{phase_of[a]}", f"phase:{phase_of[b]}", rel)] += n
    for (a, b, rel), n in sorted(summed.items()):
        g.edges.append(GEdge(a, b, rel if n == 1 else f"{rel} ×{n:,}"))
    if not summed:
        for prev, nxt in itertools.pairwise(list(g.nodes)):
            g.edges.append(GEdge(prev, nxt, "then"))
    return g


def workflow_pages(ctx: BuildContext) -> list[Page]:
    wfs = list(ctx.idx.workflow_nodes.values())
    pages = [_index(ctx, k) for k in range(n_pages(len(wfs), PHASES_PER_PAGE))]
    pages += [_phase(ctx, wf) for wf in wfs]
    return pages


def _index(ctx: BuildContext, k: int = 0) -> Page:
    idx = ctx.idx
    path = listing_path("workflow/index.html", k)
    wfs = list(idx.workflow_nodes.values())
    graphs = []
    if wfs and k == 0:
        g = workflow_level_graph(ctx)
        graphs.append(graph_spec(ctx, g, name="workflow", title="Workflow-level graph",
                                 description=(f"The {len(wfs):,} workflow nodes grouped by phase, "
                                              "and the semantic edges between their evidence."
                                              if g.truncated else
                                              "Workflow nodes (phases) and the semantic edges "
                                              "between their evidence."),
                                 page_path=path, rankdir="LR"))
    phases = []
    for wf in wfs[k * PHASES_PER_PAGE:(k + 1) * PHASES_PER_PAGE]:
        members, more = listed(wf.members, MEMBERS_ON_INDEX)
        phases.append({"wf": wf, "href": "../" + workflow_href(wf.id),
                       "members": ctx.refs(members, path), "members_more": more})
    return Page(path, "pages/workflow.html", "Workflow", "workflow",
                {"phases": phases, "has_layers": bool(wfs),
                 "trace_count": len(idx.trace_records),
                 "evidence_count": len(idx.evidence_nodes),
                 "pager": pager("workflow/index.html", k, len(wfs), "Workflow pages",
                                PHASES_PER_PAGE)},
                graphs=graphs, breadcrumbs=[("Overview", "index.html"), ("Workflow", None)])


def workflow_index_page(ctx: BuildContext, k: int = 0) -> Page:
    """Page ``k`` of the workflow index (the workflow-level graph is on the first)."""
    return _index(ctx, k)


def phase_page(ctx: BuildContext, wf_id: str) -> Page:
    return _phase(ctx, ctx.idx.workflow_nodes[wf_id])


def evidence_level_graph(ctx: BuildContext, wf: WorkflowNodeEvent) -> EvidenceGraph:
    idx = ctx.idx
    g = EvidenceGraph(root=wf.id)
    members = [m for m in wf.members if idx.get(m) is not None]
    for m in members[:MAX_EVIDENCE_NODES]:
        g.nodes[m] = node_for(idx, m)
    for m in list(g.nodes):
        node = idx.evidence_nodes.get(m)
        if node is not None and node.individual and len(g.nodes) < MAX_EVIDENCE_NODES:
            g.nodes.setdefault(node.individual, node_for(idx, node.individual))
            g.edges.append(GEdge(m, node.individual, "artifact"))
    inside = set(g.nodes)
    touching = {id(e): e for m in inside
                for e in (*idx.edges_out.get(m, ()), *idx.edges_in.get(m, ()))}
    # log order, as a scan of idx.edges would give, without scanning every edge
    # of the bundle for every phase (that was quadratic: 100k events, 8 s)
    for e in sorted(touching.values(), key=lambda e: e.seq):
        for end in (e.source, e.target):
            if end not in g.nodes:
                if len(g.nodes) >= MAX_EVIDENCE_NODES:
                    g.truncated = True
                    break
                g.nodes[end] = node_for(idx, end)
        else:
            g.edges.append(GEdge(e.source, e.target, e.relation,
                                 e.provenance == "inferred", e.confidence, e.inferred_by, e.id))
    g.truncated = g.truncated or len(members) > MAX_EVIDENCE_NODES
    return g


def _phase(ctx: BuildContext, wf: WorkflowNodeEvent) -> Page:
    idx = ctx.idx
    path = workflow_href(wf.id)
    g = evidence_level_graph(ctx, wf)
    shown, members_more, members_all = cut(ctx, "phase", "members", wf, path)
    members = []
    budget, seen = RAW_BUDGET, set()
    for m in shown:
        node = idx.evidence_nodes.get(m)
        records, records_more, records_all = (cut(ctx, "node", "records", node, path)
                                              if node else ([], 0, None))
        rows = []
        for r in records:
            rec = idx.trace_records.get(r)
            raw = rec.raw[:2000] if rec is not None else ""
            repeat = r in seen
            if repeat or len(raw) > budget:
                raw_shown = None
            else:
                raw_shown, budget = raw, budget - len(raw)
                seen.add(r)
            rows.append({"ref": ctx.ref(r, path), "raw": raw_shown, "repeat": repeat,
                         "kind": rec.record_kind if rec is not None else "missing",
                         "error": rec.error if rec is not None else None})
        members.append({
            "ref": ctx.ref(m, path),
            "category": node.category if node else "",
            "node_type": node.node_type if node else "",
            "records": rows, "records_more": records_more, "records_all": records_all,
            "individual": ctx.ref(node.individual, path) if node and node.individual else None,
        })
    return Page(path, "pages/phase.html", f"{wf.phase}: {wf.label}", "workflow", {
        "wf": wf, "members": members, "members_more": members_more, "members_all": members_all,
        "truncated": g.truncated,
    }, graphs=[graph_spec(ctx, g, name="evidence-level", title=f"Evidence graph of {wf.label}",
                          description=f"Evidence nodes of the {wf.phase} phase and their typed "
                          "semantic edges. Dashed edges were inferred.", page_path=path,
                          rankdir="LR")],
        breadcrumbs=[("Overview", "index.html"), ("Workflow", "workflow/index.html"),
                     (wf.label, None)])
