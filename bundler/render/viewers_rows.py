"""JSON Lines payloads (agent transcripts, tool logs) as numbered rows, each a JSON tree.

A transcript is what a reviewer reads first, and real ones are made of long
rows: a Claude Code line carries a whole tool result, a Codex rollout starts
with a 30 KiB system prompt.  Shown as text, the first 32 KiB of a real Codex
rollout were three rows, each cut off at the page's right edge, and what each
row said (its type, role and content) was far to the right of the envelope
every row repeats.  Here every row is a tree whose first two levels are open, and
every small block below them (a message's text), so each member is on a line of its
own and long strings wrap, as in the JSON viewer (:mod:`bundler.render.viewers_json`),
whose rules and caps apply: values in all, and the characters of each string.

Within the page's budget a long session shows only its first rows (56 of a real
Claude Code session's 438), so the rows past them that trace records quote follow in a
list of their own, within a second budget: a record's link lands on its row.

A row that is not JSON (a session killed while writing one, a tool's banner)
is shown as its text, marked, and the rows after it as usual; a blank row is
left out, and the numbers of the rows after it still count it.  Rows are cut
only at newlines: U+2028 and the like are JSON's business, not a row end.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import NamedTuple

from markupsafe import Markup, escape

from bundler.load.json_members import parse_json
from bundler.render.viewers_common import (
    REPLACED_NOTE,
    Payload,
    Viewer,
    decode_text,
    full_file_link,
    human_size,
    plural,
)
from bundler.render.viewers_json import MAX_NODES, MAX_STRING, REPEATED_NOTE, JsonTree

__all__ = ["MAX_ALSO", "MAX_ROWS", "Quotes", "row_anchor", "rows_viewer"]

#: Rows shown at most; the values (``MAX_NODES``) and the page's text budget
#: (``Payload.max_bytes`` of markup) usually end the list first.
MAX_ROWS = 1_000
#: Rows that are not JSON named in the note; the page marks every one.
NAMED_BAD_ROWS = 3
#: Trace records linked from a row's label besides the first; the rest are counted.
MAX_ALSO = 3


class Quotes(NamedTuple):
    """The trace records that quote one row: how many, and ``(seq, href)`` of the first
    ``1 + MAX_ALSO`` in log order.  The row's label links to the first; a row that a
    tool call and its retry both quote links to the retry too, not only to the call."""

    records: int
    first: tuple[tuple[int, str], ...]


def _rows(p: Payload) -> tuple[list[str], bool, bool]:
    """The whole rows of what was read, whether more of the file follows them, and
    whether some bytes were not text."""
    text, replaced = decode_text(p.data, p.charset, complete=p.complete)
    rows = text.split("\n")
    # the last piece is a row only when the file ends without a newline; read
    # in part, it is the start of a row the head cut through
    if rows[-1] == "" or not p.complete:
        rows.pop()
    # a JSON text sequence (RFC 7464) starts each record with RS
    rs = "\x1e" if p.media_type == "application/json-seq" else ""
    return [r.removesuffix("\r").removeprefix(rs) for r in rows], not p.complete, replaced


def _bad_row(n: int, label: str, row: str, why: str) -> str:
    shown = row if len(row) <= MAX_STRING else row[:MAX_STRING] + "\u2026"
    return (f'<li class="row-bad" id="{row_anchor(n)}">{label}: '
            f'<span class="json-more">not JSON ({escape(why)})</span>'
            f'<pre class="raw">{escape(shown)}</pre></li>')


def row_anchor(n: int) -> str:
    """The id of row ``n`` (1-based, as the file's lines count): a trace record on the
    log pages links to the row it quotes with it (``#row-7``)."""
    return f"row-{n}"


def _label(n: int, links: Mapping[int, Quotes]) -> tuple[str, bool]:
    """Row ``n``'s label, and whether it names more than one record (it may wrap)."""
    quotes = links.get(n)
    if quotes is None or not quotes.first:
        return f'<span class="json-index">row {n}</span>', False
    (seq, href), *also = quotes.first[:1 + MAX_ALSO]
    label = (f'<a class="json-index" href="{escape(href)}" title="The trace record that '
             f'quotes row {n} (event {seq})">row {n}</a>')
    if quotes.records < 2 or not also:
        return label, False
    more = quotes.records - 1 - len(also)
    events = "events" if quotes.records > 2 else "event"
    named = ", ".join(f'<a href="{escape(h)}">{s}</a>' for s, h in also)
    tail = f" and {more:,} more" if more > 0 else ""
    return f'{label}<span class="row-also"> (also quoted by {events} {named}{tail})</span>', True


def _not_drawn(links: Mapping[int, Quotes], rows: list[str], shown: int, cut: bool,
               further: set[int]) -> str:
    """A note for the rows trace records quote that the lists above do not show, so a
    record's link (``#row-N``) lands on why: the row is blank, past the rows shown (and
    past the budget of those ``further`` on), or past the end of the file (which
    ``transcript-mismatch`` lists too).

    One note per reason, not one item per row: a long session quotes every row, and
    the hundreds past the cut would each say the same.  Each row gets an empty anchor
    in its note; the note is outlined when one of them is the target."""
    groups: dict[str, list[int]] = {}
    for n in sorted(links):
        if n in further or (n <= shown and rows[n - 1].strip()):
            continue                       # drawn, with its own anchor
        why = ("blank" if n <= len(rows) and not rows[n - 1].strip() else
               "past" if n <= len(rows) or cut else "end")
        groups.setdefault(why, []).append(n)
    out = []
    for why, quoted in groups.items():
        one = len(quoted) == 1
        which = _rows_named(quoted)
        text = (f"{which} {'is a blank line' if one else 'are blank lines'}." if why == "blank"
                else f"{which}, which trace records quote, {'is' if one else 'are'} " + (
                    f"past what this page has room for; open the full file to read "
                    f"{'it' if one else 'them'}." if why == "past" else
                    f"past the end of the file, which has {plural(len(rows), 'row')}."))
        anchors = "".join(f'<span id="{row_anchor(n)}"></span>' for n in quoted)
        out.append(f'<p class="rows-not-drawn">{anchors}{escape(text)}</p>')
    return "".join(out)


def _rows_named(rows: list[int]) -> str:
    """"Row 7", "Rows 2 and 9", or "Rows 114 to 438" (325 rows) for a run."""
    if len(rows) == 1:
        return f"Row {rows[0]}"
    if rows[-1] - rows[0] == len(rows) - 1 and len(rows) > 2:
        return f"Rows {rows[0]} to {rows[-1]}"
    if len(rows) <= NAMED_BAD_ROWS:
        return "Rows " + ", ".join(map(str, rows[:-1])) + f" and {rows[-1]}"
    return (f"{len(rows):,} rows ({', '.join(map(str, rows[:NAMED_BAD_ROWS]))}, \u2026 "
            f"{rows[-1]})")


class _Drawn:
    """Rows drawn into one list, within a budget of values and of markup."""

    def __init__(self, max_bytes: int) -> None:
        self.tree = JsonTree(MAX_NODES)
        self.max_bytes = max_bytes
        self.size = 0          # characters of markup so far
        self.bad: list[int] = []
        self.repeated = False  # an object in a row repeats a key

    @property
    def full(self) -> bool:
        return self.tree.shown >= self.tree.budget or self.size >= self.max_bytes

    def add(self, n: int, row: str, links: Mapping[int, Quotes]) -> None:
        """Row ``n`` (not blank): a tree, or its text marked if it is not JSON."""
        out = self.tree.out
        start = len(out)
        label, several = _label(n, links)
        try:
            value, repeats = parse_json(row)
        except json.JSONDecodeError as exc:
            self.bad.append(n)
            out.append(_bad_row(n, label, row, f"column {exc.colno}: {exc.msg}"))
        except (ValueError, RecursionError):
            self.bad.append(n)
            out.append(_bad_row(n, label, row, "not a document this viewer can parse"))
        else:
            self.repeated = self.repeated or repeats
            # the label before the tree, not in its <summary>: a link inside the control
            # that opens and closes a row is a control inside a control
            wraps = " row-label-also" if several else ""
            out.append(f'<li class="row" id="{row_anchor(n)}">'
                       f'<span class="row-label{wraps}">{label}:</span>')
            self.tree.node("", value, 0)
            out.append("</li>")
        self.size += sum(len(s) for s in out[start:])


def _quoted_past(rows: list[str], shown: int, links: Mapping[int, Quotes],
                 max_bytes: int) -> tuple[str, list[int], _Drawn]:
    """The rows past the first ``shown`` that trace records quote, each drawn as the
    list above draws a row, within a budget of their own: a record's link then lands on
    the row itself, not on a note sending the reader to the raw file (a real Claude
    Code session of 438 rows shows its first 56 within the list's budget).  A gap in
    the numbers is marked.  Returns the list's markup and the rows it drew."""
    drawn = _Drawn(max_bytes)
    out = drawn.tree.out
    numbers: list[int] = []
    for n in sorted(k for k in links if shown < k <= len(rows) and rows[k - 1].strip()):
        if drawn.full:
            break
        before = numbers[-1] if numbers else shown
        if n > before + 1:
            out.append(f'<li class="rows-gap">{_rows_named(list(range(before + 1, n)))} '
                       f'not shown</li>')
        drawn.add(n, rows[n - 1], links)
        numbers.append(n)
    if not numbers:
        return "", [], drawn
    intro = f"Further on, {plural(len(numbers), 'row')} that trace records quote:"
    return (f'<p class="rows-quoted">{escape(intro)}</p><ol class="json-children">'
            + "".join(out) + "</ol>"), numbers, drawn


def rows_viewer(p: Payload, links: Mapping[int, Quotes] | None = None) -> Viewer:
    """The rows of a JSON Lines payload, in order, until a cap; then the rows past it
    that trace records quote; the rest is a link.  ``links``: row number -> the trace
    records quoting it, which its label links to."""
    links = links or {}
    rows, cut, replaced = _rows(p)
    first = _Drawn(p.max_bytes)
    shown = 0
    for n, row in enumerate(rows[:MAX_ROWS], 1):
        if first.full:
            break
        shown = n
        if row.strip():    # a blank line: nothing to show, and no document either
            first.add(n, row, links)
    quoted, further, later = _quoted_past(rows, shown, links, p.max_bytes)
    more = shown < len(rows) or cut
    bad = first.bad + later.bad
    notes = []
    if more:
        notes.append(f"Showing the first {plural(shown, 'row')} of this "
                     f"{human_size(p.total)} file" +
                     (f", and {len(further):,} further on that trace records quote."
                      if further else "."))
    if bad:
        named = ", ".join(map(str, bad[:NAMED_BAD_ROWS])) + \
            (f" and {len(bad) - NAMED_BAD_ROWS:,} more" if len(bad) > NAMED_BAD_ROWS else "")
        notes.append(f"{'Row' if len(bad) == 1 else 'Rows'} {named} "
                     f"{'is' if len(bad) == 1 else 'are'} not JSON; shown as text.")
    if first.repeated or later.repeated:
        notes.append(REPEATED_NOTE)
    if replaced:
        notes.append(REPLACED_NOTE)
    body = Markup('<div class="json json-rows"><ol class="json-children">' +
                  "".join(first.tree.out) + "</ol>" + quoted +
                  _not_drawn(links, rows, shown, cut, set(further)) + "</div>")
    return Viewer("rows", body + (full_file_link(p) if more else Markup("")), more,
                  " ".join(notes))
