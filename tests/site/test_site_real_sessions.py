"""Real agent sessions (``shared/fixtures/transcripts``) through the whole pipeline.

The example bundles write their transcripts from seeded generators; these
four are sessions real agents wrote (Claude Code, Codex CLI, SWE-agent,
OpenHands), recorded as a tracer would (:mod:`fixtures.real_sessions`).  The
bundle must verify clean, every line must reach its trace record unchanged,
and each session must be readable on its artifact page: a JSON Lines session
row by row with no row torn (they are whole, so a torn one is the viewer's
fault), a single JSON document as a tree.  In Chromium, the pages load from
disk with no console error and no request, and axe finds nothing serious in
the rows.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from contextlib import ExitStack
from html import unescape
from pathlib import Path

import pytest
from browser_util import axe_serious, chromium_context, watch
from fixtures.builders import make_signer
from fixtures.real_sessions import JSON_LINES, Session, write_real_sessions
from site_helpers import BuiltSite, build

from bundler.graph.index import BundleIndex
from bundler.query import run_query
from bundler.query.loading import open_index
from bundler.render.pages.events import RAW_PREVIEW
from bundler.render.urls import artifact_href, event_href
from bundler.shown import on_page
from bundler.verify import VerifyOptions
from bundler.verify.result import Trust

#: The sessions SOURCES.txt lists, by folder: a missing one fails, not skips.
TOOLS = {"claude-code", "codex", "swe-agent", "openhands"}
_RAW = re.compile(r'<details class="trace-record"><summary>Raw source record</summary>'
                  r'<pre class="raw">(.*?)</pre>', re.S)
_ROW = re.compile(r'<a class="json-index" href="([^"]+)"[^>]*>row (\d+)</a>')


_INDEX: dict[Path, BundleIndex] = {}


def idx_of(built: BuiltSite) -> BundleIndex:
    """The index of the bundle (verified once per module)."""
    if built.bundle not in _INDEX:
        with ExitStack() as stack:
            _INDEX[built.bundle] = open_index(built.bundle, VerifyOptions(), stack)[1]
    return _INDEX[built.bundle]


@pytest.fixture(scope="module")
def real(tmp_path_factory: pytest.TempPathFactory,
         transcripts_dir: Path) -> Iterator[tuple[list[Session], BuiltSite]]:
    root = tmp_path_factory.mktemp("real-sessions")
    sessions = write_real_sessions(root / "bundle", transcripts_dir)
    key = make_signer("real sessions").verifier().to_text()
    result = build(root / "bundle", root / "site", key, jobs=2)
    yield sessions, BuiltSite("real-sessions", root / "bundle", result.output, result)


def test_every_real_session_is_recorded_and_the_bundle_verifies_clean(
        real: tuple[list[Session], BuiltSite]) -> None:
    sessions, built = real
    assert {s.tool for s in sessions} == TOOLS
    report = built.result.report
    assert report is not None
    assert (report.trust, report.verdict().errors, report.verdict().warnings) == \
        (Trust.PINNED, 0, 0)
    records = sum(len(s.records) for s in sessions)
    assert records == sum(len(s.lines) for s in sessions if s.path.suffix in JSON_LINES) > 800
    assert report.bundle.line_count == records + 3 * len(sessions)   # run, stream, individual


def test_every_line_reaches_its_trace_record_unchanged(
        real: tuple[list[Session], BuiltSite]) -> None:
    sessions, built = real
    shown = [unescape(m) for page in sorted((built.site / "events").glob("page-*.html"))
             for m in _RAW.findall(page.read_text(encoding="utf-8"))]
    expected = [on_page(line[:RAW_PREVIEW]) for s in sessions for line in s.lines
                if s.path.suffix in JSON_LINES]
    assert len(shown) == len(expected)
    assert shown == expected


def test_each_record_quotes_its_line_of_the_shipped_session(
        real: tuple[list[Session], BuiltSite]) -> None:
    """transcript-mismatch compares every record with the payload line it cites (both
    are the real line here), and the site's audit page says so."""
    sessions, built = real
    idx = idx_of(built)
    cited = {r.source.transcript for r in idx.trace_records.values()}
    assert cited == {idx.by_id[s.individual].name for s in sessions if s.records}
    assert run_query(idx, "transcript-mismatch").rows == ()
    page = (built.site / "audit" / "transcript-mismatch.html").read_text(encoding="utf-8")
    assert '<p class="callout callout-ok">No rows: nothing in this bundle matches.</p>' in page
    assert (f'<p class="query-scope">Compared {sum(len(s.records) for s in sessions)} trace '
            'records with the 2 transcripts the bundle ships.</p>') in page


def test_each_record_links_to_the_session_it_quotes(
        real: tuple[list[Session], BuiltSite]) -> None:
    """On the log pages, every trace record names the artifact that ships its transcript,
    at the row it quotes (and the artifact's own event links to its page too)."""
    sessions, built = real
    pages = "".join(p.read_text(encoding="utf-8")
                    for p in sorted((built.site / "events").glob("page-*.html")))
    for s in sessions:
        link = f'href="../{artifact_href(s.individual)}'
        assert pages.count(link + '"') == 1, s.tool
        assert pages.count(link) == len(s.records) + 1, s.tool
        for line in range(1, len(s.records) + 1):
            assert pages.count(f'{link}#row-{line}"') == 1, (s.tool, line)
    assert pages.count('<span class="ref-field">transcript</span>') == \
        sum(len(s.records) for s in sessions)


