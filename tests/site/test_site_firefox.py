"""Example sites, and the hostile bundle's, in headless Firefox (Debian's ESR) from file://.

The other browser tests run in Chromium.  Firefox differs where this site
relies on the browser: how it applies a ``<meta>`` CSP to file:// pages and
frames, whether scripts loaded from another folder of a file:// site run,
storage across file:// pages (the theme choice), CSS masks (the edge fades),
and focus events in a window that is not focused.  Two of these hid bugs:

* search started loading its data only on the box's focus event, which a
  headless Firefox never fires, so typing left it at "Loading search…";
* Firefox gives each file:// page a localStorage of its own, so a theme chosen
  on one page was gone on the next.  The choice now goes in a cookie too on
  file://, which Firefox shares between file:// pages.  (The tests had missed
  it: the prefs recommended for automation make file:// pages one origin.)
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path

import pytest
from browser_util import (
    READS_ANOTHER_FILE,
    check_edge_fades,
    check_theme_stays_with_its_site,
    pop_searches,
    theme_key,
)
from firefox_util import firefox, search, visit_inert
from fixtures.hostile import HostileBundle
from site_helpers import BuiltSite, html_pages, without_csp

from bundler.model.events import ClaimEvent
from bundler.render.urls import claim_href

pytestmark = pytest.mark.browser


def _claims(built: BuiltSite) -> list[ClaimEvent]:
    return [e for e in built.result.report.bundle.events if isinstance(e, ClaimEvent)]


@pytest.mark.parametrize("name", ["air-quality", "closed-loop-lab"])
def test_every_page_of_an_example_loads_cleanly_in_firefox(
        name: str, site_of: Callable[[str], BuiltSite]) -> None:
    built = site_of(name)
    title = built.result.report.bundle.metadata.title  # type: ignore[union-attr]
    pages = html_pages(built.site)
    assert len(pages) > 40
    problems: list[str] = []
    with firefox() as ff:
        for rel in pages:
            problems += [f"{rel}: {p}" for p in ff.goto((built.site / rel).as_uri()).problems()]
            h1, shown, ran = ff.evaluate(  # site.js gives the toggle its state
                "[document.querySelectorAll('main h1').length, document.title,"
                " document.getElementById('rb-theme-toggle').hasAttribute('aria-pressed')]")
            assert (h1, shown.endswith(title)) == (1, True), rel
            assert ran, f"{rel}: site.js did not run"
        problems += [f"{pages[-1]}: {p}" for p in ff.goto("about:blank").problems()]
        assert ff.version.split(".")[0].isdigit()
    assert problems == []


def test_search_typed_in_firefox_finds_a_claim(site_of: Callable[[str], BuiltSite]) -> None:
    built = site_of("air-quality")
    claim = _claims(built)[0]
    word = max(re.findall(r"[A-Za-z]{5,}", claim.text), key=len).lower()
    want = "../" + claim_href(claim.id)
    with firefox() as ff:
        ff.goto((built.site / "artifacts" / "index.html").as_uri())
        status = search(ff, word)
        assert re.fullmatch(r"\d+ results?(, showing the first 20)?", status), status
        hrefs = ff.evaluate("Array.from(document.querySelectorAll('#rb-search-results a'))"
                            ".map(a => a.getAttribute('href'))")
        assert want in hrefs, (word, hrefs)
        assert ff.goto("about:blank").problems() == []


def test_theme_follows_the_system_then_the_toggle_across_pages_in_firefox(
        site_of: Callable[[str], BuiltSite]) -> None:
    built = site_of("air-quality")
    background = "getComputedStyle(document.body).backgroundColor"
    with firefox(dark=True) as ff:
        ff.goto((built.site / "index.html").as_uri())
        dark = ff.evaluate(background)
        ff.click("#rb-theme-toggle")
        assert ff.evaluate(f"localStorage.getItem('{theme_key(built.site)}')") == "light"
        light = ff.evaluate(background)
        assert dark != light, dark
        # the choice holds on another page, of another folder (the file:// cookie)
        ff.goto((built.site / "claims" / "index.html").as_uri())
        assert (ff.evaluate("document.documentElement.dataset.theme"),
                ff.evaluate(background)) == ("light", light)
        # chosen again there, it holds back on the first page, whose own storage
        # still says light: the latest choice wins
        ff.click("#rb-theme-toggle")
        ff.goto((built.site / "index.html").as_uri())
        assert ff.evaluate(f"localStorage.getItem('{theme_key(built.site)}')") == "light"
        assert (ff.evaluate("document.documentElement.dataset.theme"),
                ff.evaluate(background)) == ("dark", dark)
        assert ff.goto("about:blank").problems() == []
    with firefox(dark=False) as ff:
        ff.goto((built.site / "index.html").as_uri())
        assert ff.evaluate(background) == light


def test_the_theme_choice_stays_with_its_own_site_in_firefox(
        site_of: Callable[[str], BuiltSite], tmp_path: Path) -> None:
    """Firefox keeps the choice in a cookie on file:// (storage is per page), so the
    cookie's path is what keeps it to one site; an old ``path=/`` fails here."""
    with firefox(dark=False) as ff:
        check_theme_stays_with_its_site(ff.goto, ff.evaluate, ff.click,
                                        site_of("air-quality").site, tmp_path)
        assert ff.goto("about:blank").problems() == []


