"""Every example site is a closed, navigable folder.

* every internal ``href``/``src`` (also ``xlink:href`` inside inline SVG)
  resolves to a file that exists, and every ``#fragment`` names an element
  in the target page;
* ``src`` never points outside the site (the site makes no request);
* every HTML page is reachable from ``index.html`` by following links;
* every page kind exists: one page per claim, per artifact, per workflow
  node, every event page, and the fixed section pages.

Relative links that an agent wrote in its own Markdown (claim text, reviews,
Markdown payloads) point into the agent's workspace, not into the site, so
they are listed separately (see ``test_markdown_relative_links``).
"""

from __future__ import annotations

import importlib.util
import re
from collections import deque
from collections.abc import Callable
from pathlib import Path

import pytest
from fixtures.builders import BASE_EVENTS, ev, make_signer, payload_ref, write_chained_bundle
from fixtures.hostile import HostileBundle
from site_helpers import EXAMPLES, BuiltSite, Link, PageScan, build, html_pages, resolve, scan_html

from bundler.render.urls import artifact_href, claim_href, event_page, workflow_href

SITE_ROOT_FILES = ("index.html", "claims/index.html", "artifacts/index.html",
                   "workflow/index.html", "lineage.html", "steering.html", "events/index.html",
                   "integrity.html", "downloads.html", "search/docs.js",
                   "assets/site.css", "assets/site.js", "assets/theme-init.js",
                   "assets/pygments.css", "assets/vendor/minisearch.min.js",
                   "report/validation.json", "report/validation.sarif")
_CSS_URL = re.compile(r"url\(\s*['\"]?([^'\")]+)['\"]?\s*\)")

Scans = Callable[[BuiltSite], dict[str, PageScan]]


def _internal_links(scans: dict[str, PageScan]) -> list[tuple[str, Link]]:
    out = []
    for page, scan in scans.items():
        for link in scan.links:
            if link.in_markdown and link.attr == "href":
                continue  # agent-written; checked by test_markdown_relative_links
            if link.value.startswith("data:"):
                continue  # inline data: images (checked by the security tests)
            out.append((page, link))
    return out


def _broken_links(built: BuiltSite, scans: dict[str, PageScan]) -> tuple[int, list[str]]:
    broken: list[str] = []
    checked = 0
    for page, link in _internal_links(scans):
        target = resolve(page, link.value)
        if target is None:
            if not link.value.lower().startswith(("http://", "https://", "mailto:")):
                broken.append(f"{page}: <{link.tag} {link.attr}={link.value!r}> leaves the site")
            continue
        path, fragment = target
        checked += 1
        if not (built.site / path).is_file():
            broken.append(f"{page}: <{link.tag} {link.attr}={link.value!r}> -> missing {path}")
        elif fragment and path.endswith(".html") and fragment not in scans[path].ids:
            broken.append(f"{page}: <{link.tag} {link.attr}={link.value!r}> -> no "
                          f"id={fragment!r} in {path}")
    return checked, broken


@pytest.mark.parametrize("name", EXAMPLES)
def test_every_internal_link_resolves(name: str, site_of: Callable[[str], BuiltSite],
                                      scans_of: Scans) -> None:
    built = site_of(name)
    checked, broken = _broken_links(built, scans_of(built))
    assert checked > 100, f"only {checked} internal links found: is the scanner broken?"
    assert not broken, f"{len(broken)} broken link(s):\n" + "\n".join(broken[:40])


def test_hostile_ids_build_working_links(hostile: tuple[HostileBundle, BuiltSite],
                                         scans_of: Scans) -> None:
    """Ids with ``:``, ``@``, ``+``, ``/``, ``..`` and scheme-like prefixes still link."""
    _, built = hostile
    scans = scans_of(built)
    checked, broken = _broken_links(built, scans)
    assert checked > 100
    assert not broken, f"{len(broken)} broken link(s):\n" + "\n".join(broken[:40])
    seen = {"index.html"}
    queue = deque(["index.html"])
    while queue:
        page = queue.popleft()
        for link in scans[page].links:
            target = resolve(page, link.value) if link.attr in ("href", "xlink:href") else None
            if target and target[0] in scans and target[0] not in seen:
                seen.add(target[0])
                queue.append(target[0])
    assert seen == set(scans), sorted(set(scans) - seen)


def test_bytes_committed_as_text_then_svg_link_only_files_the_site_holds(
        tmp_path: Path) -> None:
    """One digest committed first as text, then as SVG (RB408): the SVG artifact's page
    linked ``files/<hex>.svg``, a copy the site makes by the first commitment only."""
    svg = b'<svg xmlns="http://www.w3.org/2000/svg" width="4" height="4"/>'
    path = tmp_path / "bundle"
    write_chained_bundle(path, [
        *BASE_EVENTS,
        ev("individual", "as-text", kind="notes", name="a", payload=payload_ref(svg)),
        ev("individual", "as-svg", kind="figure", name="b",
           payload=payload_ref(svg, "image/svg+xml")),
    ], payloads=[(svg, "text/plain")])
    result = build(path, tmp_path / "site", make_signer().verifier().to_text())
    assert {d.code for d in result.report.diagnostics} == {"RB408"}
    built = BuiltSite("two-types", path, result.output, result)
    scans = {rel: scan_html((built.site / rel).read_text(encoding="utf-8"))
             for rel in html_pages(built.site)}
    checked, broken = _broken_links(built, scans)
    assert checked > 50
    assert not broken, broken
    page = (built.site / artifact_href("as-svg")).read_text(encoding="utf-8")
    assert "&lt;svg xmlns=" in page, "the bytes are shown, as the text they were first committed as"
    assert "(shown as <code>text/plain</code>, the media type these bytes were first " \
        "committed with" in page
    assert "shown as" not in (built.site / artifact_href("as-text")).read_text(encoding="utf-8")


