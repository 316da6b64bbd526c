"""Whole lists that object pages cut short, each on pages of its own.

An object page shows at most ``MAX_LISTED`` items of any one list (see
:mod:`bundler.render.pages.base`), because some lists grow with the bundle, not
with the object: a benchmark input that every candidate of a search is scored
on has as many evaluations and users as the search has candidates.  Cutting
keeps every page small, but a reviewer auditing that input still has to be able
to answer "which claims cite it?" completely.  So a cut list links to pages of
its own that show all of it, ``PER_PAGE`` rows each: one line per item, or the
object page's table for a list it shows as one (evaluations, bindings, histories).

Each list is defined once, in :data:`LISTS`.  The object page takes its first
items from it (:func:`cut`), the planner asks it which lists need pages, and
the list pages render it, so the three cannot disagree about what a list holds.
A bundle with no list longer than its cut gets no list page at all.

Archives are the one kind of object named by the bundle rather than by an
event, so their two lists (the history and the current members, cut on the
lineage page) are defined apart, in :data:`ARCHIVE_LISTS`, under the same rules.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, cast

from bundler.graph.index import BundleIndex, fitness_value
from bundler.model.events import (
    ArchiveEvent,
    ClaimEvent,
    EdgeEvent,
    EventBase,
    EvidenceBinding,
    EvidenceNodeEvent,
    FitnessEvent,
    IndividualEvent,
    SteeringEvent,
    WorkflowNodeEvent,
)
from bundler.render.pages.base import (
    MAX_LISTED,
    PER_PAGE,
    BuildContext,
    Page,
    Ref,
    listed,
    listing_path,
    n_pages,
    page_slice,
    pager,
)
from bundler.render.urls import artifact_href, claim_href, event_href, slug, workflow_href

#: Items a row's text keeps of a free-text field (a note, a reason).
DETAIL_CHARS = 160
#: Commands' operators and derived artifacts shown on the steering page (each command
#: is one row of a timeline, so its lists are cut shorter than an object page's).
DERIVED_PER_COMMAND = 50
#: Trace records listed under one evidence node on a phase page.
RECORDS_PER_NODE = 20


@dataclass(frozen=True)
class Cell:
    """One cell of a tabular list: an object's link (``ref``, with ``detail`` as
    :func:`_ref_cell` sets it), or text, linked or not."""

    text: str = ""
    href: str | None = None
    ref: Ref | None = None
    detail: str = ""


@dataclass(frozen=True)
class Row:
    """One item of a list page: an object (``ref``) or an event (``href``, ``label``);
    or, in a list with columns, its ``cells``."""

    ref: Ref | None = None
    href: str | None = None
    label: str = ""
    detail: str = ""
    cells: tuple[Cell, ...] = ()


@dataclass(frozen=True)
class LongList:
    owner: str      # a key of OWNERS
    name: str       # the list pages' file name
    heading: str    # the heading the owner's page gives the list
    items: Callable[[BundleIndex, Any], Sequence[Any]]
    row: Callable[[BuildContext, Any, str], Row]
    shown: int = MAX_LISTED   # how many the owner's page shows
    #: column headings of a list the owner's page shows as a table (its rows have cells)
    columns: tuple[str, ...] = ()


@dataclass(frozen=True)
class Owner:
    """Where the objects of one kind live in the site."""

    noun: str                    # what the object is, as the page names it
    folder: str                  # list pages go to <folder>/<slug(id)>/<list>.html
    kind: type[EventBase]
    section: tuple[str, str]     # (nav label, listing href): the breadcrumb above the object
    nav: str                     # the nav key the page highlights
    href: Callable[[BundleIndex, EventBase], str | None]   # the owner's own page


def _clip(text: str | None) -> str:
    text = " ".join((text or "").split())
    return text if len(text) <= DETAIL_CHARS else text[:DETAIL_CHARS - 1] + "…"


def _root(path: str) -> str:
    return "../" * path.count("/")


def _object(ctx: BuildContext, oid: str, path: str) -> Row:
    """An object by its label, and its id when the label is not it: a thousand
    operators may all be labelled "mutate"."""
    ref = ctx.ref(oid, path)
    return Row(ref=ref, detail=oid if ref.label != oid else "")


def _ref_cell(ctx: BuildContext, oid: str, path: str) -> Cell:
    """An object's cell, by the rule of :func:`_object`: the id beside the label when
    the label is not it (an archive may hold a hundred members named "c0")."""
    row = _object(ctx, oid, path)
    return Cell(ref=row.ref, detail=row.detail)


#: The columns of the object pages' tables, which the whole lists repeat.
FITNESS_COLUMNS = ("Evaluator", "Version", "Result", "Note")
BINDING_COLUMNS = ("Evidence", "Field", "Comparison", "Value", "Stance", "Note")
HISTORY_COLUMNS = ("Time", "Action", "Archive", "Reason")
MEMBERSHIP_COLUMNS = ("Time", "Action", "Member", "Reason")


def _fitness(ctx: BuildContext, f: FitnessEvent, path: str) -> Row:
    return Row(cells=(Cell(f.evaluator.name, _root(path) + event_href(f.seq)),
                      Cell(f.evaluator.version), Cell(fitness_value(f)), Cell(_clip(f.note))))


def _archive(ctx: BuildContext, a: ArchiveEvent, path: str) -> Row:
    return Row(cells=(Cell(a.time, _root(path) + event_href(a.seq)), Cell(a.action),
                      Cell(a.archive), Cell(_clip(a.reason))))


def _check(ctx: BuildContext, e: EdgeEvent, path: str) -> Row:
    detail = ""
    if e.provenance == "inferred":
        detail = "inferred" + (f", confidence {e.confidence:.2f}" if e.confidence is not None
                               else "")
    return Row(ref=ctx.ref(e.target, path), detail=detail)


def _binding(ctx: BuildContext, b: EvidenceBinding, path: str) -> Row:
    return Row(cells=(_ref_cell(ctx, b.evidence, path), Cell(b.field or ""),
                      Cell(b.comparison or ""),
                      Cell(_clip(str(b.value)) if b.value is not None else ""),
                      Cell(b.stance or ""), Cell(_clip(b.note))))


def _record(ctx: BuildContext, rid: str, path: str) -> Row:
    """A record by its label (its kind and source line), id, and parse error if any."""
    row = _object(ctx, rid, path)
    rec = ctx.idx.trace_records.get(rid)
    error = _clip(rec.error) if rec is not None and rec.error else ""
    return Row(ref=row.ref, detail=" · ".join(p for p in (row.detail, error) if p))


def _indexed(mapping: str) -> Callable[[BundleIndex, EventBase], Sequence[Any]]:
    """What the index mapping named ``mapping`` holds for the object (none: empty)."""
    return lambda idx, ev: getattr(idx, mapping).get(ev.id, [])


def _field(name: str) -> Callable[[BundleIndex, EventBase], Sequence[Any]]:
    """A list the object's own event holds."""
    return lambda idx, ev: cast(Sequence[Any], getattr(ev, name))


