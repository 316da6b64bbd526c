"""Example sites in headless Chromium (Debian's, DESIGN-NOTES §8), from file:// and http.

Covers what only a browser can show: pages load with no console error and
no failed or network request, search finds a claim by a word of its text,
graph nodes are links that navigate, the dark-mode toggle persists, axe-core
finds no serious or critical accessibility violation, and the site works
served from a sub-path.
"""

from __future__ import annotations

import re
import shutil
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from browser_util import (
    READS_ANOTHER_FILE,
    axe_serious,
    check_theme_stays_with_its_site,
    chromium_context,
    poll,
    watch,
)
from site_helpers import BuiltSite, resolve

from bundler.model.events import ClaimEvent, IndividualEvent
from bundler.render.urls import artifact_href, claim_href

pytestmark = pytest.mark.browser
SITES = ("air-quality", "closed-loop-lab")


def _claims(built: BuiltSite) -> list[ClaimEvent]:
    return [e for e in built.result.report.bundle.events if isinstance(e, ClaimEvent)]


def _artifact_with_viewer(built: BuiltSite) -> IndividualEvent:
    """An artifact whose payload is shown inline: the smallest table, if there is one
    (axe-core needs ~10 s for a 500-row table; a small one checks the same markup)."""
    arts = [e for e in built.result.report.bundle.events
            if type(e) is IndividualEvent and e.payload is not None
            and built.result.report.bundle.payloads[e.payload.digest].state.value == "verified"]
    tables = sorted((a for a in arts if a.payload and a.payload.media_type == "text/csv"),
                    key=lambda a: (a.payload.size if a.payload else 0, a.seq))
    return (tables or arts)[0]


@pytest.mark.parametrize("name", SITES)
def test_index_and_claim_load_cleanly(name: str, site_of: Callable[[str], BuiltSite]) -> None:
    built = site_of(name)
    claim = claim_href(_claims(built)[0].id)
    with chromium_context(viewport={"width": 1200, "height": 900}) as ctx:
        page = ctx.new_page()
        log = watch(page)
        for rel in ("index.html", claim, artifact_href(_artifact_with_viewer(built).id)):
            page.goto((built.site / rel).as_uri())
            assert page.locator("main h1").count() == 1, rel
            assert page.title().endswith(built.result.report.bundle.metadata.title), rel  # type: ignore[union-attr]
        assert log.problems() == []
        assert all(u.startswith(built.site.as_uri()) for u in log.requests), log.requests


def _search_word(text: str) -> str:
    """The longest plain word of a claim's text (distinctive enough to find it)."""
    words: list[str] = re.findall(r"[A-Za-z]{5,}", text)
    return max(words, key=len).lower()


@pytest.mark.parametrize("name", SITES)
def test_search_finds_a_claim_by_a_word(name: str, site_of: Callable[[str], BuiltSite]) -> None:
    built = site_of(name)
    claim = _claims(built)[0]
    word = _search_word(claim.text)
    with chromium_context() as ctx:
        page = ctx.new_page()
        log = watch(page)
        page.goto((built.site / "artifacts" / "index.html").as_uri())
        page.focus("#rb-search")
        page.keyboard.type(word, delay=10)
        want = "../" + claim_href(claim.id)
        poll(lambda: want in [page.locator("#rb-search-results a").nth(i).get_attribute("href")
                              for i in range(page.locator("#rb-search-results a").count())],
             timeout=10, what=f"a result linking to {want} for {word!r}")
        assert re.fullmatch(r"\d+ results?(, showing the first 20)?",
                            page.inner_text("#rb-search-status"))
        link = page.locator(f'#rb-search-results a[href="{want}"]').first
        link.click()
        poll(lambda: page.url.endswith("/" + claim_href(claim.id)), what="navigation")
        assert log.problems() == []


