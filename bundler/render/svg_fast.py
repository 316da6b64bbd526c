"""Single-pass sanitiser for Graphviz SVG: the fast path of ``graphviz.postprocess``.

The reference path parses the document with ElementTree, copies it through
an allow-list and serialises the copy; for a site with a hundred thousand
graphs that costs minutes.  This module tokenises the markup once with a
regular expression and applies the *same* allow-list rules while writing
the output, producing byte-for-byte the reference result.

It only accepts the small, regular subset of XML that Graphviz writes:
double-quoted attributes, the five predefined entities and numeric
character references, comments, the SVG and XLink namespaces declared on
the root and nowhere else.  Anything outside that subset - and anything the
reference path would reject - makes :func:`sanitize` return ``None``, and the
caller runs the reference path, which then produces the same markup or
raises the same error.  So this is an optimisation, never a second policy;
the tests compare both paths on every graph of the example and synthetic
sites, and the final :func:`~bundler.render.graphviz.assert_inline_safe`
check runs on either result.

Inside the token loop two shortcuts copy Graphviz's most regular output by one
match each instead of token by token: a whole node, edge or cluster group
(:data:`_BLOCK`) and a run of shape and label lines (:data:`_RUN`).  They
accept only text whose copy they can state exactly, and otherwise leave it to
the loop; with both disabled the loop gives the same bytes (tested).

Reading the subset (tokens, attributes, entities) is :mod:`bundler.render.svg_xml`.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping

from bundler.render.svg_xml import (
    ILLEGAL,
    TOKEN,
    XL_HREF,
    XL_TITLE,
    XLINK_NS,
    Reject,
    decode,
    parse_attrs,
)

_PLAIN_ATTRS = ("transform|points|d|fill|stroke|stroke-width|stroke-dasharray|stroke-opacity|"
                "fill-opacity|cx|cy|rx|ry|r|x|y|x1|y1|x2|y2|width|height|text-anchor|"
                "font-family|font-size|font-weight|font-style|viewBox|id")
#: Elements whose allow-listed copy is their own token: no title logic (``g``
#: only without a class), plain attribute values, one space before each.
_SIMPLE = re.compile(
    rf'<(?:(?:path|polygon|polyline|ellipse|circle|rect|line|text|tspan)'
    rf'(?: (?:{_PLAIN_ATTRS}|class)="[^"&<>\t\n\r]*")*'
    rf'|g(?: (?:{_PLAIN_ATTRS})="[^"&<>\t\n\r]*")*)/?>')


#: A run of lines that each hold one element whose allow-listed copy is the line
#: itself: a simple shape (self-closing), or a ``text`` with simple attributes and
#: character data that decoding and re-escaping leave as it is (no '>', no
#: entity but ``&amp;``, ``&lt;``, ``&gt;``; never empty, which would become
#: ``<text/>``).  Graphviz draws every node and edge as such a run, so copying
#: the run whole skips two to four tokens per line.
_RUN = re.compile(
    rf'(?:(?:<(?:path|polygon|polyline|ellipse|circle|rect|line)'
    rf'(?: (?:{_PLAIN_ATTRS}|class)="[^"&<>\t\n\r]*")*/>'
    rf'|<text(?: (?:{_PLAIN_ATTRS}|class)="[^"&<>\t\n\r]*")*>'
    rf'(?:[^<>&\n]|&(?:amp|lt|gt);)+</text>)\n)+')

#: One node, edge or cluster as Graphviz draws it: its comment, its group, the
#: internal ``<title>``, then runs and link groups (``<g id="a_..."><a ...>`` around
#: a run).  The copy drops the comment, puts the accessible name in the title and
#: in each link's ``xlink:title``, and keeps everything else as it is.  Entities
#: are limited to ones the reference decodes without complaint.
_LINK = re.compile(r'<a(?: xlink:href="([A-Za-z0-9._~%/#-]+)")? xlink:title="[^"]*">')
_BLOCK = re.compile(
    r'<!-- [^<>\n-]*(?:-[^<>\n-]+)* -->\n'
    r'<g id="([A-Za-z0-9_-]+)" class="((?:node|edge|cluster)(?: [A-Za-z0-9_-]+)*)">\n'
    r'<title>(?:[^<>&\n]|&(?:amp|lt|gt|quot|apos|#39);)*</title>\n'
    r'((?:<g id="a_[A-Za-z0-9_-]+"><a(?: xlink:href="[A-Za-z0-9._~%/#-]+")? xlink:title="'
    r'(?:[^"<>&\n\t]|&(?:amp|lt|gt|quot|apos|#39);)*">\n'
    rf'{_RUN.pattern}</a>\n</g>\n|{_RUN.pattern})*)</g>\n')

#: An attribute named twice (XML forbids it; the reference path raises).
_REPEATED = re.compile(r' ([a-z-]+)="[^"]*".* \1="')


class _Frame:
    __slots__ = ("emit", "mode", "opened", "seen_child", "tag", "tail_kept", "title")

    def __init__(self, tag: str, emit: bool, mode: str, title: str | None) -> None:
        self.tag = tag
        self.emit = emit          # copied to the output (False: skipped subtree)
        self.mode = mode          # "title" | "text" | "layout" (how its own text is kept)
        self.title = title        # accessible name for descendants
        self.opened = False       # ">" written (it has content), else "/>" at the end
        self.seen_child = False
        self.tail_kept = False    # the last child was emitted, so its tail is kept


def sanitize(doc: str, name: str, titles: Mapping[str, str], hrefs: frozenset[str],
             allowed_tags: frozenset[str], allowed_attrs: frozenset[str],
             safe_url: Callable[[str], str | None], esc: Callable[[str, bool], str],
             head: Callable[[str], str]) -> str | None:
    """The reference postprocess result for ``doc``, or None (use the reference path).

    ``head(view_box)`` returns the opening of our output: the new root start
    tag with its title and description, ending just before the copy of the
    graph group.
    """
    start = doc.find("<svg")
    if start < 0 or ILLEGAL.search(doc, start):
        return None
    # Graphviz writes every '-' of ids and classes as &#45;.  Decoding it up front is
    # what the parser would do anywhere but in a comment, where it could form "--":
    # that case is refused below (and the reference path gets the original text).
    body = doc[start:].replace("&#45;", "-")
    try:
        return _run(body, 0, name, titles, hrefs, allowed_tags, allowed_attrs, safe_url,
                    esc, head)
    except Reject:
        return None


def _run(doc: str, pos: int, name: str, titles: Mapping[str, str], hrefs: frozenset[str],
         allowed_tags: frozenset[str], allowed_attrs: frozenset[str],
         safe_url: Callable[[str], str | None], esc: Callable[[str, bool], str],
         head: Callable[[str], str]) -> str:
    out: list[str] = []
    stack: list[_Frame] = []
    pending: list[str] = []           # character data since the last tag
    state = "root"                    # root -> top (expect own title) -> body -> done
    xlink = False                     # xmlns:xlink declared on the root
    view_box = ""
    end = len(doc)
    # one search of the whole document; spans are searched only if it finds something
    repeats = _REPEATED.search(doc, pos) is not None

    def flush() -> None:
        """Hand the pending character data to its owner: the text of the current
        element (before its first child) or the tail of its last child."""
        if not pending or not stack:
            pending.clear()
            return
        text = "".join(pending)
        pending.clear()
        frame = stack[-1]
        if not frame.emit:
            return
        if frame.seen_child:
            if frame.tail_kept and "\n" in text:
                out.append("\n")
        elif frame.mode == "text":
            open_(frame)
            out.append(esc(text, False))
        elif frame.mode == "layout" and "\n" in text:
            open_(frame)
            out.append("\n")

    def open_(frame: _Frame) -> None:
        if not frame.opened:
            out.append(">")
            frame.opened = True

    while pos < end:
        if state == "body" and stack[-1].emit and doc.startswith("<!--", pos):
            blk = _BLOCK.match(doc, pos)
            copy = None if blk is None else _block(blk, titles, hrefs, safe_url, esc, repeats)
            if blk is not None and copy is not None:
                # as the token loop would: the comment's newline joins the pending
                # data, the group's own tail ("\n") is left pending
                pending.append("\n")
                flush()
                parent = stack[-1]
                open_(parent)
                out.append(copy)
                parent.seen_child = True
                parent.tail_kept = True
                pending.append("\n")
                pos = blk.end()
                continue
        if state == "body" and stack[-1].emit and doc.startswith("<", pos):
            run = _RUN.match(doc, pos)
            if run is not None and not (repeats and _REPEATED.search(doc, pos, run.end())):
                # what the token loop writes for these lines: the first one's
                # pending data flushed, then each line, then "\n" left pending
                flush()
                parent = stack[-1]
                open_(parent)
                out.append(doc[pos:run.end() - 1])
                parent.seen_child = True
                parent.tail_kept = True
                pending.append("\n")
                pos = run.end()
                continue
        m = TOKEN.match(doc, pos)
        if m is None:
            raise Reject
        pos = m.end()
        closing, tag, raw_attrs, self_closing, ws, comment, ws2, text = m.groups()
        if text is not None:
            if state == "done":
                if text.strip():
                    raise Reject
            elif "]]>" in text:
                raise Reject
            else:
                pending.append(decode(text))
            continue
        if comment is not None:
            if "--" in comment or comment.endswith("-"):
                raise Reject
            if ws2 and state != "done":
                pending.append(ws2)
            continue
        if state == "done" or ":" in tag:
            raise Reject
        if closing:
            if raw_attrs or self_closing or not stack or stack[-1].tag != tag:
                raise Reject
            flush()
            frame = stack.pop()
            if state == "top":
                raise Reject          # the group closed before its own title
            if not stack:
                state = "done"
                continue
            if frame.emit:
                _close(frame, out)
            parent = stack[-1]
            parent.seen_child = True
            parent.tail_kept = frame.emit
        elif state == "body" and stack[-1].emit and _SIMPLE.fullmatch(doc, m.start(), m.start(5)) \
                and not (repeats and _REPEATED.search(doc, m.start(), m.start(5))):
            # the common case: an allow-listed element whose attributes are plain
            # values in canonical form, so the copy is the token itself
            flush()
            parent = stack[-1]
            open_(parent)
            token = doc[m.start():m.start(5)]
            if self_closing:
                out.append(token)
                parent.seen_child = True
                parent.tail_kept = True
            else:
                out.append(token[:-1])
                stack.append(_Frame(tag, True, "text" if tag in ("text", "tspan") else "layout",
                                    parent.title))
        elif state == "body":
            if len(stack) == 1:
                raise Reject          # a second child of the root
            flush()
            parent = stack[-1]
            if not parent.emit or (tag == "title" and parent.title is None):
                parse_attrs(raw_attrs, False, xlink)   # still well-formed, like the parser needs
                frame = _Frame(tag, False, "layout", None)
            else:
                open_(parent)
                frame = _start(tag, parse_attrs(raw_attrs, False, xlink), parent.title, titles,
                               hrefs, allowed_tags, allowed_attrs, safe_url, esc, out)
            if self_closing:
                if frame.emit:
                    _close(frame, out)
                parent.seen_child = True
                parent.tail_kept = frame.emit
            else:
                stack.append(frame)
        elif state == "root":
            attrs = parse_attrs(raw_attrs, True, xlink)
            if tag != "svg" or "viewBox" not in attrs or "xmlns" not in attrs or self_closing:
                raise Reject
            if any(k.startswith("{") for k in attrs) and "xmlns:xlink" not in attrs:
                raise Reject          # an xlink: attribute with the prefix undeclared
            xlink = "xmlns:xlink" in attrs
            view_box = attrs["viewBox"]
            stack.append(_Frame(tag, False, "layout", None))
            state = "svg"
            continue                   # the root's own text is not kept
        elif state == "svg":
            # the single child of the root: Graphviz's graph group
            attrs = parse_attrs(raw_attrs, False, xlink)
            if len(stack) != 1 or tag != "g" or attrs.get("class") != "graph" or self_closing:
                raise Reject
            out.append(head(view_box))
            pending.clear()
            attrs["id"] = f"{name}-graph"
            stack.append(_start(tag, attrs, None, titles, hrefs, allowed_tags, allowed_attrs,
                                safe_url, esc, out))
            state = "top"
        else:  # state == "top": Graphviz's own <title>NAME</title>, checked and dropped
            if len(stack) != 2 or tag != "title" or self_closing:
                raise Reject
            parse_attrs(raw_attrs, False, xlink)
            title_end = doc.find("</title>", pos)
            if title_end < 0 or decode(doc[pos - len(ws):title_end]) != name:
                raise Reject
            top = stack[-1]
            flush()
            top.seen_child = True
            top.tail_kept = False      # its tail goes with it
            pos = title_end + len("</title>")
            state = "body"
            continue
        if ws:
            pending.append(ws)
    if state != "done":
        raise Reject
    out.append("\n</svg>")
    return "".join(out)


def _block(blk: re.Match[str], titles: Mapping[str, str], hrefs: frozenset[str],
           safe_url: Callable[[str], str | None],
           esc: Callable[[str, bool], str], repeats: bool) -> str | None:
    """The copy of one :data:`_BLOCK` match, or None to let the token loop decide."""
    gid, cls, inner = blk.group(1, 2, 3)
    title = titles.get(gid)
    if not title or (repeats and _REPEATED.search(blk.string, blk.start(), blk.end())):
        return None
    quoted = esc(title, True)
    links: list[str] = []
    last = 0
    for link in _LINK.finditer(inner):
        href = link.group(1)
        if href is not None and (safe_url(href) is None or href not in hrefs):
            return None
        links.append(inner[last:link.start()])
        links.append(f'<a xlink:href="{href}" xlink:title="{quoted}">' if href is not None
                     else f'<a xlink:title="{quoted}">')
        last = link.end()
    links.append(inner[last:])
    return f'<g id="{gid}" class="{cls}">\n<title>{esc(title, False)}</title>\n' \
        f'{"".join(links)}</g>'


def _start(tag: str, attrs: dict[str, str], title: str | None, titles: Mapping[str, str],
           hrefs: frozenset[str], allowed_tags: frozenset[str], allowed_attrs: frozenset[str],
           safe_url: Callable[[str], str | None], esc: Callable[[str, bool], str],
           out: list[str]) -> _Frame:
    """Write the start of an allow-listed copy of one element; the frame for its content."""
    if tag not in allowed_tags:
        raise Reject
    kept: dict[str, str] = {}
    for key, value in attrs.items():
        if key.lower().startswith("on") or key == "style":
            raise Reject
        if key in allowed_attrs:
            kept[key] = value
    if tag == "g" and "id" in kept and "class" in kept and kept["class"] != "graph":
        classes = kept["class"].split()
        if not classes:
            raise Reject
        if classes[0] in ("node", "edge", "cluster"):
            if kept["id"] not in titles:
                raise Reject
            title = titles[kept["id"]]
    if tag == "a":
        if title is not None and XL_TITLE in kept:
            kept[XL_TITLE] = title
        href = kept.get(XL_HREF)
        if href is not None and (safe_url(href) is None or href not in hrefs):
            raise Reject
    out.append(f"<{tag}")
    for key, value in kept.items():
        out.append(f' {key.replace(f"{{{XLINK_NS}}}", "xlink:")}="{esc(value, True)}"')
    frame = _Frame(tag, True, "title" if tag == "title" else
                   "text" if tag in ("text", "tspan", "desc") else "layout", title)
    if tag == "title" and title:
        frame.opened = True
        out.append(">" + esc(title, False))
    return frame


def _close(frame: _Frame, out: list[str]) -> None:
    out.append(f"</{frame.tag}>" if frame.opened else "/>")
