"""No object page grows with the bundle: every list on it is cut at ``MAX_LISTED``.

Two hostile shapes, built small and rendered for real:

* **fan-out**: one input used by ``MAX_LISTED + 7`` operators, evaluated as many
  times and cited by a claim with as many bindings.  Those lists grow with the
  bundle, not with the object's own event; each page must show exactly
  ``MAX_LISTED`` and say how many it left out.
* **amplification**: evidence nodes that all cite the same trace records.  Shown
  under every node, a bundle of under 1 MB made a 90 MB phase page; each record
  must appear verbatim once, and the raw text of a page stays within its budget.
"""

from __future__ import annotations

import html
import re
from pathlib import Path

import pytest
from fixtures.builders import StepClock, make_signer

from bundler.author import BundleWriter
from bundler.render.pages.base import MAX_LISTED, PER_PAGE
from bundler.render.pages.events import DETAILS_PREVIEW
from bundler.render.pages.lists import RECORDS_PER_NODE
from bundler.render.pages.workflow import RAW_BUDGET
from bundler.render.site import BuildOptions, build_site
from bundler.render.urls import artifact_href, claim_href, event_page, slug, workflow_href

FAN = MAX_LISTED + 7
RUN = {"run": "run-1", "stream": "agent-1"}


def _writer(path: Path, title: str) -> BundleWriter:
    return BundleWriter.create(path, title=title, signer=make_signer(), clock=StepClock(),
                               checkpoint_every=1000)


def _start(w: BundleWriter) -> None:
    w.append("run", id="run-1", title="bounds", objective="hostile shapes", **RUN)
    w.append("stream", id="agent-1", kind="agent", name="agent", run="run-1")
    w.append("stream", id="eval-1", kind="evaluator", name="judge", run="run-1")


def _build(bundle: Path, out: Path) -> Path:
    key = make_signer().verifier().to_text()
    build_site(bundle, BuildOptions(output=out, trusted_keys=(key,), jobs=1))
    return out


def _more(html: str) -> list[int]:
    """The counts of every "And N more" note on a page, in page order."""
    return [int(n.replace(",", ""))
            for n in re.findall(r'class="more-note muted">And ([\d,]+) more', html)]