def test_search_ranks_claims_before_the_events_that_name_them(
        site_of: Callable[[str], BuiltSite]) -> None:
    """"peak" matches the four peak-* claims and more than 20 events that name them
    (edges, fitness records): the claims came after those events, off the first 20."""
    built = site_of("air-quality")
    named = sorted(c.id for c in _claims(built) if "peak" in c.id)
    assert len(named) == 4
    with chromium_context() as ctx:
        page = ctx.new_page()
        log = watch(page)
        page.goto((built.site / "artifacts" / "index.html").as_uri())
        page.focus("#rb-search")
        page.keyboard.type("peak", delay=10)
        poll(lambda: page.locator("#rb-search-results .rb-result").count() == 20,
             timeout=10, what="the first 20 results")
        kinds = page.locator("#rb-search-results .rb-result-kind").all_text_contents()
        titles = page.locator("#rb-search-results .rb-result-title").all_text_contents()
        assert kinds[:4] == ["claim"] * 4 and "claim" not in kinds[4:], kinds
        assert sorted(titles[:4]) == sorted(c.removeprefix("claim:") for c in named), titles
        assert log.problems() == []


def test_search_loads_its_data_on_text_that_came_without_focus(
        site_of: Callable[[str], BuiltSite]) -> None:
    """A restored field, or a window that is not focused (headless Firefox), gives
    the box text with no focus event first: the search data loaded only on focus,
    so the box said "Loading search…" for good (test_site_firefox.py found it)."""
    built = site_of("air-quality")
    claim = _claims(built)[0]
    word = _search_word(claim.text)
    with chromium_context() as ctx:
        page = ctx.new_page()
        log = watch(page)
        page.goto((built.site / "artifacts" / "index.html").as_uri())
        page.locator("#rb-search").evaluate(
            "(box, word) => { box.value = word; box.dispatchEvent(new Event('input')); }", word)
        status = poll(lambda: (page.text_content("#rb-search-status") or "").replace(
            "Loading search…", ""), timeout=10, what="the search to answer")
        assert re.fullmatch(r"\d+ results?(, showing the first 20)?", status), status
        assert page.evaluate("document.activeElement.id") != "rb-search"
        assert log.problems() == []


@pytest.mark.parametrize("name", SITES)
def test_clicking_a_graph_node_navigates(name: str, site_of: Callable[[str], BuiltSite]) -> None:
    built = site_of(name)
    claim = _claims(built)[-1]
    rel = claim_href(claim.id)
    with chromium_context(viewport={"width": 1400, "height": 1000}) as ctx:
        page = ctx.new_page()
        log = watch(page)
        page.goto((built.site / rel).as_uri())
        nodes = page.locator("svg.rb-graph a")
        assert nodes.count() >= 2
        target = None
        for i in range(nodes.count()):
            href = nodes.nth(i).get_attribute("xlink:href") or nodes.nth(i).get_attribute("href")
            resolved = resolve(rel, href or "")
            if resolved and resolved[0] != rel:
                target = (i, resolved[0])
                break
        assert target is not None, "no graph node links to another page"
        nodes.nth(target[0]).click()
        poll(lambda: page.url.split("#")[0].endswith("/" + target[1]), what=f"-> {target[1]}")
        # the URL is the new page's once navigation commits; its heading comes as it loads
        poll(lambda: page.locator("main h1").count() == 1, what="the new page's one heading")
        assert log.problems() == []


def test_chromium_keeps_file_pages_apart(tmp_path: Path) -> None:
    """The browser under test treats file:// as a reader's does (DESIGN-NOTES §4): a
    page can read neither a same-folder frame nor a local file with XHR (a launch
    flag such as ``--allow-file-access-from-files`` would allow both)."""
    (tmp_path / "a.html").write_text('<iframe src="b.html"></iframe>', encoding="utf-8")
    (tmp_path / "b.html").write_text("<p>secret</p>", encoding="utf-8")
    with chromium_context() as ctx:
        page = ctx.new_page()
        page.goto((tmp_path / "a.html").as_uri())
        assert page.evaluate(READS_ANOTHER_FILE) == ["SecurityError", "NetworkError"]