def _producer_parents(idx: BundleIndex, art: IndividualEvent) -> Sequence[str]:
    producer = idx.operators.get(art.produced_by) if art.produced_by else None
    return producer.parents if producer is not None else []


def _checks(idx: BundleIndex, ev: EventBase) -> list[EdgeEvent]:
    return [e for e in idx.edges_out.get(ev.id, []) if e.relation == "checked_by"]


def _derived(idx: BundleIndex, s: SteeringEvent) -> list[str]:
    return [c for op in idx.applied_by.get(s.id, []) for c in idx.children.get(op, [])]


def _node_phase(idx: BundleIndex, node: EventBase) -> str | None:
    wf = idx.workflow_of_node.get(node.id)
    return workflow_href(wf) if wf else None


_WORKFLOW = ("Workflow", "workflow/index.html")
OWNERS: dict[str, Owner] = {
    "artifact": Owner("Artifact", "artifacts", IndividualEvent,
                      ("Artifacts", "artifacts/index.html"), "artifacts",
                      lambda idx, ev: artifact_href(ev.id)),
    "claim": Owner("Claim", "claims", ClaimEvent, ("Claims", "claims/index.html"), "claims",
                   lambda idx, ev: claim_href(ev.id)),
    "phase": Owner("Workflow phase", "workflow", WorkflowNodeEvent, _WORKFLOW, "workflow",
                   lambda idx, ev: workflow_href(ev.id)),
    "node": Owner("Evidence node", "workflow/nodes", EvidenceNodeEvent, _WORKFLOW, "workflow",
                  _node_phase),
    "steering": Owner("Steering command", "steering", SteeringEvent,
                      ("Steering", "steering.html"), "steering",
                      lambda idx, ev: event_href(ev.seq)),
}

