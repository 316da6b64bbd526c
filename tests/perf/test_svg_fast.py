"""The fast SVG sanitiser is an optimisation, not a second policy.

For every graph it accepts it must produce exactly what the ElementTree
reference path produces, and for anything the reference rejects it must
decline (return None) so the reference raises.
"""

from __future__ import annotations

import dataclasses
import random
import re
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from bundler.errors import BundlerError
from bundler.graph.index import build_index
from bundler.graph.paths import GEdge, GNode
from bundler.render import graphviz as gv
from bundler.render import svg_fast
from bundler.render.chunk_graphs import capped
from bundler.render.dot import DotGraph, GraphSpec, build_dot, safe_url
from bundler.render.pages.base import BuildContext
from bundler.render.pages.plan import final_pages, make_page, plan_pages
from bundler.render.urls import Linker
from bundler.verify import VerifyOptions, verify_bundle

EXAMPLES = Path(__file__).resolve().parents[2] / "example_bundles"
NAME = re.compile(r"[^A-Za-z0-9_-]+")


def _specs_of(bundle: Path) -> list[GraphSpec]:
    report = verify_bundle(bundle, VerifyOptions())
    idx = build_index(report.bundle)
    ctx = BuildContext(report, idx, Linker(idx))
    specs = []
    for task in [*plan_pages(ctx), *final_pages()]:
        page = make_page(ctx, task)
        for spec in page.graphs:
            name = NAME.sub("-", page.path.removesuffix(".html")) + "--" + spec.name
            specs.append(capped(dataclasses.replace(spec, name=name)))
    return specs


def _hostile() -> GraphSpec:
    labels = ['"];\nn9 -> n0 [label="x', "\\N", "&amp;", "&#x3C;script&#x3E;", "<b>&</b>",
              "tab\there", "x" * 200, "", "   ", "ünïcødé ‮bidi", "--", "a--b->c"]
    nodes = [GNode("c", "claim", "root & <claim>", "supported")]
    nodes += [GNode(f"h{i}", "individual", t, "verified") for i, t in enumerate(labels)]
    edges = [GEdge(f"h{i}", "c", rel, i % 2 == 1, 0.5)
             for i, rel in enumerate(["supports: x = '1'", "a&b", "<rel>", "--x--"] * 3)]
    links = {"c": "claims/c.html", "h1": "javascript:alert(1)", "h2": "a/b.html#frag"}
    return GraphSpec("hostile--g", 'Title "<b>" & co', "Desc --> <!-- x", nodes, edges,
                     links.get, root="c", clusters={"cluster & <x>": ["h3", "h4"], "": ["h5"]})


def _layout(graphs: list[DotGraph]) -> list[str]:
    return gv._run_dot(gv.find_dot(), graphs)


def _fast(doc: str, graph: DotGraph, spec: GraphSpec) -> str | None:
    return svg_fast.sanitize(doc, graph.name, graph.titles, graph.hrefs, gv.ALLOWED_TAGS,
                             gv.ALLOWED_ATTRS, safe_url, gv._esc,
                             lambda vb: gv._head(graph.name, spec.title, spec.description, vb))


def _reference(doc: str, graph: DotGraph, spec: GraphSpec) -> str | None:
    try:
        return gv._postprocess_tree(doc, graph, spec.title, spec.description)
    except BundlerError:
        return None


@pytest.fixture(scope="module")
def corpus() -> list[tuple[str, DotGraph, GraphSpec]]:
    specs = [_hostile()]
    for name in ("unsupported-gain", "evolutionary-search", "multi-agent-paper",
                 "closed-loop-lab"):
        specs += _specs_of(EXAMPLES / name)
    graphs = [build_dot(s) for s in specs]
    return list(zip(_layout(graphs), graphs, specs, strict=True))


def test_fast_path_equals_reference_on_every_example_graph(
        corpus: list[tuple[str, DotGraph, GraphSpec]]) -> None:
    assert len(corpus) > 40
    for doc, graph, spec in corpus:
        fast = _fast(doc, graph, spec)
        assert fast is not None, f"{graph.name}: Graphviz output left the fast path"
        assert fast == _reference(doc, graph, spec), graph.name
        gv.assert_inline_safe(fast, allowed_hrefs=graph.hrefs)


