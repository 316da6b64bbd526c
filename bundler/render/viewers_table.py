"""CSV and TSV payloads as an HTML table.

Agents' data files are often European-style (``;`` separators with decimal
commas, as in the UCI air-quality set), so the delimiter is sniffed from the
header's consistency with the rows rather than assumed.
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Iterator

from markupsafe import Markup, escape

from bundler.render.viewers_common import (
    REPLACED_NOTE,
    Payload,
    Viewer,
    decode_text,
    full_file_link,
    plural,
)

__all__ = ["csv_viewer", "is_numeric", "sniff_delimiter"]

CANDIDATES = (",", ";", "\t")
#: Rows are counted over at most this many times ``max_bytes`` of the data.
COUNT_FACTOR = 4
MAX_COLUMNS = 200
MAX_CELL_CHARS = 1_000
_SNIFF_LINES = 30

_NUMBER = re.compile(
    r"^[+-]?(?:\d+(?:[.,]\d+)?|\d{1,3}(?:,\d{3})+(?:\.\d+)?|[.,]\d+)(?:[eE][+-]?\d+)?%?$")


def is_numeric(cell: str) -> bool:
    """Numbers (``-200``, ``2,6``, ``1,308.5``, ``1e-3``, ``12%``) get right-aligned."""
    return bool(_NUMBER.match(cell.strip()))


def sniff_delimiter(text: str, default: str = ",") -> str:
    """Pick the candidate whose header field count the most sample rows share.

    A header with a single field under some delimiter disqualifies it, which
    is what separates ``;`` files with decimal commas from real CSV.
    """
    sample = [line for line in text.splitlines()[:_SNIFF_LINES] if line.strip()]
    if not sample:
        return default
    best: tuple[int, int, int] | None = None
    choice = default
    for order, delim in enumerate(CANDIDATES):
        try:
            rows = list(csv.reader(io.StringIO("\n".join(sample)), delimiter=delim))
        except csv.Error:
            continue
        if not rows or len(rows[0]) < 2:
            continue
        width = len(rows[0])
        score = (sum(1 for r in rows if len(r) == width), width, -order)
        if best is None or score > best:
            best, choice = score, delim
    return choice


def _rows(text: str, delim: str) -> Iterator[list[str]]:
    return csv.reader(io.StringIO(text, newline=""), delimiter=delim)


def _cell(tag: str, value: str, numeric: bool) -> str:
    shown = value if len(value) <= MAX_CELL_CHARS else value[:MAX_CELL_CHARS] + "\u2026"
    attrs = ' scope="col"' if tag == "th" else ""
    cls = ' class="num"' if numeric else ""
    return f"<{tag}{attrs}{cls}>{escape(shown)}</{tag}>"


def _numeric_columns(body: list[list[str]], width: int) -> list[bool]:
    """Columns whose shown, non-empty cells are all numbers: their header aligns right too."""
    seen = [False] * width
    numeric = [True] * width
    for row in body:
        for i, cell in enumerate(row[:width]):
            if cell.strip():
                seen[i] = True
                numeric[i] = numeric[i] and is_numeric(cell)
    return [s and n for s, n in zip(seen, numeric, strict=True)]


def csv_viewer(p: Payload) -> Viewer | None:
    """The table, or None when the bytes do not parse as delimited text."""
    limit = p.max_bytes * COUNT_FACTOR
    chunk = p.data[:limit]
    counted_all = len(chunk) >= p.total
    text, replaced = decode_text(chunk, p.charset, complete=counted_all)
    if not counted_all:
        # the last line is almost certainly cut in half; do not count it
        cut = text.rfind("\n")
        text = text[: cut + 1] if cut >= 0 else ""
    default = "\t" if p.media_type in ("text/tab-separated-values", "text/tsv") else ","
    delim = sniff_delimiter(text, default)
    header: list[str] | None = None
    body: list[list[str]] = []
    count = 0
    budget = p.max_bytes  # characters of cell text; keeps the page bounded
    try:
        for row in _rows(text, delim):
            if not row:
                continue
            if header is None:
                header = row
                continue
            count += 1
            if len(body) == count - 1 and len(body) < p.max_rows and budget > 0:
                body.append(row)
                budget -= sum(min(len(c), MAX_CELL_CHARS) for c in row[:MAX_COLUMNS])
    except csv.Error:
        return None
    if header is None:
        return None
    width = max([len(header), *(len(r) for r in body)])
    numeric = _numeric_columns(body, min(width, MAX_COLUMNS))
    parts = ['<div class="table-wrap"><table class="csv"><thead><tr>']
    parts += [_cell("th", h, numeric[i]) for i, h in enumerate(header[:MAX_COLUMNS])]
    parts.append("</tr></thead><tbody>")
    for row in body:
        parts.append("<tr>")
        parts += [_cell("td", c, is_numeric(c)) for c in row[:MAX_COLUMNS]]
        parts.append("</tr>")
    parts.append("</tbody></table></div>")

    notes: list[str] = []
    rows_cut = count > len(body)
    if rows_cut or not counted_all:
        total = f"at least {count:,}" if not counted_all else f"{count:,}"
        notes.append(f"Showing {len(body):,} of {total} rows.")
    if width > MAX_COLUMNS:
        notes.append(f"Showing the first {MAX_COLUMNS} of {plural(width, 'column')}.")
    if replaced:
        notes.append(REPLACED_NOTE)
    truncated = rows_cut or not counted_all or width > MAX_COLUMNS
    html = Markup("".join(parts)) + (full_file_link(p) if truncated else Markup(""))
    return Viewer("table", html, truncated, " ".join(notes))
