"""DOT source for one graph, with every untrusted string escaped by us.

Graphviz is not a safe sink.  Inside quoted strings it expands ``\\N``/``\\G``
and friends, turns ``\\n``/``\\l`` into line breaks, decodes ``&...;`` entities
before re-escaping them, and passes URLs through unescaped (DESIGN-NOTES §5).
So nothing from a bundle reaches the DOT text except through :func:`dot_text`,
node names are our own counters (``n0``, ``n1``, ...), and URLs are accepted
only when they match a conservative relative pattern.

The ``graphviz`` Python package is deliberately not used for source building:
its ``quote()`` leaves backslashes alone (so escapes still expand) and treats
any string wrapped in ``<...>`` as an HTML-like label.
"""

from __future__ import annotations

import functools
import math
import re
import textwrap
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from bundler.shown import MARKER, code_point, cut

if TYPE_CHECKING:  # annotations only: the graph helper processes import this module alone
    from bundler.graph.paths import GEdge, GNode

#: Above this many nodes ``dot`` layout stops being interactive-fast (DESIGN-NOTES §6).
#: :func:`dot_source` refuses such specs with ``ValueError``: callers cluster,
#: collapse or paginate first, so a hostile bundle cannot stall a build in layout.
MAX_NODES = 400

FONTNAME = "DejaVu Sans,Helvetica,Arial,sans-serif"
LABEL_WIDTH = 40        # characters per node label line
LABEL_LINES = 2         # node label lines before truncation
EDGE_LABEL_WIDTH = 32   # edge labels stay on one short line
TITLE_LIMIT = 300       # accessible names (tooltips) are bounded too
ELLIPSIS = "\u2026"
RANKDIRS = frozenset({"LR", "RL", "TB", "BT"})

_NAME = re.compile(r"[A-Za-z0-9_-]+")
_SLUG = re.compile(r"[^a-z0-9_]+")
# Relative URLs only: no scheme (no ':'), no '&' (Graphviz would not escape it),
# no backslash (escape expansion), no leading '/' (root- or protocol-relative).
_SAFE_URL = re.compile(r"(?!/)[A-Za-z0-9._~%/#-]+")
# C0/C1 controls (category Cc), line/paragraph separators, bidi controls,
# surrogates and the non-characters U+xFFFE/U+xFFFF of every plane.
_UNSAFE_CHARS = re.compile(
    "[\x00-\x1f\x7f-\x9f\u2028\u2029\u200e\u200f\u202a-\u202e\u2066-\u2069"
    "\ud800-\udfff" + "".join(chr(p << 16 | 0xFFFE) + chr(p << 16 | 0xFFFF) for p in range(17))
    + "]")
_SPACES = frozenset("\n\r\t\u2028\u2029")

# kind -> (shape, style).  Colours are CSS's business (classes below), never DOT's.
SHAPES: Mapping[str, tuple[str, str]] = {
    "claim": ("box", "rounded,bold"),
    "individual": ("note", ""),
    "operator": ("ellipse", ""),
    "fitness": ("octagon", ""),
    "trace_record": ("cds", ""),
    "evidence_node": ("box", ""),
    "workflow_node": ("box3d", ""),
    "steering": ("hexagon", ""),
    "archive": ("cylinder", ""),
    "run": ("tab", ""),
    "stream": ("parallelogram", ""),
    "missing": ("box", "dashed"),
    "external": ("box", "dashed,rounded"),
}
DEFAULT_SHAPE = ("ellipse", "")


@dataclass(frozen=True)
class GraphSpec:
    """One graph to draw; ``name`` prefixes every id it puts on the page."""

    name: str                              # unique within a build, [A-Za-z0-9_-]+
    title: str                             # accessible name (<title>)
    description: str                       # <desc>
    nodes: Sequence[GNode]
    edges: Sequence[GEdge]
    href: Callable[[str], str | None]      # relative URL for a node id, or None (no link)
    root: str | None = None                # highlighted node (class "root")
    rankdir: str = "LR"
    clusters: Mapping[str, Sequence[str]] = field(default_factory=dict)


@dataclass(frozen=True)
class DotGraph:
    """DOT text plus what post-processing needs: element id -> accessible name."""

    name: str
    source: str
    titles: Mapping[str, str]
    hrefs: frozenset[str]


def clean_text(text: str) -> str:
    """Make arbitrary text XML-representable and visibly honest.

    Control characters would make Graphviz emit ill-formed XML; surrogates and
    non-characters cannot be encoded; bidi overrides could make a label read
    differently from what it is.  Each is shown as its code point (``[U+202E]``),
    as on the rest of the page (:mod:`bundler.shown`), so a label names what the
    record holds.  Newlines and tabs become spaces here: line breaks are decided
    by :func:`wrap_label`, not by the bundle.
    """
    if text.isprintable():
        return text        # exact: every unsafe character is non-printable (tested)
    return _UNSAFE_CHARS.sub(_replace_char, text)


def _replace_char(match: re.Match[str]) -> str:
    return " " if match.group() in _SPACES else code_point(match)


