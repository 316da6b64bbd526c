"""The JSON Lines viewer: rows in order, each a tree; torn rows marked; bounded output."""

from __future__ import annotations

import json
import re
from html import unescape

from bundler.render.viewers import render_payload
from bundler.render.viewers_json import MAX_NODES, OPEN_SMALL, REPEATED_NOTE
from bundler.render.viewers_rows import MAX_ALSO, MAX_ROWS, Quotes, _rows_named

from .test_markdown import HOSTILE, assert_inert
from .test_viewers import text_of, view

JSONL = "application/x-ndjson"


def one_each(hrefs: dict[int, str]) -> dict[int, Quotes]:
    """Row number -> the one trace record (seq 0) that quotes it, at ``href``."""
    return {n: Quotes(1, ((0, href),)) for n, href in hrefs.items()}


def rows_of(html: str) -> list[int]:
    """The numbers of the rows shown, in page order."""
    return [int(n) for n in re.findall(r'class="json-index"[^>]*>row (\d+)</', html)]


def test_every_row_is_a_tree_in_order_with_its_members_shown() -> None:
    lines = [{"type": "user", "message": {"role": "user", "content": "Plot the peaks"}},
             {"type": "assistant", "message": {"role": "assistant", "content": [1, 2]}},
             {"type": "summary", "summary": "done"}]
    data = "".join(json.dumps(x) + "\n" for x in lines).encode()
    v = view(data, JSONL, "s.jsonl")
    assert (v.kind, v.truncated, v.note) == ("rows", False, "")
    html = str(v.html)
    assert rows_of(html) == [1, 2, 3]
    text = unescape(text_of(html))
    for needle in ('"role": "user"', '"content": "Plot the peaks"', '"summary": "done"'):
        assert needle in text
    # a row and its members are open, and so is what is small below them
    assert html.count("<details open>") == 6 and html.count("<details>") == 0
    # ... but not a block too big to read at a glance
    big = json.dumps({"m": {"content": list(range(OPEN_SMALL))}}).encode() + b"\n"
    assert str(view(big, JSONL, "s.jsonl").html).count("<details>") == 1
    assert "Open the full file" not in html


def test_a_torn_row_is_marked_and_the_rows_after_it_are_still_trees() -> None:
    data = b'{"a": 1}\n{"text": "cut off mid-wr\n{"b": 2}\n\n{"c": 3}\n'
    v = view(data, JSONL, "s.jsonl")
    html = str(v.html)
    assert rows_of(html) == [1, 2, 3, 5]           # the blank row 4 is left out, still counted
    assert re.search(r'class="row-bad" id="row-2"><span class="json-index">row 2</span>', html)
    assert '<pre class="raw">{&#34;text&#34;: &#34;cut off mid-wr</pre>' in html
    assert '"b"' in unescape(text_of(html)) and '"c"' in unescape(text_of(html))
    assert v.note == "Row 2 is not JSON; shown as text."


def test_each_row_shown_is_the_target_of_its_number_and_nothing_else_is() -> None:
    """A trace record on the log pages links to ``#row-N``: the id must be on row N,
    torn or not, counted as the file's lines are (a blank line still counts)."""
    data = b'{"a": 1}\n{"torn\n\n{"id": "row-1"}\n[4, {"row-2": 5}]\n'
    html = str(view(data, JSONL, "s.jsonl").html)
    ids = re.findall(r'\bid="([^"]*)"', html)
    assert ids == ["row-1", "row-2", "row-4", "row-5"]
    for n in (1, 2, 4, 5):
        item = html[html.index(f'id="row-{n}"'):]
        assert re.match(rf'id="row-{n}"><span class="(?:row-label|json-index)">'
                        rf'(?:<span class="json-index">)?row {n}</span>', item), n


