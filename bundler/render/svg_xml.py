"""The XML subset Graphviz writes: tokens, attributes, entities.

The lexical half of :mod:`bundler.render.svg_fast`.  Anything outside the
subset raises :class:`Reject`, which sends the document to the reference
sanitiser (ElementTree) instead: these functions never decide what is safe,
only what they can read exactly as expat would.
"""

from __future__ import annotations

import re

SVG_NS = "http://www.w3.org/2000/svg"
XLINK_NS = "http://www.w3.org/1999/xlink"

#: A tag (with the layout whitespace after it), a comment, or character data.
TOKEN = re.compile(
    r'<(/?)([A-Za-z_][A-Za-z0-9_.:-]*)((?:\s+[A-Za-z_][A-Za-z0-9_.:-]*\s*=\s*"[^"<]*")*)\s*(/?)>'
    r'([ \t\n]*)|<!--(.*?)-->([ \t\n]*)|([^<]+)', re.DOTALL)
ATTR = re.compile(r'\s+([A-Za-z_][A-Za-z0-9_.:-]*)\s*=\s*"([^"<]*)"')
# Characters XML 1.0 forbids, plus \r (expat would normalise line ends; we do not).
ILLEGAL = re.compile("[\x00-\x08\x0b\x0c\x0d\x0e-\x1f\ud800-\udfff\ufffe\uffff]")
ENTITY = re.compile(r"&(?:#([0-9]{1,7})|#x([0-9a-fA-F]{1,6})|(amp|lt|gt|quot|apos));")
XL_TITLE = f"{{{XLINK_NS}}}title"
XL_HREF = f"{{{XLINK_NS}}}href"
NAMED = {"amp": "&", "lt": "<", "gt": ">", "quot": '"', "apos": "'"}


class Reject(Exception):
    """Outside the subset: let the reference path decide."""


def xml_char(code: int) -> str:
    if code in (0x9, 0xA, 0xD) or 0x20 <= code <= 0xD7FF or 0xE000 <= code <= 0xFFFD \
            or 0x10000 <= code <= 0x10FFFF:
        return chr(code)
    raise Reject


def _entity(m: re.Match[str]) -> str:
    if m.group(3):
        return NAMED[m.group(3)]
    return xml_char(int(m.group(1)) if m.group(1) else int(m.group(2), 16))


def decode(text: str) -> str:
    if "&" not in text:
        return text
    decoded = ENTITY.sub(_entity, text)
    if "&" in ENTITY.sub("", text):
        raise Reject   # a bare '&' or an entity XML does not predefine
    return decoded


def parse_attrs(raw: str, root: bool, xlink: bool) -> dict[str, str]:
    """Attribute name (``{ns}local`` for XLink) -> decoded, whitespace-normalised value.

    On the root, ``xmlns`` must be SVG's and ``xmlns:xlink`` (if any) XLink's;
    they are returned under their own names.  Elsewhere namespace declarations
    are refused, and ``xlink:`` needs ``xlink`` (declared on the root).
    """
    out: dict[str, str] = {}
    for name, value in ATTR.findall(raw):
        if root and name in ("xmlns", "xmlns:xlink"):
            if value != (SVG_NS if name == "xmlns" else XLINK_NS) or name in out:
                raise Reject
            out[name] = value
            continue
        if name.startswith("xlink:") and name.count(":") == 1 and (xlink or root):
            key = f"{{{XLINK_NS}}}{name[6:]}"
        elif ":" in name or name == "xmlns":
            raise Reject
        else:
            key = name
        if key in out:
            raise Reject
        out[key] = decode(value.replace("\t", " ").replace("\n", " "))
    return out
