"""Shared pieces of the payload viewers: the result type, sizes, decoding.

Kept apart from ``viewers.py`` so each viewer module can import them without
a cycle.
"""

from __future__ import annotations

import codecs
import re
from dataclasses import dataclass

from markupsafe import Markup

__all__ = [
    "REPLACED_NOTE",
    "Payload",
    "Viewer",
    "decode_text",
    "download_link",
    "download_name",
    "full_file_link",
    "human_size",
    "plural",
]


@dataclass(frozen=True)
class Viewer:
    """What an artifact page embeds for one payload.

    ``kind`` is one of: text, code, markdown, table, json, rows, diff, image, svg,
    html, download, unavailable.  ``html`` is already safe; ``note`` is a plain
    sentence (the template escapes it) or "".
    """

    kind: str
    html: Markup
    truncated: bool
    note: str


@dataclass(frozen=True)
class Payload:
    """The inputs every viewer needs, normalised once by ``render_payload``.

    ``data`` holds at most what the caller read; ``total`` is the real size
    (``len(data)`` when the caller did not say, i.e. data is the whole file).
    """

    data: bytes
    media_type: str      # lower-case, parameters stripped
    charset: str | None  # from a ``charset=`` parameter, if any
    name: str | None
    file_href: str | None
    max_bytes: int
    max_rows: int
    total: int

    @property
    def complete(self) -> bool:
        """True when ``data`` is the whole payload."""
        return len(self.data) >= self.total

    @property
    def head(self) -> bytes:
        """The bytes a text-like viewer may render."""
        return self.data[: self.max_bytes]

    @property
    def head_truncated(self) -> bool:
        return len(self.head) < self.total

    def bytes_note(self) -> str:
        """``Showing the first 256 KiB of 1.2 MiB.`` (or "" when nothing is cut)."""
        if not self.head_truncated:
            return ""
        return f"Showing the first {human_size(len(self.head))} of {human_size(self.total)}."

    @property
    def label(self) -> str:
        """A human name for the payload, for alt text and link labels."""
        return self.name or "payload"


def human_size(n: int) -> str:
    """``512 bytes``, ``256 KiB``, ``1.2 MiB`` (binary units, one decimal at most)."""
    if n < 1024:
        return f"{n:,} byte" + ("" if n == 1 else "s")
    value = float(n)
    for unit in ("KiB", "MiB", "GiB", "TiB"):
        value /= 1024
        if value < 1024 or unit == "TiB":
            text = f"{value:,.1f}".removesuffix(".0")
            return f"{text} {unit}"
    raise AssertionError("unreachable")


def plural(n: int, word: str) -> str:
    return f"{n:,} {word}" + ("" if n == 1 else "s")


#: Text codecs Python ships that are not character encodings of documents.
_NOT_DOCUMENT_CODECS = {"undefined", "idna", "punycode", "unicode-escape", "raw-unicode-escape"}


def _encoding(charset: str | None) -> str:
    """A decoder name for a declared charset: UTF-8 (BOM-tolerant) unless it is a real one.

    ``charset=`` is untrusted: ``base64``, ``zlib`` or ``rot13`` are codecs too,
    but they transform bytes rather than decode a document.
    """
    if not charset:
        return "utf-8-sig"
    try:
        info = codecs.lookup(charset)
    except LookupError:
        return "utf-8-sig"
    if not getattr(info, "_is_text_encoding", False) or info.name in _NOT_DOCUMENT_CODECS:
        return "utf-8-sig"
    return "utf-8-sig" if info.name == "utf-8" else info.name


def decode_text(data: bytes, charset: str | None, *, complete: bool) -> tuple[str, bool]:
    """Decode bytes for display; return (text, some_bytes_were_replaced).

    A head cut in the middle of a multi-byte character must not count as
    "undecodable", so an incomplete head is decoded incrementally and its
    dangling tail bytes are dropped.
    """
    encoding = _encoding(charset)
    try:
        decoder = codecs.getincrementaldecoder(encoding)(errors="strict")
        return decoder.decode(data, final=complete), False
    except UnicodeError:
        pass
    try:
        decoder = codecs.getincrementaldecoder(encoding)(errors="replace")
        return decoder.decode(data, final=complete), True
    except UnicodeError:  # e.g. UTF-16 without a BOM fails even with errors="replace"
        decoder = codecs.getincrementaldecoder("utf-8-sig")(errors="replace")
        return decoder.decode(data, final=complete), True


REPLACED_NOTE = "Some bytes are not valid text in the declared encoding and are shown as \ufffd."

_SAFE_FILENAME = re.compile(r"[^A-Za-z0-9._-]+")


def download_name(name: str | None) -> str:
    """A file name for the ``download`` attribute: the base name, tame characters only."""
    base = (name or "").replace("\\", "/").rsplit("/", 1)[-1]
    cleaned = _SAFE_FILENAME.sub("_", base).strip("._")
    return cleaned or "payload"


def full_file_link(p: Payload) -> Markup:
    """A link to the whole file, shown under a truncated viewer."""
    if not p.file_href:
        return Markup("")
    return Markup('<p class="viewer-full"><a href="{}">Open the full file ({})</a></p>').format(
        p.file_href, human_size(p.total))


def download_link(p: Payload) -> Markup:
    if not p.file_href:
        return Markup("")
    return Markup('<p class="viewer-download"><a href="{}" download="{}">Download {} ({})</a>'
                  "</p>").format(p.file_href, download_name(p.name), p.label,
                                 human_size(p.total))