def shorten(text: str, width: int) -> str:
    """One line of at most ``width`` characters, whitespace collapsed."""
    line = " ".join(clean_text(text).split())
    return line if len(line) <= width else cut(line, width - 1).rstrip() + ELLIPSIS


class _MarkerWrapper(textwrap.TextWrapper):
    """Wraps as :func:`wrap_label` does, but may also break before and after a code
    point marker (:func:`clean_text`), and never inside one: a control-laden word
    breaks between ``[U+001B]`` and the text, not in ``[U+00`` / ``1B]``."""

    def __init__(self, width: int) -> None:
        super().__init__(width, break_long_words=True, break_on_hyphens=False)

    def _split(self, text: str) -> list[str]:
        return [chunk for chunk in _MARKER_CHUNKS.split(text) if chunk]


_MARKER_CHUNKS = re.compile(f"(\\s+|{MARKER.pattern})")


def wrap_label(text: str, width: int = LABEL_WIDTH, max_lines: int = LABEL_LINES) -> list[str]:
    """Break at the bundle's own newlines, then at ``width``; keep ``max_lines``."""
    lines: list[str] = []
    for para in text.splitlines() or [""]:
        para = " ".join(clean_text(para).split())
        if len(para) <= width:     # what textwrap.wrap gives for a line that fits
            lines += [para] if para else []
        elif "[U+" in para:
            lines += _MarkerWrapper(width).wrap(para)
        else:
            lines += textwrap.wrap(para, width, break_long_words=True, break_on_hyphens=False)
    lines = lines or [""]
    if len(lines) > max_lines:
        lines = lines[:max_lines]
        last = lines[-1]
        lines[-1] = (last if len(last) < width else cut(last, width - 1).rstrip()) + ELLIPSIS
    return lines


def dot_text(text: str) -> str:
    """Escape one line of text for a DOT quoted string so it renders literally.

    Verified against Graphviz 2.43 labels: ``\\\\`` renders as one backslash
    (so ``\\N`` stays text), ``\\"`` as a quote, ``&amp;`` as ``&`` (so a
    bundle's ``&amp;`` or ``&#x3C;`` is shown as typed, not decoded).
    """
    line = clean_text(text)
    return line.replace("\\", "\\\\").replace('"', '\\"').replace("&", "&amp;")


def dot_label(lines: Sequence[str]) -> str:
    """A quoted multi-line label; ``\\n`` is the only escape we emit."""
    return '"' + "\\n".join(dot_text(line) for line in lines) + '"'


@functools.lru_cache(maxsize=4096)
def slug(text: str, fallback: str = "other") -> str:
    """A CSS class fragment: lower-case ``[a-z0-9_-]``, at most 40 characters.

    Memoised: kinds, states and relations repeat on every node of every graph.
    """
    s = _SLUG.sub("-", text.lower()).strip("-")[:40].strip("-")
    return s or fallback


def relation_slug(relation: str) -> str:
    """``supports: accuracy = 0.9`` -> ``supports``: the binding detail is label text."""
    return slug(relation.split(":", 1)[0])


def safe_url(url: str | None) -> str | None:
    """``url`` if it is a plain relative URL we can hand to Graphviz, else ``None``."""
    if url is None or not _SAFE_URL.fullmatch(url):
        return None
    return url


def _provenance(edge: GEdge) -> str:
    if not edge.inferred:
        return ""
    conf = edge.confidence
    return f" (inferred {conf:.2f})" if conf is not None and math.isfinite(conf) else " (inferred)"


def edge_label(edge: GEdge) -> str:
    """``supports (inferred 0.72)``: the relation, shortened, plus provenance."""
    tail = _provenance(edge)
    return shorten(edge.relation, max(8, EDGE_LABEL_WIDTH - len(tail))) + tail


def node_title(node: GNode) -> str:
    """The accessible name: label, kind and state (Graphviz's own is ``n12``)."""
    return _node_title(node.label if node.label.strip() else node.id, node.kind, node.state)


@functools.lru_cache(maxsize=8192)
def _node_title(label: str, kind: str, state: str) -> str:
    """Memoised: a node appears in the graphs of many pages (lineages overlap)."""
    facets = ", ".join(x.replace("_", " ") for x in (kind, state) if x)
    label = shorten(label, TITLE_LIMIT)
    return f"{label} ({shorten(facets, 80)})" if facets else label


@functools.lru_cache(maxsize=8192)
def _node_label(text: str) -> str:
    """The quoted, wrapped DOT label of a node (memoised like :func:`_node_title`)."""
    return dot_label(wrap_label(text))


def _attrs(pairs: Sequence[tuple[str, str]]) -> str:
    """Attribute list; values are either pre-quoted or safe tokens we chose."""
    return "[" + ", ".join(f"{k}={v}" for k, v in pairs) + "]"


def _q(text: str) -> str:
    return '"' + dot_text(text) + '"'


