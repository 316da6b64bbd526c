"""Bundle text on a terminal or a page: shown, never acted on.

``validate`` and ``query`` print text a bundle's author wrote (its title, claim
texts, names quoted in diagnostics) to a reviewer's terminal.  A control
character there is an instruction, not text: ``ESC [1A ESC [2K`` erases the
line above (the verdict), ``ESC ] 0 ;`` retitles the window, OSC 52 writes the
clipboard on some terminals, and a newline starts a line the author chose
(a forged "VALID ... pinned").  Unicode bidirectional overrides reorder what
is shown around them.  :func:`shown` writes each such character as its Python
escape (``\\x1b``, ``\\u202e``), so the reviewer sees that it is there.

On a page, controls are inert but hidden: the browser draws ESC, BEL and DEL as
one identical box and C1 as nothing.  The characters that reorder text are not
even inert.  :func:`on_page` shows both kinds as their code points.

Machine formats (JSON, SARIF, the proof file) keep the values as they are:
JSON escapes C0 controls itself, and a consumer needs the exact bytes.
"""

from __future__ import annotations

import re
from typing import Any

from markupsafe import Markup

#: The invisible characters that reorder or hide text: bidi marks, embeddings,
#: overrides and isolates, zero-width characters, the Arabic letter mark, the BOM.
_REORDERING = "\u061c\u200b-\u200f\u202a-\u202e\u2060-\u2069\ufeff"
#: C0 and C1 controls and DEL but the newline, and the line and paragraph separators.
_CONTROLS = "\x00-\x09\x0b-\x1f\x7f-\x9f\u2028\u2029"
_ACTIVE = re.compile(f"[\n{_CONTROLS}{_REORDERING}]")
_ACTIVE_BUT_NEWLINE = re.compile(f"[{_CONTROLS}{_REORDERING}]")


_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _escape(m: re.Match[str]) -> str:
    ch = m.group()
    named = _NAMED.get(ch)
    if named is not None:
        return named
    return f"\\x{ord(ch):02x}" if ord(ch) < 0x100 else f"\\u{ord(ch):04x}"


def shown(text: object, *, lines: bool = False) -> str:
    """``str(text)`` with every active character escaped; ``lines`` keeps newlines
    (for a block of text printed as it is, such as a proof's extra data)."""
    return (_ACTIVE_BUT_NEWLINE if lines else _ACTIVE).sub(_escape, str(text))


#: The controls a page shows as code points: C0 but the tab, newline and carriage
#: return (which lay text out), DEL and C1.
_HIDDEN = "\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f"
#: Everything :func:`on_page` marks.
MARKED = re.compile(f"[{_HIDDEN}{_REORDERING}]")
#: The ASCII characters a page shows as they are (deleted to find the rest fast).
_ASCII_SHOWN = bytes(c for c in range(0x80) if not MARKED.match(chr(c)))


def code_point(m: re.Match[str]) -> str:
    """How a page shows the one character ``m`` matched: ``[U+202E]``."""
    return f"[U+{ord(m.group()):04X}]"


#: A :func:`code_point` marker (up to U+10FFFF).
MARKER = re.compile(r"\[U\+[0-9A-F]{4,6}\]")


def cut(text: str, at: int) -> str:
    """``text[:at]``, or less: never the first part of a :func:`code_point` marker.
    Text is cut before an ellipsis (a graph label, a search title); half a marker,
    ``[U+00…``, would name no character."""
    if "[U+" in text:
        for m in MARKER.finditer(text):
            if m.start() >= at:
                break
            if at < m.end():
                return text[:m.start()]
    return text[:at]


def on_page(value: Any) -> Any:
    """``value`` (what a template prints, a search result's title) with the characters
    that reorder text, and the controls but tab and line ends, shown as their code
    points (``[U+202E]``, ``[U+001B]``).

    A right-to-left override in a claim text made "Gain of \\u202e%1.0" read as
    "Gain of 0.1%" on its page, while the queries and the recorded value see
    "%1.0": the page must show what the record says.  The marker holds no HTML
    character, so markup (rendered Markdown, a viewer) stays markup.  A control is
    marked too: the browser draws ESC, BEL and DEL as the same box, NUL as U+FFFD
    and most C1 controls as nothing, so ``\\x1b[31m`` in a log and ``\\x07`` in a
    name must read as what they are.  Most values are ASCII with no control, which
    ``isprintable`` (a short value) or a byte deletion (a block of text) answers
    at C speed, eight times faster than the pattern on a block.
    """
    if not isinstance(value, str):
        return value
    if value.isascii():
        if len(value) < 64 and value.isprintable():
            return value                    # an id, a name: the common case
        if not value.encode("ascii").translate(None, _ASCII_SHOWN):
            return value                    # 1 GB/s; isprintable reads 4 ns a character
    elif not MARKED.search(value):
        return value
    text = MARKED.sub(code_point, value)
    return Markup(text) if isinstance(value, Markup) else text
