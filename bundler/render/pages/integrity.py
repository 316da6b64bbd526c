"""Integrity, downloads and overview pages: can the record be trusted?"""

from __future__ import annotations

import itertools
from collections import Counter, defaultdict
from typing import Any

from bundler import layout
from bundler.diagnostics import CODES, Diagnostic
from bundler.graph.index import ClaimStatus
from bundler.integrity.note import parse_verifier_key
from bundler.load.source import BundleSource
from bundler.model.events import ClaimEvent
from bundler.render.markdown import render_markdown
from bundler.render.pages.base import (
    STATUS_TEXT,
    BuildContext,
    Page,
    graph_spec,
    listed,
    listing_path,
    page_slice,
    pager,
)
from bundler.render.pages.workflow import workflow_level_graph
from bundler.render.text import plain_text
from bundler.render.urls import event_href, payload_href
from bundler.reports import TRUST_TEXT

#: The overview lists this many runs and streams; the event log has the rest.
MAX_RUNS = 100
#: Claims the overview lists in each group (needing attention, the others).
MAX_CLAIMS = 200
MAX_STREAMS = 300


def _diag_view(d: Diagnostic) -> dict[str, Any]:
    loc = d.location
    seq = loc.seq if loc.seq is not None else (loc.line - 1 if loc.line and
                                               loc.path == layout.EVENTS else None)
    return {"d": d, "where": str(loc), "href": event_href(seq) if seq is not None else None}


def integrity_page(ctx: BuildContext) -> Page:
    report = ctx.report
    groups: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for d in report.diagnostics:
        groups[d.code].append(_diag_view(d))
    meta = ctx.bundle.metadata
    declared = list(meta.keys) if meta else []
    pinned = list(report.pinned_keys)
    key_rows = []
    for text in sorted(set(declared) | set(pinned)):
        try:
            k = parse_verifier_key(text)
            name, kid = k.name, k.key_id.hex()
        except ValueError:
            name, kid = "(malformed)", ""
        key_rows.append({"text": text, "name": name, "key_id": kid,
                         "pinned": text in pinned, "declared": text in declared})
    return Page("integrity.html", "pages/integrity.html", "Integrity", "integrity", {
        "groups": [{"code": code, "title": CODES[code].title, "severity": items[0]["d"].severity
                    .label, "items": items[:200], "more": len(items) - 200 +
                    report.sink.suppressed.get(code, 0)} for code, items in groups.items()],
        "checkpoints": ctx.bundle.checkpoints,
        "keys": key_rows,
        "signed_prefix": report.signed_prefix,
        "n_events": len(ctx.bundle.leaf_hashes) // 32,
        "steps": report.steps_completed,
        "trust_text": TRUST_TEXT[report.trust],
        "example_key": pinned[0] if pinned else (declared[0] if declared else "NAME+ID+KEY"),
    }, breadcrumbs=[("Overview", "index.html"), ("Integrity", None)])


def shipped_payloads(ctx: BuildContext) -> dict[str, str]:
    """digest -> path (from the site root) of every payload the site ships: verified only."""
    return {d: payload_href(d) for d, st in ctx.bundle.payloads.items()
            if st.state.value == "verified" and st.path}


def downloads_page(ctx: BuildContext, copied: dict[str, str], k: int = 0) -> Page:
    """``copied`` maps digest -> path (from site root) of payloads shipped in the site;
    page ``k`` lists ``PER_PAGE`` payloads."""
    rows = []
    payloads = ctx.memo("payloads", lambda: sorted(ctx.bundle.payloads.items()))
    for digest, st in page_slice(payloads, k):
        rows.append({"digest": digest, "state": st.state.value, "size": st.size,
                     "media_type": st.media_type, "href": copied.get(digest),
                     "reason": st.reason, "authority": st.authority})
    shipped = set(ctx.memo("bundle-files", lambda: shipped_bundle_files(ctx)))
    files = [{"path": path, "about": about, "shipped": path in shipped}
             for path, about in _bundle_files(ctx)]
    return Page(listing_path("downloads.html", k), "pages/downloads.html", "Downloads",
                "downloads", {
                    "payloads": rows, "files": files,
                    # what the template took before "files"; a theme's override may still
                    "checkpoints": [c.path for c in ctx.bundle.checkpoints if c.path in shipped],
                    "pager": pager("downloads.html", k, len(payloads), "Payload pages"),
                }, breadcrumbs=[("Overview", "index.html"), ("Downloads", None)])


