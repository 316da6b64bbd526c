"""Shared helpers for browser tests (headless Chromium through Playwright).

Import from test modules as ``from browser_util import ...`` (pytest puts
``tests/`` on ``sys.path`` because ``tests/`` itself is not a package).

Why these helpers exist:
- ``playwright install`` cannot download here, so Chromium is the system one,
  launched with the flags DESIGN-NOTES §8 lists.
- The site's CSP forbids string evaluation inside the page, so waiting is done
  by polling from Python (``poll``), never ``page.wait_for_function("...")``.
- A page that "works" while logging CSP violations, failing to load an asset or
  touching the network is broken; ``watch`` records all three so a test can
  assert the log is empty.
"""

from __future__ import annotations

import re
import shutil
import time
import urllib.parse
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import pytest

CHROMIUM = Path("/usr/bin/chromium")
LAUNCH_ARGS: tuple[str, ...] = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
    "--disable-sync",
)
LOCAL_SCHEMES = ("file:", "data:", "blob:", "about:")

T = TypeVar("T")


def require_chromium() -> None:
    """Skip the calling test when Chromium or Playwright is not installed."""
    if not CHROMIUM.is_file():
        pytest.skip(f"browser test needs {CHROMIUM} (apt-get install chromium)")
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:  # pragma: no cover - depends on the environment
        pytest.skip("browser test needs the playwright package")


@contextmanager
def chromium_context(**context_options: Any) -> Iterator[Any]:
    """Yield a fresh Playwright ``BrowserContext`` (isolated localStorage), then close all.

    ``context_options`` go to ``browser.new_context`` (``viewport``,
    ``color_scheme``, ...).
    """
    require_chromium()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=list(LAUNCH_ARGS))
        try:
            context = browser.new_context(**context_options)
            try:
                yield context
            finally:
                context.close()
        finally:
            browser.close()


@dataclass
class PageLog:
    """What went wrong while a page was open; every list should stay empty."""

    console_errors: list[str] = field(default_factory=list)
    page_errors: list[str] = field(default_factory=list)
    failed_requests: list[str] = field(default_factory=list)
    network_requests: list[str] = field(default_factory=list)
    requests: list[str] = field(default_factory=list)

    def problems(self) -> list[str]:
        """All recorded problems, one line each, prefixed with their category."""
        return (
            [f"console error: {m}" for m in self.console_errors]
            + [f"page error: {m}" for m in self.page_errors]
            + [f"failed request: {m}" for m in self.failed_requests]
            + [f"network request: {m}" for m in self.network_requests]
        )


def watch(page: Any) -> PageLog:
    """Attach listeners to ``page`` and return the log they fill.

    Console warnings are kept out: Chromium warns about harmless things
    (e.g. ``<meta http-equiv>`` CSP directives it ignores). CSP violations are
    console *errors*, so they are caught.
    """
    log = PageLog()

    def on_console(msg: Any) -> None:
        if msg.type == "error":
            log.console_errors.append(f"{msg.text} @ {msg.location.get('url', '')}")

    def on_request(request: Any) -> None:
        log.requests.append(request.url)
        if not request.url.startswith(LOCAL_SCHEMES):
            log.network_requests.append(request.url)

    def on_failed(request: Any) -> None:
        log.failed_requests.append(f"{request.url} ({request.failure})")

    page.on("console", on_console)
    page.on("pageerror", lambda exc: log.page_errors.append(str(exc)))
    page.on("request", on_request)
    page.on("requestfailed", on_failed)
    return log


def poll(
    probe: Callable[[], T], *, timeout: float = 5.0, interval: float = 0.05, what: str = "condition"
) -> T:
    """Call ``probe`` until it returns something truthy; return that or fail after ``timeout``."""
    deadline = time.monotonic() + timeout
    last: T = probe()
    while not last:
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout}s waiting for {what} (last: {last!r})")
        time.sleep(interval)
        last = probe()
    return last