def test_a_quoted_row_the_list_does_not_show_still_has_its_anchor_and_why() -> None:
    """A record's link to ``#row-N`` must land somewhere: on a note saying the row is
    blank, past the rows shown, or past the end of the file; one note per reason."""
    data = b'{"a": 1}\n\n{"c": 3}\n'
    links = {n: f"../events/page-0001.html#e{n}" for n in (1, 2, 9)}
    html = str(render_payload(data, JSONL, "s.jsonl", file_href="x",
                              row_links=one_each(links)).html)
    assert re.findall(r'\bid="([^"]*)"', html) == ["row-1", "row-3", "row-2", "row-9"]
    notes = re.findall(r'<p class="rows-not-drawn">(.*?)</p>', html)
    assert [unescape(text_of(n)) for n in notes] == [
        "Row 2 is a blank line.",
        "Row 9, which trace records quote, is past the end of the file, which has 3 rows."]
    assert notes[1].startswith('<span id="row-9"></span>')
    # read in part: rows past the head may well exist; a run of them is named as one
    links = {n: f"#e{n}" for n in range(1, 501)}
    cut = str(render_payload(data + b'{"d": ', JSONL, "s.jsonl", file_href="x",
                             row_links=one_each(links), total_size=10_000).html)
    assert re.findall(r'<p class="rows-not-drawn">(?:<span id="row-\d+"></span>)+(.*?)</p>',
                      cut) == [
        "Row 2 is a blank line.",
        "Rows 4 to 500, which trace records quote, are past what this page has room for; "
        "open the full file to read them."]
    assert cut.count('<span id="row-') == 1 + 497
    assert "rows-not-drawn" not in str(render_payload(data, JSONL, "s.jsonl", file_href="x",
                                                      row_links=one_each({1: "#e1"})).html)


def test_quoted_rows_past_the_list_are_drawn_further_on_with_the_gaps_marked() -> None:
    """A real session of 438 rows shows its first 56 within the list's budget; a trace
    record quoting row 300 must land on row 300, not on a note sending the reader to
    the raw file.  The rows the records quote past the list are drawn below it, in
    order, as the list draws them, within a budget of their own."""
    wide = [json.dumps({"n": n, "k": list(range(40))}) for n in range(1, 401)]
    data = ("\n".join(wide) + "\n\n{torn\n").encode()          # row 401 blank, 402 torn
    quoted = [2, 150, 151, 300, 401, 402, 500]
    links = {n: f"../events/page-0001.html#e{n}" for n in quoted}
    v = render_payload(data, JSONL, "s.jsonl", file_href="x", row_links=one_each(links))
    html = str(v.html)
    first, _, rest = html.partition('<p class="rows-quoted">')
    shown = rows_of(first)
    assert shown == list(range(1, len(shown) + 1)) and 20 < len(shown) < 150
    assert rows_of(rest) == [150, 151, 300, 402]
    assert unescape(text_of(rest.split("</p>")[0])) == \
        "Further on, 4 rows that trace records quote:"
    assert [unescape(g) for g in re.findall(r'<li class="rows-gap">([^<]*)</li>', rest)] == [
        f"Rows {len(shown) + 1} to 149 not shown", "Rows 152 to 299 not shown",
        "Rows 301 to 401 not shown"]
    for n in (150, 300):        # the row itself, its label linking the record, its values
        item = rest[rest.index(f'<li class="row" id="row-{n}">'):].split("</li>")[0]
        assert f'href="../events/page-0001.html#e{n}"' in item
        assert f'&#34;n&#34;</span>: <span class="json-num">{n}</span>' in item
    assert 'id="row-402"' in rest and "not JSON" in rest
    assert v.note == (f"Showing the first {len(shown)} rows of this "
                      f"{len(data) / 1024:.1f} KiB file, and 4 further on that trace records "
                      "quote. Row 402 is not JSON; shown as text.")
    ids = re.findall(r'\bid="([^"]*)"', html)
    assert len(ids) == len(set(ids))
    assert [unescape(text_of(n)) for n in re.findall(r'<p class="rows-not-drawn">(.*?)</p>',
                                                      html)] == [
        "Row 401 is a blank line.",
        "Row 500, which trace records quote, is past the end of the file, which has 402 rows."]


