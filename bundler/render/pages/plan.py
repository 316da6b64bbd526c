"""The page plan: every page of a site as a small task, produced on demand.

A site for a million events has over a hundred thousand pages; holding all
their contexts (and viewers, and graphs) at once is what made memory grow
with the site.  The plan lists pages as ``(kind, key, path)`` triples that
are cheap to send to a worker process, and :func:`make_page` builds one
page's context only when it is about to be rendered.

Paths are known up front, so two pages mapping to one file are refused
before any rendering starts.

Two pages depend on the others and are made last: the overview and the
audit index show the audit queries' row counts (``ctx.audit_pages``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from bundler.query import QUERIES
from bundler.render.pages.artifacts import artifact_page, artifacts, artifacts_index_page
from bundler.render.pages.audit import audit_index_page, audit_query_page
from bundler.render.pages.base import BuildContext, Page, listing_path, n_pages
from bundler.render.pages.claims import claim_page, claims_index_page
from bundler.render.pages.events import events_index_page, events_page, n_event_pages
from bundler.render.pages.integrity import (
    downloads_page,
    integrity_page,
    overview_page,
    shipped_payloads,
)
from bundler.render.pages.lineage import ARCHIVES_PER_PAGE, lineage_page, steering_page
from bundler.render.pages.lists import archive_list_page, list_page, long_archive_lists, long_lists
from bundler.render.pages.workflow import PHASES_PER_PAGE, phase_page, workflow_index_page
from bundler.render.urls import (
    EVENTS_PER_PAGE,
    artifact_href,
    claim_href,
    event_page,
    workflow_href,
)


@dataclass(frozen=True, slots=True)
class PageTask:
    kind: str    # a key of MAKERS
    key: str     # object id, page number or ""
    path: str    # output path from the site root


def _k(key: str) -> int:
    return int(key) if key else 0


MAKERS: dict[str, Callable[[BuildContext, str], Page]] = {
    "audit": audit_query_page,
    "claims-index": lambda ctx, key: claims_index_page(ctx, _k(key)),
    "claim": claim_page,
    "artifacts-index": lambda ctx, key: artifacts_index_page(ctx, _k(key)),
    "artifact": artifact_page,
    "workflow-index": lambda ctx, key: workflow_index_page(ctx, _k(key)),
    "phase": phase_page,
    "lineage": lambda ctx, key: lineage_page(ctx, _k(key)),
    "steering": lambda ctx, key: steering_page(ctx, _k(key)),
    "list": list_page,
    "archive-list": archive_list_page,
    "events-index": lambda ctx, key: events_index_page(ctx, _k(key)),
    "events": lambda ctx, key: events_page(ctx, _k(key)),
    "integrity": lambda ctx, _key: integrity_page(ctx),
    "downloads": lambda ctx, key: downloads_page(
        ctx, ctx.memo("shipped", lambda: shipped_payloads(ctx)), _k(key)),
    "overview": lambda ctx, _key: overview_page(ctx),
    "audit-index": lambda ctx, _key: audit_index_page(ctx),
}


def _listing(kind: str, first_path: str, total: int,
             per_page: int | None = None) -> list[PageTask]:
    return [PageTask(kind, str(k), listing_path(first_path, k))
            for k in range(n_pages(total, per_page))]


def plan_pages(ctx: BuildContext) -> list[PageTask]:
    """Every page but the two the builder makes last (see module docstring).

    Audit queries come first: they are the longest single tasks, and starting
    them early keeps the workers evenly loaded.
    """
    idx = ctx.idx
    claims = [c for c, _ in idx.claims_by_status()]
    arts = artifacts(ctx)
    n_events = n_event_pages(ctx)
    tasks = [PageTask("audit", name, f"audit/{name}.html") for name in QUERIES]
    tasks += _listing("claims-index", "claims/index.html", len(claims))
    tasks += [PageTask("claim", c.id, claim_href(c.id)) for c in claims]
    tasks += _listing("artifacts-index", "artifacts/index.html", len(arts))
    tasks += [PageTask("artifact", a.id, artifact_href(a.id)) for a in arts]
    tasks += _listing("workflow-index", "workflow/index.html", len(idx.workflow_nodes),
                      PHASES_PER_PAGE)
    tasks += [PageTask("phase", w, workflow_href(w)) for w in idx.workflow_nodes]
    tasks += _listing("lineage", "lineage.html", len(idx.archives), ARCHIVES_PER_PAGE)
    tasks += _listing("steering", "steering.html", len(idx.steering))
    tasks += _listing("events-index", "events/index.html", n_events)
    tasks += [PageTask("events", str(p), event_page(p * EVENTS_PER_PAGE))
              for p in range(n_events)]
    tasks.append(PageTask("integrity", "", "integrity.html"))
    tasks += _listing("downloads", "downloads.html", len(ctx.bundle.payloads))
    for owner, events in (("artifact", arts), ("claim", claims),
                          ("phase", idx.workflow_nodes.values()),
                          ("node", idx.evidence_nodes.values()), ("steering", idx.steering)):
        tasks += [PageTask("list", key, path) for key, path in long_lists(idx, owner, events)]
    tasks += [PageTask("archive-list", key, path) for key, path in
              long_archive_lists(idx, sorted(idx.archives), ARCHIVES_PER_PAGE)]
    return tasks


def final_pages() -> list[PageTask]:
    """The pages made after all others: they need ``ctx.audit_pages`` filled in."""
    return [PageTask("overview", "", "index.html"),
            PageTask("audit-index", "", "audit/index.html")]


def make_page(ctx: BuildContext, task: PageTask) -> Page:
    page = MAKERS[task.kind](ctx, task.key)
    if page.path != task.path:
        raise AssertionError(f"page {task.kind}:{task.key} was planned at {task.path} "
                             f"but produced {page.path}")
    return page
