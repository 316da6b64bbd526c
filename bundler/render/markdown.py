"""Markdown written by an agent, rendered as if it were hostile.

Everything in a bundle is untrusted (DESIGN-NOTES §5), so the renderer is
CommonMark with raw HTML switched off, plus a token pass that:

* replaces remote images with their alt text and a plain link, because an
  ``<img>`` pointing elsewhere is a tracking beacon and the site promises to
  make no network request (§4); only inline ``data:image/png|gif|jpeg|webp``
  images survive;
* marks external links ``rel="noopener noreferrer nofollow"`` and turns every
  other link into text: relative paths point into the agent's workspace,
  which the site does not contain, so they are shown (in parentheses) rather
  than left as dead links;
* demotes headings by two levels, so agent prose can never compete with the
  page's own ``<h1>``/``<h2>`` outline;
* keeps NUL, which CommonMark would turn into U+FFFD (a guard for parsers
  that end strings at NUL; Python's do not), so the page marks it as
  ``[U+0000]`` like every other control character (:mod:`bundler.shown`)
  instead of showing a replacement character the record does not hold.

Pipe tables are enabled because markdown reports use them.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from urllib.parse import unquote

from markdown_it import MarkdownIt
from markdown_it.rules_core import StateCore
from markdown_it.token import Token
from markupsafe import Markup

__all__ = ["EXTERNAL_REL", "classify_href", "commonmark", "render_markdown"]

EXTERNAL_REL = "noopener noreferrer nofollow"

_EXTERNAL = re.compile(r"^(?:https?://[^/\\\s]|mailto:[^\s])", re.IGNORECASE)
#: Relative references: no scheme (no colon at all), not protocol-relative, no
#: backslashes or whitespace.  ``..`` is checked after percent-decoding.
_RELATIVE = re.compile(r"^(?!//)[A-Za-z0-9_\-./#?=&%~+,;@]+$")
_DATA_IMAGE = re.compile(r"^data:image/(?:png|gif|jpeg|webp);", re.IGNORECASE)
_HEADING = re.compile(r"^h([1-6])$")


def classify_href(href: str) -> str:
    """Return ``"external"``, ``"relative"`` or ``"unsafe"`` for a link target."""
    if _EXTERNAL.match(href):
        return "external"
    if _RELATIVE.match(href):
        decoded = unquote(unquote(href))
        if ".." not in decoded and "\\" not in decoded and ":" not in decoded.split("#")[0]:
            return "relative"
    return "unsafe"


def _plain_text(tokens: Sequence[Token] | None) -> str:
    """The visible text of an inline token list (what an image's alt would say)."""
    out: list[str] = []
    for tok in tokens or ():
        if tok.type in ("text", "code_inline"):
            out.append(tok.content)
        elif tok.type in ("softbreak", "hardbreak"):
            out.append(" ")
        elif tok.children:
            out.append(_plain_text(tok.children))
    return "".join(out)


def _text(content: str) -> Token:
    return Token("text", "", 0, content=content)


def _image_tokens(img: Token, inside_link: bool) -> list[Token]:
    """An image the page must not load, turned into its alt text plus a link."""
    src = str(img.attrs.get("src", ""))
    alt = _plain_text(img.children).strip() or "image"
    if inside_link or classify_href(src) != "external":
        return [_text(f"[image: {alt}]")]
    link = Token("link_open", "a", 1)
    link.attrSet("href", src)
    link.attrSet("class", "md-image-link")
    if classify_href(src) == "external":
        link.attrSet("rel", EXTERNAL_REL)
    return [_text(f"[image: {alt}] ("), link, _text("open image"),
            Token("link_close", "a", -1), _text(")")]


def _rewrite_inline(children: list[Token]) -> list[Token]:
    out: list[Token] = []
    dropped: list[str | None] = []  # per open link: None if kept, else text to append
    for tok in children:
        if tok.type == "link_open":
            href = str(tok.attrs.get("href", ""))
            kind = classify_href(href)
            if kind != "external":
                dropped.append(f" ({href})" if kind == "relative" else "")
                continue
            dropped.append(None)
            tok.attrSet("rel", EXTERNAL_REL)
        elif tok.type == "link_close":
            suffix = dropped.pop() if dropped else None
            if suffix is not None:
                if suffix:
                    out.append(_text(suffix))
                continue
        elif tok.type == "image":
            src = str(tok.attrs.get("src", ""))
            if not _DATA_IMAGE.match(src):
                out.extend(_image_tokens(tok, inside_link=bool(dropped)))
                continue
        out.append(tok)
    return out


def _harden(state: StateCore) -> None:
    for tok in state.tokens:
        if tok.type in ("heading_open", "heading_close"):
            m = _HEADING.match(tok.tag)
            if m:
                tok.tag = f"h{min(int(m.group(1)) + 2, 6)}"
        elif tok.type == "inline" and tok.children:
            tok.children = _rewrite_inline(tok.children)


_NEWLINES = re.compile(r"\r\n?")


def _normalize(state: StateCore) -> None:
    """markdown-it's own normalize rule without its NUL replacement."""
    state.src = _NEWLINES.sub("\n", state.src)


def commonmark() -> MarkdownIt:
    """The CommonMark parser every reading of agent Markdown starts from: raw HTML
    off, NUL kept (:func:`_normalize`), so the page and the listings' excerpts
    (:mod:`bundler.render.text`) see the same characters."""
    md = MarkdownIt("commonmark", {"html": False})
    md.core.ruler.at("normalize", _normalize)
    return md


def _build() -> MarkdownIt:
    md = commonmark().enable("table")
    md.core.ruler.push("rb_harden", _harden)
    return md


_MD = _build()


def render_markdown(text: str) -> Markup:
    """Render untrusted Markdown to a safe HTML fragment (deterministic)."""
    return Markup(_MD.render(text))