@pytest.mark.parametrize("name", EXAMPLES)
def test_event_anchors_exist(name: str, site_of: Callable[[str], BuiltSite],
                             scans_of: Scans) -> None:
    """``events/page-NNNN.html#e<seq>`` exists for every event in the log."""
    built = site_of(name)
    scans = scans_of(built)
    missing = [f"{event_page(e.seq)}#e{e.seq}" for e in built.result.report.bundle.events
               if f"e{e.seq}" not in scans[event_page(e.seq)].ids]
    assert not missing, missing[:20]


@pytest.mark.parametrize("name", EXAMPLES)
def test_src_and_css_urls_stay_inside(name: str, site_of: Callable[[str], BuiltSite],
                                      scans_of: Scans) -> None:
    built = site_of(name)
    bad = []
    for page, scan in scans_of(built).items():
        for link in scan.links:
            if link.attr == "href":
                continue
            if link.value.startswith("data:image/"):
                continue
            target = resolve(page, link.value)
            if target is None or not (built.site / target[0]).is_file():
                bad.append(f"{page}: <{link.tag} {link.attr}={link.value!r}>")
    for css in sorted(built.site.rglob("*.css")):
        rel = css.relative_to(built.site).as_posix()
        for url in _CSS_URL.findall(css.read_text(encoding="utf-8")):
            if url.startswith(("data:", "#")):
                continue
            target = resolve(rel, url)
            if target is None or not (built.site / target[0]).is_file():
                bad.append(f"{rel}: url({url})")
    assert not bad, "\n".join(bad[:40])


@pytest.mark.parametrize("name", EXAMPLES)
def test_every_page_reachable_from_index(name: str, site_of: Callable[[str], BuiltSite],
                                         scans_of: Scans) -> None:
    built = site_of(name)
    scans = scans_of(built)
    seen = {"index.html"}
    queue = deque(["index.html"])
    while queue:
        page = queue.popleft()
        for link in scans[page].links:
            if link.attr not in ("href", "xlink:href"):
                continue
            target = resolve(page, link.value)
            if target and target[0] in scans and target[0] not in seen:
                seen.add(target[0])
                queue.append(target[0])
    unreachable = sorted(set(scans) - seen)
    assert not unreachable, f"{len(unreachable)} page(s) unreachable: {unreachable[:20]}"


@pytest.mark.parametrize("name", EXAMPLES)
def test_every_page_kind_exists(name: str, site_of: Callable[[str], BuiltSite]) -> None:
    built = site_of(name)
    events = built.result.report.bundle.events
    expected = set(SITE_ROOT_FILES)
    if importlib.util.find_spec("bundler.render.pages.audit") is not None:
        expected.add("audit/index.html")
    claims = [e for e in events if e.type == "claim"]
    artifacts = [e for e in events if e.type == "individual"]
    workflow = [e for e in events if e.type == "workflow_node"]
    assert claims, "every example makes claims"
    expected |= {claim_href(e.id) for e in claims}
    expected |= {artifact_href(e.id) for e in artifacts}
    expected |= {workflow_href(e.id) for e in workflow}
    expected |= {event_page(e.seq) for e in events}
    missing = sorted(p for p in expected if not (built.site / p).is_file())
    assert not missing, missing[:30]
    # exactly one page per claim and per artifact: nothing stale, nothing merged
    on_disk = {p.relative_to(built.site).as_posix() for p in built.site.glob("claims/*.html")}
    assert on_disk == {claim_href(e.id) for e in claims} | {"claims/index.html"}
    on_disk = {p.relative_to(built.site).as_posix() for p in built.site.glob("artifacts/*.html")}
    assert on_disk == {artifact_href(e.id) for e in artifacts} | {"artifacts/index.html"}
    on_disk = {p.relative_to(built.site).as_posix() for p in built.site.glob("workflow/*.html")}
    assert on_disk == {workflow_href(e.id) for e in workflow} | {"workflow/index.html"}


@pytest.mark.parametrize("name", EXAMPLES)
def test_graph_nodes_link_to_pages(name: str, site_of: Callable[[str], BuiltSite],
                                   scans_of: Scans) -> None:
    """Every claim page has an evidence graph whose nodes link to existing pages."""
    built = site_of(name)
    scans = scans_of(built)
    for e in built.result.report.bundle.events:
        if e.type != "claim":
            continue
        page = claim_href(e.id)
        links = [lk for lk in scans[page].links if lk.in_graph and lk.tag == "a"]
        assert links, f"{page}: no linked node in its evidence graph"
        targets = {resolve(page, lk.value) for lk in links}
        assert (page, "") in targets or any(t and t[0] == page for t in targets), \
            f"{page}: the claim's own node does not link to its page"
        for t in targets:
            assert t is not None and (built.site / t[0]).is_file(), (page, t)


def test_markdown_relative_links(site_of: Callable[[str], BuiltSite], scans_of: Scans) -> None:
    dangling = []
    for name in EXAMPLES:
        built = site_of(name)
        for page, scan in scans_of(built).items():
            for link in scan.links:
                if not link.in_markdown or link.attr != "href":
                    continue
                target = resolve(page, link.value)
                if target is None:
                    continue  # external: the security tests check its rel
                if not (built.site / target[0]).is_file():
                    dangling.append(f"{name}/{page}: {link.value!r}")
    assert not dangling, "\n".join(dangling[:20])
