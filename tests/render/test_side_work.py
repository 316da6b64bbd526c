"""Side work (graphs, their store, payload viewers): the same result wherever it runs."""

from __future__ import annotations

import errno
import hashlib
import pickle
from pathlib import Path

import pytest

from bundler.graph.paths import GNode
from bundler.output.graph_cache import GraphCache
from bundler.render import graph_helper, graphviz
from bundler.render.side_work import SideResult, SideWork, do_side_work
from bundler.render.viewer_jobs import ViewerJob
from bundler.render.viewers import render_payload

KEY_A, KEY_B = "a" * 64, "b" * 64


def _specs() -> list[graphviz.GraphSpec]:
    return [graphviz.GraphSpec(name, "T", "D", [GNode("n", "claim", "N <b>")], [],
                               lambda _: None) for name in ("g1", "g2")]


def _job(path: Path, name: str, media_type: str, head: int, shown: int) -> ViewerJob:
    size = path.stat().st_size
    return ViewerJob(f"sha256:{name}", size, media_type, name, "../f", shown, head, str(path),
                     media_type == "text/x-python")


def test_side_work_stores_the_graphs_it_lays_out_and_makes_the_viewers(tmp_path: Path) -> None:
    code = tmp_path / "code.py"
    code.write_text("def f(x):\n    return '<script>'\n" * 400)
    table = tmp_path / "t.csv"
    table.write_text("a,b\n1,2\n3,4\n")
    jobs = [_job(code, "code.py", "text/x-python", 1000, 1000),
            _job(table, "t.csv", "text/csv", 4096, 1024)]
    store = tmp_path / "store"
    store.mkdir()
    work = SideWork(graphviz.prepare_svgs(_specs(), dot="dot"), store,
                    {"g1": KEY_A, "g2": ""}, jobs)
    result = do_side_work(work)
    assert result.svgs == graphviz.render_svgs(_specs(), dot="dot")
    # stored under its key when it has one; read back as the same text
    assert GraphCache(store, read=True).get(KEY_A) == result.svgs["g1"]
    assert sorted(p.name for p in store.iterdir()) == [f"{KEY_A}.svg"]
    # the viewers, in the order asked, as made from the head of each file
    assert result.viewers == [
        render_payload(code.read_bytes()[:1000], "text/x-python", "code.py", file_href="../f",
                       max_bytes=1000, total_size=code.stat().st_size),
        render_payload(table.read_bytes(), "text/csv", "t.csv", file_href="../f",
                       max_bytes=1024)]
    assert result.viewers[0].truncated and "&lt;script&gt;" in result.viewers[0].html


def test_a_helper_process_gives_the_same_result(tmp_path: Path) -> None:
    doc = tmp_path / "notes.md"
    doc.write_text("# Title\n\n<img src=x onerror=alert(1)> *hi*\n")
    work = SideWork(graphviz.prepare_svgs(_specs(), dot="dot"), None, {},
                    [_job(doc, "notes.md", "text/markdown", 4096, 4096)])
    pickle.loads(pickle.dumps(work))         # what crosses the pipe
    here = do_side_work(work)
    helpers = graph_helper.GraphHelpers(1)
    try:
        there = helpers.submit(work).result()
        assert not helpers._helpers[0].unusable
    finally:
        helpers.close()
    assert there == here
    assert "<img" not in there.viewers[0].html and "&lt;img" in there.viewers[0].html


def test_nothing_to_do_is_empty() -> None:
    assert SideWork(graphviz.prepare_svgs([], dot="dot")).empty
    assert not SideWork(graphviz.prepare_svgs(_specs(), dot="dot")).empty


def test_pages_written_by_a_helper_land_and_its_errors_come_back(tmp_path: Path) -> None:
    """A page the helper could not write is an error in the build, with the file named
    and the cause kept (a full disk is then RB906, like a write in the build process)."""
    empty = graphviz.prepare_svgs([], dot="dot")
    good = tmp_path / "a.html"
    bad = tmp_path / "missing" / "b.html"
    helpers = graph_helper.GraphHelpers(1)
    try:
        assert helpers.submit(SideWork(empty, writes=[(str(good), b"<p>a</p>")])).result() \
            == SideResult({}, [])
        assert good.read_bytes() == b"<p>a</p>"
        with pytest.raises(FileNotFoundError) as caught:
            helpers.submit(SideWork(empty, writes=[(str(bad), b"x")])).result()
        assert caught.value.filename == str(bad) and caught.value.errno == errno.ENOENT
    finally:
        helpers.close()


