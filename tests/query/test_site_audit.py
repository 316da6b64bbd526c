"""The audit pages of a built site: one per query, linked, counted for the overview."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from urllib.parse import urldefrag

import pytest

from bundler.graph.index import BundleIndex, build_index
from bundler.query import QUERIES, run_query
from bundler.render.pages.audit import audit_pages
from bundler.render.pages.base import BuildContext
from bundler.render.site import BuildOptions, build_site
from bundler.render.urls import Linker
from bundler.verify import VerifyOptions, verify_bundle

from .conftest import EXAMPLES, demo_key

HREF = re.compile(r'href="([^"]+)"')


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("site") / "multi-agent-paper"
    build_site(EXAMPLES / "multi-agent-paper", BuildOptions(output=out,
                                                             trusted_keys=(demo_key(),)))
    return out


def test_every_query_has_a_page_and_the_index_counts_rows(site: Path) -> None:
    pages = sorted(p.name for p in (site / "audit").glob("*.html"))
    assert pages == sorted([f"{n}.html" for n in QUERIES] + ["index.html"])
    index = (site / "audit" / "index.html").read_text("utf-8")
    assert re.findall(r'<a href="\.\./audit/([a-z-]+)\.html">', index) == list(QUERIES)
    assert ('<a href="../audit/unsupported-claims.html">unsupported-claims</a></td><td>final '
            'claims') in index


def test_audit_links_resolve(site: Path) -> None:
    for page in (site / "audit").glob("*.html"):
        for href in HREF.findall(page.read_text("utf-8")):
            target, frag = urldefrag(href)
            assert not href.startswith(("http:", "https:", "javascript:", "/")), href
            path = (page.parent / target).resolve() if target else page
            assert path.is_file(), f"{page.name}: {href}"
            if frag:
                assert f'id="{frag}"' in path.read_text("utf-8"), f"{page.name}: {href}"


def test_an_empty_answer_says_whether_anything_was_checked(site: Path,
                                                          tmp_path: Path) -> None:
    """The green "nothing matches" only where something was checked; the scope line
    says what (multi-agent-paper ships its transcript; unsupported-gain has no record)."""
    page = (site / "audit" / "transcript-mismatch.html").read_text("utf-8")
    assert '<p class="callout callout-ok">No rows: nothing in this bundle matches.</p>' in page
    assert ('<p class="query-scope">Compared 13 trace records with the 1 transcript the '
            'bundle ships.</p>') in page
    def idle(index: str) -> list[str]:
        return re.findall(r'audit/([a-z-]+)\.html">[^<]*</a>(?:(?!</tr>).)*'
                          r'<span class="muted">nothing to check</span>', index)

    assert idle((site / "audit" / "index.html").read_text("utf-8")) == [
        "evaluator-disagreement"]       # one evaluator per individual in that bundle
    for jobs in (1, 2):     # the audit counts reach the index in process and from workers
        out = tmp_path / f"gain-{jobs}"
        build_site(EXAMPLES / "unsupported-gain", BuildOptions(
            output=out, trusted_keys=(demo_key(),), jobs=jobs))
        page = (out / "audit" / "transcript-mismatch.html").read_text("utf-8")
        assert "callout-ok" not in page
        assert ('<p class="callout callout-info">No rows, because there was nothing to '
                'check.</p>\n<p class="query-scope">The log holds no trace record, so nothing '
                'was compared.</p>') in page
        assert idle((out / "audit" / "index.html").read_text("utf-8")) == [
            "evaluator-disagreement", "transcript-mismatch"], jobs
        # the overview lists findings, then the checks that could not find any
        overview = (out / "index.html").read_text("utf-8")
        section = overview[overview.index('id="audit-h"'):overview.index("All audit queries")]
        assert re.findall(r'<li><a href="audit/([a-z-]+)\.html">', section) == [
            "unsupported-claims", "value-mismatch", "accepted-without-independent-evaluator",
            "reused-in-manuscript"], jobs
        assert ('<p>Nothing to check for <a href="audit/evaluator-disagreement.html">'
                'evaluator-disagreement</a> and <a href="audit/transcript-mismatch.html">'
                'transcript-mismatch</a>: the bundle holds nothing they examine.</p>'
                ) in section, jobs
    overview = (site / "index.html").read_text("utf-8")
    assert ('<p>Nothing to check for <a href="audit/evaluator-disagreement.html">'
            'evaluator-disagreement</a>: the bundle holds nothing it examines.</p>') in overview


def test_rows_link_to_claims_artifacts_and_events(site: Path) -> None:
    html = (site / "audit" / "inferred-support.html").read_text("utf-8")
    assert "<strong>2</strong> rows" in html
    hrefs = HREF.findall(html)
    assert any(h.startswith("../claims/claim-quadruple-") for h in hrefs)
    assert any(h.startswith("../artifacts/data-fit-") for h in hrefs)
    assert "../events/page-0001.html#e113" in hrefs
    trace = (site / "audit" / "claim-trace.html").read_text("utf-8")
    assert re.search(r'href="\.\./claims/claim-general-[0-9a-f]{8}\.html#paths-h"', trace)


def test_overview_links_queries_with_findings(site: Path) -> None:
    overview = (site / "index.html").read_text("utf-8")
    section = overview[overview.index('id="audit-h"'):]
    section = section[:section.index("</section>")]
    linked = re.findall(r'href="audit/([a-z-]+)\.html"', section)
    assert "unsupported-claims" in linked and "inferred-support" in linked
    assert "missing-evidence" not in linked and "claim-trace" not in linked


@pytest.fixture(scope="module")
def context() -> Callable[[str], BuildContext]:
    def make(name: str) -> BuildContext:
        report = verify_bundle(EXAMPLES / name, VerifyOptions(trusted_keys=(demo_key(),)))
        idx: BundleIndex = build_index(report.bundle)
        return BuildContext(report, idx, Linker(idx))
    return make


def test_audit_pages_fill_the_overview_counts(context: Callable[[str], BuildContext]) -> None:
    ctx = context("closed-loop-lab")
    pages = audit_pages(ctx)
    assert [p.path for p in pages] == ["audit/index.html",
                                       *(f"audit/{n}.html" for n in QUERIES)]
    expected = [(n, f"audit/{n}.html",
                 0 if n in ("claim-trace", "introduced-by") else
                 len(run_query(ctx.idx, n).rows)) for n in QUERIES]
    assert ctx.audit_pages == expected
    assert dict((n, c) for n, _, c in expected)["steering-effects"] == 2
