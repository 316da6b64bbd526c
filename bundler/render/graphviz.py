"""Graphs to inline-safe SVG through Graphviz ``dot``, many graphs per process.

Starting ``dot`` costs about 10 ms; a site has hundreds of small graphs.  So
every worker feeds ONE ``dot -Tsvg`` process all of its graphs concatenated on
stdin and splits stdout on ``<?xml`` (DESIGN-NOTES §6: ``-o`` would keep only
the first graph).  The SVG that comes back is parsed and rebuilt from an
allow-list rather than patched with regexes: the result is embedded inline in
our pages, where a stray ``<style>`` or handler would act on the host page.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import xml.etree.ElementTree as ET
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from xml.parsers import expat

from bundler.errors import BundlerError, DependencyError
from bundler.render.dot import (
    MAX_NODES,
    DotGraph,
    GraphSpec,
    build_dot,
    clean_text,
    dot_source,
    safe_url,
)
from bundler.render.svg_fast import sanitize

__all__ = ["MAX_NODES", "DotBatch", "GraphSpec", "assert_inline_safe", "dot_source", "find_dot",
           "lay_out", "prepare_svgs", "render_svgs"]

SVG_NS = "http://www.w3.org/2000/svg"
XLINK_NS = "http://www.w3.org/1999/xlink"
_S = f"{{{SVG_NS}}}"
_XL = f"{{{XLINK_NS}}}"
INSTALL_HINT = "install it with: sudo apt-get install graphviz"

# What Graphviz's SVG renderer emits for the attributes we set, and nothing else.
ALLOWED_TAGS = frozenset({"svg", "g", "title", "desc", "a", "path", "polygon", "polyline",
                          "ellipse", "circle", "rect", "line", "text", "tspan"})
ALLOWED_ATTRS = frozenset({
    "id", "class", "transform", "points", "d", "fill", "stroke", "stroke-width",
    "stroke-dasharray", "stroke-opacity", "fill-opacity", "cx", "cy", "rx", "ry", "r", "x",
    "y", "x1", "y1", "x2", "y2", "width", "height", "text-anchor", "font-family", "font-size",
    "font-weight", "font-style", "viewBox", f"{_XL}href", f"{_XL}title",
})
_NEEDS_ESC = re.compile(r"[&<>]")
_NEEDS_QUOTE = re.compile(r"[&<>\"\n\r\t]")
_UNSAFE_MARKUP = re.compile(r"<\s*/?\s*(script|style|foreignobject|iframe|object|embed)\b|<!|<\?",
                            re.IGNORECASE)


def find_dot() -> str:
    """Path of Graphviz ``dot`` on PATH, or a :class:`DependencyError` saying how to get it."""
    path = shutil.which("dot")
    if path is None:
        raise DependencyError(f"Graphviz 'dot' not found on PATH; {INSTALL_HINT}")
    return path


def render_svgs(specs: Sequence[GraphSpec], *, jobs: int = 1,
                dot: str | None = None) -> dict[str, str]:
    """Render ``specs`` to inline-safe SVG strings, keyed by spec name (input order).

    ``jobs`` workers each run one ``dot`` process over a contiguous chunk; the
    output does not depend on ``jobs``.  Raises ``ValueError`` for bad specs
    (duplicate names, more than ``MAX_NODES`` nodes) before starting anything,
    :class:`DependencyError` when ``dot`` is missing or fails, and
    :class:`BundlerError` when its output is not what we asked for.
    """
    return lay_out(prepare_svgs(specs, jobs=jobs, dot=dot))


class DotBatch:
    """Graphs ready for Graphviz, in three steps so the middle one can overlap other work.

    :meth:`run` only feeds ``dot`` processes and collects their output: it
    touches nothing but this batch, so it may run in another thread while the
    caller's thread prepares or finishes other pages (a subprocess runs beside
    the GIL).  :meth:`finish` sanitises, in the caller's thread.  A batch holds
    only strings (the DOT sources and each graph's caption), so it can also be
    sent whole to another process, which runs :func:`lay_out`: ``dot`` and
    the sanitiser both.
    """

    def __init__(self, specs: Sequence[GraphSpec], graphs: list[DotGraph], exe: str,
                 jobs: int) -> None:
        self.captions = {s.name: (s.title, s.description) for s in specs}
        self.chunks = _chunks(graphs, min(jobs, len(graphs))) if graphs else []
        self.exe = exe
        self.outputs: list[list[str]] | None = None

    def run(self) -> None:
        if len(self.chunks) <= 1:
            self.outputs = [_run_dot(self.exe, c) for c in self.chunks]
            return
        with ThreadPoolExecutor(max_workers=len(self.chunks)) as pool:
            self.outputs = list(pool.map(lambda c: _run_dot(self.exe, c), self.chunks))

    def finish(self) -> dict[str, str]:
        if self.outputs is None:
            raise RuntimeError("DotBatch.finish() before run()")
        result: dict[str, str] = {}
        for chunk, docs in zip(self.chunks, self.outputs, strict=True):
            for graph, doc in zip(chunk, docs, strict=True):
                title, description = self.captions[graph.name]
                result[graph.name] = postprocess(doc, graph, title, description)
        return result


def lay_out(batch: DotBatch) -> dict[str, str]:
    """Both steps after :func:`prepare_svgs`: the inline-safe SVG of every graph of
    ``batch``, by name.  A plain function of the batch's strings, to run in a helper
    process."""
    batch.run()
    return batch.finish()


def prepare_svgs(specs: Sequence[GraphSpec], *, jobs: int = 1,
                 dot: str | None = None) -> DotBatch:
    """The DOT sources of ``specs``, checked (see :func:`render_svgs`), not yet laid out."""
    if jobs < 1:
        raise ValueError(f"jobs must be at least 1, got {jobs}")
    graphs = [build_dot(spec) for spec in specs]
    names = [g.name for g in graphs]
    if len(set(names)) != len(names):
        dup = sorted({n for n in names if names.count(n) > 1})
        raise ValueError(f"graph names must be unique within a build: {dup}")
    exe = (dot if dot is not None else find_dot()) if graphs else ""
    return DotBatch(specs, graphs, exe, jobs)


def _chunks(graphs: Sequence[DotGraph], n: int) -> list[list[DotGraph]]:
    """``n`` contiguous chunks whose sizes differ by at most one."""
    size, extra = divmod(len(graphs), n)
    out: list[list[DotGraph]] = []
    start = 0
    for i in range(n):
        end = start + size + (1 if i < extra else 0)
        out.append(list(graphs[start:end]))
        start = end
    return out


def _run_dot(exe: str, chunk: Sequence[DotGraph]) -> list[str]:
    """One ``dot -Tsvg`` over the whole chunk; one SVG document per graph, in order.

    If a multi-graph process dies, each graph is retried in its own process:
    Graphviz 2.43 has crashes that only a *following* graph trips over (see
    ``build_dot``), and one bad graph must not take a whole site down with an
    error that names none.  A graph that fails on its own is reported by name.
    """
    try:
        proc = subprocess.Popen([exe, "-Tsvg"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE)
    except OSError as exc:
        raise DependencyError(
            f"cannot run Graphviz 'dot' ({exe}): {exc.strerror or exc}; {INSTALL_HINT}") from None
    out, err = proc.communicate("".join(g.source for g in chunk).encode("utf-8"))
    stderr = err.decode("utf-8", "replace").strip()
    if proc.returncode != 0:
        if len(chunk) > 1:
            return [doc for graph in chunk for doc in _run_dot(exe, [graph])]
        status = (f"killed by signal {-proc.returncode}" if proc.returncode < 0
                  else f"exit {proc.returncode}")
        raise DependencyError(f"Graphviz 'dot' failed ({status}) on graph {chunk[0].name!r}: "
                              f"{stderr[-2000:] or 'no error output'}")
    try:
        text = out.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise BundlerError(f"Graphviz 'dot' wrote invalid UTF-8: {exc}") from None
    head, *bodies = text.split("<?xml")
    if head.strip() or len(bodies) != len(chunk):
        raise BundlerError(f"Graphviz 'dot' returned {len(bodies)} SVG document(s) for "
                           f"{len(chunk)} graph(s){': ' + stderr[-2000:] if stderr else ''}")
    return ["<?xml" + body for body in bodies]


def postprocess(doc: str, graph: DotGraph, title: str, description: str) -> str:
    """Rebuild one Graphviz SVG document as markup that is safe to inline.

    Drops prolog, DOCTYPE and comments; sizes come from ``viewBox`` alone; the
    root gets ``role``/``aria-labelledby`` and our ``<title>``/``<desc>``; the
    internal ``<title>n12</title>`` of nodes, edges and clusters is replaced by
    their accessible names; ids are normalised (``page0,1_`` prefixes gone).
    """
    fast = sanitize(doc, graph.name, graph.titles, graph.hrefs, ALLOWED_TAGS, ALLOWED_ATTRS,
                    safe_url, _esc, lambda view_box: _head(graph.name, title, description,
                                                           view_box))
    if fast is not None:
        assert_inline_safe(fast, allowed_hrefs=graph.hrefs)
        return fast
    return _postprocess_tree(doc, graph, title, description)


def _head(name: str, title: str, description: str, view_box: str) -> str:
    """What :func:`_postprocess_tree` writes before the graph group, as text."""
    parts = [f'<svg xmlns="{SVG_NS}" xmlns:xlink="{XLINK_NS}" viewBox="{_esc(view_box, True)}" '
             f'class="rb-graph" role="img" aria-labelledby="{name}-title {name}-desc">\n']
    for tag, text in (("title", clean_text(title)), ("desc", clean_text(description))):
        parts.append(f'<{tag} id="{name}-{tag}">{_esc(text, False)}</{tag}>\n' if text
                     else f'<{tag} id="{name}-{tag}"/>\n')
    return "".join(parts)


def _postprocess_tree(doc: str, graph: DotGraph, title: str, description: str) -> str:
    """The reference path: parse, allow-listed copy, serialise (see :mod:`svg_fast`)."""
    start = doc.find("<svg")
    if start < 0:
        raise BundlerError(f"graph {graph.name!r}: Graphviz output has no <svg> element")
    try:
        src = ET.fromstring(doc[start:])
    except ET.ParseError as exc:
        raise BundlerError(f"graph {graph.name!r}: Graphviz output is not XML: {exc}") from None
    if src.tag != f"{_S}svg" or "viewBox" not in src.attrib:
        raise BundlerError(f"graph {graph.name!r}: unexpected Graphviz root element")
    name = graph.name
    root = ET.Element(f"{_S}svg", {
        "viewBox": src.attrib["viewBox"], "class": "rb-graph", "role": "img",
        "aria-labelledby": f"{name}-title {name}-desc"})
    root.text = "\n"
    for tag, text in (("title", title), ("desc", description)):
        child = ET.SubElement(root, f"{_S}{tag}", {"id": f"{name}-{tag}"})
        child.text = clean_text(text)
        child.tail = "\n"
    graph_groups = [c for c in src if c.tag == f"{_S}g" and c.get("class") == "graph"]
    if len(graph_groups) != 1 or len(src) != 1:
        raise BundlerError(f"graph {name!r}: unexpected Graphviz document structure")
    top = graph_groups[0]
    own = top.find(f"{_S}title")
    if own is None or own.text != name:
        raise BundlerError(f"graph {name!r}: Graphviz output out of order "
                           f"(got graph {own.text if own is not None else None!r})")
    top.remove(own)
    top.set("id", f"{name}-graph")
    root.append(_copy(top, graph, None))
    root[-1].tail = "\n"
    svg = serialize(root)
    assert_inline_safe(svg, allowed_hrefs=graph.hrefs)
    return svg


def _copy(el: ET.Element, graph: DotGraph, title: str | None) -> ET.Element:
    """Allow-listed copy of ``el``; ``title`` is the accessible name of the enclosing group."""
    tag = el.tag.removeprefix(_S)
    if tag not in ALLOWED_TAGS or el.tag == tag:
        raise BundlerError(f"graph {graph.name!r}: unexpected element <{el.tag}> from Graphviz")
    attrs: dict[str, str] = {}
    for key, value in el.attrib.items():
        if key.lower().startswith("on") or key == "style":
            raise BundlerError(f"graph {graph.name!r}: unsafe attribute {key!r} from Graphviz")
        if key in ALLOWED_ATTRS:
            attrs[key] = value
    if tag == "g" and "id" in attrs and "class" in attrs and attrs["class"] != "graph":
        classes = attrs["class"].split()
        if classes[0] in ("node", "edge", "cluster"):
            if attrs["id"] not in graph.titles:
                raise BundlerError(f"graph {graph.name!r}: unknown element id {attrs['id']!r}")
            title = graph.titles[attrs["id"]]
    if tag == "a":
        if title is not None and f"{_XL}title" in attrs:
            attrs[f"{_XL}title"] = title
        href = attrs.get(f"{_XL}href")
        if href is not None and (safe_url(href) is None or href not in graph.hrefs):
            raise BundlerError(f"graph {graph.name!r}: unexpected link {href!r} from Graphviz")
    out = ET.Element(el.tag, attrs)
    if tag == "title":
        out.text = title
    elif tag in ("text", "tspan", "desc"):
        out.text = el.text
    else:
        out.text = _layout_ws(el.text)
    for child in el:
        if child.tag == f"{_S}title" and title is None:
            continue  # an internal name with nothing accessible to put instead
        out.append(_copy(child, graph, title))
    out.tail = _layout_ws(el.tail)
    return out


def _layout_ws(text: str | None) -> str | None:
    """Whitespace between elements becomes one newline; stray character data is dropped."""
    return "\n" if text and "\n" in text else None


def _esc(text: str, quote: bool) -> str:
    if not (_NEEDS_QUOTE if quote else _NEEDS_ESC).search(text):
        return text   # most values are coordinates and colour keywords
    text = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    if quote:
        text = (text.replace('"', "&quot;").replace("\n", "&#10;").replace("\r", "&#13;")
                .replace("\t", "&#9;"))
    return text


def serialize(el: ET.Element) -> str:
    """Deterministic markup: attributes in insertion order, fixed namespace prefixes."""
    parts: list[str] = []
    _serialize(el, parts, f' xmlns="{SVG_NS}" xmlns:xlink="{XLINK_NS}"')
    return "".join(parts)


def _serialize(el: ET.Element, parts: list[str], extra: str = "") -> None:
    tag = el.tag.removeprefix(_S)
    parts.append(f"<{tag}{extra}")
    for key, value in el.attrib.items():
        parts.append(f' {key.replace(_XL, "xlink:")}="{_esc(value, True)}"')
    if not el.text and not len(el):
        parts.append("/>")
    else:
        parts.append(">")
        if el.text:
            parts.append(_esc(el.text, False))
        for child in el:
            _serialize(child, parts)
        parts.append(f"</{tag}>")
    if el.tail:
        parts.append(_esc(el.tail, False))


def assert_inline_safe(svg: str, *, allowed_hrefs: frozenset[str] | None = None) -> None:
    """Final, independent check of rendered markup; raises :class:`BundlerError`.

    No script, style, foreignObject, embedding, comment, DOCTYPE or processing
    instruction; no event-handler or style attribute; links only to plain
    relative URLs (so no ``javascript:``).  ``<`` in text is always escaped by
    :func:`serialize`, so a textual scan cannot be fooled by label content.

    The markup is parsed by expat, the parser under ElementTree, with the same
    namespace handling, and each start tag is checked as it is parsed: building
    the element tree only to walk it once cost twice the parse.  A parse error
    wins over a bad element, and the first bad element or attribute in document
    order is the one reported, as when the tree was walked.
    """
    def fail(why: str) -> BundlerError:
        return BundlerError(f"refusing to inline graph SVG: {why}")

    if _UNSAFE_MARKUP.search(svg):
        raise fail("forbidden markup")
    problems: list[str] = []

    def start(name: str, attrs: dict[str, str]) -> None:
        if problems:
            return
        if name not in _ALLOWED_NAMES:
            problems.append(f"element {_clark(name)!r}")
            return
        if attrs.keys() <= _PLAIN_KEYS:
            return          # nothing below can object to these
        for key, value in attrs.items():
            local = key.rsplit("}", 1)[-1].lower()
            if local.startswith("on") or local == "style":
                problems.append(f"attribute {_clark(key)!r}")
                return
            if local == "href" and (
                    safe_url(value) is None or "javascript:" in value.lower()
                    or (allowed_hrefs is not None and value not in allowed_hrefs)):
                problems.append(f"link {value!r}")
                return

    parser = expat.ParserCreate(namespace_separator="}")
    parser.StartElementHandler = start
    try:
        parser.Parse(svg, True)
    except expat.ExpatError as exc:
        raise fail(f"not well-formed ({exc})") from None
    if problems:
        raise fail(problems[0])


#: Element names as expat reports them (``namespace}local``, or bare ``local``
#: outside any namespace), for the tags ElementTree's walk allowed.
_ALLOWED_NAMES = frozenset({f"{SVG_NS}}}{t}" for t in ALLOWED_TAGS} | ALLOWED_TAGS)


#: Attribute names (as expat reports them) that pass every attribute check:
#: what Graphviz and :func:`_head` write, minus links.
_PLAIN_KEYS = frozenset({a.replace(_XL, f"{XLINK_NS}}}") for a in ALLOWED_ATTRS
                         if not a.endswith("href")} | {"role", "aria-labelledby"})


def _clark(name: str) -> str:
    """expat's ``namespace}local`` as ElementTree writes it, ``{namespace}local``."""
    return "{" + name if "}" in name else name
