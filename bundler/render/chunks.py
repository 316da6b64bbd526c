"""Render a chunk of planned pages: contexts, one Graphviz run, templates, files.

This is the unit of parallel work.  A worker process (forked from the
builder, so it shares the verified bundle and its index copy-on-write) takes
a chunk of :class:`~bundler.render.pages.plan.PageTask`, and for each page:

0. carries an object page over, without building anything, when the index
   entries it was made from are unchanged (:mod:`bundler.render.page_deps`);
1. builds its context (only now: memory does not grow with the site), noting
   the index entries an object page reads;
2. fingerprints its inputs and, when the previous site holds the same page
   with the same fingerprint and intact bytes, links that file instead (a cold
   build whose pages graph helpers render leaves this to them:
   :attr:`RenderJob.fingerprint_later`);
3. lays out the graphs of every page still to render in ONE ``dot`` run;
4. renders the template and writes the file into the writer's temporary
   folder (the builder reserved the path, so collisions were refused earlier).

It returns only small :class:`PageResult` records; the page itself is dropped.
"""

from __future__ import annotations

import dataclasses
import hashlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jinja2
from markupsafe import Markup

from bundler import interrupts
from bundler.graph.tracking import recording
from bundler.model.events import EventBase
from bundler.output.cache import (
    Deferred,
    Encoder,
    EventKey,
    Uncacheable,
    digest_text,
)
from bundler.output.deps_file import DepsRecord
from bundler.output.graph_cache import GraphCache
from bundler.output.manifest import PreviousSite
from bundler.output.writer import target_of
from bundler.render.chunk_graphs import graph_name, layout_finish, layout_start
from bundler.render.graphviz import DotBatch
from bundler.render.page_deps import TRACKED_KINDS, PageDeps
from bundler.render.page_html import (
    CSP,
    PageFrame,
    RenderSetup,
    SiteInfo,
    render_html,
    size_svg,
)
from bundler.render.pages.base import BuildContext, Page
from bundler.render.pages.plan import PageTask, make_page
from bundler.render.side_work import (
    PageJob,
    PageKeys,
    SideResult,
    SideWork,
    page_fingerprint,
)
from bundler.verify.result import LoadedBundle

__all__ = ["CSP", "ChunkWork", "PageResult", "RenderJob", "SiteInfo", "finish_rendered",
           "finish_tasks", "page_jobs", "render_page", "render_tasks", "side_work", "size_svg",
           "start_tasks"]


@dataclass
class RenderJob:
    """Everything a worker needs; built by the builder before the workers fork."""

    ctx: BuildContext
    env: jinja2.Environment
    site: SiteInfo
    base_url: str | None
    out_root: Path                   # the writer's temporary folder
    salt: str                        # code, templates, theme, Graphviz, site-wide values
    encoder: Encoder | None          # None: fingerprints are not computed at all
    previous: PreviousSite | None    # pages that may be reused
    dot: str | None = None
    #: Laid-out graphs of this site's earlier builds (see :mod:`bundler.output.graph_cache`).
    graphs: GraphCache | None = None
    #: Records the reads of object pages, and carries those of ``previous`` over on them.
    deps: PageDeps | None = None
    #: How another process makes the same environment (pages rendered by graph helpers).
    setup: RenderSetup | None = None
    #: Pages are fingerprinted where they are rendered (graph helpers, a cold build),
    #: not in :func:`start_tasks`; see :func:`page_jobs`.
    fingerprint_later: bool = False

    def __post_init__(self) -> None:
        """Open the site's graph store whenever pages are fingerprinted (so a cold
        build fills it), and read it only when the previous site is reused too."""
        if self.graphs is None and self.encoder is not None:
            target = target_of(self.out_root)
            if target is not None:
                self.graphs = GraphCache.open(target, read=self.previous is not None)


