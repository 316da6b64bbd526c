"""A page's HTML from its template and context: the same wherever it runs.

Pages are rendered in the build process, in forked render workers, or (for a
bundle too big to fork for) in the graph helper processes, which then receive a
page's context and template name instead of its bytes
(:class:`~bundler.render.side_work.PageJob`).  Everything that decides the bytes
is here, so all three give the same page.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from markupsafe import Markup

if TYPE_CHECKING:   # graph helpers import this module, and Jinja only once they render
    import jinja2

    from bundler.render.side_work import EventKeys

CSP = ("default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; "
       "img-src 'self' data:; frame-src 'self'; base-uri 'none'; form-action 'none'")


@dataclass(frozen=True)
class SiteInfo:
    title: str
    description_html: Markup
    trust: str
    trust_label: str
    errors: int
    warnings: int
    generator: str
    nav: tuple[tuple[str, str, str], ...]


@dataclass(frozen=True)
class PageFrame:
    """What templates see as ``page``, wherever the page is rendered: everything about
    it but its context (which they see as variables), graphs and facts."""

    path: str
    template: str
    title: str
    key: str
    breadcrumbs: list[tuple[str, str | None]]

    @property
    def root(self) -> str:
        return "../" * self.path.count("/")


@dataclass(frozen=True)
class RenderSetup:
    """What another process needs to make the same Jinja environment and page frame:
    the theme, the compiled-template folder, and the site-wide values."""

    theme: Path | None
    compiled: Path | None
    site: SiteInfo
    base_url: str | None
    #: How events are keyed, when the pages rendered elsewhere are fingerprinted there.
    events: EventKeys | None = None


def render_html(env: jinja2.Environment, site: SiteInfo, base_url: str | None, page: PageFrame,
                context: dict[str, Any], svg: dict[str, Markup]) -> str:
    """``page`` is what templates see as ``page`` (a :class:`PageFrame`)."""
    return str(env.get_template(page.template).render(
        page=page, site=site, root=page.root, csp=CSP, svg=svg,
        canonical=(base_url.rstrip("/") + "/" + page.path) if base_url else None,
        **context,
    ))


_VIEWBOX = re.compile(r'^(<svg [^>]*?)viewBox="[-0-9.]+ [-0-9.]+ ([0-9.]+) ([0-9.]+)"')
#: Graphs are shown at their natural size when they fit, shrunk to the page
#: width when they do not, but never below this fraction of natural size
#: (text stays readable; the figure scrolls instead).
MIN_GRAPH_SCALE = 0.6


def size_svg(svg: str) -> str:
    """Give an inline graph its natural width (from the viewBox, in pt) as CSS.

    Graphviz's width/height attributes are dropped by the sanitiser, so
    without this every graph would stretch to the container: tiny graphs
    with huge text, wide graphs with unreadable text.
    """
    m = _VIEWBOX.match(svg)
    if m is None:
        return svg
    width_px = float(m.group(2)) * 4 / 3
    style = (f'style="width:{width_px:.0f}px;max-width:100%;'
             f'min-width:{min(width_px, width_px * MIN_GRAPH_SCALE):.0f}px" ')
    return svg[:len(m.group(1))] + style + svg[len(m.group(1)):]
