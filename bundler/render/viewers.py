"""Payload viewers, chosen by declared media type (file extension as fallback).

The content is never sniffed into a more powerful viewer: bytes become HTML
only when the bundle *declared* them HTML, and even then only inside a
``sandbox=""`` iframe under its own CSP.  SVG is shown only through
``<img>``, where it cannot run script or restyle the page (DESIGN-NOTES §5).
Images must carry the magic bytes of their declared type, so a mislabelled
file is offered as a download instead of being handed to the image decoder.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import PurePosixPath

from markupsafe import Markup

from bundler.render.highlight import JSON_LINES_SUFFIXES, JSON_LINES_TYPES, has_filename_lexer
from bundler.render.viewers_common import (
    Payload,
    Viewer,
    decode_text,
    download_link,
)
from bundler.render.viewers_json import json_viewer
from bundler.render.viewers_rows import Quotes, rows_viewer
from bundler.render.viewers_table import csv_viewer
from bundler.render.viewers_text import code_viewer, diff_viewer, markdown_viewer

__all__ = ["HTML_SANDBOX_CSP", "Viewer", "render_payload", "viewer_category"]

HTML_SANDBOX_CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:"

_MARKDOWN = {"text/markdown", "text/x-markdown"}
_CSV = {"text/csv", "application/csv", "text/x-csv", "text/tab-separated-values", "text/tsv"}
_JSON = {"application/json", "text/json"}
_DIFF = {"text/x-diff", "text/x-patch", "application/x-patch", "text/x-udiff", "application/x-diff"}
_HTML = {"text/html", "application/xhtml+xml"}
_SVG = {"image/svg+xml"}
_IMAGES = {"image/png", "image/jpeg", "image/gif", "image/webp"}
_CODE = {
    "application/x-python", "application/x-sh", "application/x-shellscript", "application/toml",
    "application/x-toml", "application/x-yaml", "application/yaml", "application/xml",
    "application/javascript", "application/x-javascript", "application/ecmascript",
    "application/sql", "application/x-tex", "application/x-ipython", "application/x-ruby",
    "application/x-perl", "application/x-httpd-php", "application/typescript",
    "application/graphql",
}
#: Declared binary types: never re-routed by file extension.
_BINARY_PREFIXES = ("image/", "audio/", "video/", "font/", "model/", "multipart/")
_GENERIC = {"", "application/octet-stream", "binary/octet-stream", "application/unknown",
            "unknown/unknown", "application/x-unknown"}
#: File extensions trusted as a fallback, only toward text-like viewers.
_EXTENSIONS = {
    ".md": "markdown", ".markdown": "markdown", ".csv": "csv", ".tsv": "csv", ".json": "json",
    ".geojson": "json", ".ipynb": "json", ".diff": "diff", ".patch": "diff",
    **dict.fromkeys(JSON_LINES_SUFFIXES, "rows"),
}

def _category_of_type(mt: str) -> str | None:
    if mt in JSON_LINES_TYPES:
        return "rows"
    if mt in _MARKDOWN:
        return "markdown"
    if mt in _CSV:
        return "csv"
    if mt in _JSON or (mt.endswith("+json") and mt.startswith("application/")):
        return "json"
    if mt in _DIFF:
        return "diff"
    if mt in _HTML:
        return "html"
    if mt in _SVG:
        return "svg"
    if mt in _IMAGES:
        return "image"
    if mt in _CODE or mt.startswith("text/") or mt.endswith("+xml"):
        return "code"
    return None


def _category_of_name(name: str | None) -> str | None:
    """Fallback: text-like viewers only, so a name can never unlock HTML/SVG/image."""
    if not name:
        return None
    suffix = PurePosixPath(name.replace("\\", "/")).suffix.lower()
    if suffix in _EXTENSIONS:
        return _EXTENSIONS[suffix]
    if has_filename_lexer(name) or suffix in (".txt", ".log", ".text", ".out", ".err"):
        return "code"
    return None


def viewer_category(media_type: str, name: str | None) -> str:
    """markdown | csv | json | rows | diff | html | svg | image | code | download."""
    mt = media_type.split(";", 1)[0].strip().lower()
    category = _category_of_type(mt)
    if category is not None:
        return category
    if mt in _GENERIC or not mt.startswith(_BINARY_PREFIXES):
        return _category_of_name(name) or "download"
    return "download"


def _charset(media_type: str) -> str | None:
    for param in media_type.split(";")[1:]:
        key, _, value = param.partition("=")
        if key.strip().lower() == "charset" and value.strip():
            return value.strip().strip('"')
    return None


def _unavailable(message: str, note: str = "") -> Viewer:
    return Viewer("unavailable", Markup('<p class="viewer-unavailable">{}</p>').format(message),
                  False, note)


def _download(p: Payload, note: str = "") -> Viewer:
    if not p.file_href:
        return _unavailable("This file is not included in the site.", note)
    return Viewer("download", download_link(p), False, note)


def _magic_ok(data: bytes, media_type: str) -> bool:
    """Does the file start with the signature of its declared image type?"""
    if media_type == "image/png":
        return data.startswith(b"\x89PNG\r\n\x1a\n")
    if media_type == "image/jpeg":
        return data.startswith(b"\xff\xd8\xff")
    if media_type == "image/gif":
        return data.startswith((b"GIF87a", b"GIF89a"))
    return data[:4] == b"RIFF" and data[8:12] == b"WEBP"


def _image(p: Payload) -> Viewer:
    if not _magic_ok(p.data, p.media_type):
        kind = p.media_type.split("/", 1)[1].upper()
        return _download(p, f"The file is declared {p.media_type} but does not start like a "
                         f"{kind} image, so it is offered only as a download.")
    if not p.file_href:
        return _unavailable("This image is not included in the site.")
    return Viewer("image", Markup('<img class="viewer-image" src="{}" alt="{}">').format(
        p.file_href, f"Image payload: {p.label}"), False, "")


def _svg(p: Payload) -> Viewer:
    if not p.file_href:
        return _unavailable("This image is not included in the site.")
    return Viewer("svg", Markup('<img class="viewer-image viewer-svg" src="{}" alt="{}">').format(
        p.file_href, f"SVG image payload: {p.label}"), False,
        "Shown as an image: scripts, links and animations inside the SVG are disabled.")


def _html(p: Payload) -> Viewer:
    """Untrusted HTML: inside ``<iframe sandbox="">`` with a CSP meta first in srcdoc."""
    text, _ = decode_text(p.head, p.charset, complete=not p.head_truncated)
    srcdoc = f'<meta http-equiv="Content-Security-Policy" content="{HTML_SANDBOX_CSP}">' + text
    frame = Markup('<iframe class="viewer-html" sandbox="" referrerpolicy="no-referrer" '
                   'title="{}" srcdoc="{}"></iframe>').format(
        f"Sandboxed preview of {p.label}", srcdoc)
    notes = ["HTML is shown in a sandbox: scripts, forms, plug-ins and network requests "
             "are blocked, so it may look incomplete."]
    if p.head_truncated:
        notes.append(p.bytes_note())
    return Viewer("html", frame + download_link(p), p.head_truncated, " ".join(notes))


def render_payload(data: bytes | None, media_type: str, name: str | None, *,
                   file_href: str | None, max_bytes: int = 262_144, max_rows: int = 500,
                   total_size: int | None = None,
                   row_links: Mapping[int, Quotes] | None = None) -> Viewer:
    """Choose and run the viewer for one payload.

    ``data`` is None when the bytes are unavailable (the page explains why).
    ``data`` may be only the head of the file: then pass ``total_size``;
    without it ``data`` is taken to be the whole payload.  ``file_href`` is the
    relative URL of the full file in the site, or None if it was not copied.
    ``row_links``: row number -> the trace records that quote it, for the rows of a
    JSON Lines viewer (each row's label links to them).
    """
    if data is None:
        return _unavailable("The content of this payload is not available.")
    total = max(total_size if total_size is not None else len(data), len(data))
    p = Payload(data=data, media_type=media_type.split(";", 1)[0].strip().lower(),
                charset=_charset(media_type), name=name, file_href=file_href,
                max_bytes=max(1, max_bytes), max_rows=max(1, max_rows), total=total)
    category = viewer_category(media_type, name)
    if category == "markdown":
        return markdown_viewer(p)
    if category == "csv":
        table = csv_viewer(p)
        return table or code_viewer(p, ("Could not be read as a table; shown as text.",))
    if category == "json":
        return json_viewer(p)
    if category == "rows":
        return rows_viewer(p, row_links)
    if category == "diff":
        return diff_viewer(p)
    if category == "code":
        return code_viewer(p)
    if category == "html":
        return _html(p)
    if category == "svg":
        return _svg(p)
    if category == "image":
        return _image(p)
    return _download(p, "No preview for this file type." if p.total else "The file is empty.")