def test_pages_rendered_by_a_helper_match_the_build_process(tmp_path: Path) -> None:
    """A helper given a page's context renders the bytes the build process would: the
    same environment, the graphs of its chunk and from the store, its viewers."""
    from markupsafe import Markup

    from bundler.render.environment import make_environment
    from bundler.render.page_html import PageFrame, RenderSetup, SiteInfo, render_html, size_svg
    from bundler.render.side_work import PageJob

    site = SiteInfo("T <b>", Markup(""), "pinned", "pinned", 0, 0, "gen", ())
    theme = tmp_path / "theme"      # a user's theme: the helper must use it too
    (theme / "pages").mkdir(parents=True)
    (theme / "pages" / "probe.html").write_text(
        '{% extends "layout.html" %}{% block content %}<h1>{{ title }}</h1>'
        "{{ svg.stored }}{{ svg.lineage }}{{ viewer.html }}"
        "<p>{{ page.key }} {{ page.root }} {{ page.path }}</p>{% endblock %}")
    setup = RenderSetup(theme, None, site, "https://example.invalid/site/")
    table = tmp_path / "t.csv"
    table.write_text("a,b\n<1>,2\n")
    stored = size_svg(graphviz.render_svgs(_specs()[1:], dot="dot")["g2"])
    frame = PageFrame("lineage/x.html", "pages/probe.html", "Lineage <x>", "lineage",
                      [("Overview", "index.html"), ("X", None)])
    job = PageJob(frame, {"title": "<script>", "rows": []}, str(tmp_path / "x.html"),
                  {"stored": stored}, {"g1": "lineage"}, {"viewer": 0})
    work = SideWork(graphviz.prepare_svgs(_specs()[:1], dot="dot"),
                    viewers=[_job(table, "t.csv", "text/csv", 4096, 1024)],
                    pages=[job], setup=setup)
    helpers = graph_helper.GraphHelpers(1)
    try:
        there = helpers.submit(work).result()
    finally:
        helpers.close()
    data = (tmp_path / "x.html").read_bytes()
    assert there.rendered == [(hashlib.sha256(data).hexdigest(), len(data))]
    here = do_side_work(SideWork(graphviz.prepare_svgs(_specs()[:1], dot="dot"),
                                 viewers=work.viewers))
    env = make_environment(theme)
    expected = render_html(env, site, setup.base_url, frame,
                           {"title": "<script>", "rows": [], "viewer": here.viewers[0]},
                           {"stored": Markup(stored),
                            "lineage": Markup(size_svg(here.svgs["g1"]))})
    assert data == expected.encode("utf-8")
    assert b"https://example.invalid/site/lineage/x.html" in data
    assert b"<h1>&lt;script&gt;</h1>" in data and b"lineage ../ lineage/x.html" in data
    assert data.count(b"style=\"width:") == 2 and b"&lt;1&gt;" in data


def test_a_template_error_in_a_helper_comes_back(tmp_path: Path) -> None:
    from markupsafe import Markup

    from bundler.render.page_html import PageFrame, RenderSetup, SiteInfo
    from bundler.render.side_work import PageJob

    setup = RenderSetup(None, None, SiteInfo("T", Markup(""), "none", "none", 0, 0, "g", ()),
                        None)
    job = PageJob(PageFrame("a.html", "pages/no-such.html", "A", "a", []), {},
                  str(tmp_path / "a.html"))
    helpers = graph_helper.GraphHelpers(1)
    try:
        with pytest.raises(Exception, match=r"no-such\.html"):
            helpers.submit(SideWork(graphviz.prepare_svgs([], dot="dot"), pages=[job],
                                    setup=setup)).result()
    finally:
        helpers.close()
    assert not (tmp_path / "a.html").exists()