MUTATIONS: list[Callable[[str, random.Random], str]] = [
    lambda d, r: d.replace("<title>", "<title><script>x</script>", 1),
    lambda d, r: d.replace("</text>", "<style>*{}</style></text>", 1),
    lambda d, r: d.replace("<path ", '<path onclick="x()" ', 1),
    lambda d, r: d.replace("<path ", '<path style="fill:red" ', 1),
    lambda d, r: d.replace("<polygon ", '<polygon fill="a" fill="b" ', 1),
    lambda d, r: d.replace("<path ", "<path d='M0,0' ", 1),
    lambda d, r: d.replace("<path ", '<path\tid="x&#10;y" ', 1),
    lambda d, r: d.replace("<path ", '<path id="a\nb" ', 1),
    lambda d, r: d.replace("<g id", '<g xmlns="http://www.w3.org/2000/svg" id', 1),
    lambda d, r: d.replace("<g id", '<g xmlns:xlink="http://example/" id', 1),
    lambda d, r: d.replace("<g id", '<g xml:space="preserve" id', 1),
    lambda d, r: d.replace('xlink:title="', 'xlink:title="&nbsp;', 1),
    lambda d, r: d.replace('xlink:title="', 'xlink:title="&#0;', 1),
    lambda d, r: d.replace('xlink:title="', 'xlink:title="&#x41;&#169;&lt;&apos;', 1),
    lambda d, r: d.replace("</text>", "&amp;&#60;&#x3E;&quot;]]&gt;</text>", 1),
    lambda d, r: d.replace("</text>", "]]></text>", 1),
    lambda d, r: d.replace("</text>", "<![CDATA[<x>]]></text>", 1),
    lambda d, r: d.replace("</text>", "<?pi x?></text>", 1),
    lambda d, r: d.replace("<!-- n0 -->", "<!-- a--b -->", 1),
    lambda d, r: d.replace("<!-- n0 -->", "<!-- ok -->\n<!-- also ok-->", 1),
    lambda d, r: d.replace("\n", "\r\n", 3),
    lambda d, r: d.replace("<a xlink:href=\"", "<a xlink:href=\"javascript:", 1),
    lambda d, r: d.replace("<a xlink:href=\"", "<a xlink:href=\"x", 1),
    lambda d, r: d.replace("<text ", "<tspan ", 1),
    lambda d, r: d.replace("<text ", "<image ", 1),
    lambda d, r: d.replace("</svg>", "</svg>\n<!-- tail -->\n", 1),
    lambda d, r: d.replace("</svg>", "</svg>junk", 1),
    lambda d, r: d.replace("</svg>", "", 1),
    lambda d, r: d.replace("</g>\n</svg>", "</g>\n<g/>\n</svg>", 1),
    lambda d, r: d.replace('class="graph"', 'class="graphx"', 1),
    lambda d, r: re.sub(r"<title>[^<]*</title>", "<title>other</title>", d, count=1),
    lambda d, r: d.replace(' viewBox="', ' data-x="1" viewBox="', 1),
    lambda d, r: d.replace('class="node', 'class="  node', 1),
    lambda d, r: d.replace('class="node', 'class=" ', 1),
    lambda d, r: d.replace("<title>n0</title>", "<title>n0<!-- c --></title>", 1),
    lambda d, r: d.replace("<title>n0</title>", "<title/>", 1),
    lambda d, r: d.replace("</text>", "<tspan>in</tspan> tail</text>", 1),
    lambda d, r: d.replace(">\n<", "> \n\t<", 5),
    lambda d, r: d.replace(">\n<", "><", 7),
    lambda d, r: d.replace("&#45;", "&#x2D;"),
    lambda d, r: d.replace("&#45;", "-"),
    lambda d, r: d[:r.randrange(len(d))] + "<" + d[r.randrange(len(d)):],
    lambda d, r: (lambda i: d[:i] + "&" + d[i:])(r.randrange(len(d))),
    lambda d, r: (lambda i: d[:i] + d[i + 1:])(r.randrange(len(d))),
]


def test_fast_path_declines_or_agrees_on_mutated_output(
        corpus: list[tuple[str, DotGraph, GraphSpec]]) -> None:
    rng = random.Random(20261130)
    agreed = declined = 0
    for doc, graph, spec in corpus[:12]:
        for mutate in MUTATIONS:
            for _ in range(3):
                mutated = mutate(doc, rng)
                fast = _fast(mutated, graph, spec)
                ref = _reference(mutated, graph, spec)
                if fast is None:
                    declined += 1
                else:
                    assert fast == ref, (graph.name, mutated[:200])
                    agreed += 1
    assert agreed > 100 and declined > 100