@dataclass(frozen=True, slots=True)
class PageResult:
    path: str
    fingerprint: str          # "" when the page could not be fingerprinted
    digest: str               # SHA-256 of the bytes written
    size: int
    graphs: int
    reused: bool
    facts: dict[str, Any]
    #: what the page read, for the next build (object pages only; see page_deps)
    deps: DepsRecord | None = None
    #: carried over on the previous build's record, which stays valid as it is
    #: (the builder has it already: it is not sent back from a worker)
    deps_kept: bool = False


#: The job a forked worker inherited (set by the builder just before forking).
JOB: RenderJob | None = None


AuditCounts = tuple[list[tuple[str, str, int]], frozenset[str]]


def run_chunk(tasks: list[PageTask], audit: AuditCounts | None) -> list[PageResult]:
    """Worker entry point (module-level, so picklable).  ``audit`` carries the audit
    row counts (and the checks with nothing to check) for the pages that show them,
    known only once those ran."""
    assert JOB is not None, "render job not set before the workers were started"
    if audit is not None:
        JOB.ctx.audit_pages, JOB.ctx.audit_idle = audit
    with interrupts.busy():
        return render_tasks(JOB, tasks)


def event_key_for(bundle: LoadedBundle) -> EventKey | None:
    """Events fingerprint as the leaf hash of their line, when seq -> line is one-to-one.

    A log with repeated seq numbers (an invalid bundle) gets no event keys and
    hence no page cache: correctness first, such bundles are small anyway.
    """
    lines, leaves = bundle.event_lines, bundle.leaf_hashes
    if len(lines) != len(bundle.events):
        return None

    def key(obj: Any) -> bytes | None:
        if not isinstance(obj, EventBase):
            return None
        line = lines.get(obj.seq)
        if line is None or line * 32 > len(leaves):
            return None
        return bytes(leaves[(line - 1) * 32:line * 32])

    return key


def render_tasks(job: RenderJob, tasks: list[PageTask]) -> list[PageResult]:
    """Render ``tasks`` (one chunk) completely: :func:`start_tasks`, its Graphviz run,
    :func:`finish_tasks`."""
    work = start_tasks(job, tasks)
    work.batch.run()
    return finish_tasks(job, work)


@dataclass
class ChunkWork:
    """A chunk between its two halves: pages made, fingerprinted and reused where they
    can be; the graphs of the rest waiting for (or back from) ``dot``."""

    pages: list[Page | None]                     # None: carried over on its reads
    fps: list[str]
    records: list[DepsRecord | None]
    results: dict[int, PageResult]
    todo: list[int]                              # pages to render
    svgs: dict[str, dict[str, Markup]]           # page path -> slot -> SVG (from the store)
    owners: dict[str, tuple[str, str, str]]      # graph name -> (page path, slot, key)
    batch: DotBatch
    keys: dict[str, list[str]]                   # page path -> its graphs' keys


def start_tasks(job: RenderJob, tasks: list[PageTask]) -> ChunkWork:
    """Carry over object pages whose reads are unchanged; make and fingerprint the
    others, carry those with an unchanged fingerprint over, and gather the graphs the
    rest need that the graph store does not hold."""
    pages: list[Page | None] = []
    results: dict[int, PageResult] = {}
    fps: list[str] = []
    records: list[DepsRecord | None] = []
    keys: dict[str, list[str]] = {}     # page path -> graph keys, in page.graphs order
    todo: list[int] = []
    for i, task in enumerate(tasks):
        deps = job.deps if task.kind in TRACKED_KINDS else None
        record = deps.unchanged(task) if deps is not None else None
        if record is not None and (carried := _reuse(job, task.path, record.fingerprint,
                                                     record.graphs, {}, None,
                                                     kept=True)) is not None:
            results[i] = carried
            pages.append(None)
            fps.append(record.fingerprint)
            records.append(record)
            continue
        if deps is not None and deps.wanted:
            with recording() as reads:
                page = make_page(job.ctx, task)
                fp, keys[page.path] = _fingerprint(job, page)
            record = deps.record(task, fp, len(page.graphs), reads)
        else:
            page = make_page(job.ctx, task)
            fp, keys[page.path] = _fingerprint(job, page)
            record = None
        pages.append(page)
        fps.append(fp)
        records.append(record)
        reused = _reuse(job, page.path, fp, len(page.graphs), page.facts, record) if fp else None
        if reused is not None:
            results[i] = reused
        else:
            todo.append(i)
    made = [p for i in todo if (p := pages[i]) is not None]
    svgs, owners, batch = layout_start(made, job.dot, job.graphs, keys)
    return ChunkWork(pages, fps, records, results, todo, svgs, owners, batch, keys)


