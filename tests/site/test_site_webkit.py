"""Example sites, and the hostile bundle's, in WebKit (Safari's engine) from file://.

Reviewers open these sites from disk on macOS too, in Safari.  No Safari runs
here, so the nearest thing does: Debian's WebKitGTK MiniBrowser, the same
WebCore (its user agent says ``AppleWebKit/605.1.15 ... Safari/605.1.15``), on a
private Xvfb display (``webkit_util``).  WebKit has rules of its own for what
this site leans on: a ``<meta>`` CSP on file:// pages and ``srcdoc`` frames,
sandboxed frames, localStorage shared between file:// pages (the theme choice),
CSS masks (the edge fades), and what it does with a hostile page once the CSP
is gone.
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
from fixtures.hostile import HostileBundle
from site_helpers import BuiltSite, html_pages, without_csp
from webkit_util import search, visit_inert, webkit

from bundler.model.events import ClaimEvent
from bundler.render.urls import claim_href

pytestmark = pytest.mark.browser

SEARCH_ON = ("index.html", "claims/index.html")


def _claims(built: BuiltSite) -> list[ClaimEvent]:
    return [e for e in built.result.report.bundle.events if isinstance(e, ClaimEvent)]


@pytest.mark.parametrize("name", ["air-quality", "closed-loop-lab"])
def test_every_page_of_an_example_loads_cleanly_in_webkit(
        name: str, site_of: Callable[[str], BuiltSite]) -> None:
    built = site_of(name)
    title = built.result.report.bundle.metadata.title  # type: ignore[union-attr]
    pages = html_pages(built.site)
    assert len(pages) > 40
    with webkit() as wk:
        assert "AppleWebKit/" in wk.evaluate("navigator.userAgent")
        for rel in pages:
            wk.goto((built.site / rel).as_uri())
            h1, shown, ran = wk.evaluate(  # site.js gives the toggle its state
                "[document.querySelectorAll('main h1').length, document.title,"
                " document.getElementById('rb-theme-toggle').hasAttribute('aria-pressed')]")
            assert (h1, shown.endswith(title)) == (1, True), rel
            assert ran, f"{rel}: site.js did not run"
        assert (wk.dialogs, wk.requests) == ([], [])


def test_webkit_keeps_file_pages_apart(tmp_path: Path) -> None:
    """The browser under test treats file:// as a reader's does (DESIGN-NOTES §4): a
    page can read neither a same-folder frame nor a local file with XHR."""
    (tmp_path / "a.html").write_text('<iframe src="b.html"></iframe>', encoding="utf-8")
    (tmp_path / "b.html").write_text("<p>secret</p>", encoding="utf-8")
    with webkit() as wk:
        wk.goto((tmp_path / "a.html").as_uri())
        assert wk.evaluate(READS_ANOTHER_FILE) == ["SecurityError", "NetworkError"]


def test_search_typed_in_webkit_finds_a_claim(site_of: Callable[[str], BuiltSite]) -> None:
    built = site_of("air-quality")
    claim = _claims(built)[0]
    word = max(re.findall(r"[A-Za-z]{5,}", claim.text), key=len).lower()
    want = "../" + claim_href(claim.id)
    with webkit() as wk:
        wk.goto((built.site / "artifacts" / "index.html").as_uri())
        status = search(wk, word)
        assert re.fullmatch(r"\d+ results?(, showing the first 20)?", status), status
        hrefs = wk.evaluate("Array.from(document.querySelectorAll('#rb-search-results a'))"
                            ".map(a => a.getAttribute('href'))")
        assert want in hrefs, (word, hrefs)
        assert (wk.dialogs, wk.requests) == ([], [])


def test_theme_follows_the_system_then_the_toggle_across_pages_in_webkit(
        site_of: Callable[[str], BuiltSite]) -> None:
    built = site_of("air-quality")
    background = "getComputedStyle(document.body).backgroundColor"
    with webkit(dark=True) as wk:
        wk.goto((built.site / "index.html").as_uri())
        assert wk.evaluate("matchMedia('(prefers-color-scheme: dark)').matches") is True
        dark = wk.evaluate(background)
        wk.click("#rb-theme-toggle")
        assert wk.evaluate(f"localStorage.getItem('{theme_key(built.site)}')") == "light"
        light = wk.evaluate(background)
        assert dark != light, dark
        # the choice holds on a page of another folder (file:// storage is shared)
        wk.goto((built.site / "claims" / "index.html").as_uri())
        assert (wk.evaluate("document.documentElement.dataset.theme"),
                wk.evaluate(background)) == ("light", light)
    with webkit(dark=False) as wk:
        wk.goto((built.site / "index.html").as_uri())
        assert wk.evaluate("matchMedia('(prefers-color-scheme: dark)').matches") is False
        assert wk.evaluate(background) == light


def test_the_theme_choice_stays_with_its_own_site_in_webkit(
        site_of: Callable[[str], BuiltSite], tmp_path: Path) -> None:
    """WebKit shares both storage and cookies between file:// pages: the storage key
    and the cookie's path both keep the choice to one site."""
    with webkit(dark=False) as wk:
        check_theme_stays_with_its_site(wk.goto, wk.evaluate, wk.click,
                                        site_of("air-quality").site, tmp_path)


