"""Artifact (individual) pages: what it is, where it came from, what judged it."""

from __future__ import annotations

from collections import Counter

from bundler.graph.index import BundleIndex, fitness_value
from bundler.graph.paths import lineage_graph
from bundler.graph.tracking import query
from bundler.model.events import ClaimEvent, IndividualEvent
from bundler.render.pages.base import (
    BuildContext,
    Deferred,
    Page,
    graph_spec,
    listing_path,
    n_pages,
    page_slice,
    pager,
)
from bundler.render.pages.lists import cut
from bundler.render.urls import artifact_href, event_href, payload_href, slug
from bundler.render.viewer_jobs import ViewerJob
from bundler.render.viewers import render_payload, viewer_category
from bundler.render.viewers_rows import MAX_ALSO, MAX_ROWS, Quotes, row_anchor
from bundler.verify.result import PayloadState

#: Media types whose bytes must be served with a matching file extension on
#: file:// (Chromium derives the type from the name there).
EXTENSION_COPIES = {"image/svg+xml": "svg"}


#: Text shown (and highlighted) for source code: Pygments needs ~8 ms per KiB
#: here, so one page never spends more than ~0.25 s colouring; the rest is a link.
CODE_MAX_BYTES = 32_768
#: Everything else that is shown as text, a tree or a table.
TEXT_MAX_BYTES = 262_144
#: JSON, JSON Lines and CSV viewers parse or count up to 4x what they show.
PARSE_FACTOR = 4
#: Bundles with more artifacts than this draw lineage graphs selectively.
LINEAGE_GRAPH_ARTIFACTS = 1_000


def artifact_pages(ctx: BuildContext) -> list[Page]:
    arts = artifacts(ctx)
    pages = [_index(ctx, arts, k) for k in range(n_pages(len(arts)))]
    pages += [_artifact(ctx, a) for a in arts]
    return pages


def artifacts(ctx: BuildContext) -> list[IndividualEvent]:
    """Individuals that are not claims, in log order."""
    return ctx.memo("artifacts", lambda: [i for i in ctx.idx.individuals.values()
                                          if not isinstance(i, ClaimEvent)])


def artifacts_index_page(ctx: BuildContext, k: int = 0) -> Page:
    """Page ``k`` of the artifact listing (``PER_PAGE`` artifacts each)."""
    return _index(ctx, artifacts(ctx), k)


def artifact_page(ctx: BuildContext, art_id: str) -> Page:
    return _artifact(ctx, ctx.idx.individuals[art_id])


def _index(ctx: BuildContext, arts: list[IndividualEvent], k: int = 0) -> Page:
    path = listing_path("artifacts/index.html", k)
    kinds = ctx.memo("artifact-kinds", lambda: Counter(a.kind for a in arts))
    items = [{"ref": ctx.ref(a.id, path), "kind": a.kind, "version": a.version,
              "state": _state_name(ctx, a),
              "size": a.payload.size if a.payload else None,
              "media_type": a.payload.media_type if a.payload else "",
              "status": a.status or ""} for a in page_slice(arts, k)]
    return Page(path, "pages/artifacts.html", "Artifacts", "artifacts",
                {"items": items, "kinds": sorted(kinds.items()),
                 "pager": pager("artifacts/index.html", k, len(arts), "Artifact pages")},
                breadcrumbs=[("Overview", "index.html"), ("Artifacts", None)])


def _state_name(ctx: BuildContext, art: IndividualEvent) -> str:
    state = ctx.idx.payload_state(art)
    return state.value if state is not None else "none"


def file_copy_path(digest: str, media_type: str) -> str | None:
    ext = EXTENSION_COPIES.get(media_type)
    return f"files/{digest.partition(':')[2]}.{ext}" if ext else None


def _quoted(ctx: BuildContext, art: IndividualEvent) -> tuple[str, list[tuple[int, int]]] | None:
    """The transcript name this artifact ships under and the (line, seq), in log order,
    of the trace records that quote it: under any name tied to it (its own first, the
    payload's file name before the artifact's), where ``transcript_artifacts`` says this
    artifact is the transcript (the last copy; or the one whose name ends as a cited path
    does), as the log pages' links and ``transcript-mismatch`` have it."""
    idx = ctx.idx
    names = [n for n in idx.transcript_names.get(art.id, ()) if idx.records_of_transcript.get(n)]
    if not names:
        return None
    records = sorted((r for n in names for r in idx.records_of_transcript[n]),
                     key=lambda r: r[1])
    return names[0], records