def _reuse(job: RenderJob, path: str, fp: str, graphs: int, facts: dict[str, Any],
           record: DepsRecord | None, *, kept: bool = False) -> PageResult | None:
    """The previous site's file for ``path``, if it was made from ``fp`` and still holds
    the bytes written then (linked or copied into the new site).  ``kept``: carried
    over on the previous build's record of its reads, which stays as it is."""
    if job.previous is None or not job.previous.reuse(path, fp, job.out_root / path):
        return None
    size = (job.out_root / path).stat().st_size
    return PageResult(path, fp, job.previous.entries[path].digest, size, graphs, True, facts,
                      record, kept)


def _jobs(work: ChunkWork) -> Iterator[tuple[int, str, Any]]:
    """(page, context key, job) of each :class:`Deferred` with a job on the pages to
    render, in a fixed order (what :func:`side_work` sends, and its answers come in)."""
    for i in work.todo:
        page = work.pages[i]
        assert page is not None
        for name, value in page.context.items():
            if isinstance(value, Deferred) and value.job is not None:
                yield i, name, value.job


def side_work(job: RenderJob, work: ChunkWork) -> SideWork:
    """What of ``work`` another process can do (:mod:`bundler.render.side_work`): its
    graphs, storing them, and the payload viewers of the pages it renders."""
    return SideWork(work.batch, job.graphs.root if job.graphs is not None else None,
                    {name: key for name, (_, _, key) in work.owners.items() if key},
                    [viewer for _, _, viewer in _jobs(work)])


def finish_tasks(job: RenderJob, work: ChunkWork, side: SideResult | None = None,
                 later: list[tuple[str, bytes]] | None = None) -> list[PageResult]:
    """Sanitise the chunk's new graphs (after ``work.batch.run()``), render and write the
    pages that were not carried over.  ``side``: :func:`side_work` already done (in a
    helper process): the graphs laid out, sanitised and stored, and the viewers made.
    ``later``: the pages are not written here but added to it as (absolute path,
    bytes); the caller must see them written before using the site."""
    made: dict[int, dict[str, Any]] = {}
    if side is None:
        svgs = layout_finish(work.svgs, work.owners, work.batch.finish(), job.graphs)
    else:
        svgs = layout_finish(work.svgs, work.owners, side.svgs, None)
        for (i, name, _), viewer in zip(_jobs(work), side.viewers, strict=True):
            made.setdefault(i, {})[name] = viewer
    for i in work.todo:
        page = work.pages[i]
        assert page is not None
        if work.fps[i] == LATER:        # not rendered by a helper after all
            _fingerprint_here(job, work, i, page)
        data = render_page(job, page, svgs.get(page.path, {}), made.get(i)).encode("utf-8")
        if later is None:
            (job.out_root / page.path).write_bytes(data)
        else:
            later.append((str(job.out_root / page.path), data))
        work.results[i] = PageResult(page.path, work.fps[i], hashlib.sha256(data).hexdigest(),
                                     len(data), len(page.graphs), False, page.facts,
                                     work.records[i])
    return [work.results[i] for i in range(len(work.pages))]


def _fingerprint(job: RenderJob, page: Page) -> tuple[str, list[str]]:
    """The page's fingerprint and one key per graph ("", [] when not computed).

    Each graph is hashed on its own, from everything its SVG is a function of
    (its name on the page included), and the page hashes those keys: the keys
    then also index the graph store at no extra cost.
    """
    if job.encoder is None:
        return "", []
    try:
        keys = [digest_text(f"graph\x00{job.salt}\x00" + job.encoder.encode((
            graph_name(page.path, s.name), s.title, s.description, list(s.nodes),
            list(s.edges), s.root, s.rankdir, {k: list(v) for k, v in s.clusters.items()},
            [s.href(n.id) for n in s.nodes]))) for s in page.graphs]
        if job.fingerprint_later:
            return LATER, keys
        return page_fingerprint(job.encoder, job.salt, frame_of(page), page.context, keys), keys
    except Uncacheable:
        return "", []


