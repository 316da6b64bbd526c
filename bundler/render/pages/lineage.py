"""Lineage of selected individuals, archive membership over time, and steering."""

from __future__ import annotations

from bundler.graph.index import BundleIndex
from bundler.graph.paths import lineage_graph
from bundler.model.events import FitnessEvent
from bundler.render.graphviz import GraphSpec
from bundler.render.pages.base import (
    BuildContext,
    Page,
    graph_spec,
    listing_path,
    page_slice,
    pager,
)
from bundler.render.pages.lists import archive_cut, current_members, cut
from bundler.render.urls import event_href

MAX_LINEAGE_GRAPHS = 6
#: Archives per page of the lineage page (each shows up to ``ARCHIVE_EVENTS_SHOWN`` of
#: its events and ``ARCHIVE_MEMBERS_SHOWN`` members, then links to the whole lists).
ARCHIVES_PER_PAGE = 20


def best_candidates(idx: BundleIndex, limit: int) -> list[tuple[str, FitnessEvent]]:
    """Individuals with the best score per metric (higher or lower is better, as declared)."""
    best: dict[str, FitnessEvent] = {}
    for f in idx.fitness:
        if f.score is None or f.target in idx.claims:
            continue
        cur = best.get(f.target)
        if cur is None or (f.score > cur.score if f.higher_is_better else  # type: ignore[operator]
                           f.score < cur.score):  # type: ignore[operator]
            best[f.target] = f
    ranked = sorted(best.items(), key=lambda kv: (-(kv[1].score or 0.0)
                                                  if kv[1].higher_is_better
                                                  else (kv[1].score or 0.0), kv[1].seq))
    return ranked[:limit]


def lineage_page(ctx: BuildContext, k: int = 0) -> Page:
    """Page ``k``: the lineage graphs (first page only) and ``ARCHIVES_PER_PAGE`` archives."""
    idx = ctx.idx
    path = listing_path("lineage.html", k)
    selected: list[tuple[str, str]] = []
    if k == 0:   # the graphs are on the first page
        selected += [(oid, f"best by {f.metric or 'score'} = {f.score:g}")
                     for oid, f in best_candidates(idx, 1)]
        for name in sorted(idx.archives):
            for m in current_members(idx, name)[:3]:
                selected.append((m, f"member of archive {name}"))
    seen: set[str] = set()
    graphs: list[GraphSpec] = []
    items: list[dict[str, object]] = []
    for oid, why in selected:
        if oid in seen or len(graphs) >= MAX_LINEAGE_GRAPHS:
            continue
        seen.add(oid)
        g = lineage_graph(idx, oid, max_nodes=50)
        name = f"lineage-{len(graphs)}"
        graphs.append(graph_spec(ctx, g, name=name, title=f"Lineage of {oid}",
                                 description=f"Ancestry of {oid} ({why}).", page_path=path))
        items.append({"ref": ctx.ref(oid, path), "why": why, "graph": name,
                      "truncated": g.truncated})
    archives = []
    names = ctx.memo("archive-names", lambda: sorted(idx.archives))
    for name in page_slice(names, k, ARCHIVES_PER_PAGE):
        events = idx.archives[name]
        shown, more, _n, history_all = archive_cut(ctx, name, "history", path)
        members, members_more, n_members, members_all = archive_cut(ctx, name, "members", path)
        archives.append({
            "name": name,
            "events": [{"seq": a.seq, "time": a.time, "action": a.action,
                        "member": ctx.ref(a.member, path), "reason": a.reason,
                        "href": event_href(a.seq)} for a in shown],
            "more": more, "all": history_all,
            "adds": sum(1 for a in events if a.action == "add"),
            "removes": sum(1 for a in events if a.action == "remove"),
            "current": ctx.refs(members, path), "n_current": n_members,
            "current_more": members_more, "current_all": members_all,
        })
    return Page(path, "pages/lineage.html", "Lineage and archives", "lineage",
                {"items": items, "archives": archives,
                 "pager": pager("lineage.html", k, len(names), "Archive pages",
                                ARCHIVES_PER_PAGE)}, graphs=graphs,
                breadcrumbs=[("Overview", "index.html"), ("Lineage", None)])


def steering_page(ctx: BuildContext, k: int = 0) -> Page:
    """Page ``k`` of the steering timeline, ``PER_PAGE`` commands each."""
    idx = ctx.idx
    path = listing_path("steering.html", k)
    rows = []
    for s in page_slice(idx.steering, k):
        ops, ops_more, ops_all = cut(ctx, "steering", "applied-by", s, path)
        derived, derived_more, derived_all = cut(ctx, "steering", "derived", s, path)
        rows.append({"s": s, "href": event_href(s.seq), "issuer": s.issuer,
                     "stream": ctx.ref(s.stream, path),
                     "target": ctx.ref(s.target, path) if s.target else None,
                     "operators": ctx.refs(ops, path), "operators_more": ops_more,
                     "operators_all": ops_all,
                     "derived": ctx.refs(derived, path), "derived_more": derived_more,
                     "derived_all": derived_all})
    return Page(path, "pages/steering.html", "Steering", "steering",
                {"rows": rows, "pager": pager("steering.html", k, len(idx.steering),
                                              "Steering pages")},
                breadcrumbs=[("Overview", "index.html"), ("Steering", None)])
