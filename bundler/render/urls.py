"""The site's URL scheme, in one place.

Every href is relative (the site must work from file:// and from any
sub-path), so pages ask for a path *from the site root* and prefix it with
their own ``root`` ("", "../").  Object ids are untrusted: file names are a
sanitised prefix plus a hash of the id, so they cannot traverse or carry
markup; two ids share a name only when made to (the build then stops, RB906).
"""

from __future__ import annotations

import hashlib
import re
import urllib.parse

from bundler.errors import UsageError
from bundler.graph.index import BundleIndex
from bundler.model.events import ClaimEvent, IndividualEvent, WorkflowNodeEvent
from bundler.model.kinds import FirstOf

EVENTS_PER_PAGE = 500
_UNSAFE = re.compile(r"[^A-Za-z0-9_-]+")


def slug(oid: str) -> str:
    base = _UNSAFE.sub("-", oid).strip("-")[:48] or "x"
    return f"{base}-{hashlib.sha256(oid.encode('utf-8')).hexdigest()[:8]}"


def event_page(seq: int) -> str:
    return f"events/page-{seq // EVENTS_PER_PAGE + 1:04d}.html"


def event_href(seq: int) -> str:
    return f"{event_page(seq)}#e{seq}"


def claim_href(oid: str) -> str:
    return f"claims/{slug(oid)}.html"


def artifact_href(oid: str) -> str:
    return f"artifacts/{slug(oid)}.html"


def workflow_href(oid: str) -> str:
    return f"workflow/{slug(oid)}.html"


def payload_href(digest: str) -> str:
    algo, _, hexdigest = digest.partition(":")
    return f"bundle/payloads/{algo}/{hexdigest}"


#: Objects with a page of their own, and that page; anything else links to its event.
_OBJECT_PAGES = (claim_href, artifact_href, workflow_href)
_PAGE_KIND = FirstOf(ClaimEvent, IndividualEvent, WorkflowNodeEvent)


class Linker:
    """Maps object ids to their page (from the site root), or ``None``."""

    def __init__(self, idx: BundleIndex) -> None:
        self.idx = idx

    def href(self, oid: str) -> str | None:
        ev = self.idx.get(oid)
        if ev is None:
            return None
        kind = _PAGE_KIND(ev)
        return _OBJECT_PAGES[kind](oid) if kind < len(_OBJECT_PAGES) else event_href(ev.seq)

    def relative(self, root: str) -> RelativeLinker:
        return RelativeLinker(self, root)


class RelativeLinker:
    """A linker bound to one page: returns hrefs relative to that page."""

    def __init__(self, linker: Linker, root: str) -> None:
        self.linker = linker
        self.root = root

    def __call__(self, oid: str) -> str | None:
        h = self.linker.href(oid)
        return None if h is None else self.root + h


def check_base_url(url: str | None) -> None:
    """``UsageError`` unless ``url`` (if given) can prefix every page's canonical link.

    A canonical link must be absolute: ``example.org/review`` (no scheme) would
    silently make every page name itself relative to wherever it is opened, and a
    ``javascript:`` or ``file:`` address is no place a site is served from.
    """
    if url is None:
        return
    try:
        parts = urllib.parse.urlsplit(url)
        ok = (parts.scheme in ("http", "https") and bool(parts.hostname) and not parts.query
              and not parts.fragment and all(c.isprintable() and not c.isspace() for c in url))
    except ValueError:      # "http://[::1": an unclosed IPv6 address
        ok = False
    if not ok:
        raise UsageError(f"--base-url {url!r}: expected an absolute http(s) address with no "
                         "query or fragment, such as https://example.org/review/")