def overview_page(ctx: BuildContext) -> Page:
    idx, report = ctx.idx, ctx.report
    path = "index.html"
    rows = idx.claims_by_status()
    counts = Counter(s for _, s in rows)
    attention, attention_more = listed([(c, s) for c, s in rows if s.attention], MAX_CLAIMS)
    others, others_more = listed([(c, s) for c, s in rows if not s.attention], MAX_CLAIMS)

    def shown(claims: list[tuple[ClaimEvent, ClaimStatus]]) -> list[dict[str, Any]]:
        return [{"ref": ctx.ref(c.id, path), "status": s, "final": c.final,
                 "text": plain_text(c.text, 200)} for c, s in claims]

    meta = ctx.bundle.metadata
    graphs = []
    if idx.workflow_nodes:
        graphs.append(graph_spec(ctx, workflow_level_graph(ctx), name="workflow",
                                 title="Workflow-level graph",
                                 description="Workflow phases of the agent's session.",
                                 page_path=path, rankdir="LR"))
    kinds = Counter(i.kind for i in idx.individuals.values() if i.id not in idx.claims)
    states = Counter(p.state.value for p in ctx.bundle.payloads.values())
    return Page(path, "pages/index.html", meta.title if meta else "Review bundle", "overview", {
        "description_html": render_markdown(meta.description) if meta and meta.description
        else None,
        "attention": shown(attention), "attention_more": attention_more,
        "others": shown(others), "others_more": others_more,
        "counts": [(s, counts[s], STATUS_TEXT[s]) for s in ClaimStatus if counts[s]],
        "runs": [{"r": r, "href": event_href(r.seq)} for r in idx.runs[:MAX_RUNS]],
        "runs_more": max(0, len(idx.runs) - MAX_RUNS),
        "streams": [{"s": s, "href": event_href(s.seq)}
                    for s in itertools.islice(idx.streams.values(), MAX_STREAMS)],
        "streams_more": max(0, len(idx.streams) - MAX_STREAMS),
        "n_events": len(ctx.bundle.events), "n_artifacts": len(idx.individuals) - len(idx.claims),
        "n_claims": len(idx.claims), "n_checkpoints": len(ctx.bundle.checkpoints),
        "n_operators": len(idx.operators), "n_fitness": len(idx.fitness),
        "kinds": sorted(kinds.items(), key=lambda kv: (-kv[1], kv[0]))[:12],
        "payload_states": sorted(states.items()),
        "span": idx.time_span(),
        "audit": ctx.audit_pages,
        "audit_found": sum(1 for _, _, rows in ctx.audit_pages if rows),
        # a check with nothing to examine is no finding, nor is it a pass
        "audit_idle": [(name, href) for name, href, _ in ctx.audit_pages
                       if name in ctx.audit_idle],
        "summary": report.summary(),
        "trust_text": TRUST_TEXT[report.trust],
        "first_error": next((d for d in report.diagnostics if d.severity.label == "error"), None),
    }, graphs=graphs)


_ABOUT = {layout.EVENTS: "the append-only event log", layout.MANIFEST: "the payload manifest",
          layout.METADATA: "metadata and declared keys"}


def _bundle_files(ctx: BuildContext) -> list[tuple[str, str]]:
    """(bundle-relative path, what it is) of the bundle's own files, payloads aside."""
    return [*_ABOUT.items(), *((c.path, "a signed checkpoint") for c in ctx.bundle.checkpoints)]


def shipped_bundle_files(ctx: BuildContext) -> list[str]:
    """The bundle's own files the site ships a copy of: those that are a regular file
    reached through no link, as the verifier reads them.

    The verifier reports an ``events.jsonl`` that is a link (RB103) and then finds no
    log (RB107); copying it anyway would follow the link and publish whatever it
    points at (``~/.ssh/id_ed25519``) in the site.
    """
    src = BundleSource(ctx.bundle.root, ctx.bundle.root)
    return [rel for rel, _ in _bundle_files(ctx) if src.regular_file(rel) is not None]


def bundle_copy_files(ctx: BuildContext) -> list[tuple[str, str]]:
    """(site path, bundle-relative source path) for the downloadable bundle copy.

    Only verified payloads are copied: redacted bytes are absent anyway, and
    leaked or corrupt bytes must never reach the site.  Of the bundle's own files,
    only :func:`shipped_bundle_files`.
    """
    out = [(f"bundle/{rel}", rel) for rel in shipped_bundle_files(ctx)]
    for digest, st in sorted(ctx.bundle.payloads.items()):
        if st.state.value == "verified" and st.path:
            out.append((payload_href(digest), st.path))
    return out
