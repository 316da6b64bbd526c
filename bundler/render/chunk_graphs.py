"""The graphs of a chunk of pages: found in the graph store, or laid out in one ``dot`` run.

:func:`layout_start` gathers the graphs a chunk's pages need that the store
does not hold into one :class:`~bundler.render.graphviz.DotBatch` (one ``dot``
process per chunk, not per graph); :func:`layout_finish` stores what came back
and sizes every SVG for its page.  Names are build-wide (:func:`graph_name`),
so one batch can hold the graphs of many pages.
"""

from __future__ import annotations

import dataclasses
import re

from markupsafe import Markup

from bundler.output.graph_cache import GraphCache
from bundler.render.graphviz import MAX_NODES, DotBatch, GraphSpec, prepare_svgs
from bundler.render.page_html import size_svg
from bundler.render.pages.base import Page

_NAME = re.compile(r"[^A-Za-z0-9_-]+")


def graph_name(path: str, slot: str) -> str:
    """The build-wide unique name of graph ``slot`` of the page at ``path``."""
    return _NAME.sub("-", path.removesuffix(".html")) + "--" + slot


def layout_start(pages: list[Page], dot: str | None, store: GraphCache | None = None,
                  keys: dict[str, list[str]] | None = None,
                  ) -> tuple[dict[str, dict[str, Markup]], dict[str, tuple[str, str, str]],
                             DotBatch]:
    """Graphs of ``pages`` found in ``store`` under their key (``keys``: page path -> one
    key per graph), sized, and one :class:`DotBatch` of the others."""
    specs: list[GraphSpec] = []
    owners: dict[str, tuple[str, str, str]] = {}
    out: dict[str, dict[str, Markup]] = {}
    for page in pages:
        page_keys = (keys or {}).get(page.path) or [""] * len(page.graphs)
        for spec, key in zip(page.graphs, page_keys, strict=True):
            cached = store.get(key) if store is not None and key else None
            if cached is not None:
                out.setdefault(page.path, {})[spec.name] = Markup(size_svg(cached))
                continue
            name = graph_name(page.path, spec.name)
            specs.append(capped(dataclasses.replace(spec, name=name)))
            owners[name] = (page.path, spec.name, key)
    return out, owners, prepare_svgs(specs, jobs=1, dot=dot)


def layout_finish(out: dict[str, dict[str, Markup]], owners: dict[str, tuple[str, str, str]],
                   laid_out: dict[str, str], store: GraphCache | None
                   ) -> dict[str, dict[str, Markup]]:
    """page path -> slot -> sized inline SVG: ``out`` plus the newly laid-out graphs
    (stored)."""
    for name, svg in laid_out.items():
        path, slot, key = owners[name]
        if store is not None and key:
            store.put(key, svg)
        out.setdefault(path, {})[slot] = Markup(size_svg(svg))  # sanitised by render.graphviz
    return out


def capped(spec: GraphSpec) -> GraphSpec:
    """Last line of defence: page producers bound their graphs, but a graph over
    Graphviz's practical limit is cut (root kept) rather than failing the build."""
    if len(spec.nodes) <= MAX_NODES:
        return spec
    keep = [n for n in spec.nodes if n.id == spec.root]
    keep += [n for n in spec.nodes if n.id != spec.root][: MAX_NODES - len(keep)]
    ids = {n.id for n in keep}
    edges = [e for e in spec.edges if e.src in ids and e.dst in ids]
    return dataclasses.replace(spec, nodes=keep, edges=edges,
                               description=spec.description + f" (cut to {MAX_NODES} nodes)")