def _shows_rows(ctx: BuildContext, art: IndividualEvent) -> bool:
    """Does the artifact's page show its payload row by row (verified JSON Lines)?"""
    status = ctx.idx.payload_status(art)
    return (art.payload is not None and status is not None and status.path is not None
            and status.state is PayloadState.VERIFIED
            and viewer_category(status.media_type, art.payload.name) == "rows")


def row_fragment(ctx: BuildContext, art_id: str, line: int | None) -> str:
    """``#row-N`` for a link to the row a trace record quotes on the page of the
    artifact shipping its transcript, "" where that page has no such anchor.

    The page anchors every row up to ``MAX_ROWS`` that a record quotes: drawn, or
    in the note on the rows it does not draw (:mod:`bundler.render.viewers_rows`)."""
    art = ctx.idx.by_id.get(art_id)
    if line is None or line > MAX_ROWS or not isinstance(art, IndividualEvent) or \
            not _shows_rows(ctx, art):
        return ""
    return "#" + row_anchor(line)


def _quoted_facts(quoted: tuple[str, list[tuple[int, int]]] | None,
                  path: str) -> dict[str, object] | None:
    if quoted is None:
        return None
    name, records = quoted
    up = "../" * path.count("/")
    lines = [line for line, _ in records]
    first, last = records[0][1], records[-1][1]
    return {"name": name, "count": len(records), "low": min(lines), "high": max(lines),
            "lines": len(set(lines)),
            "first_seq": first, "first": up + event_href(first),
            "last_seq": last, "last": up + event_href(last)}


def _viewer(ctx: BuildContext, art: IndividualEvent, path: str,
            quoted: tuple[str, list[tuple[int, int]]] | None = None) -> Deferred | None:
    """The payload viewer, computed only if the page is rendered (not reused).

    Its key names every input: the payload commitment (bytes are verified
    against the digest), how it is shown, and where the full file is.

    The bytes are shown as the payload's status says (its first commitment), not as
    this event's commitment does: the status is what the site copies files by
    (``site_files``), and the two differ when one digest is committed twice with
    different media types or sizes (RB408), where an SVG commitment after a text one
    linked a copy the site never made.
    """
    if art.payload is None:
        return None
    payload = art.payload
    status = ctx.idx.payload_status(art)
    if status is None or status.state is not PayloadState.VERIFIED or status.path is None:
        key: tuple[object, ...] = ("unavailable", payload.media_type, payload.name)
        return Deferred(key, lambda: render_payload(None, payload.media_type, payload.name,
                                                    file_href=None))
    media_type = status.media_type
    copy = file_copy_path(payload.digest, media_type)
    up = "../" * path.count("/")
    href = up + (copy or payload_href(payload.digest))
    category = viewer_category(media_type, payload.name)
    shown = CODE_MAX_BYTES if category == "code" else TEXT_MAX_BYTES
    head = shown * PARSE_FACTOR if category in ("json", "csv", "rows") else shown
    counts: dict[int, int] = {}             # row -> records quoting it
    linked: dict[int, list[tuple[int, str]]] = {}   # row -> (seq, href) of the first few
    if quoted is not None and _shows_rows(ctx, art):
        for line, seq in quoted[1]:         # in log order
            if line <= MAX_ROWS:            # the rows a viewer can show
                counts[line] = counts.get(line, 0) + 1
                if counts[line] <= 1 + MAX_ALSO:
                    linked.setdefault(line, []).append((seq, up + event_href(seq)))
    rows = tuple((line, Quotes(counts[line], tuple(linked[line]))) for line in sorted(counts))
    job = ViewerJob(payload.digest, status.size, media_type, payload.name, href,
                    shown, head, str(ctx.bundle.root / status.path), category == "code",
                    status.held_hash(head), rows)
    return Deferred(job.key, job.run, job)


def few_artifacts(idx: BundleIndex) -> bool:
    """Few enough artifacts that each gets a lineage graph (see below)."""
    return len(idx.individuals) - len(idx.claims) <= LINEAGE_GRAPH_ARTIFACTS