_LISTS: tuple[LongList, ...] = (
    LongList("artifact", "evaluations", "Evaluations", _indexed("fitness_by_target"), _fitness,
             columns=FITNESS_COLUMNS),
    LongList("artifact", "checked-by", "Checked by", _checks, _check),
    LongList("artifact", "parents", "Parents", _producer_parents, _object),
    LongList("artifact", "used-by", "Used by operators", _indexed("used_by"), _object),
    LongList("artifact", "cited-by", "Cited by claims", _indexed("cited_by"), _object),
    LongList("artifact", "later-versions", "Later versions", _indexed("superseded_by"), _object),
    LongList("artifact", "trace", "Source trace records", _field("trace"), _object),
    LongList("artifact", "archive-history", "Archive history",
             _indexed("archive_memberships"), _archive, columns=HISTORY_COLUMNS),
    LongList("claim", "evaluations", "What checked it", _indexed("fitness_by_target"), _fitness,
             columns=FITNESS_COLUMNS),
    LongList("claim", "bindings", "Evidence bindings", _field("bindings"), _binding,
             columns=BINDING_COLUMNS),
    LongList("claim", "evidence", "Evidence cited", _field("evidence"), _object),
    LongList("claim", "derived-from", "Derived from", _field("derived_from"), _object),
    LongList("claim", "derived-claims", "Later claims derived from it",
             _indexed("derived_claims"), _object),
    LongList("claim", "later-versions", "Superseded by", _indexed("superseded_by"), _object),
    LongList("phase", "members", "Evidence nodes", _field("members"), _object),
    LongList("node", "records", "Trace records", _field("records"), _record, RECORDS_PER_NODE),
    LongList("steering", "applied-by", "Applied by", _indexed("applied_by"), _object,
             DERIVED_PER_COMMAND),
    LongList("steering", "derived", "Derived downstream", _derived, _object,
             DERIVED_PER_COMMAND),
)
LISTS: dict[tuple[str, str], LongList] = {(spec.owner, spec.name): spec for spec in _LISTS}


def list_path(owner: str, oid: str, name: str, k: int = 0) -> str:
    """Page ``k`` (0-based) of list ``name`` of object ``oid``, from the site root."""
    return listing_path(f"{OWNERS[owner].folder}/{slug(oid)}/{name}.html", k)


def cut(ctx: BuildContext, owner: str, name: str, ev: EventBase,
        page_path: str) -> tuple[list[Any], int, str | None]:
    """What the owner's page shows of a list: its first items, how many it leaves
    out, and the link (relative to ``page_path``) to the whole list, if any is cut."""
    spec = LISTS[owner, name]
    shown, more = listed(spec.items(ctx.idx, ev), spec.shown)
    return shown, more, (_root(page_path) + list_path(owner, ev.id, name) if more else None)


def long_lists(idx: BundleIndex, owner: str,
               events: Iterable[EventBase]) -> Iterator[tuple[str, str]]:
    """``(task key, path)`` of every page of every cut list of ``events``."""
    specs = [spec for spec in LISTS.values() if spec.owner == owner]
    for ev in events:
        for spec in specs:
            total = len(spec.items(idx, ev))
            if total > spec.shown:
                for k in range(n_pages(total)):
                    yield (f"{owner}/{spec.name}/{k}/{ev.id}",
                           list_path(owner, ev.id, spec.name, k))


def list_page(ctx: BuildContext, key: str) -> Page:
    """One page of a whole list; ``key`` is ``owner/name/k/object id``."""
    owner_kind, name, k_text, oid = key.split("/", 3)
    spec, owner, k = LISTS[owner_kind, name], OWNERS[owner_kind], int(k_text)
    ev = ctx.idx.get(oid)
    if not isinstance(ev, owner.kind):
        raise AssertionError(f"list page {key} names no {owner_kind}")
    first = list_path(owner_kind, oid, name)
    path = listing_path(first, k)
    items = spec.items(ctx.idx, ev)
    ref = ctx.ref(oid, path)
    home = owner.href(ctx.idx, ev)
    return Page(path, "pages/list.html", f"{spec.heading}: {ref.label}", owner.nav, {
        "heading": spec.heading,
        "owner": ref,
        "noun": owner.noun,
        "owner_href": _root(path) + home if home else None,
        "owner_page": None,    # "page of <label>"
        "columns": spec.columns,
        "rows": [spec.row(ctx, item, path) for item in page_slice(items, k)],
        "total": len(items),
        "first": k * PER_PAGE + 1,
        "pager": pager(first, k, len(items), f"{spec.heading} pages"),
    }, breadcrumbs=[("Overview", "index.html"), owner.section, (ref.label, home),
                    (spec.heading, None)])