def test_quoted_rows_further_on_stop_at_their_own_budget() -> None:
    """A record for every row: the rows further on fill a second budget as large as the
    list's, and those past both are named in the note."""
    big = "".join(json.dumps({"s": "y" * 900}) + "\n" for _ in range(300)).encode()
    links = {n: f"#e{n}" for n in range(1, 301)}
    html = str(render_payload(big, JSONL, "s.jsonl", file_href="x", max_bytes=20_000,
                              row_links=one_each(links)).html)
    first, _, rest = html.partition('<p class="rows-quoted">')
    shown, further = rows_of(first), rows_of(rest)
    assert 10 <= len(further) <= len(shown) + 5
    assert further == list(range(len(shown) + 1, len(shown) + 1 + len(further)))
    assert "rows-gap" not in rest       # consecutive: no gap to mark
    assert len(first) < 20_000 + 3_000
    assert len(rest.partition('<p class="rows-not-drawn">')[0]) < 20_000 + 3_000
    past = further[-1] + 1
    assert re.findall(r'<p class="rows-not-drawn">(?:<span id="row-\d+"></span>)+(.*?)</p>',
                      html) == [
        f"Rows {past} to 300, which trace records quote, are past what this page has room "
        "for; open the full file to read them."]


def test_no_row_is_quoted_further_on_when_no_record_quotes_one() -> None:
    big = "".join(json.dumps({"s": "y" * 900}) + "\n" for _ in range(300)).encode()
    html = str(render_payload(big, JSONL, "s.jsonl", file_href="x", max_bytes=20_000,
                              row_links=one_each({1: "#e1"})).html)
    assert "rows-quoted" not in html and "rows-gap" not in html


def test_the_rows_a_note_names() -> None:
    assert [_rows_named(r) for r in ([7], [2, 9], [2, 3], [2, 5, 9], [4, 5, 6],
                                     [1, 3, 5, 7, 9])] == [
        "Row 7", "Rows 2 and 9", "Rows 2 and 3", "Rows 2, 5 and 9", "Rows 4 to 6",
        "5 rows (1, 3, 5, \u2026 9)"]


def test_several_bad_rows_are_named_up_to_three() -> None:
    data = b"".join(b"x\n" if n % 2 else b"{}\n" for n in range(1, 11))
    assert view(data, JSONL, "s.jsonl").note == \
        "Rows 1, 3, 5 and 2 more are not JSON; shown as text."


def test_a_head_cut_inside_a_row_shows_only_whole_rows_and_links_the_file() -> None:
    data = b'{"n": 1}\n{"n": 2}\n{"n": 3, "long": "' + b"x" * 100
    v = view(data, JSONL, "s.jsonl", total_size=10_000)
    html = str(v.html)
    assert rows_of(html) == [1, 2] and v.truncated
    assert v.note == "Showing the first 2 rows of this 9.8 KiB file."
    assert 'href="../files/abc"' in html and "row-bad" not in html


def test_a_file_without_a_last_newline_keeps_its_last_row() -> None:
    assert rows_of(str(view(b'{"n": 1}\n{"n": 2}', JSONL, "s.jsonl").html)) == [1, 2]


def test_rows_stop_at_the_value_budget_and_the_row_cap() -> None:
    wide = "".join(json.dumps({"k": list(range(50))}) + "\n" for _ in range(200)).encode()
    v = view(wide, JSONL, "s.jsonl")
    shown = rows_of(str(v.html))
    assert v.truncated and shown == list(range(1, len(shown) + 1))
    assert len(shown) < 200 and len(shown) * 52 <= MAX_NODES + 52
    assert v.note == f"Showing the first {len(shown)} rows of this {len(wide) / 1024:.1f} KiB file."
    many = b"1\n" * (MAX_ROWS + 5)
    v = view(many, JSONL, "s.jsonl")
    assert len(rows_of(str(v.html))) == MAX_ROWS and v.truncated


def test_rows_stop_at_the_page_text_budget() -> None:
    big = "".join(json.dumps({"s": "y" * 900}) + "\n" for _ in range(300)).encode()
    v = view(big, JSONL, "s.jsonl", max_bytes=20_000)
    assert v.truncated and len(str(v.html)) < 20_000 + 3_000
    assert 15 <= len(rows_of(str(v.html))) <= 25


