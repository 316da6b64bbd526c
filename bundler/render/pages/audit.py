"""Audit pages: every audit query, run at build time, with rows linked to the log.

Queries that take an argument are shown in the form that needs none:
``claim-trace`` becomes a list of links to each claim page's evidence paths,
``introduced-by`` lists the first statement of every final claim's values,
and the archive queries run over all archives / from the first command.
Those two lookups are not findings, so they count 0 rows for the overview.
"""

from __future__ import annotations

import inspect
import sys
from typing import Any

from bundler.graph.paths import evidence_graph
from bundler.query import QUERIES, QueryDef, QueryResult, run_query
from bundler.query.duplicates import near_duplicates_with
from bundler.query.format import cell_text
from bundler.query.provenance import first_statements
from bundler.render.markdown import render_markdown
from bundler.render.pages.base import STATUS_TEXT, BuildContext, Page
from bundler.render.urls import claim_href, event_href

MAX_ROWS = 500
MAX_SEQ_LINKS = 12
LOOKUPS = ("claim-trace", "introduced-by")

_ARG_NOTE = {
    "claim-trace": "Run with a claim id for that claim's paths as text; below, every claim "
                   "links to the evidence paths its page draws.",
    "introduced-by": "Run with an artifact id for the operator and stream that first "
                     "produced it, or with a value (say 4.2) for the earliest claim that "
                     "states it. Below: where each value bound by a final claim was first "
                     "stated.",
    "archive-after-intervention": "Without an argument: decisions after the first steering "
                                  "command. Give a steering id to start from that command.",
    "archive-churn": "Without an argument: every archive. Give an archive name for one.",
    "best-lineage": "Without an argument: the best candidate of the whole bundle. Give an "
                    "archive name to choose among its current members.",
}


def _doc(qd: QueryDef) -> str:
    text = inspect.getdoc(qd.run) or inspect.getdoc(sys.modules[qd.run.__module__]) or ""
    return text


def _cells(ctx: BuildContext, result: QueryResult, path: str) -> list[dict[str, Any]]:
    root = "../" * path.count("/")
    out = []
    for r in result.rows[:MAX_ROWS]:
        refs = set(r.refs)
        cells = []
        for col in result.columns:
            value = r.values[col]
            items = value if isinstance(value, list) else [value]
            parts = []
            for item in items:
                href = ctx.ref(item, path).href if isinstance(item, str) and item in refs \
                    else None
                parts.append({"text": cell_text(item), "href": href})
            cells.append(parts)
        seqs = [{"seq": s, "href": root + event_href(s)} for s in r.seqs[:MAX_SEQ_LINKS]]
        out.append({"cells": cells, "why": r.why, "seqs": seqs,
                    "seqs_more": max(0, len(r.seqs) - MAX_SEQ_LINKS)})
    return out


def _page(ctx: BuildContext, qd: QueryDef, result: QueryResult, *, total: int | None = None,
          rows: list[dict[str, Any]] | None = None, columns: list[str] | None = None,
          intro: str = "") -> Page:
    path = f"audit/{qd.name}.html"
    shown = rows if rows is not None else _cells(ctx, result, path)
    n = total if total is not None else len(result.rows)
    return Page(path, "pages/audit_query.html", qd.name, "audit", {
        "name": qd.name, "summary": qd.summary, "arg": qd.arg,
        "arg_note": _ARG_NOTE.get(qd.name, ""), "doc_html": render_markdown(_doc(qd)),
        "intro": intro, "columns": columns or list(result.columns), "rows": shown,
        "total": n, "more": max(0, n - len(shown)), "lookup": qd.name in LOOKUPS,
        "scope": result.scope, "checked": result.checked,
    }, breadcrumbs=[("Overview", "index.html"), ("Audit", "audit/index.html"),
                    (qd.name, None)])


def _claim_trace(ctx: BuildContext, qd: QueryDef) -> Page:
    claims = ctx.idx.claims_by_status()
    rows = []
    for claim, status in claims[:MAX_ROWS]:
        g = evidence_graph(ctx.idx, claim.id)
        href = "../" + claim_href(claim.id)
        rows.append({"cells": [
            [{"text": claim.id, "href": href}],
            [{"text": STATUS_TEXT[status], "href": None}],
            [{"text": "yes" if claim.final else "no", "href": None}],
            [{"text": str(len(g.paths)) + ("+" if g.paths_truncated else ""),
              "href": href + "#paths-h"}],
            [{"text": str(len(g.gaps)), "href": href + "#gaps-h" if g.gaps else None}],
        ], "why": " ".join(g.gaps) if g.gaps else "No gap stated.",
            "seqs": [{"seq": claim.seq, "href": "../" + event_href(claim.seq)}],
            "seqs_more": 0})
    empty = QueryResult(qd.name, (), ())
    return _page(ctx, qd, empty, total=len(claims), rows=rows,
                 columns=["claim", "status", "final", "evidence paths", "gaps"])


def audit_pages(ctx: BuildContext) -> list[Page]:
    """Every audit page, index first; fills ``ctx.audit_pages`` for the overview."""
    pages = [audit_query_page(ctx, name) for name in QUERIES]
    ctx.audit_pages = [(p.facts["name"], p.path, p.facts["rows"]) for p in pages]
    ctx.audit_idle = frozenset(p.facts["name"] for p in pages if p.facts.get("idle"))
    return [audit_index_page(ctx), *pages]


def audit_query_page(ctx: BuildContext, name: str) -> Page:
    """One query's page; ``facts`` carry its name and the row count the overview shows
    (lookups count 0: they are not findings)."""
    qd = QUERIES[name]
    if name == "claim-trace":
        page, count = _claim_trace(ctx, qd), 0
    elif name == "introduced-by":
        page, count = _page(ctx, qd, first_statements(ctx.idx)), 0
    elif name == "near-duplicates":
        result = _near_duplicates(ctx)
        page, count = _page(ctx, qd, result), len(result.rows)
    else:
        result = run_query(ctx.idx, name, None)
        page, count = _page(ctx, qd, result), len(result.rows)
        page.facts["idle"] = not result.rows and result.checked == 0
    page.facts.update(name=name, rows=count)
    return page


def _near_duplicates(ctx: BuildContext) -> QueryResult:
    """The query, with text features kept from the last build of the site."""
    store = ctx.texts
    known = store.load() if store is not None else {}
    result, used = near_duplicates_with(ctx.idx, known)
    if store is not None and used != known:
        store.save(used)
    return result


def audit_index_page(ctx: BuildContext) -> Page:
    """The list of queries with their counts, from ``ctx.audit_pages``."""
    entries: list[dict[str, Any]] = []
    for name, href, count in ctx.audit_pages:
        qd = QUERIES[name]
        entries.append({"name": name, "href": href, "summary": qd.summary, "arg": qd.arg,
                        "rows": count, "lookup": name in LOOKUPS,
                        "idle": name in ctx.audit_idle})
    return Page("audit/index.html", "pages/audit_index.html", "Audit queries", "audit",
                {"entries": entries,
                 "with_rows": sum(1 for e in entries if e["rows"] and not e["lookup"])},
                breadcrumbs=[("Overview", "index.html"), ("Audit", None)])
