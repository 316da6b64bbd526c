"""The part of rendering a chunk of pages that needs nothing but plain data.

Why it is split off: when pages render in the build process (a bundle too big
to fork workers for), that one process is the limit on build time, while the
second core is only partly busy.  Whatever is a pure function of a few strings
goes to the graph helper processes (:mod:`bundler.render.graph_helper`), which
run it two chunks ahead of the pages:

- laying out and sanitising the chunk's graphs (``dot`` and the SVG filter);
- keeping those SVGs in the site's graph store (compression and a file each);
- making the chunk's payload viewers (reading the head of each file, highlighting);
- writing the pages of an earlier chunk (the kernel's share of writing gigabytes
  of HTML is a tenth of the build process's time);
- or, instead, rendering the chunk's pages from their contexts and writing them
  (:class:`PageJob`): templates were a quarter of the build process's time at a
  million events, and pickling a page's context costs a tenth of rendering it;
- and, in a cold build, fingerprinting those pages from the same contexts
  (:class:`PageKeys`, :class:`EventKeys`): fingerprints were a fifth of the build
  process's time at a million events.

The result is the same wherever :func:`do_side_work` runs: in a helper, in a
thread, or in the build process itself.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from markupsafe import Markup

from bundler.output.graph_cache import GraphCache
from bundler.render.graphviz import DotBatch, lay_out
from bundler.render.page_html import PageFrame, RenderSetup, render_html, size_svg
from bundler.render.viewer_jobs import ViewerJob
from bundler.render.viewers import Viewer

if TYPE_CHECKING:   # a helper imports Jinja (and the models) only when it is sent pages
    import jinja2

    from bundler.output.cache import Encoder
    from bundler.verify.result import EventLines


@dataclass(frozen=True)
class EventKeys:
    """How a helper keys events as the build process does
    (:func:`~bundler.render.chunks.event_key_for`), without a copy of every leaf hash:
    ``leaves`` is a file of them (``size`` bytes, read 32 at a time, as events come),
    ``lines`` the bundle's seq -> line map (dense: a few numbers), ``salt`` the build's."""

    leaves: str
    size: int
    lines: EventLines
    salt: str

    def encoder(self) -> Encoder:
        """This process's encoder for these leaves (one, so its memo is shared)."""
        made = _ENCODERS.get(self.leaves)
        if made is None:
            from bundler.model.events import EventBase
            from bundler.output.cache import Encoder

            fd = os.open(self.leaves, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
            lines, size = self.lines, self.size

            def key(obj: Any) -> bytes | None:
                if not isinstance(obj, EventBase):
                    return None
                line = lines.get(obj.seq)
                if line is None or line * 32 > size:
                    return None
                return os.pread(fd, 32, (line - 1) * 32)

            made = _ENCODERS[self.leaves] = Encoder(key)
        return made


_ENCODERS: dict[str, Encoder] = {}


@dataclass
class PageKeys:
    """What a page's fingerprint needs beyond its frame and context, when the helper that
    renders it computes it (:func:`page_fingerprint`): its graphs'
    keys and the key of each lazy value of its context (by context key)."""

    graphs: list[str]
    lazy: dict[str, Any]


@dataclass
class PageJob:
    """One page to render: its template, its context (every lazy value made, except its
    payload viewers: ``viewers`` maps those context keys to the chunk's viewer jobs),
    the graphs it shows (``svgs``: from the graph store, ready; ``graphs``: graph name ->
    slot, laid out in this chunk), and the file to write."""

    frame: PageFrame
    context: dict[str, Any]
    out: str
    svgs: dict[str, str] = field(default_factory=dict)
    graphs: dict[str, str] = field(default_factory=dict)
    viewers: dict[str, int] = field(default_factory=dict)
    #: Fingerprint the page here (``setup.events`` says how events are keyed).
    fingerprint: PageKeys | None = None


@dataclass
class SideWork:
    """One chunk's side work.  ``store``: the graph store folder that the new SVGs
    are written to under ``keys`` (graph name -> key); None stores nothing.
    ``writes``: files to write, as (absolute path, bytes)."""

    batch: DotBatch
    store: Path | None = None
    keys: dict[str, str] = field(default_factory=dict)
    viewers: list[ViewerJob] = field(default_factory=list)
    writes: list[tuple[str, bytes]] = field(default_factory=list)
    pages: list[PageJob] = field(default_factory=list)
    setup: RenderSetup | None = None

    @property
    def empty(self) -> bool:
        return not self.batch.chunks and not self.viewers and not self.writes and \
            not self.pages


@dataclass
class SideResult:
    """The sanitised SVG of each graph by name, and the viewers in the order asked;
    with pages to render, (SHA-256 hex, size, fingerprint) of each page written instead
    (``svgs`` and ``viewers`` are then left empty: nobody else needs them).  The
    fingerprint is None unless the page's job asked for it ("" if it has none)."""

    svgs: dict[str, str]
    viewers: list[Viewer]
    rendered: list[tuple[str, int, str | None]] = field(default_factory=list)


def do_side_work(work: SideWork) -> SideResult:
    svgs = lay_out(work.batch) if work.batch.chunks else {}
    fps = [_fingerprint(work.setup, job) for job in work.pages]
    if work.store is not None:
        unkeyed = {name for job, fp in zip(work.pages, fps, strict=True) if fp == ""
                   for name in job.graphs}    # as the build does for a page it cannot key
        store = GraphCache(work.store, read=False)
        for name, svg in svgs.items():
            if (key := work.keys.get(name)) and name not in unkeyed:
                store.put(key, svg)
    viewers = [job.run() for job in work.viewers]
    for path, data in work.writes:
        with open(path, "wb") as fh:
            fh.write(data)
    if not work.pages:
        return SideResult(svgs, viewers)
    assert work.setup is not None, "pages to render need the render setup"
    return SideResult({}, [], [(*_render(work.setup, job, svgs, viewers), fp)
                               for job, fp in zip(work.pages, fps, strict=True)])


def page_fingerprint(encoder: Encoder, salt: str, frame: PageFrame, context: dict[str, Any],
                     keys: list[str]) -> str:
    """A page's fingerprint: what it is (its frame), its context as made (lazy values by
    their key), and one key per graph; raises :class:`Uncacheable`.  The build process
    and the graph helpers compute it alike (:func:`_fingerprint`)."""
    from bundler.output.cache import fingerprint

    return fingerprint(encoder, salt, (frame.template, frame.path, frame.title, frame.key,
                                       frame.breadcrumbs, context, keys))


def _fingerprint(setup: RenderSetup | None, job: PageJob) -> str | None:
    """The page's fingerprint as the build process would compute it, if asked for."""
    if job.fingerprint is None:
        return None
    events = setup.events if setup is not None else None
    assert events is not None, "pages fingerprinted by a helper need its event keys"
    from bundler.output.cache import Deferred, Uncacheable

    keys = job.fingerprint
    context = {k: Deferred(keys.lazy[k], _unused) if k in keys.lazy else v
               for k, v in job.context.items()}
    try:
        return page_fingerprint(events.encoder(), events.salt, job.frame, context, keys.graphs)
    except Uncacheable:
        return ""


def _unused() -> Any:
    raise AssertionError("a fingerprinted lazy value is never made")


_ENVIRONMENTS: dict[tuple[Path | None, Path | None], jinja2.Environment] = {}


def _environment(setup: RenderSetup) -> jinja2.Environment:
    """The build's Jinja environment, made once per process (as the build makes it)."""
    key = (setup.theme, setup.compiled)
    env = _ENVIRONMENTS.get(key)
    if env is None:
        from bundler.render.environment import make_environment  # only where pages are
        env = _ENVIRONMENTS[key] = make_environment(setup.theme, setup.compiled)
        env.auto_reload = False
    return env


def _render(setup: RenderSetup, job: PageJob, svgs: dict[str, str],
            viewers: list[Viewer]) -> tuple[str, int]:
    svg = {slot: Markup(text) for slot, text in job.svgs.items()}
    for name, slot in job.graphs.items():
        if name in svgs:        # sanitised by render.graphviz
            svg[slot] = Markup(size_svg(svgs[name]))
    context = dict(job.context)
    for key, index in job.viewers.items():
        context[key] = viewers[index]
    data = render_html(_environment(setup), setup.site, setup.base_url, job.frame, context,
                       svg).encode("utf-8")
    with open(job.out, "wb") as fh:
        fh.write(data)
    return hashlib.sha256(data).hexdigest(), len(data)