def test_dark_mode_toggle_persists(site_of: Callable[[str], BuiltSite]) -> None:
    built = site_of("air-quality")
    with chromium_context(color_scheme="light") as ctx:
        page = ctx.new_page()
        log = watch(page)
        page.goto((built.site / "index.html").as_uri())
        assert page.get_attribute("html", "data-theme") is None
        light_bg = page.evaluate("getComputedStyle(document.body).backgroundColor")
        page.click("#rb-theme-toggle")
        assert page.get_attribute("html", "data-theme") == "dark"
        assert page.get_attribute("#rb-theme-toggle", "aria-pressed") == "true"
        dark_bg = page.evaluate("getComputedStyle(document.body).backgroundColor")
        assert dark_bg != light_bg
        # persists on reload and on another page of the site
        page.reload()
        assert page.get_attribute("html", "data-theme") == "dark"
        page.goto((built.site / claim_href(_claims(built)[0].id)).as_uri())
        assert page.get_attribute("html", "data-theme") == "dark"
        assert page.evaluate("getComputedStyle(document.body).backgroundColor") == dark_bg
        page.click("#rb-theme-toggle")
        page.reload()
        assert page.get_attribute("html", "data-theme") == "light"
        assert log.problems() == []


def test_the_theme_choice_stays_with_its_own_site(site_of: Callable[[str], BuiltSite],
                                                  tmp_path: Path) -> None:
    """Chromium keeps no cookie on file:// and one storage for every file:// page:
    the storage key, named after the site's folder, keeps the choice to one site."""
    with chromium_context(color_scheme="light") as ctx:
        page = ctx.new_page()
        log = watch(page)
        check_theme_stays_with_its_site(page.goto, page.evaluate, page.click,
                                        site_of("air-quality").site, tmp_path)
        assert log.problems() == []


#: [data-rb-more, left edge faded, right edge faded, tabindex] of the first block
#: matching a selector; a faded edge is the mask's outer colour stop, not opaque.
_FADE_JS = """sel => {
  const el = document.querySelector(sel);
  const mask = getComputedStyle(el).maskImage;
  const tab = el.getAttribute("tabindex");
  if (mask === "none") return [el.getAttribute("data-rb-more"), false, false, tab];
  const stops = mask.match(/rgba?\\([^)]*\\)/g);
  const faded = c => c.startsWith("rgba(") && !c.endsWith(", 1)");
  return [el.getAttribute("data-rb-more"), faded(stops[0]), faded(stops[stops.length - 1]),
          tab];
}"""
_CAPTION_JS = """() => getComputedStyle(
  document.querySelector(".graph-scroll").parentNode.querySelector("figcaption"),
  "::before").content"""
_HINT = '"Scroll the graph sideways to see all of it. "'


def _graph_edges(page: Any) -> list[Any]:
    """The first graph's :data:`_FADE_JS` and what its caption's ``::before`` says."""
    return [*page.evaluate(_FADE_JS, ".graph-scroll"), page.evaluate(_CAPTION_JS)]