def _check(spec: GraphSpec) -> None:
    if not _NAME.fullmatch(spec.name):
        raise ValueError(f"graph name must match [A-Za-z0-9_-]+, got {spec.name!r}")
    if spec.rankdir not in RANKDIRS:
        raise ValueError(f"rankdir must be one of {sorted(RANKDIRS)}, got {spec.rankdir!r}")
    distinct = len({n.id for n in spec.nodes})
    if distinct > MAX_NODES:
        raise ValueError(
            f"graph {spec.name!r} has {distinct} nodes (> MAX_NODES={MAX_NODES}); "
            "cluster, collapse or paginate it before rendering")


def build_dot(spec: GraphSpec) -> DotGraph:
    """DOT text for ``spec`` plus the accessible names of the elements it creates.

    Nodes whose id repeats keep their first occurrence; edges whose ends are not
    among the nodes are dropped (a truncated graph draws only what it holds); a
    node listed in several clusters is drawn in the first; empty clusters vanish.

    ``newrank=true`` is not cosmetic: with the default ranking, Graphviz 2.43
    double-frees the layout of a graph that has a cluster and a labelled edge
    between nodes of the same rank (valgrind: invalid free in gvFreeLayout after
    flat_edges).  One graph per process never notices because dot exits before
    freeing; in a batch the next graph aborts with "corrupted double-linked
    list".  With newrank the same inputs run clean under valgrind.
    """
    _check(spec)
    name = spec.name
    internal: dict[str, str] = {}
    titles: dict[str, str] = {}
    hrefs: set[str] = set()
    labels: dict[str, str] = {}
    out = [
        f'digraph "{name}" {{',
        "  graph " + _attrs([
            ("id", f'"{name}-graph"'), ("rankdir", spec.rankdir), ("bgcolor", "transparent"),
            ("fontname", f'"{FONTNAME}"'), ("fontsize", "12"), ("nodesep", "0.3"),
            ("ranksep", "0.45"), ("pad", "0.1"), ("newrank", "true")]) + ";",
        "  node " + _attrs([("fontname", f'"{FONTNAME}"'), ("fontsize", "12"),
                            ("margin", '"0.12,0.06"')]) + ";",
        "  edge " + _attrs([("fontname", f'"{FONTNAME}"'), ("fontsize", "10"),
                            ("arrowsize", "0.7")]) + ";",
    ]
    for node in spec.nodes:
        if node.id in internal:
            continue
        n = internal[node.id] = f"n{len(internal)}"
        labels[node.id] = node.label if node.label.strip() else node.id
        shape, style = SHAPES.get(node.kind, DEFAULT_SHAPE)
        cls = [f"kind-{slug(node.kind, 'unknown')}"]
        if node.state:
            cls.append(f"state-{slug(node.state)}")
        if spec.root is not None and node.id == spec.root:
            cls.append("root")
        title = titles[f"{name}-{n}"] = node_title(node)
        attrs = [("id", f'"{name}-{n}"'), ("class", f'"{" ".join(cls)}"'),
                 ("label", _node_label(labels[node.id])), ("tooltip", _q(title)),
                 ("shape", shape)]
        if style:
            attrs.append(("style", f'"{style}"'))
        url = safe_url(spec.href(node.id))
        if url is not None:
            hrefs.add(url)
            attrs.append(("URL", f'"{url}"'))
        out.append(f"  {n} {_attrs(attrs)};")
    placed: set[str] = set()   # Graphviz has no overlapping clusters (2.43 segfaults on them)
    for i, (label, members) in enumerate(spec.clusters.items()):
        inside = [internal[m] for m in dict.fromkeys(members) if m in internal and m not in placed]
        placed.update(m for m in members if m in internal)
        if not inside:
            continue
        cid = f"{name}-c{i}"
        titles[cid] = shorten(label, TITLE_LIMIT)
        out.append(f'  subgraph "cluster_{i}" {{')
        out.append("    graph " + _attrs([("id", f'"{cid}"'),
                                         ("label", _q(shorten(label, LABEL_WIDTH))),
                                         ("tooltip", _q(titles[cid]))]) + ";")
        out.append("    " + "; ".join(inside) + ";")
        out.append("  }")
    for i, edge in enumerate(spec.edges):
        if edge.src not in internal or edge.dst not in internal:
            continue
        eid = f"{name}-e{i}"
        text = edge_label(edge)
        titles[eid] = shorten(f"{labels[edge.src]} \u2192 {labels[edge.dst]}: {edge.relation}",
                              TITLE_LIMIT - 20) + _provenance(edge)
        ecls = f"rel-{relation_slug(edge.relation)}" + (" inferred" if edge.inferred else "")
        attrs = [("id", f'"{eid}"'), ("class", f'"{ecls}"'), ("label", _q(text)),
                 ("tooltip", _q(titles[eid]))]
        if edge.inferred:
            attrs.append(("style", "dashed"))
        out.append(f"  {internal[edge.src]} -> {internal[edge.dst]} {_attrs(attrs)};")
    out.append("}")
    return DotGraph(name, "\n".join(out) + "\n", titles, frozenset(hrefs))


def dot_source(spec: GraphSpec) -> str:
    """The DOT text for one graph (deterministic; raises ``ValueError`` on bad specs)."""
    return build_dot(spec).source