# ------------------------------------------------------------------ archives

#: Events and current members of one archive that the lineage page shows.
ARCHIVE_EVENTS_SHOWN = 1_000
ARCHIVE_MEMBERS_SHOWN = 200


def current_members(idx: BundleIndex, archive: str) -> list[str]:
    """The archive's members after its last event, in the order they (last) joined."""
    members: dict[str, None] = {}
    for a in idx.archives.get(archive, []):
        if a.action == "add":
            members[a.member] = None
        else:
            members.pop(a.member, None)
    return list(members)


def _history_row(ctx: BuildContext, a: ArchiveEvent, path: str) -> Row:
    return Row(cells=(Cell(a.time, _root(path) + event_href(a.seq)), Cell(a.action),
                      _ref_cell(ctx, a.member, path), Cell(_clip(a.reason))))


@dataclass(frozen=True)
class ArchiveList:
    """A list of an archive: :class:`LongList` with the archive's name for an event."""

    heading: str
    items: Callable[[BundleIndex, str], Sequence[Any]]
    row: Callable[[BuildContext, Any, str], Row]
    shown: int    # how many the lineage page shows
    columns: tuple[str, ...] = ()


ARCHIVE_LISTS: dict[str, ArchiveList] = {
    "history": ArchiveList("History", lambda idx, name: idx.archives.get(name, []),
                           _history_row, ARCHIVE_EVENTS_SHOWN, MEMBERSHIP_COLUMNS),
    "members": ArchiveList("Current members", current_members, _object, ARCHIVE_MEMBERS_SHOWN),
}


def archive_list_path(archive: str, name: str, k: int = 0) -> str:
    return listing_path(f"lineage/{slug(archive)}/{name}.html", k)


def archive_cut(ctx: BuildContext, archive: str, name: str,
                page_path: str) -> tuple[list[Any], int, int, str | None]:
    """What the lineage page shows of an archive's list: its first items, how many
    it leaves out, how many there are, and the link to the whole list if it is cut."""
    spec = ARCHIVE_LISTS[name]
    items = spec.items(ctx.idx, archive)
    first, more = listed(items, spec.shown)
    return (first, more, len(items),
            _root(page_path) + archive_list_path(archive, name) if more else None)


def long_archive_lists(idx: BundleIndex, names: Sequence[str],
                       per_lineage_page: int) -> Iterator[tuple[str, str]]:
    """``(task key, path)`` of every page of every cut archive list; ``names``: the
    archives in the lineage page's order, ``per_lineage_page`` of them a page."""
    for i, archive in enumerate(names):
        for name, spec in ARCHIVE_LISTS.items():
            total = len(spec.items(idx, archive))
            if total > spec.shown:
                for k in range(n_pages(total)):
                    yield (f"{name}/{k}/{i // per_lineage_page}/{archive}",
                           archive_list_path(archive, name, k))


def archive_list_page(ctx: BuildContext, key: str) -> Page:
    """One page of an archive's whole list; ``key`` is ``name/k/lineage page/archive``
    (the lineage page that shows the archive is in the key so that the page reads
    only this archive's entries)."""
    name, k_text, home_text, archive = key.split("/", 3)
    spec = ARCHIVE_LISTS[name]
    k, home = int(k_text), listing_path("lineage.html", int(home_text))
    first = archive_list_path(archive, name)
    path = listing_path(first, k)
    items = spec.items(ctx.idx, archive)
    return Page(path, "pages/list.html", f"{spec.heading}: archive {archive}", "lineage", {
        "heading": spec.heading,
        "owner": {"id": archive, "label": archive},
        "noun": "Archive",
        "owner_href": _root(path) + home,
        "owner_page": "lineage page",
        "columns": spec.columns,
        "rows": [spec.row(ctx, item, path) for item in page_slice(items, k)],
        "total": len(items),
        "first": k * PER_PAGE + 1,
        "pager": pager(first, k, len(items), f"{spec.heading} pages"),
    }, breadcrumbs=[("Overview", "index.html"), ("Lineage", home), (archive, None),
                    (spec.heading, None)])
