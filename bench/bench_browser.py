"""Headless Chromium on the built 100k-event site, opened from file://.

Three user-visible waits, each the median over several fresh browser
contexts (empty memory cache; the OS page cache is warm, as it is for a
reader who just built or unpacked the site):

* **index**: ``page.goto(index.html)`` until the ``load`` event;
* **claim page**: the same for the *largest* claim page (the worst case);
* **first search**: on the loaded index, from focusing the search box (which
  starts loading MiniSearch and ``search/docs.js``) and typing a word every
  claim contains, until result links are on the page.  Waiting is polled
  from Python: the site's CSP forbids the string evaluation that
  ``wait_for_function`` needs.

It also reports the largest HTML page and ``search/docs.js``, whose sizes
drive those times.  Chromium is the system one, launched as DESIGN-NOTES §8
says (``playwright install`` cannot download here).

    .venv/bin/python -m bench.bench_browser [--site .bench/sites/...] [--runs 5]
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench.bench_build import Row, cold_builds, log, render_rows, site_dir, verdict
from bench.common import bundle

CHROMIUM = Path("/usr/bin/chromium")
LAUNCH_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
               "--disable-component-update", "--no-first-run", "--disable-sync"]
MAX_PAGE_S = 1.0
MAX_SEARCH_S = 1.5
#: Every synthetic claim's text says "... the 0.5 threshold" or similar.
QUERY = "threshold"
POLL_S = 0.005


def largest(paths: list[Path]) -> Path:
    return max(paths, key=lambda p: (p.stat().st_size, str(p)))


def html_pages(site: Path) -> list[Path]:
    return [p for p in site.rglob("*.html")
            if p.relative_to(site).parts[0] not in ("bundle", "files")]


def _poll(probe: Callable[[], object], timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not probe():
        if time.monotonic() > deadline:
            raise SystemExit(f"browser bench: timed out after {timeout} s waiting for {what}")
        time.sleep(POLL_S)


def _load(context: Any, url: str, problems: list[str]) -> tuple[Any, float]:
    page = context.new_page()
    page.on("pageerror", lambda exc: problems.append(f"{url}: {exc}"))
    t0 = time.perf_counter()
    page.goto(url, wait_until="load", timeout=60_000)
    return page, time.perf_counter() - t0


def _search(page: Any) -> float:
    results = page.locator("#rb-search-results a")
    t0 = time.perf_counter()
    page.focus("#rb-search")
    page.fill("#rb-search", QUERY)
    _poll(lambda: results.count() > 0, 60, f"search results for {QUERY!r}")
    return time.perf_counter() - t0


def measure(site: Path, runs: int) -> list[Row]:
    from playwright.sync_api import sync_playwright

    if not CHROMIUM.is_file():
        return [Row("browser timings", f"skipped: {CHROMIUM} is not installed")]
    index = site / "index.html"
    claim = largest(list((site / "claims").glob("*.html")))
    times: dict[str, list[float]] = {"index": [], "claim": [], "search": []}
    problems: list[str] = []
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=LAUNCH_ARGS)
        try:
            for i in range(runs + 1):            # run 0 warms Chromium itself; not counted
                context = browser.new_context()
                try:
                    page, t_index = _load(context, index.as_uri(), problems)
                    t_search = _search(page)
                    _, t_claim = _load(context, claim.as_uri(), problems)
                finally:
                    context.close()
                if i:
                    times["index"].append(t_index)
                    times["search"].append(t_search)
                    times["claim"].append(t_claim)
                    log(f"  browser run {i}/{runs}: index {t_index:.3f} s, first search "
                        f"{t_search:.3f} s, claim page {t_claim:.3f} s")
        finally:
            browser.close()
    if problems:
        raise SystemExit(f"browser bench: page errors {problems[:3]}")
    med = {k: statistics.median(v) for k, v in times.items()}
    big = largest(html_pages(site))
    docs = site / "search" / "docs.js"
    mib = 2 ** 20
    return [
        Row(f"browser: load index.html (median of {runs})", f"{med['index']:.3f} s",
            target=f"< {MAX_PAGE_S:g} s", ok=verdict(med["index"] < MAX_PAGE_S)),
        Row(f"browser: load largest claim page ({claim.stat().st_size / 1024:.0f} KiB)",
            f"{med['claim']:.3f} s", target=f"< {MAX_PAGE_S:g} s",
            ok=verdict(med["claim"] < MAX_PAGE_S)),
        Row(f"browser: first search {QUERY!r} incl. loading search data",
            f"{med['search']:.3f} s", target=f"< {MAX_SEARCH_S:g} s",
            ok=verdict(med["search"] < MAX_SEARCH_S)),
        Row(f"largest HTML page ({big.relative_to(site).as_posix()})",
            f"{big.stat().st_size / mib:.2f} MiB"),
        Row("search/docs.js", f"{docs.stat().st_size / mib:.2f} MiB"),
    ]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.bench_browser", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--events", type=int, default=100_000, help="bundle size (default 100k)")
    ap.add_argument("--site", type=Path, help="an already built site (default: build it)")
    ap.add_argument("--runs", type=int, default=5)
    args = ap.parse_args(argv)
    site = args.site
    if site is None:
        path = bundle(args.events, log=log)
        site = site_dir(path)
        if not (site / "index.html").is_file():
            log(f"building the {args.events:,}-event site")
            cold_builds(path, args.events, 1)
    print(render_rows(measure(site.resolve(), args.runs)))   # a file:// URI needs a full path
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
