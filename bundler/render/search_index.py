"""Which documents the client-side search sees.

Every claim is indexed.  Artifacts are indexed up to a cap, those a claim
cites or an archive holds first; other events up to a cap too; text is
capped per document.  So ``search/docs.js`` (the only file whose size grows
with the bundle) stays within what a browser indexes in a few seconds even
for a million events: at most ``MAX_ARTIFACT_DOCS + MAX_EVENT_DOCS`` documents
besides the claims.
"""

from __future__ import annotations

from bundler.model.events import IndividualEvent
from bundler.render.pages.base import BuildContext
from bundler.render.pages.events import summary
from bundler.render.search import SearchDoc
from bundler.render.text import plain_text

MAX_EVENT_DOCS = 20_000
MAX_ARTIFACT_DOCS = 50_000
TEXT_CAP = 240


def search_documents(ctx: BuildContext) -> list[SearchDoc]:
    idx = ctx.idx
    docs: list[SearchDoc] = []
    for claim, status in idx.claims_by_status():
        docs.append(SearchDoc(claim.id, claim.name or claim.id, "claim",
                              f"{status.value} {plain_text(claim.text, TEXT_CAP * 2)}",
                              ctx.linker.href(claim.id) or ""))
    for ind in _searchable_artifacts(ctx):
        media = ind.payload.media_type if ind.payload else ""
        docs.append(SearchDoc(ind.id, ind.name or ind.id, "artifact",
                              f"{ind.kind} {ind.id} {media}"[:TEXT_CAP],
                              ctx.linker.href(ind.id) or ""))
    n = 0
    for ev in ctx.bundle.events:
        if ev.type in ("claim", "individual"):
            continue
        if n >= MAX_EVENT_DOCS:
            break
        docs.append(SearchDoc(ev.id, f"{ev.type} {ev.id}", "event", summary(ev)[:TEXT_CAP],
                              ctx.linker.href(ev.id) or ""))
        n += 1
    return docs


def _searchable_artifacts(ctx: BuildContext) -> list[IndividualEvent]:
    """All artifacts in log order, or at most ``MAX_ARTIFACT_DOCS`` of them: those a
    claim cites or an archive holds first, then the earliest."""
    idx = ctx.idx
    arts = [i for i in idx.individuals.values() if i.id not in idx.claims]
    if len(arts) <= MAX_ARTIFACT_DOCS:
        return arts
    order = sorted(range(len(arts)), key=lambda i: (
        not (arts[i].id in idx.cited_by or arts[i].id in idx.archive_memberships), i))
    return [arts[i] for i in sorted(order[:MAX_ARTIFACT_DOCS])]
