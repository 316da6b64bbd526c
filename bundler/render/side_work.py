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
  million events, and pickling a page's context costs a tenth of rendering it.

The result is the same wherever :func:`do_side_work` runs: in a helper, in a
thread, or in the build process itself.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from markupsafe import Markup

from bundler.output.graph_cache import GraphCache
from bundler.render.graphviz import DotBatch, lay_out
from bundler.render.page_html import PageFrame, RenderSetup, render_html, size_svg
from bundler.render.viewer_jobs import ViewerJob
from bundler.render.viewers import Viewer

if TYPE_CHECKING:   # a helper imports Jinja only when it is first sent pages to render
    import jinja2


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
    with pages to render, (SHA-256 hex, size) of each page written instead (``svgs`` and
    ``viewers`` are then left empty: nobody else needs them)."""

    svgs: dict[str, str]
    viewers: list[Viewer]
    rendered: list[tuple[str, int]] = field(default_factory=list)


def do_side_work(work: SideWork) -> SideResult:
    svgs = lay_out(work.batch) if work.batch.chunks else {}
    if work.store is not None:
        store = GraphCache(work.store, read=False)
        for name, svg in svgs.items():
            if key := work.keys.get(name):
                store.put(key, svg)
    viewers = [job.run() for job in work.viewers]
    for path, data in work.writes:
        with open(path, "wb") as fh:
            fh.write(data)
    if not work.pages:
        return SideResult(svgs, viewers)
    assert work.setup is not None, "pages to render need the render setup"
    return SideResult({}, [], [_render(work.setup, job, svgs, viewers) for job in work.pages])


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
