"""JSON payloads as a collapsible tree of nested ``<details>``.

The top two levels start open so a reviewer sees the shape at once; deeper
levels start closed, except a block small enough to read at a glance
(``OPEN_SMALL`` values in all).  In a real transcript row that is where the
words are: a Claude Code message keeps its text in a one-item ``content``
list at the third level, which a reader otherwise opened row after row.
The number of rendered values is capped so a 50 MB log does not become a
500 MB page.
"""

from __future__ import annotations

import json
from typing import Any

from markupsafe import Markup, escape

from bundler.load.json_members import Repeated, parse_json
from bundler.render.viewers_common import (
    Payload,
    Viewer,
    decode_text,
    full_file_link,
    human_size,
    plural,
)
from bundler.render.viewers_text import code_viewer

__all__ = ["MAX_NODES", "REPEATED_NOTE", "JsonTree", "count_nodes", "json_viewer"]

MAX_NODES = 2_000
OPEN_DEPTH = 2
#: A block of at most this many values in all, itself included, starts open at any
#: depth: a message's one-item content list, a usage record, a tool call's arguments.
OPEN_SMALL = 12
MAX_DEPTH = 64
MAX_STRING = 1_000
#: Parse at most this many times ``max_bytes``; larger files are shown as text.
PARSE_FACTOR = 4


def count_nodes(value: Any, stop_above: int | None = None) -> int:
    """Values in a parsed document, counted without recursion (depth is untrusted).
    Counting ends once the count passes ``stop_above``: asking whether each block of a
    large document is small (``OPEN_SMALL``) then costs no more than the limit."""
    total, stack = 1, [value]
    while stack:
        v = stack.pop()
        if isinstance(v, dict | list):
            total += len(v)
            if stop_above is not None and total > stop_above:
                break
            children = [c for _, c in v] if isinstance(v, Repeated) else \
                v.values() if isinstance(v, dict) else v
            stack.extend(c for c in children if isinstance(c, dict | list))
    return total


#: The note of a document with a repeated key.
REPEATED_NOTE = ("An object repeats a key; every member is shown, marked \u201crepeated "
                 "key\u201d (most JSON readers keep only one of the values).")


def _esc(text: str) -> str:
    return str(escape(text))


class JsonTree:
    """Renders into a list of already-escaped strings (Markup arithmetic is slow here)."""

    def __init__(self, budget: int) -> None:
        self.budget = budget
        self.shown = 0
        self.out: list[str] = []

    @staticmethod
    def scalar(v: Any) -> str:
        if v is None:
            return '<span class="json-null">null</span>'
        if isinstance(v, bool):
            return f'<span class="json-bool">{"true" if v else "false"}</span>'
        if isinstance(v, int | float):
            return f'<span class="json-num">{_esc(json.dumps(v))}</span>'
        text = str(v)
        if len(text) > MAX_STRING:
            text = text[:MAX_STRING] + "\u2026"
        return f'<span class="json-str">{_esc(json.dumps(text, ensure_ascii=False))}</span>'

    def node(self, key: str, v: Any, depth: int) -> None:
        """Append one value: the key (already escaped), then a scalar or a nested block."""
        out = self.out
        self.shown += 1
        if not isinstance(v, dict | list):
            out.append(key + self.scalar(v))
            return
        if not v:
            out.append(f'{key}<span class="json-empty">{"{}" if isinstance(v, dict) else "[]"}'
                       "</span>")
            return
        is_obj = isinstance(v, dict | Repeated)
        size = plural(len(v), "key" if is_obj else "item")
        summary = (f'{key}<span class="json-type">{"{…}" if is_obj else "[…]"}</span> '
                   f'<span class="json-count">{size}</span>')
        if depth >= MAX_DEPTH:
            out.append(summary + ' <span class="json-more">(nested too deeply to show)</span>')
            return
        opened = depth < OPEN_DEPTH or count_nodes(v, OPEN_SMALL) <= OPEN_SMALL
        out.append(f'<details{" open" if opened else ""}><summary>{summary}'
                   '</summary><ul class="json-children">')
        repeated = v.repeated_keys() if isinstance(v, Repeated) else ()
        items = (v if isinstance(v, Repeated) else v.items() if isinstance(v, dict)
                 else enumerate(v))
        for i, (k, child) in enumerate(items):
            if self.shown >= self.budget:
                left = len(v) - i
                more = "1 more entry" if left == 1 else f"{left:,} more entries"
                out.append(f'<li class="json-more">\u2026 {more} not shown</li>')
                break
            label = (f'<span class="json-key">{_esc(json.dumps(k, ensure_ascii=False))}</span>: '
                     if is_obj else f'<span class="json-index">{k}</span>: ')
            if k in repeated:
                label = '<span class="json-dup">repeated key</span> ' + label
            out.append("<li>")
            self.node(label, child, depth + 1)
            out.append("</li>")
        out.append("</ul></details>")


def json_viewer(p: Payload) -> Viewer:
    """The tree, or the text viewer with a note when the bytes are not JSON we can show."""
    limit = p.max_bytes * PARSE_FACTOR
    if p.total > limit:
        return code_viewer(p, (f"This JSON file ({human_size(p.total)}) is over the "
                               f"{human_size(limit)} tree limit; shown as text.",))
    if not p.complete:
        return code_viewer(p, ("Only part of this JSON file was read; shown as text.",))
    text, replaced = decode_text(p.data, p.charset, complete=True)
    try:
        value, repeats = parse_json(text)
    except json.JSONDecodeError as exc:
        return code_viewer(p, (f"Not valid JSON (line {exc.lineno}, column {exc.colno}: "
                               f"{exc.msg}); shown as text.",))
    except (ValueError, RecursionError):
        return code_viewer(p, ("Not JSON this viewer can parse; shown as text.",))
    total = count_nodes(value)
    tree = JsonTree(MAX_NODES)
    tree.node("", value, 0)
    body = Markup('<div class="json">' + "".join(tree.out) + "</div>")
    notes = []
    truncated = tree.shown < total
    if truncated:
        notes.append(f"Showing {tree.shown:,} of {total:,} values.")
    if repeats:
        notes.append(REPEATED_NOTE)
    if replaced:
        notes.append("Some bytes are not valid UTF-8 and are shown as \ufffd.")
    html = body + (full_file_link(p) if truncated else Markup(""))
    return Viewer("json", html, truncated, " ".join(notes))