def test_a_wide_table_fades_at_its_edge_in_webkit(site_of: Callable[[str], BuiltSite]) -> None:
    built = site_of("air-quality")
    with webkit(width=1200) as wk:
        wk.goto((built.site / "audit" / "reused-in-manuscript.html").as_uri())
        check_edge_fades(wk.evaluate)


def test_hostile_site_is_inert_in_webkit(hostile: tuple[HostileBundle, BuiltSite]) -> None:
    """As shipped (the page CSP on): no attack string runs, opens a dialog or makes a
    request, in the page or any frame."""
    _, built = hostile
    found = visit_inert(built.site, html_pages(built.site), search_on=SEARCH_ON)
    pop_searches(found, SEARCH_ON)
    assert {k: v for k, v in found.items() if v} == {}, json.dumps(found, indent=1)[:4000]


def test_hostile_site_is_inert_in_webkit_without_its_csp(
        hostile: tuple[HostileBundle, BuiltSite], tmp_path: Path) -> None:
    """Escaping alone must hold: a copy of the site with the CSP taken out of every
    page, so markup the CSP would hide is caught.  Requests are not judged here:
    the sandboxed preview of an HTML payload may fetch its image (the sandbox, not
    escaping, stops its scripts), and the first pass holds the CSP to refusing it."""
    _, built = hostile
    site = tmp_path / "site"
    pages = without_csp(built.site, site)
    found = visit_inert(site, pages, search_on=SEARCH_ON)
    pop_searches(found, SEARCH_ON)
    assert (found["flags"], found["dialogs"]) == ([], []), json.dumps(found, indent=1)[:4000]


def test_the_webkit_helper_sees_a_dialog_a_flag_and_a_request(tmp_path: Path) -> None:
    """The checks above can fail: a dialog, a flag in a frame and an unrefused request
    are each reported, and a request the CSP refuses never reaches the proxy."""
    csp = "default-src 'none'; img-src 'self'; script-src 'self'"
    (tmp_path / "bad.js").write_text("alert('hi');", encoding="utf-8")
    (tmp_path / "page.html").write_text(
        f'<meta http-equiv="Content-Security-Policy" content="{csp}">'
        '<img src="http://beacon.invalid/refused.png"><script src="bad.js"></script>',
        encoding="utf-8")
    (tmp_path / "open.html").write_text(
        '<img src="http://beacon.invalid/open.png">'
        '<iframe srcdoc="<script>window.__pwned_frame = 1</script>"></iframe>',
        encoding="utf-8")
    found = visit_inert(tmp_path, ["page.html", "open.html"])
    assert found == {"flags": ["open.html [frame 0]: __pwned_frame"],
                     "dialogs": ["page.html: hi"],
                     "requests": ["open.html: http://beacon.invalid/open.png"],
                     "searches": []}, found