def test_a_graph_wider_than_the_page_says_so_at_its_edges(
        site_of: Callable[[str], BuiltSite]) -> None:
    """Overlay scrollbars (macOS, phones) show nothing until a graph is scrolled, so
    a graph cut at the page's edge looked whole.  It fades out at each edge it goes on
    past, as a wide table does, and the caption asks to scroll; a graph that fits has
    neither."""
    built = site_of("air-quality")
    fits = next(built.site.glob("workflow/wf-plan-*.html"))
    with chromium_context(viewport={"width": 1200, "height": 900}) as ctx:
        page = ctx.new_page()
        log = watch(page)
        page.goto((built.site / "workflow" / "index.html").as_uri())
        width = page.evaluate("document.querySelector('.graph-scroll').scrollWidth")
        assert width > 1200
        assert _graph_edges(page) == ["right", False, True, "0", _HINT]
        scroll = "x => { document.querySelector('.graph-scroll').scrollLeft = x; }"
        page.evaluate(scroll, 100)
        assert poll(lambda: _graph_edges(page)[0] == "left right", what="both edges")
        assert _graph_edges(page) == ["left right", True, True, "0", _HINT]
        page.evaluate(scroll, width)
        assert poll(lambda: _graph_edges(page)[0] == "left", what="the left edge")
        assert _graph_edges(page) == ["left", True, False, "0", _HINT]
        page.goto(fits.as_uri())
        assert _graph_edges(page) == [None, False, False, None, "none"]
        page.set_viewport_size({"width": 360, "height": 900})      # now it no longer fits
        assert poll(lambda: _graph_edges(page)[0] == "right", what="a narrow window")
        assert _graph_edges(page) == ["right", False, True, "0", _HINT]
        assert log.problems() == []


def test_a_table_or_code_block_wider_than_its_box_fades_at_its_edges(
        site_of: Callable[[str], BuiltSite]) -> None:
    """Like a graph, a wide table or code block cut at its box's edge looked whole
    under overlay scrollbars.  It fades out at each edge it goes on past, and the
    fade follows scrolling and resizing.  Such a block can be reached with Tab, to be
    scrolled by keyboard, and that focus lifts the fade; a block that fits is left
    alone, and paper shows every block whole."""
    quality = site_of("air-quality")
    with chromium_context(viewport={"width": 1200, "height": 900}) as ctx:
        page = ctx.new_page()
        log = watch(page)
        page.goto((quality.site / "audit" / "reused-in-manuscript.html").as_uri())
        table = ".table-wrap"
        assert page.evaluate(f"document.querySelector('{table}').scrollWidth") > 1200
        assert page.evaluate(_FADE_JS, table) == ["right", False, True, "0"]
        scroll = "x => { document.querySelector('.table-wrap').scrollLeft = x; }"
        page.evaluate(scroll, 100)
        assert poll(lambda: page.evaluate(_FADE_JS, table)[0] == "left right", what="both")
        assert page.evaluate(_FADE_JS, table) == ["left right", True, True, "0"]
        page.evaluate(scroll, 10_000)
        assert poll(lambda: page.evaluate(_FADE_JS, table)[0] == "left", what="the left")
        assert page.evaluate(_FADE_JS, table) == ["left", True, False, "0"]
        for _ in range(100):
            page.keyboard.press("Tab")
            if page.evaluate(f"document.activeElement.matches('{table}')"):
                break
        else:
            pytest.fail("Tab never reached the wide table")
        assert page.evaluate(_FADE_JS, table) == ["left", False, False, "0"]

        fits = next(site_of("evolutionary-search").site.glob("artifacts/cand-g00-06-*.html"))
        page.goto(fits.as_uri())
        blocks = [".highlight > pre", ".table-wrap:has(> table.listing)"]
        assert [page.evaluate(_FADE_JS, b) for b in blocks] == [[None, False, False, None]] * 2
        page.set_viewport_size({"width": 360, "height": 900})      # now neither fits
        assert poll(lambda: all(page.evaluate(_FADE_JS, b)[0] == "right" for b in blocks),
                    what="a narrow window")
        assert [page.evaluate(_FADE_JS, b) for b in blocks] == [["right", False, True, "0"]] * 2
        page.emulate_media(media="print")
        assert [page.evaluate(_FADE_JS, b) for b in blocks] == [["right", False, False, "0"]] * 2
        assert log.problems() == []


#: Per raw record: [its text has a line longer than the box, it scrolls sideways,
#: it is more than three lines tall]; every <details> opened first.
_RAW_JS = """() => {
  for (const d of document.querySelectorAll("details")) d.open = true;
  return [...document.querySelectorAll("pre.raw")].map(el => {
    const line = parseFloat(getComputedStyle(el).lineHeight);
    const longest = Math.max(...el.textContent.split("\\n").map(t => t.length));
    return [longest * 7 > el.clientWidth, el.scrollWidth > el.clientWidth + 1,
            el.clientHeight > 3 * line];
  });
}"""


