"""Side work (graphs, their store, payload viewers): the same result wherever it runs."""

from __future__ import annotations

import errno
import hashlib
import pickle
from pathlib import Path

import pytest

from bundler.graph.paths import GNode
from bundler.output.graph_cache import GraphCache
from bundler.render import chunks, graph_helper, graphviz
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
    assert there.rendered == [(hashlib.sha256(data).hexdigest(), len(data), None)]
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


def test_a_helper_fingerprints_a_page_as_the_build_process_does(tmp_path: Path) -> None:
    """Asked to (a cold build), a helper fingerprints each page it renders from the
    context it was sent: its lazy values by their key, events by their leaf hash (read
    from the leaf file), graphs by their key; a page it cannot fingerprint gets "", and
    its graphs are then not stored (as the build process does)."""
    from markupsafe import Markup

    from bundler.output.cache import Deferred, Encoder
    from bundler.render.page_html import PageFrame, RenderSetup, SiteInfo
    from bundler.render.side_work import EventKeys, PageJob, PageKeys, page_fingerprint
    from bundler.synth import generate, synthetic_signer
    from bundler.verify import VerifyOptions, verify_bundle

    bundle = generate(tmp_path / "b", events=200, seed=3)
    report = verify_bundle(bundle, VerifyOptions(
        trusted_keys=(synthetic_signer(3).verifier().to_text(),)))
    events = report.bundle.events
    leaves = tmp_path / "leaves"
    leaves.write_bytes(bytes(report.bundle.leaf_hashes))
    keys = EventKeys(str(leaves), leaves.stat().st_size, report.bundle.event_lines, "salt")
    (theme := tmp_path / "theme" / "pages").mkdir(parents=True)
    (theme / "p.html").write_text("{{ title }}{{ viewer.html }}{{ svg.g }}")
    setup = RenderSetup(theme.parent, None, SiteInfo("T", Markup(""), "none", "none", 0, 0,
                                                     "g", ()), None, keys)
    table = tmp_path / "t.csv"
    table.write_text("a,b\n1,2\n")
    store = tmp_path / "store"
    store.mkdir()
    frame = PageFrame("claims/x.html", "pages/p.html", "X", "claims", [("Overview", None)])
    contexts = [{"title": "<t>", "viewer": None, "ev": events[150], "rows": [events[7]]},
                {"title": "odd", "viewer": None, "z": complex(1, 2)}]   # no fingerprint
    jobs = [PageJob(frame, c, str(tmp_path / f"{n}.html"), {}, {f"g{n}": "g"}, {"viewer": 0},
                    PageKeys([KEY_A if n == 0 else KEY_B], {"viewer": ("viewer", n)}))
            for n, c in enumerate(contexts)]
    specs = [graphviz.GraphSpec(f"g{n}", "T", "D", [GNode("n", "claim", "N")], [],
                                lambda _: None) for n in range(2)]
    work = SideWork(graphviz.prepare_svgs(specs, dot="dot"), store, {"g0": KEY_A, "g1": KEY_B},
                    [_job(table, "t.csv", "text/csv", 4096, 1024)] * 2, pages=jobs,
                    setup=setup)
    helpers = graph_helper.GraphHelpers(1)
    try:
        there = helpers.submit(work).result()
    finally:
        helpers.close()
    here = Encoder(chunks.event_key_for(report.bundle))
    made = dict(contexts[0], viewer=Deferred(("viewer", 0), lambda: None))
    expected = page_fingerprint(here, "salt", frame, made, [KEY_A])
    assert [fp for _, _, fp in there.rendered] == [expected, ""]
    assert do_side_work(work).rendered == there.rendered        # and in this process
    # the event's leaf is in it: another leaf file gives another fingerprint
    other = RenderSetup(setup.theme, None, setup.site, None,
                        EventKeys(str(tmp_path / "zeros"), keys.size, keys.lines, "salt"))
    (tmp_path / "zeros").write_bytes(bytes(32) * len(events))
    assert do_side_work(SideWork(graphviz.prepare_svgs(specs[:1], dot="dot"), pages=jobs[:1],
                                 setup=other,
                                 viewers=work.viewers[:1])).rendered[0][2] != expected
    assert sorted(p.name for p in store.iterdir()) == [f"{KEY_A}.svg"]


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
