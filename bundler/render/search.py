"""Client-side search data: ``search/docs.js`` for the vendored MiniSearch.

The site must work from ``file://``, where ``fetch`` of local files is blocked
(DESIGN-NOTES §4), so the documents ship as a classic script that assigns
``window.RB_SEARCH_DOCS``. Every title and text comes from the bundle and is
hostile: the JSON is therefore encoded twice with ``ensure_ascii`` (once as
data, once as a JS string literal) so the file is pure ASCII, contains no
U+2028/U+2029, no quote that could end the literal, and no ``<``, ``>`` or
``&`` that could close a ``<script>`` if someone ever inlined it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass

from bundler.shown import cut, on_page

TEXT_CAP = 300
"""Characters of body text kept per document: enough to match on, bounded file size."""

TITLE_CAP = 200
"""Characters of title kept per document; titles are shown in the result list."""

_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.\-]*:")
_HTML_SENSITIVE = {"<": "\\u003c", ">": "\\u003e", "&": "\\u0026"}


@dataclass(frozen=True)
class SearchDoc:
    """One searchable item; ``url`` is relative to the site root (the page adds its root)."""

    id: str
    title: str
    kind: str
    text: str
    url: str

    def __post_init__(self) -> None:
        # The browser prefixes the page's root to ``url``; an absolute or
        # scheme-bearing URL would escape the site (or run as ``javascript:``).
        if _SCHEME.match(self.url) or self.url.startswith(("/", "\\")):
            raise ValueError(f"search url must be relative to the site root: {self.url!r}")


def _cap(value: str, limit: int) -> str:
    if len(value) <= limit:
        return value
    return cut(value, limit - 1) + "…"


def _record(doc: SearchDoc) -> dict[str, str]:
    # Text is only indexed, never displayed, so whitespace runs are collapsed
    # before capping to spend the budget on words.
    text = " ".join(doc.text.split())
    return {
        "id": doc.id,
        "t": _cap(on_page(doc.title), TITLE_CAP),     # shown in the results
        "k": doc.kind,
        "x": _cap(text, TEXT_CAP),
        "u": doc.url,
    }


def search_docs_js(docs: Sequence[SearchDoc]) -> str:
    """Return the contents of ``search/docs.js`` for ``docs``, in input order.

    Lone surrogates survive as ``\\udXXX`` escapes (``ensure_ascii``), so odd
    strings from a bundle never make the build fail.
    """
    data = json.dumps([_record(d) for d in docs], ensure_ascii=True, separators=(",", ":"))
    literal = json.dumps(data, ensure_ascii=True)
    literal = re.sub(r"[<>&]", lambda m: _HTML_SENSITIVE[m.group(0)], literal)
    return f"window.RB_SEARCH_DOCS = JSON.parse({literal});\n"