def test_a_wide_table_fades_at_its_edge_in_firefox(site_of: Callable[[str], BuiltSite]) -> None:
    built = site_of("air-quality")
    with firefox(width=1200) as ff:
        ff.goto((built.site / "audit" / "reused-in-manuscript.html").as_uri())
        check_edge_fades(ff.evaluate)
        assert ff.goto("about:blank").problems() == []


def test_firefox_keeps_file_pages_apart(tmp_path: Path) -> None:
    """The browser under test treats file:// as a reader's does (DESIGN-NOTES §4): a
    page cannot read a same-folder frame, nor a local file with XHR, nor another
    page's localStorage.  Firefox under automation relaxes all three unless told not
    to, and then pages that need them pass."""
    (tmp_path / "a.html").write_text('<iframe src="b.html"></iframe>', encoding="utf-8")
    (tmp_path / "b.html").write_text("<p>secret</p>", encoding="utf-8")
    with firefox() as ff:
        ff.goto((tmp_path / "a.html").as_uri())
        ff.evaluate("localStorage.setItem('k', 'v')")
        assert ff.evaluate(READS_ANOTHER_FILE) == ["SecurityError", "NetworkError"]
        ff.goto((tmp_path / "b.html").as_uri())
        assert ff.evaluate("localStorage.getItem('k')") is None


SEARCH_ON = ("index.html", "claims/index.html")


def test_hostile_site_is_inert_in_firefox(hostile: tuple[HostileBundle, BuiltSite]) -> None:
    """As the Chromium test (test_site_xss.py) with the CSP: no attack string runs,
    opens a dialog or makes a request, and no console error but in the sandboxed
    preview, where refusing the payload is the point."""
    _, built = hostile
    found = visit_inert(built.site, html_pages(built.site), search_on=SEARCH_ON, term="pwned")
    pop_searches(found, SEARCH_ON)
    assert {k: v for k, v in found.items() if v} == {}, json.dumps(found, indent=1)[:4000]


def test_hostile_site_is_inert_in_firefox_without_its_csp(
        hostile: tuple[HostileBundle, BuiltSite], tmp_path: Path) -> None:
    """Escaping alone must hold in Gecko too: BiDi cannot bypass a page's CSP, so the
    pages are copies with the CSP taken out.  Requests and console errors are not
    judged: the sandboxed preview of an HTML payload may fetch its image and log
    what it refuses; the pass above holds the CSP to refusing them."""
    _, built = hostile
    site = tmp_path / "site"
    found = visit_inert(site, without_csp(built.site, site), search_on=SEARCH_ON,
                        term="pwned")
    pop_searches(found, SEARCH_ON)
    assert (found["flags"], found["dialogs"]) == ([], []), json.dumps(found, indent=1)[:4000]


def test_the_firefox_helper_sees_a_refused_request_a_dialog_and_a_script_error(
        tmp_path: Path) -> None:
    """The checks above can fail: each kind of problem, in a page of its own.  (A
    host that does not resolve: Firefox reports no request to a loopback address
    from a file:// page, and upgrades http to https before it reports one.)"""
    csp = "default-src 'none'; img-src 'self'; script-src 'self'"
    (tmp_path / "bad.js").write_text("alert('hi'); undefinedFunction();", encoding="utf-8")
    (tmp_path / "page.html").write_text(
        f'<meta http-equiv="Content-Security-Policy" content="{csp}">'
        '<img src="http://beacon.invalid/refused.png"><script src="bad.js"></script>',
        encoding="utf-8")
    (tmp_path / "open.html").write_text('<img src="http://beacon.invalid/open.png">',
                                        encoding="utf-8")
    with firefox() as ff:
        ff.goto((tmp_path / "page.html").as_uri())
        ff.settle(100)
        seen = ff.goto((tmp_path / "open.html").as_uri())
        assert any("beacon.invalid/refused.png" in c and "img-src" in c
                   for c in seen.console), seen
        assert any("undefinedFunction" in c for c in seen.console), seen
        assert seen.dialogs == ["alert 'hi'"], seen
        assert seen.requests == [], seen        # refused by the CSP: it never left
        ff.settle(100)
        seen = ff.goto("about:blank")
        assert [r.split("://")[1] for r in seen.requests] == ["beacon.invalid/open.png"], seen
