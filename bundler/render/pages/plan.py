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
from bundler.render.pages.base import BuildContext, Page
from bundler.render.pages.claims import claim_page, claims_index_page
from bundler.render.pages.events import events_index_page, events_page, n_event_pages
from bundler.render.pages.integrity import (
    downloads_page,
    integrity_page,
    overview_page,
    shipped_payloads,
)
from bundler.render.pages.lineage import lineage_page, steering_page
from bundler.render.pages.workflow import phase_page, workflow_index_page
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


def _events(ctx: BuildContext, key: str) -> Page:
    return events_page(ctx, int(key))


MAKERS: dict[str, Callable[[BuildContext, str], Page]] = {
    "audit": audit_query_page,
    "claims-index": lambda ctx, _key: claims_index_page(ctx),
    "claim": claim_page,
    "artifacts-index": lambda ctx, _key: artifacts_index_page(ctx),
    "artifact": artifact_page,
    "workflow-index": lambda ctx, _key: workflow_index_page(ctx),
    "phase": phase_page,
    "lineage": lambda ctx, _key: lineage_page(ctx),
    "steering": lambda ctx, _key: steering_page(ctx),
    "events-index": lambda ctx, _key: events_index_page(ctx),
    "events": _events,
    "integrity": lambda ctx, _key: integrity_page(ctx),
    "overview": lambda ctx, _key: overview_page(ctx),
    "audit-index": lambda ctx, _key: audit_index_page(ctx),
    "downloads": lambda ctx, _key: downloads_page(ctx, shipped_payloads(ctx)),
}


def plan_pages(ctx: BuildContext) -> list[PageTask]:
    """Every page but the three the builder makes last (see module docstring).

    Audit queries come first: they are the longest single tasks, and starting
    them early keeps the workers evenly loaded.
    """
    idx = ctx.idx
    tasks = [PageTask("audit", name, f"audit/{name}.html") for name in QUERIES]
    tasks.append(PageTask("claims-index", "", "claims/index.html"))
    tasks += [PageTask("claim", c.id, claim_href(c.id)) for c, _ in idx.claims_by_status()]
    tasks.append(PageTask("artifacts-index", "", "artifacts/index.html"))
    tasks += [PageTask("artifact", a.id, artifact_href(a.id)) for a in artifacts(ctx)]
    tasks.append(PageTask("workflow-index", "", "workflow/index.html"))
    tasks += [PageTask("phase", w, workflow_href(w)) for w in idx.workflow_nodes]
    tasks += [PageTask("lineage", "", "lineage.html"), PageTask("steering", "", "steering.html")]
    tasks.append(PageTask("events-index", "", "events/index.html"))
    tasks += [PageTask("events", str(p), event_page(p * EVENTS_PER_PAGE))
              for p in range(n_event_pages(ctx))]
    tasks.append(PageTask("integrity", "", "integrity.html"))
    tasks.append(PageTask("downloads", "", "downloads.html"))
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
