"""A fixed sample of every fuzzing campaign, and proof that each judge can fail.

The samples are seeded, so a run is the same in every suite run; longer runs
with other seeds are by hand (``python -m fuzzing``, see :mod:`fuzzing.campaigns`).
"""

from __future__ import annotations

import shutil
import zlib
from pathlib import Path

import pytest

from bundler.load import archive
from bundler.render.page_deps import PageDeps
from bundler.render.pages.plan import PageTask
from fuzzing import campaigns
from fuzzing.campaigns import (
    CAMPAIGNS,
    MARK,
    judge,
    judge_browser,
    judge_outside,
    judge_site,
    run_cli,
)
from fuzzing.mutators import hostile_bodies

SMALL = "unsupported-gain"
#: campaign -> runs in the suite's sample (about 25 s in all on the 2-core machine)
SAMPLE = {"raw": 24, "archive": 40, "render": 6, "incremental": 3}


@pytest.mark.parametrize("name", sorted(SAMPLE))
def test_a_seeded_sample_keeps_the_contract(name: str, tmp_path: Path) -> None:
    tally = CAMPAIGNS[name](7, SAMPLE[name], SMALL, tmp_path)
    assert tally.findings == []
    assert sum(tally.counts.values()) == SAMPLE[name]
    # a sample that never got past the schema, or never built a site, tests nothing
    assert tally.counts.get("refused", 0) < SAMPLE[name] / 2, tally.counts
    if name in ("render", "incremental"):
        assert tally.counts.get("0", 0) + tally.counts.get("same", 0) >= 1, tally.counts


@pytest.mark.parametrize("bundle", sorted(p.name for p in campaigns.EXAMPLES.iterdir()
                                           if (p / "events.jsonl").is_file()))
def test_each_example_authored_again_unchanged_is_valid(bundle: str, tmp_path: Path) -> None:
    """The variants start from a valid bundle (a redacted payload included), so what
    makes one invalid is the hostile value put in, not the harness."""
    src = campaigns.Source(bundle)
    src.author(tmp_path / "b", list(src.events))
    assert run_cli("validate", str(tmp_path / "b"), "--trust-key", campaigns.PUB) == (0, "")


