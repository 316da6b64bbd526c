"""Shared page types and helpers for the page producers."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar, cast

from bundler.graph.index import BundleIndex, ClaimStatus
from bundler.graph.paths import EvidenceGraph
from bundler.graph.tracking import EVERYTHING, note, query
from bundler.model.events import ClaimEvent, EventBase
from bundler.output.cache import Deferred
from bundler.output.text_store import TextStore
from bundler.render.graphviz import GraphSpec
from bundler.render.urls import EVENTS_PER_PAGE, Linker, RelativeLinker
from bundler.verify.result import LoadedBundle, VerificationReport

__all__ = ["MAX_LISTED", "NAV", "PER_PAGE", "STATUS_TEXT", "BuildContext", "Deferred", "Page",
           "Pager", "Ref", "graph_spec", "listed", "listing_path", "n_pages", "page_slice",
           "pager"]

NAV: tuple[tuple[str, str, str], ...] = (
    ("overview", "Overview", "index.html"),
    ("claims", "Claims", "claims/index.html"),
    ("artifacts", "Artifacts", "artifacts/index.html"),
    ("workflow", "Workflow", "workflow/index.html"),
    ("lineage", "Lineage", "lineage.html"),
    ("steering", "Steering", "steering.html"),
    ("audit", "Audit", "audit/index.html"),
    ("events", "Events", "events/index.html"),
    ("integrity", "Integrity", "integrity.html"),
    ("downloads", "Downloads", "downloads.html"),
)


@dataclass
class Page:
    path: str
    template: str
    title: str
    key: str
    context: dict[str, Any] = field(default_factory=dict)
    graphs: list[GraphSpec] = field(default_factory=list)
    breadcrumbs: list[tuple[str, str | None]] = field(default_factory=list)
    #: Facts for the builder that are not page content (e.g. an audit query's row
    #: count for the overview); never rendered, never fingerprinted.
    facts: dict[str, Any] = field(default_factory=dict)

    @property
    def root(self) -> str:
        return "../" * self.path.count("/")


T = TypeVar("T")

#: Rows per page of a listing (claims, artifacts, payloads, event-log pages).
PER_PAGE = 1_000

#: Most items an object page (a claim, an artifact, a phase) lists from any one list.
#: Several of those lists grow with the bundle, not with the object's own event: a
#: benchmark input that every candidate of a search is evaluated on is used by all of
#: them.  No page may grow with the bundle, so past this a page says how many it
#: leaves out (the ``more`` argument of ``ref_list`` and ``more_note`` in _macros.html).
MAX_LISTED = 500


def listed(items: Sequence[T], limit: int = MAX_LISTED) -> tuple[list[T], int]:
    """The first ``limit`` of ``items``, and how many of them that leaves out."""
    return list(items[:limit]), max(0, len(items) - limit)


@dataclass(frozen=True)
class Pager:
    """Where a page sits in a paginated listing; hrefs are relative to the page."""

    label: str
    page_no: int      # 1-based
    n_pages: int
    first: int        # 1-based number of the first item shown
    last: int
    total: int
    prev: str | None
    next: str | None


def n_pages(total: int, per_page: int | None = None) -> int:
    return max(1, -(-total // (per_page or PER_PAGE)))


def page_slice(items: Sequence[T], k: int, per_page: int | None = None) -> Sequence[T]:
    """The items on page ``k`` (0-based) of a listing."""
    size = per_page or PER_PAGE
    return items[k * size:(k + 1) * size]


def listing_path(first_path: str, k: int) -> str:
    """Page ``k`` (0-based) of a listing: the first keeps its name, then -2, -3, ..."""
    return first_path if k == 0 else f"{first_path.removesuffix('.html')}-{k + 1}.html"


def pager(first_path: str, k: int, total: int, label: str,
          per_page: int | None = None) -> Pager | None:
    """The pager of page ``k``, or None for a listing that fits on one page (which
    then renders exactly as before pagination existed)."""
    per_page = per_page or PER_PAGE
    count = n_pages(total, per_page)
    if count == 1:
        return None
    name = first_path.rsplit("/", 1)[-1]     # siblings: same folder
    return Pager(label, k + 1, count, k * per_page + 1, min(total, (k + 1) * per_page), total,
                 listing_path(name, k - 1) if k > 0 else None,
                 listing_path(name, k + 1) if k + 1 < count else None)


#: Bound of BuildContext's ref memo (per process).
MAX_REFS = 50_000


@dataclass(frozen=True)
class Ref:
    """A link to an object as templates show it."""

    id: str
    label: str
    kind: str
    href: str | None
    state: str = ""


@dataclass
class BuildContext:
    report: VerificationReport
    idx: BundleIndex
    linker: Linker
    proofs: dict[int, str] = field(default_factory=dict)   # seq -> tlog-proof text
    audit_pages: list[tuple[str, str, int]] = field(default_factory=list)  # (name, href, rows)
    #: The checks among them with no row because there was nothing to check: the audit
    #: index says so instead of a bare 0 (kept apart so the tuples keep their shape for
    #: themes that unpack them)
    audit_idle: frozenset[str] = frozenset()
    #: Text features kept between builds for near-duplicates (None: keep nothing)
    texts: TextStore | None = None
    #: Refs made so far, by (id, page depth): a claim page names the same few
    #: objects in every one of its evidence paths.  Refs are immutable; cleared
    #: when full so a worker's memory stays bounded.
    _refs: dict[tuple[str, int], Ref] = field(default_factory=dict, repr=False)
    #: Whole-bundle values that several pages of a listing need (per process).
    _memo: dict[str, Any] = field(default_factory=dict, repr=False)

    def memo(self, key: str, make: Callable[[], T]) -> T:
        """``make()`` once per process: a listing's pages must not each walk the bundle
        (130 artifact-index pages x 260k artifacts at 1M events)."""
        note(*EVERYTHING)      # whole-bundle values: a page using one depends on all
        if key not in self._memo:
            self._memo[key] = make()
        return cast(T, self._memo[key])

    @property
    def bundle(self) -> LoadedBundle:
        return self.report.bundle

    def rel(self, page_path: str) -> RelativeLinker:
        return self.linker.relative("../" * page_path.count("/"))

    def ref(self, oid: str, page_path: str) -> Ref:
        """One read ``("ref", oid)`` for dependency records (the depth only adds "../").

        A ref already made is returned without going through :func:`query`: making it
        the first time read nothing a page can depend on but the ref itself, so noting
        that read is the whole record, and the hit path runs ~100 times a claim page."""
        depth = page_path.count("/")
        got = self._refs.get((oid, depth))
        if got is not None:
            note("ref", oid)
            return got
        return query("ref", oid, lambda: self._ref(oid, depth))

    def _ref(self, oid: str, depth: int) -> Ref:
        ev = self.idx.get(oid)
        h = self.linker.href(oid)
        state = ""
        if isinstance(ev, ClaimEvent):
            state = self.idx.claim_status(ev).value
        made = Ref(oid, self.idx.label(oid), ev.type if ev else "missing",
                   None if h is None else "../" * depth + h, state)
        if len(self._refs) >= MAX_REFS:
            self._refs.clear()
        self._refs[(oid, depth)] = made
        return made

    def proof(self, seq: int) -> str | None:
        """The inclusion proof of the claim at ``seq`` (a read ``("proof", seq)``)."""
        note("proof", seq)
        return self.proofs.get(seq)

    def leaf_hex(self, seq: int) -> str:
        """The leaf hash at position ``seq`` of the log, or "" (a read ``("leaf", seq)``)."""
        note("leaf", seq)
        leaves = self.bundle.leaf_hashes
        return self.bundle.leaf_hash(seq).hex() if seq >= 0 and seq * 32 < len(leaves) else ""

    def event_chunk(self, p: int) -> tuple[list[EventBase], bool]:
        """Page ``p`` of the log (``EVENTS_PER_PAGE`` events) and whether more follow:
        one read ``("events", p)``, whose value also covers each event's line and leaf."""
        note("events", p)
        events = self.bundle.events
        return (events[p * EVENTS_PER_PAGE:(p + 1) * EVENTS_PER_PAGE],
                (p + 1) * EVENTS_PER_PAGE < len(events))

    def refs(self, oids: Sequence[str], page_path: str) -> list[Ref]:
        return [self.ref(o, page_path) for o in oids]


def graph_spec(ctx: BuildContext, g: EvidenceGraph, *, name: str, title: str, description: str,
               page_path: str, rankdir: str = "RL",
               clusters: dict[str, list[str]] | None = None) -> GraphSpec:
    return GraphSpec(name=name, title=title, description=description,
                     nodes=list(g.nodes.values()), edges=list(g.edges), href=ctx.rel(page_path),
                     root=g.root, rankdir=rankdir, clusters=clusters or {})


STATUS_TEXT = {
    ClaimStatus.CONTRADICTED: "Contradicted by a verifier",
    ClaimStatus.UNSUPPORTED: "Unsupported",
    ClaimStatus.NEEDS_HUMAN_REVIEW: "Needs human review",
    ClaimStatus.UNVERIFIED: "Unverified: no verification record",
    ClaimStatus.RETRACTED: "Retracted",
    ClaimStatus.SUPPORTED: "Supported",
}
