"""Graphviz rendering: escaping of hostile text, inline-safe SVG, batching, failures.

These run the real ``dot`` (Graphviz is a hard dependency of site builds); its
absence is a failure with an install hint, not a skip.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import xml.etree.ElementTree as ET
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bundler.errors import BundlerError, DependencyError
from bundler.graph.paths import GEdge, GNode
from bundler.render.dot import (
    LABEL_WIDTH,
    build_dot,
    clean_text,
    node_title,
    shorten,
    wrap_label,
)
from bundler.render.graphviz import (
    MAX_NODES,
    GraphSpec,
    assert_inline_safe,
    dot_source,
    find_dot,
    postprocess,
    render_svgs,
)

S = "{http://www.w3.org/2000/svg}"
XL = "{http://www.w3.org/1999/xlink}"

INJECTION = '"];\nn9 -> n0 [label="x'
NODE_LINE = re.compile(r"^  (n\d+) \[id=", re.MULTILINE)
EDGE_LINE = re.compile(r"^  (n\d+) -> (n\d+) \[id=", re.MULTILINE)
HOSTILE = [INJECTION, "\\N", "&amp;", "&#x3C;script&#x3E;", "<script>alert(1)</script>"]


@pytest.fixture(scope="module", autouse=True)
def _need_dot() -> None:
    if shutil.which("dot") is None:
        pytest.fail("Graphviz 'dot' is required: sudo apt-get install graphviz", pytrace=False)


def _href(table: dict[str, str]) -> Callable[[str], str | None]:
    return table.get


def hostile_spec(name: str = "hostile") -> GraphSpec:
    nodes = [GNode("c", "claim", "Accuracy improved", "supported")]
    nodes += [GNode(f"h{i}", "individual", text, "verified") for i, text in enumerate(HOSTILE)]
    edges = [GEdge(f"h{i}", "c", "supports") for i in range(len(HOSTILE))]
    return GraphSpec(name, 'Evidence for "<b>x</b>" & co', "Desc <i>&amp;</i>", nodes, edges,
                     _href({"c": "claims/c.html", "h0": "javascript:alert(1)"}), root="c")


def small_spec(i: int, size: int = 4) -> GraphSpec:
    kinds = ["claim", "individual", "operator", "fitness"]
    nodes = [GNode(f"x{i}-{j}", kinds[j % 4], f"node {i}.{j}", "verified") for j in range(size)]
    edges = [GEdge(f"x{i}-{j}", f"x{i}-{j + 1}", "produces") for j in range(size - 1)]
    return GraphSpec(f"g{i}", f"Graph {i}", f"Small graph {i}", nodes, edges,
                     lambda nid: f"a/{nid}.html")


def groups(svg: str, kind: str) -> list[ET.Element]:
    root = ET.fromstring(svg)
    return [g for g in root.iter(f"{S}g") if (g.get("class") or "").split()[:1] == [kind]]


def texts(group: ET.Element) -> list[str]:
    return [t.text or "" for t in group.iter(f"{S}text")]


def title_of(group: ET.Element) -> str | None:
    t = group.find(f"{S}title")
    return None if t is None else t.text


# --- DOT source ---------------------------------------------------------------------------

def test_dot_source_escapes_every_hostile_label_exactly() -> None:
    src = dot_source(hostile_spec())
    assert 'label="\\"];\\nn9 -> n0 [label=\\"x"' in src
    assert 'label="\\\\N"' in src
    assert 'label="&amp;amp;"' in src
    assert 'label="&amp;#x3C;script&amp;#x3E;"' in src
    assert 'label="<script>alert(1)</script>"' in src
    # node names are ours, in order; the untrusted ids never reach DOT
    assert NODE_LINE.findall(src) == ["n0", "n1", "n2", "n3", "n4", "n5"]
    assert EDGE_LINE.findall(src) == [(f"n{i}", "n0") for i in range(1, 6)]
    assert '"h0"' not in src and "javascript" not in src


def test_unsafe_hrefs_get_no_link_and_safe_ones_do() -> None:
    urls = {"a": "javascript:alert(1)", "b": "//evil.example/x", "c": "/abs.html",
            "d": "x.html?a=1&b=2", "e": "https://example.org/", "f": "a\\N.html",
            "g": "../claims/c-1.html#top", "h": "JaVaScRiPt:alert(1)"}
    nodes = [GNode(k, "individual", k) for k in urls]
    spec = GraphSpec("links", "t", "d", nodes, [], _href(urls))
    svg = render_svgs([spec])["links"]
    linked = {}
    for g in groups(svg, "node"):
        anchors = [a.get(f"{XL}href") for a in g.iter(f"{S}a")]
        linked[texts(g)[0]] = [h for h in anchors if h is not None]
    assert linked == {k: (["../claims/c-1.html#top"] if k == "g" else []) for k in urls}
    assert "javascript" not in svg.lower() and "evil" not in svg


def test_invalid_names_rankdir_and_too_many_nodes_are_refused() -> None:
    base = small_spec(0)
    for bad in ["", "a b", "x\"y", "ü", "a/b"]:
        with pytest.raises(ValueError, match="graph name"):
            dot_source(GraphSpec(bad, "t", "d", base.nodes, base.edges, base.href))
    with pytest.raises(ValueError, match="rankdir"):
        dot_source(GraphSpec("r", "t", "d", base.nodes, base.edges, base.href, rankdir="XY"))
    many = [GNode(f"n{i}", "individual", str(i)) for i in range(MAX_NODES + 1)]
    with pytest.raises(ValueError, match="MAX_NODES=400"):
        dot_source(GraphSpec("big", "t", "d", many, [], base.href))
    ok = dot_source(GraphSpec("ok", "t", "d", many[:MAX_NODES], [], base.href))
    assert len(NODE_LINE.findall(ok)) == MAX_NODES
    with pytest.raises(ValueError, match="unique"):
        render_svgs([small_spec(1), small_spec(1)])


def test_labels_wrap_to_two_lines_with_ellipsis() -> None:
    text = "word " * 30
    lines = wrap_label(text)
    assert len(lines) == 2 and all(len(line) <= LABEL_WIDTH for line in lines)
    assert lines[0] == ("word " * 8).strip() and lines[1].endswith("\u2026")
    assert wrap_label("a\nb\nc") == ["a", "b\u2026"]
    assert wrap_label("short") == ["short"]
    assert wrap_label("x" * 100) == ["x" * 40, "x" * 39 + "\u2026"]


# --- rendered SVG --------------------------------------------------------------------------

def test_hostile_labels_render_as_literal_text() -> None:
    svg = render_svgs([hostile_spec()])["hostile"]
    nodes = groups(svg, "node")
    assert len(nodes) == 1 + len(HOSTILE)            # nothing injected (no n9)
    assert len(groups(svg, "edge")) == len(HOSTILE)
    by_text = {tuple(texts(g)): g for g in nodes}
    assert set(by_text) == {("Accuracy improved",), ('"];', 'n9 -> n0 [label="x'), ("\\N",),
                            ("&amp;",), ("&#x3C;script&#x3E;",), ("<script>alert(1)</script>",)}
    assert title_of(by_text[("\\N",)]) == "\\N (individual, verified)"
    assert title_of(by_text[("&amp;",)]) == "&amp; (individual, verified)"
    assert "<script" not in svg and "&lt;script&gt;alert(1)&lt;/script&gt;" in svg


def test_svg_root_is_accessible_and_inline_safe() -> None:
    svg = render_svgs([hostile_spec()])["hostile"]
    assert svg.startswith("<svg ") and svg.endswith("</g>\n</svg>")
    for bad in ("<?xml", "<!DOCTYPE", "<!--", "<style", "<foreignObject", " onload", "page0"):
        assert bad not in svg
    root = ET.fromstring(svg)
    assert "width" not in root.attrib and "height" not in root.attrib
    assert root.tag == f"{S}svg"
    assert root.get("class") == "rb-graph" and root.get("role") == "img"
    assert root.get("aria-labelledby") == "hostile-title hostile-desc"
    assert root.get("viewBox", "").startswith("0.00 0.00 ")
    first, second = root[0], root[1]
    assert (first.tag, first.get("id"), first.text) == (
        f"{S}title", "hostile-title", 'Evidence for "<b>x</b>" & co')
    assert (second.tag, second.get("id"), second.text) == (
        f"{S}desc", "hostile-desc", "Desc <i>&amp;</i>")
    assert root[2].get("id") == "hostile-graph" and root[2].find(f"{S}title") is None
    assert_inline_safe(svg)


def test_node_and_edge_groups_carry_classes_titles_and_links() -> None:
    svg = render_svgs([hostile_spec()])["hostile"]
    nodes = groups(svg, "node")
    classes = sorted(g.get("class", "") for g in nodes)
    assert classes == ["node kind-claim state-supported root"] + [
        "node kind-individual state-verified"] * len(HOSTILE)
    ids = [g.get("id") for g in nodes]
    assert sorted(ids) == [f"hostile-n{i}" for i in range(6)]  # type: ignore[type-var]
    claim = next(g for g in nodes if "root" in g.get("class", ""))
    assert title_of(claim) == "Accuracy improved (claim, supported)"
    anchors = list(claim.iter(f"{S}a"))
    assert [(a.get(f"{XL}href"), a.get(f"{XL}title")) for a in anchors] == [
        ("claims/c.html", "Accuracy improved (claim, supported)")]
    for g in nodes:   # every node has an accessible name, never the internal n12
        assert title_of(g) and not (title_of(g) or "").startswith("n")
        assert [a.get(f"{XL}title") for a in g.iter(f"{S}a")] == [title_of(g)]
    edges = groups(svg, "edge")
    assert {g.get("class") for g in edges} == {"edge rel-supports"}
    titles = {g.get("id"): title_of(g) for g in edges}
    assert titles["hostile-e0"] == '"]; n9 -> n0 [label="x \u2192 Accuracy improved: supports'
    assert titles["hostile-e3"] == "&#x3C;script&#x3E; \u2192 Accuracy improved: supports"


def test_inferred_edges_are_dashed_with_confidence() -> None:
    nodes = [GNode("a", "trace_record", "trace"), GNode("b", "claim", "claim", "unverified"),
             GNode("c", "evidence_node", "ev")]
    edges = [GEdge("a", "b", "supports", inferred=True, confidence=0.7249, by="tracer"),
             GEdge("c", "b", "supports: acc = 0.9"),
             GEdge("c", "a", "informs", inferred=True),
             GEdge("zz", "b", "supports")]           # unknown end: dropped
    spec = GraphSpec("inf", "t", "d", nodes, edges, lambda _: None)
    assert "style=dashed" in dot_source(spec)
    svg = render_svgs([spec])["inf"]
    got = {g.get("id"): (g.get("class"), texts(g),
                         [p.get("stroke-dasharray") for p in g.iter(f"{S}path")])
           for g in groups(svg, "edge")}
    assert got == {
        "inf-e0": ("edge rel-supports inferred", ["supports (inferred 0.72)"], ["5,2"]),
        "inf-e1": ("edge rel-supports", ["supports: acc = 0.9"], [None]),
        "inf-e2": ("edge rel-informs inferred", ["informs (inferred)"], ["5,2"]),
    }
    titles = {g.get("id"): title_of(g) for g in groups(svg, "edge")}
    assert titles["inf-e0"] == "trace \u2192 claim: supports (inferred 0.72)"


def test_clusters_and_control_characters() -> None:
    nodes = [GNode("a", "workflow_node", "ph\u202eA\x00\x1b", "")]
    nodes += [GNode("b", "steering", "stop")]
    spec = GraphSpec("cl", "t", "d", nodes, [GEdge("b", "a", "steers")], lambda _: None,
                     clusters={'Phase "1" <&>': ["a", "missing-id"], "empty": ["nope"]})
    svg = render_svgs([spec])["cl"]
    clusters = groups(svg, "cluster")
    assert [(c.get("id"), title_of(c), texts(c)) for c in clusters] == [
        ("cl-c0", 'Phase "1" <&>', ['Phase "1" <&>'])]
    (wf,) = [g for g in groups(svg, "node") if "kind-workflow_node" in g.get("class", "")]
    assert texts(wf) == ["ph[U+202E]A[U+0000][U+001B]"]     # as on the page
    assert wf.get("class") == "node kind-workflow_node"   # empty state: no state- class


def test_output_is_deterministic_and_independent_of_jobs_and_batching() -> None:
    specs = [hostile_spec("h1"), *(small_spec(i, 3 + i % 5) for i in range(7)), hostile_spec()]
    one = render_svgs(specs, jobs=1)
    assert list(one) == [s.name for s in specs]
    assert render_svgs(specs, jobs=1) == one
    assert render_svgs(specs, jobs=2) == one
    assert render_svgs(specs, jobs=20) == one
    for spec in (specs[0], specs[4], specs[-1]):     # first, middle, last of a batch
        assert render_svgs([spec]) == {spec.name: one[spec.name]}


class _CountingPopen:
    def __init__(self) -> None:
        self.calls: list[Sequence[str]] = []
        self.real = subprocess.Popen

    def __call__(self, args: Sequence[str], *a: Any, **kw: Any) -> Any:
        self.calls.append(args)
        return self.real(args, *a, **kw)


@pytest.mark.parametrize("jobs", [1, 2])
def test_batch_of_200_uses_one_process_per_worker(monkeypatch: pytest.MonkeyPatch,
                                                  jobs: int) -> None:
    counter = _CountingPopen()
    monkeypatch.setattr(subprocess, "Popen", counter)
    specs = [small_spec(i) for i in range(200)]
    out = render_svgs(specs, jobs=jobs)
    assert len(counter.calls) == jobs
    assert all(list(c)[1:] == ["-Tsvg"] for c in counter.calls)
    assert list(out) == [f"g{i}" for i in range(200)]
    for i in (0, 1, 99, 100, 199):
        root = ET.fromstring(out[f"g{i}"])
        assert root[0].text == f"Graph {i}" and root[2].get("id") == f"g{i}-graph"
        assert [texts(g) for g in groups(out[f"g{i}"], "node")] == [
            [f"node {i}.{j}"] for j in range(4)]


# --- failures --------------------------------------------------------------------------------

def test_missing_dot_is_a_dependency_error(monkeypatch: pytest.MonkeyPatch,
                                           tmp_path: Path) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(DependencyError, match="sudo apt-get install graphviz"):
        find_dot()
    with pytest.raises(DependencyError, match="not found"):
        render_svgs([small_spec(0)])
    with pytest.raises(DependencyError, match="cannot run Graphviz 'dot'"):
        render_svgs([small_spec(0)], dot=str(tmp_path / "no-such-dot"))
    assert render_svgs([]) == {}        # nothing to draw: dot is not needed


def _fake_dot(tmp_path: Path, body: str) -> str:
    script = tmp_path / "dot"
    script.write_text("#!/bin/sh\ncat >/dev/null\n" + body)
    script.chmod(0o755)
    return str(script)


def test_dot_failure_and_short_output_are_reported_not_tracebacks(tmp_path: Path) -> None:
    failing = _fake_dot(tmp_path, "echo 'syntax error in line 3' >&2\nexit 3\n")
    with pytest.raises(DependencyError, match=r"exit 3\) on graph 'g0': syntax error in line 3"):
        render_svgs([small_spec(0), small_spec(1)], dot=failing)
    aborting = _fake_dot(tmp_path, "kill -ABRT $$\n")
    with pytest.raises(DependencyError, match=r"killed by signal 6\) on graph 'g0'"):
        render_svgs([small_spec(0)], dot=aborting)
    real = find_dot()
    one_only = _fake_dot(tmp_path, f"echo 'digraph g0 {{}}' | {real} -Tsvg\n")
    with pytest.raises(BundlerError, match="returned 1 SVG document"):
        render_svgs([small_spec(0), small_spec(1)], dot=one_only)
    # the right number of documents, but for the wrong graph: order is checked
    with pytest.raises(BundlerError, match="out of order"):
        render_svgs([small_spec(5)], dot=one_only)


def cluster_crash_spec(name: str) -> GraphSpec:
    """Reduced from a generated graph that made Graphviz 2.43 abort in a batch.

    A cluster whose members are linked through an outside node, with labelled
    edges: without ``newrank=true`` the layout is double-freed, and the next
    graph in the same process dies with "corrupted double-linked list".
    """
    ids = ["a1", "a3", "a4", "a5", "a7", "a8", "a9", "a10", "a11", "a13", "a14"]
    nodes = [GNode(i, "individual", f"artifact {i} result.csv") for i in ids]
    pairs = [("a3", "a1", "uses"), ("a5", "a3", "produces"), ("a8", "a4", "uses"),
             ("a9", "a7", "uses"), ("a10", "a3", "produces"), ("a13", "a1", "informs"),
             ("a14", "a3", "uses")]
    edges = [GEdge(a, b, rel) for a, b, rel in pairs]
    edges.append(GEdge("a11", "a9", "checked_by", inferred=True, confidence=0.63))
    return GraphSpec(name, "t", "d", nodes, edges, lambda _: None,
                     clusters={"phase 1": ["a1", "a4", "a7", "a10", "a13"]})


def test_cluster_graphs_batch_without_crashing(monkeypatch: pytest.MonkeyPatch) -> None:
    counter = _CountingPopen()
    monkeypatch.setattr(subprocess, "Popen", counter)
    specs = [cluster_crash_spec(f"c{i}") for i in range(3)]
    out = render_svgs(specs)
    assert len(counter.calls) == 1                  # no crash, so no per-graph retry
    assert [len(groups(out[s.name], "node")) for s in specs] == [11, 11, 11]
    assert [len(groups(out[s.name], "cluster")) for s in specs] == [1, 1, 1]


def test_overlapping_clusters_keep_the_first_membership() -> None:
    """Graphviz 2.43 with newrank segfaults on a node in two clusters (found by a stress run)."""
    nodes = [GNode("a", "missing", "a " * 30, "missing"), GNode("b", "fitness", "short")]
    spec = GraphSpec("ov", "t", "d", nodes, [GEdge("b", "b", "steers")], lambda _: None,
                     root="a", rankdir="TB",
                     clusters={"phase 0": ["b", "a"], "phase 1": ["a"], "phase 2": ["b", "a"]})
    src = dot_source(spec)
    assert src.count("subgraph") == 1 and "    n1; n0;\n" in src
    svg = render_svgs([spec])["ov"]
    assert [title_of(c) for c in groups(svg, "cluster")] == ["phase 0"]
    assert len(groups(svg, "node")) == 2 and len(groups(svg, "edge")) == 1


def test_crashed_batch_is_retried_graph_by_graph(monkeypatch: pytest.MonkeyPatch,
                                                 tmp_path: Path) -> None:
    """A batch-only crash costs speed, not the build; output is unchanged."""
    specs = [small_spec(i) for i in range(3)]
    expected = render_svgs(specs)
    script = tmp_path / "dot"
    script.write_text(
        "#!/bin/sh\nin=$(cat)\n"
        'n=$(printf "%s" "$in" | grep -c "^digraph ")\n'
        '[ "$n" -gt 1 ] && { echo "corrupted double-linked list" >&2; kill -ABRT $$; }\n'
        f'printf "%s\\n" "$in" | {find_dot()} -Tsvg\n')
    script.chmod(0o755)
    flaky = str(script)
    counter = _CountingPopen()
    monkeypatch.setattr(subprocess, "Popen", counter)
    assert render_svgs(specs, dot=flaky) == expected
    assert len(counter.calls) == 1 + 3


def test_postprocess_rejects_unexpected_markup_from_dot() -> None:
    spec = small_spec(0)
    graph = build_dot(spec)
    doc = subprocess.run([find_dot(), "-Tsvg"], input=graph.source.encode(), check=True,
                         capture_output=True).stdout.decode()
    assert postprocess(doc, graph, "t", "d").startswith("<svg ")
    marker = "<title>g0</title>"
    for evil in ["<script>alert(1)</script>", "<foreignObject><p>x</p></foreignObject>",
                 '<g onclick="x()"></g>', '<g style="fill:red"></g>',
                 '<a xlink:href="javascript:alert(1)"></a>', '<a xlink:href="other.html"></a>',
                 '<image xlink:href="x.png"/>']:
        with pytest.raises(BundlerError):
            postprocess(doc.replace(marker, marker + evil), graph, "t", "d")
    with pytest.raises(BundlerError, match="not XML"):
        postprocess(doc.replace("</svg>", ""), graph, "t", "d")


@pytest.mark.parametrize("markup", [
    '<svg xmlns="http://www.w3.org/2000/svg"><script>x</script></svg>',
    '<svg xmlns="http://www.w3.org/2000/svg"><style>body{}</style></svg>',
    '<svg xmlns="http://www.w3.org/2000/svg" onload="x()"></svg>',
    '<svg xmlns="http://www.w3.org/2000/svg"><!-- c --></svg>',
    '<svg xmlns="http://www.w3.org/2000/svg"><foreignObject/></svg>',
    '<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink">'
    '<a xlink:href="javascript:alert(1)"/></svg>',
    '<svg xmlns="http://www.w3.org/2000/svg"><a href="//evil.example/"/></svg>',
    '<svg xmlns="http://www.w3.org/2000/svg"><g></svg>',
])
def test_final_check_rejects_unsafe_markup(markup: str) -> None:
    with pytest.raises(BundlerError, match="refusing to inline"):
        assert_inline_safe(markup)


# --- property: any text renders literally -----------------------------------------------------

@settings(max_examples=25, deadline=None)
@given(st.lists(st.text(min_size=1, max_size=90), min_size=1, max_size=8),
       st.text(max_size=40))
def test_any_label_renders_exactly_as_wrapped(labels: list[str], relation: str) -> None:
    nodes = [GNode(f"p{i}", "claim", text, "") for i, text in enumerate(labels)]
    edges = [GEdge(f"p{i}", f"p{i + 1}", relation) for i in range(len(labels) - 1)]
    svg = render_svgs([GraphSpec("prop", "t", "d", nodes, edges, lambda _: None)])["prop"]
    drawn = {g.get("id"): g for g in groups(svg, "node")}
    for i, node in enumerate(nodes):
        g = drawn[f"prop-n{i}"]
        shown = node.label if node.label.strip() else node.id
        assert texts(g) == [line for line in wrap_label(shown) if line]
        assert title_of(g) == node_title(node)
    for g in groups(svg, "edge"):
        assert texts(g) == ([shorten(relation, 32)] if shorten(relation, 32) else [])


_MARKER = re.compile(r"\[U\+[0-9A-F]{4,6}\]")


@pytest.mark.parametrize("text", [
    "x" * 38 + "\x1b" + "yy",                   # the marker would straddle the width
    "\x1b[1A\x1b[2K\x1b]0;owned\x07 INVALID \u202egnp.exe\u2066\x9b31m\x7f\x00",
    "a" * 50 + "\x1b" + "b" * 10,
    "\x00" * 30,
])
def test_a_label_never_breaks_inside_a_code_point_marker(text: str) -> None:
    """Nor does the ellipsis that ends a label or an edge label cut one."""
    lines = wrap_label(text)
    assert all(len(line) <= LABEL_WIDTH for line in lines), lines
    for line in [*lines, shorten(text, 32), shorten(text, 27)]:
        rest = _MARKER.sub("", line)
        assert "[U+" not in rest and not re.match(r"^[0-9A-F]*\]", rest), lines
    whole = clean_text(" ".join(text.split()))
    if not lines[-1].endswith("\u2026"):       # kept whole: nothing lost or added
        assert "".join(lines) == whole.replace(" ", ""), lines


def test_clean_text_fast_path_is_exact() -> None:
    """clean_text returns printable text untouched: no unsafe character is printable."""
    from bundler.render import dot
    assert not [c for c in range(0x110000)
                if dot._UNSAFE_CHARS.match(chr(c)) and chr(c).isprintable()]
    for text in ("caf\u00e9 \u2192 ok", "a\u202eb", "x\u2028y", "t\tab", "\ud800", "\U0001fffe"):
        assert dot.clean_text(text) == dot._UNSAFE_CHARS.sub(dot._replace_char, text)


def test_memoised_node_text_matches_the_plain_composition() -> None:
    from bundler.render import dot
    for node in (GNode("a", "individual", "x" * 90, "verified"), GNode("b", "", "  ", ""),
                 GNode("c", "trace_record", "l1\nl2\nl3", "missing_payload")):
        label = node.label if node.label.strip() else node.id
        facets = ", ".join(x.replace("_", " ") for x in (node.kind, node.state) if x)
        want = shorten(label, dot.TITLE_LIMIT)
        assert node_title(node) == (f"{want} ({shorten(facets, 80)})" if facets else want)
        assert dot._node_label(label) == dot.dot_label(wrap_label(label))
