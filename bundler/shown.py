"""Bundle text on a terminal or a page: shown, never acted on.

``validate`` and ``query`` print text a bundle's author wrote (its title, claim
texts, names quoted in diagnostics) to a reviewer's terminal.  A control
character there is an instruction, not text: ``ESC [1A ESC [2K`` erases the
line above (the verdict), ``ESC ] 0 ;`` retitles the window, OSC 52 writes the
clipboard on some terminals, and a newline starts a line the author chose
(a forged "VALID ... pinned").  Unicode bidirectional overrides reorder what
is shown around them.  :func:`shown` writes each such character as its Python
escape (``\\x1b``, ``\\u202e``), so the reviewer sees that it is there.

On a page, controls are inert, but the characters that reorder text are not:
:func:`on_page` shows them as their code points.

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


#: On a page, controls are inert; these are not.
REORDERING = re.compile(f"[{_REORDERING}]")


def _code_point(m: re.Match[str]) -> str:
    return f"[U+{ord(m.group()):04X}]"


def on_page(value: Any) -> Any:
    """``value`` (what a template prints, a search result's title) with the characters
    that reorder text shown as their code points (``[U+202E]``).

    A right-to-left override in a claim text made "Gain of \u202e%1.0" read as
    "Gain of 0.1%" on its page, while the queries and the recorded value see
    "%1.0": the page must show what the record says.  The marker holds no HTML
    character, so markup (rendered Markdown, a viewer) stays markup.  Most values
    are ASCII, which ``isascii`` answers without reading them.
    """
    if not isinstance(value, str) or value.isascii() or not REORDERING.search(value):
        return value
    text = REORDERING.sub(_code_point, value)
    return Markup(text) if isinstance(value, Markup) else text
