"""transcript-mismatch: trace records checked against the transcript payload they quote."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from bundler.query import run_query
from bundler.render.site import BuildOptions, build_site
from bundler.render.urls import artifact_href, event_href

from .conftest import Mini

NAME = "transcripts/session.jsonl"
LINES = ['{"type": "user", "text": "plot it"}', '{"type": "assistant", "text": "done"}',
         '{"type": "result", "ok": true}']


def _record(mini: Mini, rid: str, raw: str, line: int | None, transcript: str = NAME) -> None:
    source: dict[str, Any] = {"transcript": transcript}
    if line is not None:
        source["line"] = line
    mini.event("trace_record", rid, raw=raw, source=source, record_kind="message")


def _ship(mini: Mini, oid: str, text: str, name: str = NAME) -> Any:
    """The transcript as an artifact's payload, named as its records cite it."""
    ref = mini.w.put_payload(text.encode(), "application/x-ndjson", name)
    return mini.w.append("individual", id=oid, kind="transcript", name=oid, run="run",
                         stream="agent", payload=ref.model_dump(exclude_defaults=True))


def _rows(mini: Mini) -> list[tuple[Any, ...]]:
    res = run_query(mini.index(), "transcript-mismatch")
    return [(r.values["record"], r.values["line"], r.values["status"], r.values["detail"])
            for r in res.rows]


def test_records_that_quote_their_lines_are_not_listed(mini: Mini) -> None:
    for n, line in enumerate(LINES, 1):
        _record(mini, f"tr:{n}", line, n)
    _ship(mini, "log:t", "\r\n".join(LINES) + "\r\n")         # CRLF line ends
    mini.w.append("individual", id="log:named", kind="transcript", name="other", run="run",
                  stream="agent")
    assert _rows(mini) == []


def test_a_changed_line_and_a_line_past_the_end_are_listed(mini: Mini) -> None:
    _record(mini, "tr:1", LINES[0], 1)
    _record(mini, "tr:2", LINES[1].replace("done", "dome"), 2)
    _record(mini, "tr:9", LINES[2], 9)
    _record(mini, "tr:x", "anything", None)                       # no line: not compared
    _record(mini, "tr:y", "anything", 1, "transcripts/not-shipped.jsonl")
    _ship(mini, "log:t", "\n".join(LINES) + "\n")
    rows = run_query(mini.index(), "transcript-mismatch").rows
    assert [(r.values["record"], r.values["line"], r.values["status"]) for r in rows] == [
        ("tr:2", 2, "differs"), ("tr:9", 9, "past-end")]
    assert rows[0].values["detail"] == ("column 34: the record has 'me\"}', "
                                        "the payload 'ne\"}'")
    assert rows[1].why == f"tr:9 quotes line 9 of {NAME}, but log:t has 3."
    assert rows[0].refs == ("tr:2", "log:t") and len(rows[0].seqs) == 2


def test_the_answer_says_what_was_compared_and_what_could_not_be(tmp_path: Path) -> None:
    """No rows is good news only if records were compared: the scope counts them, and
    the records left out (no line number, a transcript the bundle does not ship)."""
    def answer(stage: int) -> tuple[str, int | None, int]:
        mini = Mini(tmp_path / str(stage))
        if stage >= 1:
            _record(mini, "tr:a", "x", 1, "transcripts/a.jsonl")
            _record(mini, "tr:b", "x", 2, "transcripts/a.jsonl")
            _record(mini, "tr:c", "x", 1, "transcripts/c.jsonl")
        if stage >= 2:
            for n, line in enumerate(LINES, 1):
                _record(mini, f"tr:{n}", line, n)
            _record(mini, "tr:x", "anything", None)
            _ship(mini, "log:t", "\n".join(LINES) + "\n")
        res = run_query(mini.index(), "transcript-mismatch")
        return res.scope, res.checked, len(res.rows)

    assert answer(0) == ("The log holds no trace record, so nothing was compared.", 0, 0)
    assert answer(1) == (
        "No trace record was compared: none quotes a line of a transcript the bundle ships. "
        "3 records quote 2 transcripts the bundle does not ship.", 0, 0)
    assert answer(2) == (
        "Compared 3 trace records with the 1 transcript the bundle ships. 3 records quote "
        "2 transcripts the bundle does not ship. 1 record gives no line number.", 3, 0)


def test_the_last_copy_of_a_transcript_is_the_one_compared(mini: Mini) -> None:
    """A session saved twice as it grew: the first copy lacks the last line."""
    _ship(mini, "log:early", LINES[0] + "\n")
    for n, line in enumerate(LINES, 1):
        _record(mini, f"tr:{n}", line, n)
    _ship(mini, "log:late", "\n".join(LINES) + "\n")
    assert _rows(mini) == []


def test_a_redacted_transcript_is_one_unverifiable_row(mini: Mini) -> None:
    for n, line in enumerate(LINES, 1):
        _record(mini, f"tr:{n}", line, n)
    t = _ship(mini, "log:t", "\n".join(LINES) + "\n")
    mini.w.redact(t.payload.digest, reason="personal data", authority="DPO", run="run",
                  stream="human")
    rows = _rows(mini)
    assert [r[:3] for r in rows] == [("tr:1", 1, "unverifiable")]
    assert rows[0][3].startswith("payload redacted (personal data")