@pytest.fixture(scope="module")
def fan_out(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("fan")
    with _writer(tmp / "bundle", "fan-out") as w:
        _start(w)
        seed = w.put_payload(b"benchmark\n", "text/plain", "bench.txt")
        w.append("individual", id="bench", kind="dataset", name="bench", payload=seed, **RUN)
        cands = []
        for i in range(FAN):
            w.append("operator", id=f"op-{i}", op="mutate", parents=["bench"], **RUN)
            w.append("fitness", id=f"fit-{i}", target="bench", evaluator={
                "name": "judge", "version": "1"}, metric="m", score=float(i),
                run="run-1", stream="eval-1")
            cands.append(w.append("individual", id=f"cand-{i}", kind="program",
                                  name=f"c{i}", produced_by=f"op-{i}", **RUN).id)
        w.append("claim", id="claim-wide", name="wide", text="Every candidate ran.",
                 evidence=cands, final=True,
                 bindings=[{"evidence": c, "field": "#rows", "value": 1} for c in cands], **RUN)
    return _build(tmp / "bundle", tmp / "site")


def test_an_artifact_page_lists_at_most_max_listed_users_and_evaluations(fan_out: Path) -> None:
    page = (fan_out / artifact_href("bench")).read_text("utf-8")
    assert page.count('href="../artifacts/') - page.count('href="../artifacts/index') \
        <= MAX_LISTED + 5
    used = page.split('id="use-h"')[1]
    assert used.count('<li><a href="../events/') == MAX_LISTED   # operators link to the log
    assert used.count("<tr><td>") == MAX_LISTED                  # one row per evaluation
    assert _more(page) == [FAN - MAX_LISTED, FAN - MAX_LISTED]  # evaluations, users


def test_a_claim_page_lists_at_most_max_listed_bindings_and_evidence(fan_out: Path) -> None:
    page = (fan_out / claim_href("claim-wide")).read_text("utf-8")
    bindings = page.split('id="bind-h"')[1].split('id="paths-h"')[0]
    assert bindings.count('<td><span class="stance') == MAX_LISTED
    cited = bindings.split("<h3>Evidence cited</h3>")[1]
    assert cited.count("<li>") == MAX_LISTED
    assert _more(bindings) == [FAN - MAX_LISTED, FAN - MAX_LISTED]


def test_short_lists_have_no_note(fan_out: Path) -> None:
    page = (fan_out / artifact_href("cand-0")).read_text("utf-8")
    assert "more-note" not in page and "wide" in page


@pytest.fixture(scope="module")
def amplified(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Phase ``wf-shared``: 40 evidence nodes citing the same 30 records of 2,000
    characters.  Phase ``wf-budget``: 10 nodes citing 20 records each, all different
    (400,000 characters, past a page's budget)."""
    tmp = tmp_path_factory.mktemp("amp")
    with _writer(tmp / "bundle", "amplification") as w:
        _start(w)

        def record(i: int) -> str:
            return w.append("trace_record", id=f"rec-{i}", record_kind="message",
                            source={"transcript": "t.jsonl", "line": i + 1},
                            raw=f"<{i:05d}>" + "x" * 1993, **RUN).id

        def node(name: str, records: list[str]) -> str:
            return w.append("evidence_node", id=name, node_type="action", category="tool_call",
                            label=name, records=records, **RUN).id

        shared = [record(i) for i in range(30)]
        w.append("workflow_node", id="wf-shared", phase="execute", label="shared",
                 members=[node(f"node-{k}", shared) for k in range(40)], **RUN)
        distinct = [record(i) for i in range(30, 230)]
        w.append("workflow_node", id="wf-budget", phase="validate", label="distinct",
                 members=[node(f"part-{j}", distinct[j * 20:(j + 1) * 20])
                          for j in range(10)], **RUN)
    return _build(tmp / "bundle", tmp / "site")


def _raw_blocks(page: str) -> list[str]:
    return [html.unescape(b) for b in re.findall(r'<pre class="raw">(.*?)</pre>', page, re.S)]


def test_a_record_cited_by_every_node_is_shown_verbatim_once(amplified: Path) -> None:
    page = (amplified / workflow_href("wf-shared")).read_text("utf-8")
    raws = _raw_blocks(page)
    assert [r[:7] for r in raws] == [f"<{i:05d}>" for i in range(RECORDS_PER_NODE)]
    assert page.count("is shown verbatim above, where this page first lists it") \
        == 39 * RECORDS_PER_NODE
    # each node lists RECORDS_PER_NODE of its 30 records and says how many it left out
    assert _more(page) == [30 - RECORDS_PER_NODE] * 40
    assert len(page) < 2_000_000   # 40 x 30 x 2,000 characters of raw text before


def test_past_the_raw_budget_records_are_links_to_their_events(amplified: Path) -> None:
    page = (amplified / workflow_href("wf-budget")).read_text("utf-8")
    raws = _raw_blocks(page)
    fit = RAW_BUDGET // 2000
    assert fit < 200, "the fixture must overrun the budget"
    assert [r[:7] for r in raws] == [f"<{i:05d}>" for i in range(30, 30 + fit)]
    assert sum(map(len, raws)) <= RAW_BUDGET
    assert page.count("its text is not repeated here") == 200 - fit
    assert _more(page) == []


def test_an_event_log_page_cuts_long_recorded_details(tmp_path: Path) -> None:
    """A page of the log shows 500 events, and an event's details may fill a 1 MiB line."""
    with _writer(tmp_path / "bundle", "long details") as w:
        _start(w)
        w.append("operator", id="op-long", op="execute", params={"blob": "<b>" + "y" * 50_000},
                 **RUN)
        w.append("operator", id="op-short", op="execute", params={"k": "<i>"}, **RUN)
    page = (_build(tmp_path / "bundle", tmp_path / "site") / event_page(0)).read_text("utf-8")
    blocks = re.findall(r'<details class="event-extra">.*?</details>', page, re.S)
    long, short = blocks
    shown = re.search(r'<pre class="raw">(.*?)</pre>', long, re.S)
    assert shown is not None and len(shown.group(1)) == DETAILS_PREVIEW
    assert shown.group(1).startswith('{\n  "params": {\n    "blob": "\\u003cb\\u003eyyy')
    assert "Truncated; the full event is line 4 of" in long
    assert '<pre class="raw">{\n  "params": {\n    "k": "\\u003ci\\u003e"\n  }\n}</pre>' in short
    assert "Truncated" not in short and "<b>" not in page and "<i>" not in page


# --- whole lists: a cut list links to pages that show all of it ------------------------

def _list_rows(page: str) -> list[str]:
    """The rows of a list page, as text, in order."""
    body = page.split('<ol class="full-list"')[1].split("</ol>")[0]
    return [html.unescape(re.sub(r"<[^>]+>", "", li)).strip()
            for li in re.findall(r"<li>(.*?)</li>", body, re.S)]


def _table_rows(page: str) -> list[list[str]]:
    """The rows of a whole list shown as a table, each its cells as text, in order
    (the row number first)."""
    body = page.split('<table class="listing full-table">')[1].split("</tbody>")[0]
    return [[html.unescape(re.sub(r"<[^>]+>", "", td)).strip()
             for td in re.findall(r"<td[^>]*>(.*?)</td>", tr, re.S)]
            for tr in re.findall(r"<tr><td class=\"num\">.*?</tr>", body, re.S)]


def _whole_list_links(page: str) -> list[str]:
    return re.findall(r'class="more-note muted">And [\d,]+ more[^<]*<a href="([^"]+)">'
                      r"see the whole list</a>", page)


def test_each_cut_list_of_an_artifact_links_to_all_of_it(fan_out: Path) -> None:
    page_path = artifact_href("bench")
    page = (fan_out / page_path).read_text("utf-8")
    links = _whole_list_links(page)
    folder = page_path.removesuffix(".html")
    assert links == [f"../{folder}/evaluations.html", f"../{folder}/used-by.html"]
    evaluations = (fan_out / folder / "evaluations.html").read_text("utf-8")
    assert _table_rows(evaluations) == [[str(i + 1), "judge", "1", f"m={i}", ""]
                                        for i in range(FAN)]
    assert "<th scope=\"col\">Evaluator</th>" in evaluations
    users = (fan_out / folder / "used-by.html").read_text("utf-8")
    assert _list_rows(users) == [f"mutate op-{i}" for i in range(FAN)]
    assert '<ol class="full-list" start="1">' in users and 'class="pager"' not in users
    # the page goes back to its object, and its links resolve from one folder deeper
    assert f'href="../../{page_path}"' in users
    assert 'href="../../events/page-0001.html#e' in users


def test_the_cut_lists_of_a_claim_link_to_all_of_them(fan_out: Path) -> None:
    page_path = claim_href("claim-wide")
    folder = page_path.removesuffix(".html")
    page = (fan_out / page_path).read_text("utf-8")
    assert _whole_list_links(page) == [f"../{folder}/bindings.html", f"../{folder}/evidence.html"]
    bindings = _table_rows((fan_out / folder / "bindings.html").read_text("utf-8"))
    assert bindings == [[str(i + 1), f"c{i} cand-{i}", "#rows", "equals", "1", "supports", ""]
                        for i in range(FAN)]
    evidence = _list_rows((fan_out / folder / "evidence.html").read_text("utf-8"))
    assert evidence == [f"c{i} cand-{i}" for i in range(FAN)]


def test_lists_that_fit_get_no_pages(fan_out: Path) -> None:
    assert not (fan_out / artifact_href("cand-0").removesuffix(".html")).exists()
    lists = sorted(str(p.relative_to(fan_out)) for p in fan_out.glob("*/*/*.html"))
    assert lists == sorted(f"{page.removesuffix('.html')}/{name}.html" for page, name in (
        (artifact_href("bench"), "evaluations"), (artifact_href("bench"), "used-by"),
        (claim_href("claim-wide"), "bindings"), (claim_href("claim-wide"), "evidence")))


def test_an_evidence_nodes_cut_records_get_a_page(amplified: Path) -> None:
    phase = (amplified / workflow_href("wf-shared")).read_text("utf-8")
    links = _whole_list_links(phase)
    assert len(links) == 40 and len(set(links)) == 40     # one per node, each its own
    assert links[0] == "../workflow/nodes/" + slug("node-0") + "/records.html"
    records = (amplified / "workflow" / links[0]).read_text("utf-8")
    assert _list_rows(records) == [f"message (t.jsonl:{i + 1}) rec-{i}" for i in range(30)]
    # the distinct phase's nodes cite 20 records each: nothing is cut, nothing linked
    assert _whole_list_links((amplified / workflow_href("wf-budget")).read_text("utf-8")) == []


@pytest.fixture(scope="module")
def long_lists(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An input used by ``PER_PAGE + 3`` operators, and ``PER_PAGE + 2`` steering
    commands: lists that take two pages of their own."""
    tmp = tmp_path_factory.mktemp("long")
    with _writer(tmp / "bundle", "long lists") as w:
        _start(w)
        w.append("individual", id="bench", kind="dataset", name="bench", **RUN)
        for i in range(PER_PAGE + 3):
            w.append("operator", id=f"op-{i}", op="mutate", parents=["bench"], **RUN)
        for i in range(PER_PAGE + 2):
            w.append("steering", id=f"cmd-{i}", command="pause", issuer="reviewer",
                     text=f"command {i}", **RUN)
    return _build(tmp / "bundle", tmp / "site")


def test_a_list_longer_than_a_page_is_paginated(long_lists: Path) -> None:
    folder = long_lists / artifact_href("bench").removesuffix(".html")
    first = (folder / "used-by.html").read_text("utf-8")
    second = (folder / "used-by-2.html").read_text("utf-8")
    assert len(_list_rows(first)) == PER_PAGE
    assert _list_rows(second) == [f"mutate op-{i}" for i in range(PER_PAGE, PER_PAGE + 3)]
    assert f'<ol class="full-list" start="{PER_PAGE + 1}">' in second
    assert 'href="used-by-2.html" rel="next"' in first
    assert 'href="used-by.html" rel="prev"' in second
    assert not (folder / "used-by-3.html").exists()


def test_the_steering_timeline_is_paginated(long_lists: Path) -> None:
    first = (long_lists / "steering.html").read_text("utf-8")
    second = (long_lists / "steering-2.html").read_text("utf-8")
    assert first.count('<li class="timeline-item">') == PER_PAGE
    assert second.count('<li class="timeline-item">') == 2
    assert "command 1000" in second and "command 1001" in second and "command 999" in first
    assert 'href="steering-2.html" rel="next"' in first
    assert not (long_lists / "steering-3.html").exists()


# --- archives: named by the bundle, cut on the lineage page, whole on pages of their own --

ARCHIVE = "pareto/<front>"      # a "/" for the task key, a "<" for escaping


@pytest.fixture(scope="module")
def big_archive(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An archive of ``PER_PAGE + 5`` additions and one removal, and a small one."""
    tmp = tmp_path_factory.mktemp("archive")
    with _writer(tmp / "bundle", "big archive") as w:
        _start(w)
        for i in range(PER_PAGE + 5):
            w.append("individual", id=f"cand-{i}", kind="program", name=f"c{i}", **RUN)
            w.append("archive", id=f"arch-{i}", archive=ARCHIVE, action="add",
                     member=f"cand-{i}",
                     reason=f"front {i}", **RUN)
        w.append("archive", id="arch-out", archive=ARCHIVE, action="remove", member="cand-3",
                 reason="dominated", **RUN)
        w.append("archive", id="arch-small", archive="small", action="add", member="cand-0",
                 **RUN)
    return _build(tmp / "bundle", tmp / "site")


def test_the_lineage_page_cuts_an_archive_and_links_to_all_of_it(big_archive: Path) -> None:
    page = (big_archive / "lineage.html").read_text("utf-8")
    folder = f"lineage/{slug(ARCHIVE)}"
    assert "&lt;front&gt;" in page and "<front>" not in page
    # the count is of all current members, not of those shown
    assert f"{PER_PAGE + 5} addition(s), 1 removal(s); {PER_PAGE + 4} current member(s)" in page
    assert _whole_list_links(page) == [f"{folder}/members.html", f"{folder}/history.html"]
    assert _more(page) == [PER_PAGE + 4 - 200, PER_PAGE + 6 - PER_PAGE]
    assert page.count('<span class="tag action-') == PER_PAGE + 1    # and the small one's


def test_an_archives_whole_lists_hold_every_item_in_order(big_archive: Path) -> None:
    folder = big_archive / "lineage" / slug(ARCHIVE)
    history = [*_table_rows((folder / "history.html").read_text("utf-8")),
               *_table_rows((folder / "history-2.html").read_text("utf-8"))]
    # a member by its label and, since labels need not be unique, its id
    added = [[str(i + 1), "add", f"c{i} cand-{i}", f"front {i}"] for i in range(PER_PAGE + 5)]
    assert [[n, action, member, reason] for n, _time, action, member, reason in history] == [
        *added, [str(PER_PAGE + 6), "remove", "c3 cand-3", "dominated"]]
    assert 'href="../../events/page-0001.html#e' in (folder / "history.html").read_text("utf-8")
    members = [*_list_rows((folder / "members.html").read_text("utf-8")),
               *_list_rows((folder / "members-2.html").read_text("utf-8"))]
    assert members == [f"c{i} cand-{i}" for i in range(PER_PAGE + 5) if i != 3]
    second = (folder / "members-2.html").read_text("utf-8")
    assert f'<ol class="full-list" start="{PER_PAGE + 1}">' in second
    assert 'href="../../lineage.html">lineage page</a>' in second
    assert 'href="../../artifacts/' in second and "&lt;front&gt;" in second
    # the small archive fits on the lineage page: no pages of its own
    assert sorted(p.name for p in (big_archive / "lineage").iterdir()) == [slug(ARCHIVE)]