def test_an_internal_error_is_a_finding(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The archive bug the campaign found, put back: every archive run reports it."""
    def broken(*_args: object) -> bool:
        raise zlib.error("Error -3 while decompressing data: invalid block type")
    monkeypatch.setattr(archive, "_expand_zip", broken)
    monkeypatch.setattr(archive, "_expand_tar", broken)
    tally = campaigns.archive(7, 5, SMALL, tmp_path)
    assert len(tally.findings) == 5
    assert "RB900" in tally.findings[0] and "keep/finding-0" in tally.findings[0]
    assert judge(1, "review-bundler: internal error [RB900]: ...") is not None
    assert judge("raised Traceback ...", "") is not None
    assert judge(1, "ERROR RB300 ...") is None


def test_the_site_judge_sees_markup_and_a_missing_csp(tmp_path: Path) -> None:
    site = tmp_path / "site"
    rc, err = run_cli("build", str(campaigns.EXAMPLES / SMALL), "-o", str(site),
                      "--trust-key", campaigns.PUB, "-j", "1")
    assert (rc, judge(rc, err), judge_site(site)) == (0, None, None)
    page = site / "index.html"
    text = page.read_text(encoding="utf-8")
    page.write_text(text.replace("<h1", MARK + "<h1", 1), encoding="utf-8")
    assert "the bundle's markup reached the page" in str(judge_site(site))
    page.write_text(text.replace('http-equiv="Content-Security-Policy"', ""), encoding="utf-8")
    assert judge_site(site) == "index.html: no CSP"


@pytest.mark.parametrize("name", ["raw", "archive", "render"])
def test_a_site_written_for_an_invalid_bundle_is_judged_too(
        name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``build`` writes a site for an invalid bundle (exit 1) as well: its pages are
    held to the same contract as a valid bundle's."""
    def invalid_build(*args: str) -> tuple[int, str]:
        if "-o" in args:
            site = Path(args[args.index("-o") + 1])
            site.mkdir(parents=True, exist_ok=True)
            (site / "index.html").write_text(f"<p>{MARK}</p>", encoding="utf-8")
        return 1, "ERROR RB300 ..."
    monkeypatch.setattr(campaigns, "run_cli", invalid_build)
    runs = {"raw": 4, "archive": 10, "render": 2}[name]
    tally = CAMPAIGNS[name](7, runs, SMALL, tmp_path)
    assert len(tally.findings) == {"raw": 1, "archive": 2, "render": 2}[name], tally
    assert "index.html: the bundle's markup reached the page" in tally.findings[0]


@pytest.mark.browser
def test_a_render_sample_is_inert_in_a_browser(tmp_path: Path) -> None:
    tally = campaigns.render(7, 2, SMALL, tmp_path, browser_every=1)
    assert (tally.findings, tally.browsed) == ([], 2), tally


def _two_page_site(site: Path) -> None:
    """The small example's site with only the overview and the claim list: a browser
    judge reads two pages, and the test stays short."""
    rc, _ = run_cli("build", str(campaigns.EXAMPLES / SMALL), "-o", str(site),
                    "--trust-key", campaigns.PUB, "-j", "1")
    assert rc == 0
    for page in site.rglob("*.html"):
        if page.relative_to(site).as_posix() not in ("index.html", "claims/index.html"):
            page.unlink()


@pytest.mark.browser
@pytest.mark.parametrize("name", ["raw", "archive", "render"])
def test_browser_every_loads_the_sites_a_campaign_writes_invalid_or_not(
        name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``--browser 1`` in each campaign that writes sites: a site that passes the file
    judges but makes a request in Chromium is a finding, though its bundle was invalid."""
    built = tmp_path / "built"
    _two_page_site(built)
    claims = built / "claims" / "index.html"
    claims.write_text(claims.read_text(encoding="utf-8").replace(
        "<h1", '<img src="http://127.0.0.1:9/beacon.png"><h1', 1), encoding="utf-8")

    def invalid_build(*args: str) -> tuple[int, str]:
        if "-o" in args:
            shutil.copytree(built, args[args.index("-o") + 1])
        return 1, "ERROR RB300 ..."
    monkeypatch.setattr(campaigns, "run_cli", invalid_build)
    runs = {"raw": 4, "archive": 5, "render": 1}[name]     # one build each
    tally = CAMPAIGNS[name](7, runs, SMALL, tmp_path / "work", browser_every=1)
    assert (tally.built, tally.browsed, len(tally.findings)) == (1, 1, 1), tally
    assert "in Chromium: " in tally.findings[0] and "127.0.0.1:9/beacon.png" in tally.findings[0]


@pytest.mark.browser
@pytest.mark.parametrize("shift", [0, 1, 4])
def test_hostile_payload_bytes_are_inert_in_every_viewer(shift: int, tmp_path: Path) -> None:
    """Every payload of the bundle replaced by bytes that attack a viewer: with 0, the
    viewer of its own media type; else, bytes and media types handed round, so that
    each payload is shown by another viewer (HTML's sandboxed preview among them)."""
    src = campaigns.Source(SMALL)
    bodies = hostile_bodies(MARK)
    kinds = sorted(bodies)
    present = [p for p in src.manifest["payloads"] if p["state"] == "present"]
    assert len(present) >= 6
    swap = {}
    for i, p in enumerate(present):
        kind = p["media_type"] if shift == 0 and p["media_type"] in bodies \
            else kinds[(i + shift) % len(kinds)]
        # distinct bytes: one digest under two media types is another case (RB408)
        swap[p["digest"]] = (bodies[kind] + b"\n%d" % i, kind)
    assert not shift or {k for _, k in swap.values()} >= {"text/html", "image/svg+xml"}
    src.author(tmp_path / "b", list(src.events), swap)
    site = tmp_path / "site"
    rc, err = run_cli("build", str(tmp_path / "b"), "-o", str(site),
                      "--trust-key", campaigns.PUB, "-j", "1")
    assert (rc, judge(rc, err), judge_site(site)) == (0, None, None), err
    assert judge_browser(site) is None


@pytest.mark.browser
def test_the_browser_judge_sees_a_script_run_a_request_and_a_broken_search(
        tmp_path: Path) -> None:
    site = tmp_path / "site"
    _two_page_site(site)
    assert judge_browser(site) is None
    page, docs = site / "claims" / "index.html", site / "search" / "docs.js"
    text, data = page.read_text(encoding="utf-8"), docs.read_bytes()

    # markup that escaped: with the CSP its handler is refused (a console error),
    # without it the handler runs
    page.write_text(text.replace("<h1", '<img src=x onerror="alert(1)"><h1', 1), encoding="utf-8")
    with_csp, _, without = str(judge_browser(site)).partition("; in Chromium without the CSP: ")
    assert "'console'" in with_csp and "inline event handler" in with_csp, with_csp
    assert "'dialogs'" in without and "alert '1'" in without, without

    # a page without its CSP fetches from the network
    page.write_text(text.replace('http-equiv="Content-Security-Policy"', 'name="x"').replace(
        "<h1", '<img src="http://127.0.0.1:9/beacon.png"><h1', 1), encoding="utf-8")
    found = str(judge_browser(site))
    assert found.startswith("in Chromium: ") and "127.0.0.1:9/beacon.png" in found, found

    # search data that site.js cannot use
    page.write_text(text, encoding="utf-8")
    docs.write_bytes(b"window.RB_SEARCH_DOCS = null;\n")
    found = str(judge_browser(site))
    assert "'search'" in found and "unavailable" in found, found
    docs.write_bytes(data)
    assert judge_browser(site) is None


@pytest.mark.browser
def test_a_render_sample_is_inert_in_firefox_and_webkit_too(tmp_path: Path) -> None:
    tally = campaigns.render(8, 1, SMALL, tmp_path, browser_every=1, also=("firefox", "webkit"))
    assert (tally.findings, tally.browsed) == ([], 1), tally


@pytest.mark.parametrize(("browser", "shown", "script", "said"), [
    ("firefox", "Firefox", b"undefinedFunction();\n", "undefinedFunction"),  # a script error
    ("webkit", "WebKit", b"alert('from bad.js');\n", "from bad.js"),         # a dialog
])
@pytest.mark.browser
def test_the_other_browsers_pass_sees_a_request_and_what_a_script_did(
        tmp_path: Path, browser: str, shown: str, script: bytes, said: str) -> None:
    site = tmp_path / "site"
    _two_page_site(site)
    assert judge_browser(site, also=(browser,)) is None
    page = site / "claims" / "index.html"
    page.write_text(page.read_text(encoding="utf-8").replace(
        'http-equiv="Content-Security-Policy"', 'name="x"').replace(
        "<h1", '<img src="http://beacon.invalid/x.png"><script src="../bad.js"></script><h1',
        1), encoding="utf-8")
    (site / "bad.js").write_bytes(script)
    found = str(judge_browser(site, also=(browser,)))
    _, _, there = found.partition(f"in {shown}: ")
    assert "beacon.invalid/x.png" in there and said in there, found


def test_the_outside_judge_sees_a_linked_file_copied(tmp_path: Path) -> None:
    site, outside = tmp_path / "site", tmp_path / "outside"
    (site / "bundle").mkdir(parents=True)
    outside.write_bytes(b"a file outside the bundle\n")
    (site / "bundle" / "events.jsonl").write_bytes(b"{}\n")
    assert judge_outside(site, outside) is None
    (site / "bundle" / "events.jsonl").write_bytes(outside.read_bytes())
    assert judge_outside(site, outside) == \
        "bundle/events.jsonl holds a file from outside the bundle"


def test_a_stale_page_carried_over_is_a_finding(tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """Page records that trust any old page (never comparing reads) must be caught by
    the cold-build comparison of the incremental campaign."""
    def trusting(self: PageDeps, task: PageTask) -> object:
        from bundler.output.deps_file import parse_record
        line = self.previous.get(task.path)
        return parse_record(line) if line is not None else None
    monkeypatch.setattr(PageDeps, "unchanged", trusting)
    tally = campaigns.incremental(3, 4, SMALL, tmp_path)
    assert any("differs from a cold build" in f for f in tally.findings), tally
    shutil.rmtree(tmp_path)