def test_the_site_ties_records_to_the_copy_this_query_compares(mini: Mini,
                                                              tmp_path: Path) -> None:
    """The log pages, the transcript's page and this query agree on which copy is the
    transcript: the last one.  Its page counts the records citing either of its names;
    the early copy's page claims none of them and links no row."""
    _ship(mini, "log:early", LINES[0] + "\n")
    _record(mini, "tr:1", LINES[0], 1)
    _record(mini, "tr:2", LINES[1], 2, "log:late")              # by the artifact's name
    late = _ship(mini, "log:late", "\n".join(LINES) + "\n")
    mini.finish()
    out = tmp_path / "site"
    build_site(mini.path, BuildOptions(output=out))
    early_page = (out / artifact_href("log:early")).read_text("utf-8")
    late_page = (out / artifact_href("log:late")).read_text("utf-8")
    assert "Trace records quoting it" not in early_page and 'class="json-index" href' \
        not in early_page
    assert f"2 trace records in the log quote lines 1–2 of <code>{NAME}</code>" in late_page
    assert re.findall(r'<a class="json-index" href="([^"]+)"', late_page) == [
        "../" + event_href(mini.index().trace_records[r].seq) for r in ("tr:1", "tr:2")]
    log = (out / "events" / "page-0001.html").read_text("utf-8")
    assert log.count(f'href="../{artifact_href("log:late")}#row-') == 2
    assert late.payload.name == NAME


def test_a_row_two_records_quote_links_to_both_on_the_site(mini: Mini,
                                                          tmp_path: Path) -> None:
    """A tool call and its retry quote the same row: the transcript's page links the
    row to the first record and names the second beside it, on its own log page."""
    _record(mini, "tr:1", LINES[0], 1)
    _record(mini, "tr:again", LINES[0], 1)
    _record(mini, "tr:2", LINES[1], 2)
    _ship(mini, "log:t", "\n".join(LINES) + "\n")
    mini.finish()
    out = tmp_path / "site"
    build_site(mini.path, BuildOptions(output=out))
    page = (out / artifact_href("log:t")).read_text("utf-8")
    seqs = {r: ev.seq for r, ev in mini.index().trace_records.items()}
    label = re.search(r'<span class="row-label row-label-also">(.*?):</span>', page)
    assert label is not None
    assert re.findall(r'href="([^"]+)"', label.group(1)) == [
        "../" + event_href(seqs["tr:1"]), "../" + event_href(seqs["tr:again"])]
    assert re.sub(r"<[^>]+>", "", label.group(1)) == \
        f"row 1 (also quoted by event {seqs['tr:again']})"
    assert page.count("row-also") == 1          # row 2 has one record: a plain label
    assert "A row above links to the trace records that quote it." in page


def test_a_record_citing_the_tracers_own_path_ties_to_the_file_shipped(
        mini: Mini, tmp_path: Path) -> None:
    """A tracer records the path on the agent's machine; the bundle ships the file in a
    folder of its own.  The two tie by the path's end: the query compares them, the
    transcript's page counts and links the records, and the log pages link each record
    to its row."""
    cited = "/home/dev/.claude/projects/-home-dev-app/session.jsonl"
    for n, line in enumerate(LINES, 1):
        _record(mini, f"tr:{n}", line if n != 2 else line + " ", n, cited)
    _ship(mini, "log:t", "\n".join(LINES) + "\n")               # named transcripts/session.jsonl
    res = run_query(mini.index(), "transcript-mismatch")
    assert res.scope == "Compared 3 trace records with the 1 transcript the bundle ships."
    assert [(r.values["record"], r.values["status"], r.values["transcript"],
             r.values["artifact"]) for r in res.rows] == [
        ("tr:2", "differs", cited, "log:t")]
    mini.finish()
    out = tmp_path / "site"
    build_site(mini.path, BuildOptions(output=out))
    page = (out / artifact_href("log:t")).read_text("utf-8")
    seqs = {r: ev.seq for r, ev in mini.index().trace_records.items()}
    assert f"3 trace records in the log quote lines 1–3 of <code>{cited}</code>" in page
    assert re.findall(r'<a class="json-index" href="([^"]+)"', page) == [
        "../" + event_href(seqs[f"tr:{n}"]) for n in (1, 2, 3)]
    log = (out / "events" / "page-0001.html").read_text("utf-8")
    assert [int(n) for n in re.findall(
        rf'href="\.\./{re.escape(artifact_href("log:t"))}#row-(\d+)"', log)] == [1, 2, 3]


def test_two_shipped_files_that_end_alike_tie_to_neither(mini: Mini) -> None:
    """Comparing a record with the wrong session would report differences that are not
    there: a cited path whose end two shipped files share is treated as not shipped."""
    _record(mini, "tr:1", LINES[0], 1, "/home/dev/session.jsonl")
    _ship(mini, "log:a", LINES[0] + "\n", "claude/session.jsonl")
    _ship(mini, "log:b", "other\n", "codex/session.jsonl")
    _record(mini, "tr:2", LINES[1], 2, "/home/dev/session.jsonl")
    _record(mini, "tr:3", LINES[0], 1, "/home/dev/gone.jsonl")
    res = run_query(mini.index(), "transcript-mismatch")
    assert res.rows == () and res.checked == 0
    assert res.scope == (
        "No trace record was compared: none quotes a line of a transcript the bundle ships. "
        "1 record quotes 1 transcript the bundle does not ship. 2 records quote 1 "
        "transcript that several shipped files could each be (their paths end alike), so "
        "none was picked.")