def test_postprocess_uses_the_fast_path_and_still_checks(
        corpus: list[tuple[str, DotGraph, GraphSpec]], monkeypatch: pytest.MonkeyPatch) -> None:
    doc, graph, spec = corpus[0]
    calls: list[str] = []
    real = gv.assert_inline_safe

    def spy(svg: str, *, allowed_hrefs: frozenset[str] | None = None) -> None:
        calls.append(svg)
        real(svg, allowed_hrefs=allowed_hrefs)

    monkeypatch.setattr(gv, "assert_inline_safe", spy)
    monkeypatch.setattr(gv, "_postprocess_tree", lambda *a: pytest.fail("slow path used"))
    out = gv.postprocess(doc, graph, spec.title, spec.description)
    assert calls == [out]


def test_simple_tokens_only_name_allow_listed_tags_and_attributes() -> None:
    tags = set(re.findall(r"[a-z]+", svg_fast._SIMPLE.pattern.split("(?:")[2]))
    assert tags <= gv.ALLOWED_TAGS
    assert set(svg_fast._PLAIN_ATTRS.split("|")) | {"class"} <= gv.ALLOWED_ATTRS


def test_graphviz_escapes_nothing_we_did_not_ask_for(tmp_path: Path) -> None:
    """The fast path assumes Graphviz writes '-' as &#45; and nothing else exotic."""
    spec = _hostile()
    graph = build_dot(spec)
    out = subprocess.run([gv.find_dot(), "-Tsvg"], input=graph.source.encode(), check=True,
                         capture_output=True).stdout.decode()
    body = out[out.find("<svg"):]
    assert set(re.findall(r"&[#a-z0-9]+;", body)) <= {"&#45;", "&amp;", "&lt;", "&gt;",
                                                      "&quot;", "&#39;"}


def test_block_and_run_shortcuts_equal_the_token_loop(
        corpus: list[tuple[str, DotGraph, GraphSpec]], monkeypatch: pytest.MonkeyPatch) -> None:
    """Whole node/edge/cluster groups and runs of shape lines are copied by one
    match each; with both shortcuts off the token loop must give the same bytes."""
    used: list[str] = []
    real_block = svg_fast._block

    def spy(*args: object) -> str | None:
        got = real_block(*args)  # type: ignore[arg-type]
        if got is not None:
            used.append(got)
        return got

    monkeypatch.setattr(svg_fast, "_block", spy)
    fast = [_fast(doc, graph, spec) for doc, graph, spec in corpus]
    assert len(used) > 10 * len(corpus) // 2
    monkeypatch.setattr(svg_fast, "_BLOCK", re.compile("(?!)"))
    monkeypatch.setattr(svg_fast, "_RUN", re.compile("(?!)"))
    slow = [_fast(doc, graph, spec) for doc, graph, spec in corpus]
    assert fast == slow


BLOCK_MUTATIONS = [
    ('" xlink:title="', '" xlink:title="&bogus;'),       # an entity the parser refuses
    ("<title>n1", "<title>&#1;n1"),                      # a character XML forbids
    ('<a xlink:href="', '<a xlink:href="../x'),          # a link we did not ask for
    ('class="node', 'class="node" id="again'),           # an attribute named twice
    ("<!-- n1 -->", "<!-- n--1 -->"),                    # '--' inside a comment
    ('<text ', '<text x="1" '),                          # x repeated on a run line
    ("</text>\n</a>", "</text>\n<desc/>\n</a>"),         # not a run line
]


@pytest.mark.parametrize(("old", "new"), BLOCK_MUTATIONS)
def test_block_shortcut_declines_what_it_does_not_cover(
        corpus: list[tuple[str, DotGraph, GraphSpec]], old: str, new: str) -> None:
    hit = 0
    for doc, graph, spec in corpus[:20]:
        body = doc.replace("&#45;", "-")
        if old not in body:
            continue
        hit += 1
        mutated = body.replace(old, new)
        assert _fast(mutated, graph, spec) == _reference(mutated, graph, spec), graph.name
    assert hit


