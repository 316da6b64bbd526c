"""Artifact (individual) pages: what it is, where it came from, what judged it."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from bundler.graph.index import fitness_value
from bundler.graph.paths import lineage_graph
from bundler.model.events import ClaimEvent, IndividualEvent
from bundler.render.pages.base import BuildContext, Page, graph_spec
from bundler.render.urls import artifact_href, event_href, payload_href, slug
from bundler.render.viewers import Viewer, render_payload
from bundler.verify.result import PayloadState

#: Media types whose bytes must be served with a matching file extension on
#: file:// (Chromium derives the type from the name there).
EXTENSION_COPIES = {"image/svg+xml": "svg"}


def artifact_pages(ctx: BuildContext) -> list[Page]:
    arts = [i for i in ctx.idx.individuals.values() if not isinstance(i, ClaimEvent)]
    pages = [_index(ctx, arts)]
    pages += [_artifact(ctx, a) for a in arts]
    return pages


def _index(ctx: BuildContext, arts: list[IndividualEvent]) -> Page:
    path = "artifacts/index.html"
    kinds = Counter(a.kind for a in arts)
    items = [{"ref": ctx.ref(a.id, path), "kind": a.kind, "version": a.version,
              "state": _state_name(ctx, a),
              "size": a.payload.size if a.payload else None,
              "media_type": a.payload.media_type if a.payload else "",
              "status": a.status or ""} for a in arts]
    return Page(path, "pages/artifacts.html", "Artifacts", "artifacts",
                {"items": items, "kinds": sorted(kinds.items())},
                breadcrumbs=[("Overview", "index.html"), ("Artifacts", None)])


def _state_name(ctx: BuildContext, art: IndividualEvent) -> str:
    state = ctx.idx.payload_state(art)
    return state.value if state is not None else "none"


def file_copy_path(digest: str, media_type: str) -> str | None:
    ext = EXTENSION_COPIES.get(media_type)
    return f"files/{digest.partition(':')[2]}.{ext}" if ext else None


def _viewer(ctx: BuildContext, art: IndividualEvent, path: str) -> Viewer | None:
    if art.payload is None:
        return None
    status = ctx.idx.payload_status(art)
    root = "../" * path.count("/")
    if status is None or status.state is not PayloadState.VERIFIED or status.path is None:
        return render_payload(None, art.payload.media_type, art.payload.name, file_href=None)
    src = ctx.bundle.root / status.path
    copy = file_copy_path(art.payload.digest, art.payload.media_type)
    href = root + (copy or payload_href(art.payload.digest))
    return render_payload(_read_head(src, 262_144 * 4), art.payload.media_type,
                          art.payload.name, file_href=href, total_size=art.payload.size)


def _read_head(path: Path, limit: int) -> bytes:
    """Never load a whole multi-GB payload to show its first screenful."""
    with open(path, "rb") as fh:
        return fh.read(limit)


def _artifact(ctx: BuildContext, art: IndividualEvent) -> Page:
    idx = ctx.idx
    path = artifact_href(art.id)
    lin = lineage_graph(idx, art.id, max_nodes=40)
    graphs = []
    if len(lin.nodes) > 1:
        graphs.append(graph_spec(ctx, lin, name="lineage", title=f"Lineage of {art.id}",
                                 description="Operators, parents and earlier versions this "
                                 "artifact derives from.", page_path=path))
    producer = idx.operators.get(art.produced_by) if art.produced_by else None
    status = idx.payload_status(art)
    fitness = [{"id": f.id, "href": "../" + event_href(f.seq), "evaluator": f.evaluator.name,
                "version": f.evaluator.version, "value": fitness_value(f), "note": f.note,
                "verdict": f.verdict, "passed": f.passed}
               for f in idx.fitness_by_target.get(art.id, [])]
    archive = [{"archive": a.archive, "action": a.action, "reason": a.reason, "time": a.time,
                "href": "../" + event_href(a.seq)} for a in idx.archive_memberships.get(art.id, [])]
    checks = [e for e in idx.edges_out.get(art.id, []) if e.relation == "checked_by"]
    return Page(path, "pages/artifact.html", art.name or art.id, "artifacts", {
        "art": art,
        "status": status,
        "viewer": _viewer(ctx, art, path),
        "producer": ({"ref": ctx.ref(producer.id, path), "op": producer.custom_type or producer.op,
                      "outcome": producer.outcome, "tool": producer.tool, "agent": producer.agent,
                      "stream": ctx.ref(producer.stream, path),
                      "parents": ctx.refs(producer.parents, path),
                      "steering": ctx.ref(producer.steering, path) if producer.steering else None,
                      "summary": producer.summary}
                     if producer else None),
        "used_by": ctx.refs(idx.used_by.get(art.id, []), path),
        "cited_by": ctx.refs(idx.cited_by.get(art.id, []), path),
        "checks": [{"ref": ctx.ref(e.target, path), "inferred": e.provenance == "inferred",
                    "confidence": e.confidence} for e in checks],
        "fitness": fitness,
        "archive": archive,
        "supersedes": ctx.ref(art.supersedes, path) if art.supersedes else None,
        "superseded_by": ctx.refs(idx.superseded_by.get(art.id, []), path),
        "trace": ctx.refs(art.trace, path),
        "stream": ctx.ref(art.stream, path),
        "event_href": "../" + event_href(art.seq),
        "download_href": ("../" + payload_href(art.payload.digest)
                          if art.payload and status and status.state is PayloadState.VERIFIED
                          else None),
        "anchor": slug(art.id),
    }, graphs=graphs, breadcrumbs=[("Overview", "index.html"),
                                   ("Artifacts", "artifacts/index.html"),
                                   (art.name or art.id, None)])
