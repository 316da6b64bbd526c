"""Viewers for text-like payloads: source code, plain text, Markdown, diffs.

Every one renders at most ``max_bytes`` of the payload; the rest is a link.
"""

from __future__ import annotations

import re

from markupsafe import Markup, escape

from bundler.render.highlight import highlight_code, is_plain_text, pick_lexer, plain_block
from bundler.render.markdown import render_markdown
from bundler.render.viewers_common import (
    REPLACED_NOTE,
    Payload,
    Viewer,
    decode_text,
    full_file_link,
)

__all__ = ["code_viewer", "diff_line_classes", "diff_viewer", "markdown_viewer"]


def _head_text(p: Payload) -> tuple[str, list[str]]:
    """The renderable text and the notes that go with it."""
    text, replaced = decode_text(p.head, p.charset, complete=not p.head_truncated)
    notes = [n for n in (p.bytes_note(), REPLACED_NOTE if replaced else "") if n]
    return text, notes


def _finish(kind: str, body: Markup, p: Payload, notes: list[str]) -> Viewer:
    truncated = p.head_truncated
    html = body + (full_file_link(p) if truncated else Markup(""))
    return Viewer(kind, Markup(html), truncated, " ".join(notes))


#: Pygments needs ~1 s per 128 KiB of Python here; above this, text is shown uncoloured.
HIGHLIGHT_LIMIT = 65_536


def code_viewer(p: Payload, notes: tuple[str, ...] = ()) -> Viewer:
    """Highlighted source; plain text goes through the same path (TextLexer)."""
    text, own = _head_text(p)
    lexer = pick_lexer(p.name, p.media_type)
    if is_plain_text(lexer):
        return _finish("text", plain_block(text), p, [*notes, *own])
    if len(text) > HIGHLIGHT_LIMIT:
        own.append("Too large to colour; shown as plain text.")
        return _finish("code", plain_block(text), p, [*notes, *own])
    return _finish("code", highlight_code(text, p.name, p.media_type), p, [*notes, *own])


def markdown_viewer(p: Payload) -> Viewer:
    text, notes = _head_text(p)
    body = Markup('<div class="markdown-body">{}</div>').format(render_markdown(text))
    return _finish("markdown", body, p, notes)


_META_PREFIXES = ("diff ", "index ", "new file mode", "deleted file mode", "old mode",
                  "new mode", "similarity index", "dissimilarity index", "rename from",
                  "rename to", "copy from", "copy to", "Binary files", "\\ No newline")
_HUNK = re.compile(r"^@@ -\d+(?:,(\d+))? \+\d+(?:,(\d+))? @@")


def diff_line_classes(lines: list[str]) -> list[str]:
    """The CSS class of each unified-diff line.

    Inside a hunk the ``@@ -a,b +c,d @@`` counts say how many lines follow,
    so a removed line that happens to start ``--- `` is still a deletion, not
    a file header.  Outside hunks (or for malformed headers) prefixes decide.
    """
    out: list[str] = []
    old = new = 0
    for line in lines:
        if old > 0 or new > 0:
            first = line[:1]
            if first == "+":
                out.append("diff-add")
                new -= 1
            elif first == "-":
                out.append("diff-del")
                old -= 1
            elif first == "\\":
                out.append("diff-meta")
            else:
                out.append("diff-ctx")
                old, new = old - 1, new - 1
            continue
        m = _HUNK.match(line)
        if m:
            old = int(m.group(1)) if m.group(1) is not None else 1
            new = int(m.group(2)) if m.group(2) is not None else 1
            out.append("diff-hunk")
        elif line.startswith("@@"):
            out.append("diff-hunk")
        elif line.startswith(("+++", "---")) or line.startswith(_META_PREFIXES):
            out.append("diff-meta")
        elif line.startswith("+"):
            out.append("diff-add")
        elif line.startswith("-"):
            out.append("diff-del")
        else:
            out.append("diff-ctx")
    return out


def diff_viewer(p: Payload) -> Viewer:
    """``<pre class="diff">`` with one classed span per line."""
    text, notes = _head_text(p)
    lines = [line.removesuffix("\r") for line in text.split("\n")]
    if lines and lines[-1] == "":
        lines.pop()
    # plain f-strings over escape(): Markup.format is ~8x slower on 30k-line diffs
    spans = "\n".join(f'<span class="{cls}">{escape(line)}</span>'
                      for cls, line in zip(diff_line_classes(lines), lines, strict=True))
    body = Markup(f'<pre class="diff">{spans}\n</pre>')
    return _finish("diff", body, p, notes)