def wants_lineage_graph(ctx: BuildContext, art: IndividualEvent) -> bool:
    """Draw an artifact's lineage graph only where it helps a reviewer.

    In a bundle with at most ``LINEAGE_GRAPH_ARTIFACTS`` artifacts, every
    artifact gets one.  In a bigger bundle (an evolutionary search has
    hundreds of thousands of candidates, and each graph costs a Graphviz
    layout) only artifacts that a claim cites as evidence or that entered an
    archive get a graph; the others still list their producing operator and
    parents on the page, which is what the graph would show.
    """
    idx = ctx.idx
    if query("few-artifacts", "", lambda: few_artifacts(idx)):
        return True
    return art.id in idx.cited_by or art.id in idx.archive_memberships


def _artifact(ctx: BuildContext, art: IndividualEvent) -> Page:
    idx = ctx.idx
    path = artifact_href(art.id)
    graphs = []
    lin = lineage_graph(idx, art.id, max_nodes=40) if wants_lineage_graph(ctx, art) else None
    if lin is not None and len(lin.nodes) > 1:
        graphs.append(graph_spec(ctx, lin, name="lineage", title=f"Lineage of {art.id}",
                                 description="Operators, parents and earlier versions this "
                                 "artifact derives from.", page_path=path))
    producer = idx.operators.get(art.produced_by) if art.produced_by else None
    status = idx.payload_status(art)
    fitness, fitness_more, fitness_all = cut(ctx, "artifact", "evaluations", art, path)
    archive, archive_more, archive_all = cut(ctx, "artifact", "archive-history", art, path)
    checks, checks_more, checks_all = cut(ctx, "artifact", "checked-by", art, path)
    parents, parents_more, parents_all = cut(ctx, "artifact", "parents", art, path)
    used_by, used_by_more, used_by_all = cut(ctx, "artifact", "used-by", art, path)
    cited_by, cited_by_more, cited_by_all = cut(ctx, "artifact", "cited-by", art, path)
    later, later_more, later_all = cut(ctx, "artifact", "later-versions", art, path)
    trace, trace_more, trace_all = cut(ctx, "artifact", "trace", art, path)
    quoted = _quoted(ctx, art)
    return Page(path, "pages/artifact.html", art.name or art.id, "artifacts", {
        "art": art,
        "status": status,
        "viewer": _viewer(ctx, art, path, quoted),
        "quoted": _quoted_facts(quoted, path),
        "producer": ({"ref": ctx.ref(producer.id, path), "op": producer.custom_type or producer.op,
                      "outcome": producer.outcome, "tool": producer.tool, "agent": producer.agent,
                      "stream": ctx.ref(producer.stream, path),
                      "parents": ctx.refs(parents, path), "parents_more": parents_more,
                      "parents_all": parents_all,
                      "steering": ctx.ref(producer.steering, path) if producer.steering else None,
                      "summary": producer.summary}
                     if producer else None),
        "used_by": ctx.refs(used_by, path), "used_by_more": used_by_more,
        "used_by_all": used_by_all,
        "cited_by": ctx.refs(cited_by, path), "cited_by_more": cited_by_more,
        "cited_by_all": cited_by_all,
        "checks": [{"ref": ctx.ref(e.target, path), "inferred": e.provenance == "inferred",
                    "confidence": e.confidence} for e in checks],
        "checks_more": checks_more, "checks_all": checks_all,
        "fitness": [{"id": f.id, "href": "../" + event_href(f.seq), "evaluator": f.evaluator.name,
                     "version": f.evaluator.version, "value": fitness_value(f), "note": f.note,
                     "verdict": f.verdict, "passed": f.passed} for f in fitness],
        "fitness_more": fitness_more, "fitness_all": fitness_all,
        "archive": [{"archive": a.archive, "action": a.action, "reason": a.reason,
                     "time": a.time, "href": "../" + event_href(a.seq)} for a in archive],
        "archive_more": archive_more, "archive_all": archive_all,
        "supersedes": ctx.ref(art.supersedes, path) if art.supersedes else None,
        "superseded_by": ctx.refs(later, path), "superseded_by_more": later_more,
        "superseded_by_all": later_all,
        "trace": ctx.refs(trace, path), "trace_more": trace_more, "trace_all": trace_all,
        "stream": ctx.ref(art.stream, path),
        "event_href": "../" + event_href(art.seq),
        "download_href": ("../" + payload_href(art.payload.digest)
                          if art.payload and status and status.state is PayloadState.VERIFIED
                          else None),
        "anchor": slug(art.id),
    }, graphs=graphs, breadcrumbs=[("Overview", "index.html"),
                                   ("Artifacts", "artifacts/index.html"),
                                   (art.name or art.id, None)])