def _fingerprint_here(job: RenderJob, work: ChunkWork, i: int, page: Page) -> None:
    assert job.encoder is not None, "a page to fingerprint later had an encoder"
    try:
        fp = page_fingerprint(job.encoder, job.salt, frame_of(page), page.context,
                              work.keys.get(page.path, []))
    except Uncacheable:
        fp = ""
    work.fps[i] = fp
    work.records[i] = _with_fingerprint(work.records[i], fp)


def _with_fingerprint(record: DepsRecord | None, fp: str) -> DepsRecord | None:
    """A page record made before its page's fingerprint was known, now with it (none
    for a page without one, as :meth:`PageDeps.record` would have decided)."""
    return dataclasses.replace(record, fingerprint=fp) if record is not None and fp else None


#: The fingerprint of a page that is fingerprinted where it renders
#: (:attr:`RenderJob.fingerprint_later`) until its answer comes back.
LATER = "later"


def render_page(job: RenderJob, page: Page, svg: dict[str, Markup],
                made: dict[str, Any] | None = None) -> str:
    """``made``: values of the page's :class:`Deferred` context already computed."""
    made = made or {}
    context = {k: (made[k] if k in made else v.make() if isinstance(v, Deferred) else v)
               for k, v in page.context.items()}
    return render_html(job.env, job.site, job.base_url, frame_of(page), context, svg)


def frame_of(page: Page) -> PageFrame:
    return PageFrame(page.path, page.template, page.title, page.key, page.breadcrumbs)


def page_jobs(job: RenderJob, work: ChunkWork) -> list[PageJob]:
    """The pages of ``work`` still to render, for :func:`side_work` to render elsewhere
    (see :class:`~bundler.render.side_work.PageJob`): what :func:`finish_tasks` would
    render, the same context and graphs, made into plain data here."""
    viewer_index = {(i, name): n for n, (i, name, _) in enumerate(_jobs(work))}
    graphs: dict[str, dict[str, str]] = {}
    for name, (path, slot, _) in work.owners.items():
        graphs.setdefault(path, {})[name] = slot
    out: list[PageJob] = []
    for i in work.todo:
        page = work.pages[i]
        assert page is not None
        context: dict[str, Any] = {}
        viewers: dict[str, int] = {}
        lazy: dict[str, Any] = {}
        for key, value in page.context.items():
            if isinstance(value, Deferred):
                lazy[key] = value.key
                if value.job is not None:
                    viewers[key] = viewer_index[(i, key)]
                    value = None        # made by the helper, in this place
                else:
                    value = value.make()
            context[key] = value
        later = None
        if work.fps[i] == LATER:
            later = PageKeys(work.keys.get(page.path, []), lazy)
        out.append(PageJob(frame_of(page), context, str(job.out_root / page.path),
                           {slot: str(svg) for slot, svg in work.svgs.get(page.path, {}).items()},
                           graphs.get(page.path, {}), viewers, later))
    return out


def finish_rendered(work: ChunkWork,
                    rendered: list[tuple[str, int, str | None]]) -> list[PageResult]:
    """:func:`finish_tasks` for pages rendered and written elsewhere (:func:`page_jobs`),
    with the fingerprints computed there (None: computed here)."""
    for i, (digest, size, fp) in zip(work.todo, rendered, strict=True):
        page = work.pages[i]
        assert page is not None
        record = work.records[i]
        if fp is None:
            fp = work.fps[i]
        else:
            record = _with_fingerprint(record, fp)
        work.results[i] = PageResult(page.path, fp, digest, size, len(page.graphs),
                                     False, page.facts, record)
    return [work.results[i] for i in range(len(work.pages))]
