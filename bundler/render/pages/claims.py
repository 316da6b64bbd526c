"""Claim pages: what was claimed, what supports it, what checked it."""

from __future__ import annotations

from collections import Counter
from typing import Any

from bundler.graph.index import ClaimStatus, fitness_value
from bundler.graph.paths import EvidenceGraph, GEdge, evidence_graph, lineage_graph
from bundler.model.events import ClaimEvent
from bundler.render.markdown import render_markdown
from bundler.render.pages.base import (
    STATUS_TEXT,
    BuildContext,
    Page,
    graph_spec,
    listed,
    listing_path,
    n_pages,
    page_slice,
    pager,
)
from bundler.render.pages.lists import cut
from bundler.render.text import plain_text
from bundler.render.urls import claim_href, event_href, slug


def claim_pages(ctx: BuildContext) -> list[Page]:
    rows = ctx.idx.claims_by_status()
    pages = [_index(ctx, rows, k) for k in range(n_pages(len(rows)))]
    for claim, status in rows:
        pages.append(_claim(ctx, claim, status))
    return pages


def claims_index_page(ctx: BuildContext, k: int = 0) -> Page:
    """Page ``k`` of the claims listing (``PER_PAGE`` claims each)."""
    return _index(ctx, ctx.memo("claims-by-status", ctx.idx.claims_by_status), k)


def claim_page(ctx: BuildContext, claim_id: str) -> Page:
    claim = ctx.idx.claims[claim_id]
    return _claim(ctx, claim, ctx.idx.claim_status(claim))


def _index(ctx: BuildContext, rows: list[tuple[ClaimEvent, ClaimStatus]], k: int = 0) -> Page:
    path = listing_path("claims/index.html", k)
    counts = Counter(s for _, s in rows)
    items = [{"ref": ctx.ref(c.id, path), "status": s, "final": c.final,
              "text": plain_text(c.text), "seq": c.seq}
             for c, s in page_slice(rows, k)]
    return Page(path, "pages/claims.html", "Claims", "claims", {
        "items": items,
        "counts": [(s, counts[s]) for s in ClaimStatus if counts[s]],
        "status_text": STATUS_TEXT,
        "pager": pager("claims/index.html", k, len(rows), "Claim pages"),
    }, breadcrumbs=[("Overview", "index.html"), ("Claims", None)])


def _path_rows(ctx: BuildContext, g: EvidenceGraph, page_path: str) -> list[list[dict[str, Any]]]:
    out = []
    for path in g.paths:
        steps = []
        for oid, edge in path:
            steps.append({"ref": ctx.ref(oid, page_path), "edge": _edge_view(edge)})
        out.append(steps)
    return out


def _edge_view(edge: GEdge | None) -> dict[str, Any] | None:
    if edge is None:
        return None
    return {"relation": edge.relation, "inferred": edge.inferred, "confidence": edge.confidence,
            "by": edge.by}


def _rationale(ctx: BuildContext, edge_id: str | None) -> str:
    ev = ctx.idx.get(edge_id) if edge_id else None
    return str(getattr(ev, "rationale", "") or "")


def _claim(ctx: BuildContext, claim: ClaimEvent, status: ClaimStatus) -> Page:
    idx = ctx.idx
    path = claim_href(claim.id)
    g = evidence_graph(idx, claim.id)
    lin = lineage_graph(idx, claim.id)
    graphs = [graph_spec(ctx, g, name="evidence", title=f"Evidence graph of claim {claim.id}",
                         description="The claim, the evidence it cites, the operators that "
                         "produced or checked that evidence, down to source trace records.",
                         page_path=path)]
    earlier, earlier_more, earlier_all = cut(ctx, "claim", "derived-from", claim, path)
    later, later_more, later_all = cut(ctx, "claim", "derived-claims", claim, path)
    if len(lin.nodes) > 1:
        graphs.append(graph_spec(ctx, lin, name="lineage", title=f"Lineage of claim {claim.id}",
                                 description="Earlier drafts and claims this claim was "
                                 "derived from.", page_path=path))
    judged, fitness_more, fitness_all = cut(ctx, "claim", "evaluations", claim, path)
    fitness = [{
        "id": f.id, "href": "../" + event_href(f.seq), "evaluator": f.evaluator.name,
        "version": f.evaluator.version, "value": fitness_value(f), "verdict": f.verdict,
        "passed": f.passed, "note": f.note, "time": f.time,
        "review_html": render_markdown(f.review) if f.review else None,
        "stream": ctx.ref(f.stream, path),
    } for f in judged]
    shown_bindings, bindings_more, bindings_all = cut(ctx, "claim", "bindings", claim, path)
    bindings = [{"evidence": ctx.ref(b.evidence, path), "field": b.field, "value": b.value,
                 "comparison": b.comparison, "stance": b.stance, "note": b.note}
                for b in shown_bindings]
    evidence, evidence_more, evidence_all = cut(ctx, "claim", "evidence", claim, path)
    inferred, inferred_more = listed([e for e in g.edges if e.inferred])
    superseded_by, superseded_by_more, superseded_by_all = cut(
        ctx, "claim", "later-versions", claim, path)
    return Page(path, "pages/claim.html", claim.name or claim.id, "claims", {
        "claim": claim,
        "status": status,
        "status_text": STATUS_TEXT[status],
        "inherited": (ctx.ref(parent.id, path)
                      if (parent := idx.inherited_from(claim)) is not None
                      and status is not ClaimStatus.UNVERIFIED else None),
        "text_html": render_markdown(claim.text),
        "fitness": fitness, "fitness_more": fitness_more, "fitness_all": fitness_all,
        "bindings": bindings, "bindings_more": bindings_more, "bindings_all": bindings_all,
        "evidence": ctx.refs(evidence, path), "evidence_more": evidence_more,
        "evidence_all": evidence_all,
        "paths": _path_rows(ctx, g, path),
        "paths_truncated": g.paths_truncated,
        "graph_truncated": g.truncated,
        "gaps": g.gaps,
        "inferred": [{"src": ctx.ref(e.src, path), "dst": ctx.ref(e.dst, path),
                      "relation": e.relation, "by": e.by, "confidence": e.confidence,
                      "rationale": _rationale(ctx, e.edge_id)}
                     for e in inferred],
        "inferred_more": inferred_more,
        "only_inferred": g.only_inferred,
        "earlier": ctx.refs(earlier, path), "earlier_more": earlier_more,
        "earlier_all": earlier_all,
        "later": ctx.refs(later, path), "later_more": later_more, "later_all": later_all,
        "supersedes": ctx.ref(claim.supersedes, path) if claim.supersedes else None,
        "superseded_by": ctx.refs(superseded_by, path), "superseded_by_more": superseded_by_more,
        "superseded_by_all": superseded_by_all,
        "producer": ctx.ref(claim.produced_by, path) if claim.produced_by else None,
        "stream": ctx.ref(claim.stream, path),
        "event_href": "../" + event_href(claim.seq),
        "leaf_hash": ctx.leaf_hex(claim.seq),
        "proof": ctx.proof(claim.seq),
        "proof_id": "proof-" + slug(claim.id),
    }, graphs=graphs, breadcrumbs=[("Overview", "index.html"), ("Claims", "claims/index.html"),
                                   (claim.name or claim.id, None)])