def axe_serious(page: Any) -> list[str]:
    """Run axe-core on ``page``; return its serious and critical violations as readable lines."""
    from axe_playwright_python.sync_playwright import Axe  # type: ignore[import-untyped]

    # preload=False: axe would otherwise XHR the stylesheets, which the page CSP
    # (rightly) blocks and logs as a console error that is axe's, not the site's.
    results = Axe().run(page, options={"resultTypes": ["violations"], "preload": False})
    found: list[str] = []
    for violation in results.response.get("violations", []):
        if violation.get("impact") not in ("serious", "critical"):
            continue
        for node in violation.get("nodes", []):
            target = " ".join(str(t) for t in node.get("target", []))
            found.append(f"{violation['id']} ({violation['impact']}): {target}")
    return found


#: Read in each frame through the DevTools protocol, which the page CSP does not bind.
FLAGS_JS = "Object.keys(window).filter(k => k.startsWith('__pwned'))"
#: On a page with a frame of ``b.html`` from the same folder: how reading that frame,
#: then that file with a synchronous XHR, fails (the name of each error), or what
#: was read.  A file:// page can do neither in the browsers readers use.
READS_ANOTHER_FILE = (
    "(() => { const out = [];"
    " try { out.push(frames[0].document.body.textContent) } catch (e) { out.push(e.name) }"
    " try { const x = new XMLHttpRequest(); x.open('GET', 'b.html', false); x.send();"
    " out.push(x.responseText) } catch (e) { out.push(e.name) }"
    " return out })()")


def visit_inert(site: Path, pages: list[str], *, bypass_csp: bool,
                search_on: tuple[str, ...] = (), term: str = "pwned",
                settle_ms: int = 150) -> dict[str, list[str]]:
    """Load ``pages`` of ``site`` from file:// and record what hostile input could cause.

    Returns lists, each empty when the site is inert: ``flags`` (``window.__pwned*``
    set in any frame whose scripts may run), ``dialogs`` (every hostile vector that
    runs calls ``alert``), ``requests`` off file:// that the CSP did not refuse,
    ``console`` errors (but for the sandboxed preview, ``about:srcdoc``, where a
    refused payload is the point) and ``page errors``; ``searches`` holds the search
    status on each page of ``search_on`` after typing ``term`` (hostile results are
    put in the page by ``site.js``, which is the DOM injection to rule out).
    """
    found: dict[str, list[str]] = {"flags": [], "dialogs": [], "requests": [], "console": [],
                                   "page errors": [], "searches": []}
    with chromium_context(bypass_csp=bypass_csp, viewport={"width": 1200, "height": 900}) as ctx:
        page = ctx.new_page()
        current = {"rel": ""}

        def on_dialog(dialog: Any) -> None:
            found["dialogs"].append(f"{current['rel']}: {dialog.type} {dialog.message!r}")
            dialog.dismiss()

        def on_console(msg: Any) -> None:
            url = str(msg.location.get("url", ""))
            if msg.type == "error" and not url.startswith("about:srcdoc"):
                found["console"].append(f"{current['rel']}: {msg.text} @ {url}")

        page.on("dialog", on_dialog)
        page.on("console", on_console)
        page.on("pageerror", lambda e: found["page errors"].append(f"{current['rel']}: {e}"))
        # Chromium reports some fetches its CSP refused as requests that then failed
        # with "csp" (which of its parsers saw the tag first is a race): those never
        # left the browser.  Anything else off file:// counts, also a failed one.
        attempts: list[tuple[str, Any]] = []
        page.on("request", lambda r: attempts.append((current["rel"], r))
                if not r.url.startswith(LOCAL_SCHEMES) else None)
        for rel in pages:
            current["rel"] = rel
            page.goto((site / rel).as_uri(), wait_until="load")
            if rel in search_on:
                found["searches"].append(f"{rel}: {_search(page, term)}")
            page.wait_for_timeout(settle_ms)  # let deferred scripts, timers and refreshes run
            for frame in page.frames:
                try:
                    flags = frame.evaluate(FLAGS_JS)
                except Exception as exc:  # a frame with scripts disabled cannot run any
                    if frame == page.main_frame:
                        raise
                    flags = []
                    assert "srcdoc" in frame.url or frame.url == "about:blank", (frame.url, exc)
                found["flags"] += [f"{rel} [{frame.url[:40]}]: {f}" for f in flags]
        found["requests"] = [f"{rel}: {r.url} ({r.failure or 'not refused'})"
                             for rel, r in attempts if r.failure != "csp"]
    return found


