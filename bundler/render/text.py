"""Plain-text excerpts of untrusted Markdown, for listings and search.

Lists show a claim's text as one line; rendering Markdown there would let
a claim inject headings and tables into an index page, and showing the
source leaves ``**`` and backticks in the way.  The text is taken from the
parser's tokens, so it is exactly what the rendered claim says (NUL included,
which the page then marks as ``[U+0000]``).
"""

from __future__ import annotations

from bundler.render.markdown import commonmark

_MD = commonmark()


def plain_text(markdown: str, limit: int = 240) -> str:
    parts: list[str] = []
    for token in _MD.parse(markdown):
        if token.type == "inline" and token.children:
            for child in token.children:
                if child.type in ("text", "code_inline"):
                    parts.append(child.content)
                elif child.type in ("softbreak", "hardbreak"):
                    parts.append(" ")
            parts.append(" ")
        elif token.type in ("fence", "code_block"):
            parts.append(token.content + " ")
    text = " ".join("".join(parts).split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"
