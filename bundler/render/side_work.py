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
  of HTML is a tenth of the build process's time).

The result is the same wherever :func:`do_side_work` runs: in a helper, in a
thread, or in the build process itself.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from bundler.output.graph_cache import GraphCache
from bundler.render.graphviz import DotBatch, lay_out
from bundler.render.viewer_jobs import ViewerJob
from bundler.render.viewers import Viewer


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

    @property
    def empty(self) -> bool:
        return not self.batch.chunks and not self.viewers and not self.writes


@dataclass
class SideResult:
    """The sanitised SVG of each graph by name, and the viewers in the order asked."""

    svgs: dict[str, str]
    viewers: list[Viewer]


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
    return SideResult(svgs, viewers)