def _tree_check(svg: str, allowed_hrefs: frozenset[str] | None = None) -> str | None:
    """assert_inline_safe as it was (parse to a tree, walk it): its error, or None."""
    import xml.etree.ElementTree as ET
    s = f"{{{gv.SVG_NS}}}"
    if gv._UNSAFE_MARKUP.search(svg):
        return "forbidden markup"
    try:
        tree = ET.fromstring(svg)
    except ET.ParseError as exc:
        return f"not well-formed ({exc})"
    for el in tree.iter():
        if not isinstance(el.tag, str) or el.tag.removeprefix(s) not in gv.ALLOWED_TAGS:
            return f"element {el.tag!r}"
        for key, value in el.attrib.items():
            local = key.rsplit("}", 1)[-1].lower()
            if local.startswith("on") or local == "style":
                return f"attribute {key!r}"
            if local == "href" and (
                    safe_url(value) is None or "javascript:" in value.lower()
                    or (allowed_hrefs is not None and value not in allowed_hrefs)):
                return f"link {value!r}"
    return None


def _stream_check(svg: str, allowed_hrefs: frozenset[str] | None = None) -> str | None:
    try:
        gv.assert_inline_safe(svg, allowed_hrefs=allowed_hrefs)
    except BundlerError as exc:
        return str(exc).removeprefix("refusing to inline graph SVG: ")
    return None


OUTPUT_MUTATIONS: list[Callable[[str, random.Random], str]] = [
    lambda s, r: s.replace("<path ", "<script>x</script><path ", 1),
    lambda s, r: s.replace("<path ", '<path onclick="x()" ', 1),
    lambda s, r: s.replace("<path ", '<path ONload=\'x()\' ', 1),
    lambda s, r: s.replace("<path ", '<path style="fill:red" ', 1),
    lambda s, r: s.replace("<path ", '<path xlink:style="x" ', 1),
    lambda s, r: s.replace("<path ", "<image ", 1).replace("</path>", "</image>", 1),
    lambda s, r: s.replace("<path ", '<path xmlns="http://example/" ', 1),
    lambda s, r: s.replace("<g ", '<g xmlns:xlink="http://example/" ', 1),
    lambda s, r: s.replace("<g ", '<q:g xmlns:q="http://www.w3.org/2000/svg" ', 1),
    lambda s, r: s.replace("<g ", '<h:g xmlns:h="http://example/" ', 1),
    lambda s, r: s.replace('xlink:href="', 'xlink:href="javascript:', 1),
    lambda s, r: s.replace('xlink:href="', 'xlink:href="&#106;avascript:', 1),
    lambda s, r: s.replace('xlink:href="', 'xlink:href="\t', 1),
    lambda s, r: s.replace('xlink:href="', 'href="', 1),
    lambda s, r: s.replace('xlink:href="', 'xlink:href="x', 1),
    lambda s, r: s.replace("<title", "<title a=\"1\" a=\"2\"", 1),
    lambda s, r: s.replace("</g>", "", 1),
    lambda s, r: s + "<svg/>",
    lambda s, r: s.replace("</text>", "&bogus;</text>", 1),
    lambda s, r: s.replace("</text>", "<!-- c --></text>", 1),
    lambda s, r: (lambda i: s[:i] + "<" + s[i:])(r.randrange(len(s))),
    lambda s, r: (lambda i: s[:i] + '"' + s[i:])(r.randrange(len(s))),
    lambda s, r: (lambda i: s[:i] + s[i + 1:])(r.randrange(len(s))),
]


def test_final_check_judges_exactly_as_the_tree_walk(
        corpus: list[tuple[str, DotGraph, GraphSpec]]) -> None:
    """Checking start tags while expat parses gives the same verdict and the same
    message as building the tree and walking it, on real and broken markup."""
    rng = random.Random(7)
    outputs = [(gv.postprocess(doc, graph, spec.title, spec.description), graph.hrefs)
               for doc, graph, spec in corpus]
    failed = 0
    for svg, hrefs in outputs:
        assert _stream_check(svg, hrefs) is None
        for mutate in OUTPUT_MUTATIONS:
            bad = mutate(svg, rng)
            for allowed in (hrefs, None):
                want = _tree_check(bad, allowed)
                assert _stream_check(bad, allowed) == want, (want, bad[:300])
                failed += want is not None
    assert failed > len(outputs) * len(OUTPUT_MUTATIONS)