def test_hostile_keys_values_and_torn_rows_stay_text() -> None:
    rows = [json.dumps({HOSTILE: HOSTILE}), HOSTILE, json.dumps([HOSTILE, {"x": HOSTILE}])]
    v = view(("\n".join(rows) + "\n").encode(), JSONL, "s.jsonl")   # view() asserts inertness
    assert unescape(text_of(str(v.html))).count(HOSTILE) == 5


def test_a_json_text_sequence_drops_each_record_separator() -> None:
    data = b'\x1e{"a": 1}\n\x1e{"b": 2}\n'
    v = view(data, "application/json-seq", None)
    assert rows_of(str(v.html)) == [1, 2] and v.note == ""


def test_a_deeply_nested_row_is_marked_not_raised() -> None:
    data = b"[" * 100_000 + b"]" * 100_000 + b'\n{"after": true}\n'
    v = view(data, JSONL, "s.jsonl", max_bytes=1 << 20)
    assert rows_of(str(v.html)) == [1, 2]
    assert "row-bad" in str(v.html) or "nested too deeply" in str(v.html)


def test_a_repeated_key_shows_every_value_marked_in_a_row() -> None:
    data = b'{"role": "user", "text": "hi", "role": "assistant"}\n{"ok": true}\n'
    v = view(data, JSONL, "s.jsonl")
    html = str(v.html)
    text = unescape(text_of(html))
    assert '"role": "user"' in text and '"role": "assistant"' in text
    assert html.count('<span class="json-dup">repeated key</span>') == 2
    assert v.note == REPEATED_NOTE and rows_of(html) == [1, 2]


def test_rows_with_a_link_are_labelled_with_it_and_the_rest_are_not() -> None:
    data = b'{"a": 1}\nnot json\n{"c": 3}\n'
    links = {1: '../events/page-0001.html#e7"><script>', 2: "../events/page-0001.html#e9"}
    v = render_payload(data, JSONL, "s.jsonl", file_href="x", row_links=one_each(links))
    html = str(v.html)
    assert_inert(html)
    assert re.findall(r'<a class="json-index" href="([^"]*)"', html) == [
        "../events/page-0001.html#e7&#34;&gt;&lt;script&gt;", "../events/page-0001.html#e9"]
    assert '<span class="json-index">row 3</span>' in html and rows_of(html) == [1, 2, 3]


def test_a_row_several_records_quote_links_to_each_up_to_a_few() -> None:
    """A row that a tool call and its retry both quote links to both: the label to the
    first record, then the next ``MAX_ALSO``, then a count of the rest."""
    data = b'{"a": 1}\n{"b": 2}\n{"c": 3}\n'
    many = 2 + MAX_ALSO
    links = {1: Quotes(many, tuple((s, f"../events/page-0001.html#e{s}")
                                   for s in range(10, 10 + 1 + MAX_ALSO))),
             2: Quotes(2, ((4, "#e4"), (5, '#e5"><script>'))),
             3: Quotes(1, ((6, "#e6"),))}
    html = str(render_payload(data, JSONL, "s.jsonl", file_href="x", row_links=links).html)
    assert_inert(html)
    labels = re.findall(r'<span class="row-label[^"]*">(.*?):</span>', html)
    assert len(labels) == 3 and html.count('class="row-label row-label-also"') == 2
    assert re.findall(r'<a class="json-index" href="([^"]*)"', labels[0]) == [
        "../events/page-0001.html#e10"]
    assert unescape(text_of(labels[0])) == (
        "row 1 (also quoted by events "
        + ", ".join(str(s) for s in range(11, 11 + MAX_ALSO)) + " and 1 more)")
    assert re.findall(r'href="([^"]*)"', labels[0]) == [
        f"../events/page-0001.html#e{s}" for s in range(10, 11 + MAX_ALSO)]
    assert unescape(text_of(labels[1])) == "row 2 (also quoted by event 5)"
    assert re.findall(r'href="([^"]*)"', labels[1]) == ["#e4", "#e5&#34;&gt;&lt;script&gt;"]
    assert unescape(text_of(labels[2])) == "row 3" and "row-also" not in labels[2]
    assert 'title="The trace record that quotes row 3 (event 6)"' in labels[2]
