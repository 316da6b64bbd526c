"""Query results as text: an aligned table, JSON, or CSV.

Output is a pure function of the result (no terminal width, no colour), so
the same bundle always prints the same bytes.
"""

from __future__ import annotations

import csv
import io
import json
from typing import Any

from bundler.query.model import QueryDef, QueryResult
from bundler.shown import shown

CELL = 40     # widest table cell, in characters
WIDE = 1_000  # the last column holds the long text (a path, reasons): it may wrap


def cell_text(value: Any) -> str:
    """One cell as plain text: lists joined, null empty, floats compact."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:.6g}"
    if isinstance(value, list | tuple):
        return ", ".join(cell_text(v) for v in value)
    return " ".join(str(value).split())


def _clip(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


def to_table(result: QueryResult) -> str:
    """Columns only; ``why`` and ``seqs`` are in the JSON and CSV forms."""
    headers = list(result.columns)
    last = len(headers) - 1
    body = [[_clip(shown(cell_text(r.values[c])), WIDE if i == last else CELL)
             for i, c in enumerate(result.columns)] for r in result.rows]
    widths = [max([len(h), *(len(b[i]) for b in body)]) for i, h in enumerate(headers)]

    def line(cells: list[str]) -> str:
        return "  ".join(c.ljust(w) for c, w in zip(cells, widths, strict=True)).rstrip()

    rule = ["-" * (w if i < last else max(len(headers[last]), min(w, CELL)))
            for i, w in enumerate(widths)]
    out = [line(headers), line(rule)]
    out += [line(b) for b in body]
    n = len(result.rows)
    out.append(f"{n} row{'' if n == 1 else 's'} ({result.name})")
    if result.scope:
        out.append(result.scope)
    return "\n".join(out) + "\n"


def to_json(result: QueryResult) -> str:
    rows = [{**r.values, "why": r.why, "seqs": list(r.seqs)} for r in result.rows]
    doc = {"query": result.name, "columns": list(result.columns), "rows": rows,
           "scope": result.scope, "checked": result.checked}
    return json.dumps(doc, ensure_ascii=False, indent=2) + "\n"


#: What makes a spreadsheet evaluate a cell instead of showing it (OWASP "CSV injection").
FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def to_csv(result: QueryResult) -> str:
    buf = io.StringIO()
    # RFC 4180's CRLF: the writer quotes a field holding any character of the line
    # terminator, so with "\n" alone a bare CR in a bundle value went out unquoted
    # and a reader saw a new row there (rows a bundle's author could forge)
    w = csv.writer(buf, lineterminator="\r\n")
    w.writerow([*result.columns, "why", "seqs"])
    for r in result.rows:
        w.writerow([*(_csv_cell(r.values[c]) for c in result.columns), _inert(r.why),
                    " ".join(map(str, r.seqs))])
    return buf.getvalue()


def _csv_cell(value: Any) -> str:
    """Numbers as they are; text (the bundle's) made inert for a spreadsheet: a claim
    text "=HYPERLINK(...)" opened in one would be a formula, not a value."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, int):
        return str(value)
    if isinstance(value, list | tuple):
        return _inert("; ".join(cell_text(v) for v in value))
    return "" if value is None else _inert(str(value))


def _inert(text: str) -> str:
    return "'" + text if text.startswith(FORMULA_START) else text


def query_list(defs: list[QueryDef]) -> str:
    names = [d.name + (f" {d.arg}" if d.arg else "") for d in defs]
    width = max(len(n) for n in names)
    return "".join(f"{n.ljust(width)}  {d.summary}\n" for n, d in zip(names, defs, strict=True))
