"""The site's URL scheme, in one place.

Every href is relative (the site must work from file:// and from any
sub-path), so pages ask for a path *from the site root* and prefix it with
their own ``root`` ("", "../").  Object ids are untrusted: file names are a
sanitised prefix plus a hash of the id, so they cannot traverse or carry
markup.  Two ids share a name only when made to; the build then gives those
ids longer names (:func:`long_names`).
"""

from __future__ import annotations

import contextlib
import hashlib
import re
import urllib.parse
from collections.abc import Iterable, Iterator

from bundler.errors import UsageError
from bundler.graph.index import BundleIndex
from bundler.model.events import ClaimEvent, IndividualEvent, WorkflowNodeEvent
from bundler.model.kinds import FirstOf

EVENTS_PER_PAGE = 500
_UNSAFE = re.compile(r"[^A-Za-z0-9_-]+")


#: Characters of an id kept in its file name.
NAME_CHARS = 48


#: Ids that fit in a name but get 24 hex digits all the same: the ids of this build
#: made to share a name (:func:`long_names`).  Empty outside such a build.
_LONG: frozenset[str] = frozenset()


def slug(oid: str) -> str:
    """The file name (without suffix) of ``oid``'s page: its safe characters, then a hash.

    Ids whose safe form fits keep 8 hex digits of the hash: two of them share a name
    only if they differ in nothing but dropped characters and share 32 bits of hash.
    A longer id is cut, and ids cut to one prefix are many in a real log
    (``<run>/generation-0042/individual-008687``): a million of them would share
    8 digits about a hundred times, and a generation of 101k did at 008687 and
    100923.  Those get 24 digits (96 bits), and so do ids in :data:`_LONG`.  A short
    name is at most 57 characters; a long one is 73 if cut, and can only meet a cut
    one if the two ids share 96 bits of hash."""
    safe = _UNSAFE.sub("-", oid).strip("-")
    digest = hashlib.sha256(oid.encode("utf-8")).hexdigest()
    if len(safe) > NAME_CHARS:
        return f"{safe[:NAME_CHARS]}-{digest[:24]}"
    if oid in _LONG:
        return f"{safe or 'x'}-{digest[:24]}"
    return f"{safe or 'x'}-{digest[:8]}"


def sharing_a_name(ids: Iterable[str]) -> set[str]:
    """The ids among ``ids`` whose short name another one has too.

    32 bits of hash are enough against chance, not against a bundle's author: ids
    that differ only in characters a name drops (``c.0:1`` and ``c.0@1``) share a
    name after about 65,000 tries, a second's search."""
    first: dict[str, str] = {}
    shared: set[str] = set()
    for oid in ids:
        other = first.setdefault(slug(oid), oid)
        if other != oid:
            shared.update((other, oid))
    return shared


@contextlib.contextmanager
def long_names(ids: Iterable[str]) -> Iterator[None]:
    """Within the block, the pages of ``ids`` have 96-bit names (see :func:`slug`).

    Process-wide, like every name: the render workers forked within the block
    and the build's own threads see the same names.  Builds in one process must
    not overlap while it is active."""
    global _LONG
    before = _LONG
    _LONG = frozenset(ids)
    try:
        yield
    finally:
        _LONG = before


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