def _search(page: Any, term: str) -> str:
    """Type ``term`` in the search box, wait for the answer, step into the results;
    the status line it ended on ("3 results", "No results", "Search is unavailable...")."""
    page.focus("#rb-search")
    page.keyboard.type(term, delay=5)
    status = poll(lambda: settled(page.text_content("#rb-search-status")),
                  timeout=10, what="the search status")
    page.keyboard.press("ArrowDown")
    return status


#: The search status of a page that found something ("index.html: 3 results").
_FOUND = re.compile(r": [1-9][0-9]* results?\b")


def pop_searches(found: dict[str, list[str]], search_on: tuple[str, ...]) -> None:
    """Take the ``searches`` out of a :func:`visit_inert` record, holding each page of
    ``search_on`` to having found something: the hostile claims, whose titles
    ``site.js`` then put in the page (the DOM injection to rule out)."""
    searches = found.pop("searches")
    assert len(searches) == len(search_on) and all(
        _FOUND.search(s) for s in searches), searches


def settled(status: str | None) -> str:
    """The search status once it is final, else "" (for :func:`poll`)."""
    return "" if not status or status.startswith("Loading") else status.strip()


def check_edge_fades(evaluate: Callable[[str], Any]) -> None:
    """On a page whose wide blocks scroll sideways (loaded, ``evaluate`` runs an
    expression in it): each is marked as going on to the right and fades there
    (a CSS mask), and the first, scrolled to its end, fades at its left instead."""
    marked = poll(lambda: evaluate(
        "Array.from(document.querySelectorAll('[data-rb-more]'))"
        ".map(e => [e.dataset.rbMore, getComputedStyle(e).maskImage])"),
        what="a block marked as going on")
    assert marked and all(more == "right" and mask.startswith("linear-gradient")
                          for more, mask in marked), marked
    evaluate("(() => { const e = document.querySelector('[data-rb-more]');"
             " e.scrollLeft = e.scrollWidth; return e.scrollLeft })()")
    poll(lambda: evaluate("document.querySelector('[data-rb-scroll]')"
                          ".getAttribute('data-rb-more')") == "left",
         what="the fade to move to the left edge")


THEME_JS = "document.documentElement.getAttribute('data-theme')"


def theme_key(site: Path) -> str:
    """The storage key of a file:// site's light/dark choice (theme-init.js): named
    after the site's folder, as the browser spells its URL path."""
    return "rb-theme:" + urllib.parse.urlsplit(site.as_uri()).path.rstrip("/") + "/"


def check_theme_stays_with_its_site(goto: Callable[[str], Any], evaluate: Callable[[str], Any],
                                    click: Callable[[str], Any], site: Path, tmp: Path) -> None:
    """On file://, with the system light: a dark choice made in one copy of ``site`` holds
    on its pages, in another folder too, but not in a second copy beside it, and other
    local files see no cookie of it.  Last, a copy whose URL holds a ``;``, which would
    end the cookie's path attribute, still keeps its choice from page to page."""
    copies = {name: tmp / name for name in ("a", "b")}
    for copy in copies.values():
        shutil.copytree(site, copy)
    (tmp / "note.html").write_text("<p>another local file</p>", encoding="utf-8")
    goto((copies["a"] / "index.html").as_uri())
    assert evaluate(THEME_JS) is None
    click("#rb-theme-toggle")
    assert (evaluate(THEME_JS), evaluate(f"localStorage.getItem('{theme_key(copies['a'])}')")) \
        == ("dark", "dark")
    goto((copies["a"] / "claims" / "index.html").as_uri())
    assert evaluate(THEME_JS) == "dark"
    for page in ("index.html", "claims/index.html"):
        goto((copies["b"] / page).as_uri())
        assert evaluate(THEME_JS) is None, f"the other site's {page} took this site's choice"
    goto((tmp / "note.html").as_uri())
    assert "rb-theme" not in evaluate("document.cookie"), evaluate("document.cookie")
    odd = tmp / "x;y" / "site"
    shutil.copytree(site, odd)
    literal = "file://" + urllib.parse.quote(str(odd), safe="/;")
    assert ";" in literal
    goto(literal + "/index.html")
    click("#rb-theme-toggle")
    assert evaluate(THEME_JS) == "dark"
    goto(literal + "/claims/index.html")
    assert evaluate(THEME_JS) == "dark"