@pytest.mark.parametrize("width", [1200, 390])
def test_raw_records_wrap_instead_of_running_off_sideways(
        site_of: Callable[[str], BuiltSite], width: int) -> None:
    """A verbatim trace record is often one JSON line of thousands of characters: it
    wraps down the page, so it can be read without scrolling across 30,000 px."""
    built = site_of("air-quality")
    pages = [built.site / "events" / "page-0001.html",
             *sorted(built.site.glob("workflow/wf-*.html"))]
    seen = 0
    with chromium_context(viewport={"width": width, "height": 900}) as ctx:
        page = ctx.new_page()
        log = watch(page)
        for path in pages:
            page.goto(path.as_uri())
            for long_line, scrolls, tall in page.evaluate(_RAW_JS):
                assert not scrolls, path.name
                if long_line:
                    assert tall, path.name
                    seen += 1
        assert log.problems() == []
    assert seen >= 20       # the transcript's long lines are there to be wrapped


@pytest.mark.parametrize("scheme", ["light", "dark"])
@pytest.mark.parametrize("name", SITES)
def test_axe_no_serious_violations(name: str, scheme: str,
                                   site_of: Callable[[str], BuiltSite]) -> None:
    built = site_of(name)
    pages = ["index.html", claim_href(_claims(built)[0].id),
             artifact_href(_artifact_with_viewer(built).id), "integrity.html",
             "workflow/index.html"]
    found: list[str] = []
    with chromium_context(color_scheme=scheme, viewport={"width": 1200, "height": 900}) as ctx:
        page = ctx.new_page()
        log = watch(page)
        for rel in pages:
            page.goto((built.site / rel).as_uri())
            found += [f"{rel}: {v}" for v in axe_serious(page)]
        assert log.problems() == []
    assert not found, "\n".join(found)


@contextmanager
def _serve(folder: Path) -> Iterator[str]:
    """Serve ``folder`` on 127.0.0.1 (a free port) for the duration of the block."""

    class Quiet(SimpleHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), partial(Quiet, directory=str(folder)))
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.1},
                              daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


def test_served_from_a_sub_path(site_of: Callable[[str], BuiltSite], tmp_path: Path) -> None:
    built = site_of("closed-loop-lab")
    served = tmp_path / "www"
    shutil.copytree(built.site, served / "some" / "sub" / "path")
    claim = claim_href(_claims(built)[0].id)
    with _serve(served) as origin, chromium_context() as ctx:
        base = f"{origin}/some/sub/path/"
        page = ctx.new_page()
        log = watch(page)
        statuses: list[tuple[str, int]] = []
        page.on("response", lambda r: statuses.append((r.url, r.status)))
        for rel in ("index.html", claim):
            page.goto(base + rel)
            assert page.locator("main h1").count() == 1
        page.focus("#rb-search")
        page.keyboard.type("xrd", delay=10)
        poll(lambda: page.locator("#rb-search-results a").count() > 0, timeout=10,
             what="search results over http")
        # Chromium asks the origin for /favicon.ico on its own (the layout declares no
        # icon); that request is the browser's, outside the site's folder.
        favicon = f"{origin}/favicon.ico"
        statuses = [(u, s) for u, s in statuses if u != favicon]
        errors = [e for e in log.console_errors if not e.endswith("@ " + favicon)]
        assert errors == [] and log.page_errors == [] and log.failed_requests == []
        bad = [(u, s) for u, s in statuses if s != 200 or not u.startswith(base)]
        assert not bad, bad
        loaded = {u.removeprefix(base) for u, _ in statuses}
        assert {"assets/site.css", "assets/site.js", "assets/theme-init.js",
                "search/docs.js", "assets/vendor/minisearch.min.js"} <= loaded
