"""Which documents the client-side search sees.

Claims and artifacts are always indexed.  Other events are indexed up to a
cap, with short text, so ``search/docs.js`` stays bounded on huge bundles
(it is the only file whose size grows with the bundle).
"""

from __future__ import annotations

from bundler.render.pages.base import BuildContext
from bundler.render.pages.events import summary
from bundler.render.search import SearchDoc
from bundler.render.text import plain_text

MAX_EVENT_DOCS = 20_000
TEXT_CAP = 240


def search_documents(ctx: BuildContext) -> list[SearchDoc]:
    idx = ctx.idx
    docs: list[SearchDoc] = []
    for claim, status in idx.claims_by_status():
        docs.append(SearchDoc(claim.id, claim.name or claim.id, "claim",
                              f"{status.value} {plain_text(claim.text, TEXT_CAP * 2)}",
                              ctx.linker.href(claim.id) or ""))
    for ind in idx.individuals.values():
        if ind.id in idx.claims:
            continue
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
