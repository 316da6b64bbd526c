"""JSON payloads as a collapsible tree of nested ``<details>``.

The top two levels start open so a reviewer sees the shape at once; deeper
levels start closed.  The number of rendered values is capped so a 50 MB
log does not become a 500 MB page.
"""

from __future__ import annotations

import json
from typing import Any

from markupsafe import Markup

from bundler.render.viewers_common import (
    Payload,
    Viewer,
    decode_text,
    full_file_link,
    human_size,
    plural,
)
from bundler.render.viewers_text import code_viewer

__all__ = ["MAX_NODES", "count_nodes", "json_viewer"]

MAX_NODES = 2_000
OPEN_DEPTH = 2
MAX_DEPTH = 64
MAX_STRING = 1_000
#: Parse at most this many times ``max_bytes``; larger files are shown as text.
PARSE_FACTOR = 4


def count_nodes(value: Any) -> int:
    """Values in a parsed document, counted without recursion (depth is untrusted)."""
    total, stack = 0, [value]
    while stack:
        v = stack.pop()
        total += 1
        if isinstance(v, dict):
            stack.extend(v.values())
        elif isinstance(v, list):
            stack.extend(v)
    return total


class _Tree:
    def __init__(self, budget: int) -> None:
        self.budget = budget
        self.shown = 0

    def scalar(self, v: Any) -> Markup:
        if v is None:
            return Markup('<span class="json-null">null</span>')
        if isinstance(v, bool):
            return Markup('<span class="json-bool">{}</span>').format("true" if v else "false")
        if isinstance(v, int | float):
            return Markup('<span class="json-num">{}</span>').format(json.dumps(v))
        s = str(v)
        if len(s) > MAX_STRING:
            s = s[:MAX_STRING] + "\u2026"
        return Markup('<span class="json-str">{}</span>').format(json.dumps(s, ensure_ascii=False))

    def node(self, key: Markup, v: Any, depth: int) -> Markup:
        """One ``<li>`` body: the key, then either a scalar or a nested block."""
        self.shown += 1
        if not isinstance(v, dict | list):
            return key + self.scalar(v)
        if not v:
            return key + Markup('<span class="json-empty">{}</span>').format(
                "{}" if isinstance(v, dict) else "[]")
        is_obj = isinstance(v, dict)
        size = plural(len(v), "key" if is_obj else "item")
        brackets = "{\u2026}" if is_obj else "[\u2026]"
        summary = key + Markup('<span class="json-type">{}</span> <span class="json-count">{}'
                               "</span>").format(brackets, size)
        if depth >= MAX_DEPTH:
            return summary + Markup(' <span class="json-more">(nested too deeply to show)</span>')
        items = list(v.items()) if isinstance(v, dict) else list(enumerate(v))
        children: list[Markup] = []
        for i, (k, child) in enumerate(items):
            if self.shown >= self.budget:
                left = len(items) - i
                more = "1 more entry" if left == 1 else f"{left:,} more entries"
                children.append(Markup('<li class="json-more">\u2026 {} not shown</li>').format(
                    more))
                break
            label = (Markup('<span class="json-key">{}</span>: ').format(
                json.dumps(k, ensure_ascii=False)) if is_obj
                else Markup('<span class="json-index">{}</span>: ').format(k))
            children.append(Markup("<li>") + self.node(label, child, depth + 1) + Markup("</li>"))
        open_attr = " open" if depth < OPEN_DEPTH else ""
        return (Markup(f"<details{open_attr}><summary>") + summary
                + Markup('</summary><ul class="json-children">') + Markup("").join(children)
                + Markup("</ul></details>"))


def json_viewer(p: Payload) -> Viewer:
    """The tree, or the text viewer with a note when the bytes are not JSON we can show."""
    if p.total > p.max_bytes * PARSE_FACTOR or not p.complete:
        return code_viewer(p, (f"This JSON file ({human_size(p.total)}) is too large to show "
                               "as a tree; it is shown as text.",))
    text, replaced = decode_text(p.data, p.charset, complete=True)
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        return code_viewer(p, (f"Not valid JSON (line {exc.lineno}, column {exc.colno}: "
                               f"{exc.msg}); shown as text.",))
    except (ValueError, RecursionError):
        return code_viewer(p, ("Not JSON this viewer can parse; shown as text.",))
    total = count_nodes(value)
    tree = _Tree(MAX_NODES)
    body = Markup('<div class="json">') + tree.node(Markup(""), value, 0) + Markup("</div>")
    notes = []
    truncated = tree.shown < total
    if truncated:
        notes.append(f"Showing {tree.shown:,} of {total:,} values.")
    if replaced:
        notes.append("Some bytes are not valid UTF-8 and are shown as \ufffd.")
    html = body + (full_file_link(p) if truncated else Markup(""))
    return Viewer("json", html, truncated, " ".join(notes))