def test_json_lines_sessions_read_row_by_row_with_no_row_torn(
        real: tuple[list[Session], BuiltSite]) -> None:
    sessions, built = real
    for s in (s for s in sessions if s.path.suffix in JSON_LINES):
        html = (built.site / artifact_href(s.individual)).read_text(encoding="utf-8")
        viewer = html[html.index('<div class="viewer viewer-rows">'):]
        found = _ROW.findall(viewer)
        rows = [int(n) for _, n in found]
        assert len(rows) >= 50 and rows == list(range(1, len(rows) + 1)), (s.tool, rows[:5])
        # each row links to the record that quotes it, on the log page that shows it
        seqs = {rid: ev.seq for rid, ev in idx_of(built).trace_records.items()}
        assert [href for href, _ in found] == [
            "../" + event_href(seqs[rid]) for rid in s.records[:len(rows)]], s.tool
        assert (f"{len(s.records)} trace records in the log quote lines 1–{len(s.records)} "
                f"of <code>{idx_of(built).by_id[s.individual].name}</code>") in html
        assert "row-bad" not in viewer and "not JSON" not in html, s.tool
        text = unescape(re.sub(r"<[^>]+>", "", viewer))
        for line in s.lines[:20]:          # each row's members are on the page, by name
            for key in json.loads(line):
                assert on_page(json.dumps(key, ensure_ascii=False)) + ": " in text, (s.tool, key)
        # every row is quoted: the rows past the list's budget go on, further on
        first = len(_ROW.findall(viewer.partition('<p class="rows-quoted">')[0]))
        assert 50 <= first < len(rows) < len(s.lines), s.tool
        assert re.search(rf"Showing the first {first} rows of this [0-9.]+ KiB file, and "
                         rf"{len(rows) - first} further on that trace records quote\.", html)


def test_single_document_sessions_are_json_trees(real: tuple[list[Session], BuiltSite]) -> None:
    sessions, built = real
    for s in (s for s in sessions if s.path.suffix not in JSON_LINES):
        html = (built.site / artifact_href(s.individual)).read_text(encoding="utf-8")
        assert '<div class="viewer viewer-json">' in html, s.tool
        assert "shown as text" not in html, s.tool


@pytest.mark.browser
def test_real_session_pages_load_clean_in_chromium(real: tuple[list[Session], BuiltSite]) -> None:
    sessions, built = real
    pages = [artifact_href(s.individual) for s in sessions]
    pages += sorted(p.relative_to(built.site).as_posix()
                    for p in (built.site / "events").glob("page-*.html"))
    with chromium_context(color_scheme="dark") as ctx:
        page = ctx.new_page()
        log = watch(page)
        for rel in pages:
            page.goto((built.site / rel).as_uri())
            assert page.locator("h1").count() == 1, rel
        rows = page.locator(".json-rows > ol").first.locator(":scope > li")
        page.goto((built.site / pages[0]).as_uri())
        assert rows.count() >= 50
        assert axe_serious(page) == []
        # a record's transcript link opens the session at the row it quotes, in view
        s = next(s for s in sessions if len(s.records) >= 40)
        page_path, _, anchor = event_href(idx_of(built).trace_records[s.records[39]].seq) \
            .partition("#")
        page.goto((built.site / page_path).as_uri() + "#" + anchor)
        page.locator(f'a[href$="{artifact_href(s.individual)}#row-40"]').click()
        page.wait_for_url(f"**/{artifact_href(s.individual)}#row-40")
        target = page.locator(":target")
        assert target.get_attribute("id") == "row-40"
        assert target.locator(".row-label").inner_text() == "row 40:"
        assert target.evaluate("e => { const r = e.getBoundingClientRect();"
                               " return r.top >= 0 && r.top < innerHeight; }")
        # a quoted row past the list is drawn further on, and its link lands on it
        further = page.locator("p.rows-quoted + ol > li.row").last
        far = further.get_attribute("id")
        assert far is not None and int(far.removeprefix("row-")) > rows.count()
        page.goto((built.site / artifact_href(s.individual)).as_uri() + "#" + far)
        assert page.locator(":target").get_attribute("id") == far
        assert page.locator(":target .row-label a").get_attribute("href") is not None
        assert page.locator(":target").evaluate("e => { const r = e.getBoundingClientRect();"
                                                " return r.top >= 0 && r.top < innerHeight; }")
        # a row past both: its link lands on the note that says so, in view
        last = len(s.records)
        page.goto((built.site / artifact_href(s.individual)).as_uri() + f"#row-{last}")
        note = page.locator("p.rows-not-drawn:has(> :target)")
        assert "past what this page has room for" in note.inner_text()
        assert note.evaluate("e => { const r = e.getBoundingClientRect();"
                             " return r.top >= 0 && r.top < innerHeight; }")
        assert log.problems() == []
