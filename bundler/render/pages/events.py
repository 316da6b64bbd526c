"""The paginated event log: every event, its leaf hash and its references."""

from __future__ import annotations

import dataclasses
import functools
from typing import Any

from bundler.graph.index import fitness_value
from bundler.model.events import (
    ArchiveEvent,
    ClaimEvent,
    EdgeEvent,
    EventBase,
    EvidenceNodeEvent,
    FitnessEvent,
    IndividualEvent,
    OperatorEvent,
    RedactionEvent,
    RunEvent,
    SteeringEvent,
    StreamEvent,
    TraceRecordEvent,
    WorkflowNodeEvent,
)
from bundler.render.pages.artifacts import row_fragment
from bundler.render.pages.base import (
    BuildContext,
    Page,
    listing_path,
    n_pages,
    page_slice,
    pager,
)
from bundler.render.urls import EVENTS_PER_PAGE, event_page
from bundler.verify.invariants import references

RAW_PREVIEW = 4000
#: Characters of an event's recorded details (attributes, params, ...) shown on its page
#: of the log.  A line may hold 1 MiB and a page shows ``EVENTS_PER_PAGE`` events.  The
#: template cuts them (``json_preview``): writing indented JSON leaves cyclic garbage,
#: and this process makes pages with the collector paused.
DETAILS_PREVIEW = 8000


@functools.cache
def _extra_fields(cls: type[EventBase]) -> tuple[str, ...]:
    """The free-form fields of an event type shown under "Recorded details"."""
    return tuple(n for n in ("params", "rationale", "description") if n in cls.model_fields)


def summary(ev: EventBase) -> str:
    """One line a reviewer can scan; untrusted text is escaped by the template."""
    if isinstance(ev, ClaimEvent):
        return f"claim{' (final)' if ev.final else ''}: {ev.text[:160]}"
    if isinstance(ev, IndividualEvent):
        p = f", {ev.payload.media_type}, {ev.payload.size:,} bytes" if ev.payload else ""
        return f"{ev.kind} {ev.name!r} v{ev.version}{p}"
    if isinstance(ev, OperatorEvent):
        return (f"{ev.custom_type or ev.op} ({ev.outcome}) on {len(ev.parents)} parent(s)"
                + (f": {ev.summary[:120]}" if ev.summary else ""))
    if isinstance(ev, FitnessEvent):
        return f"{ev.evaluator.name} {ev.evaluator.version} judged {ev.target}: {fitness_value(ev)}"
    if isinstance(ev, ArchiveEvent):
        return f"{ev.action} {ev.member} {'to' if ev.action == 'add' else 'from'} {ev.archive}" + (
            f": {ev.reason[:120]}" if ev.reason else "")
    if isinstance(ev, SteeringEvent):
        return f"{ev.command} by {ev.issuer}: {ev.text[:120]}"
    if isinstance(ev, RedactionEvent):
        return f"redacted {ev.target[:23]}… by {ev.authority}: {ev.reason[:120]}"
    if isinstance(ev, TraceRecordEvent):
        return f"{ev.record_kind} from {ev.source.transcript}" + (
            f" line {ev.source.line}" if ev.source.line else "") + (
            f" (error: {ev.error[:100]})" if ev.error else "")
    if isinstance(ev, EvidenceNodeEvent):
        return f"{ev.node_type}/{ev.category}: {ev.label[:120]} ({len(ev.records)} records)"
    if isinstance(ev, WorkflowNodeEvent):
        return f"{ev.phase}: {ev.label[:120]} ({len(ev.members)} members)"
    if isinstance(ev, EdgeEvent):
        how = (f" (inferred by {ev.inferred_by}, confidence {ev.confidence:g})"
               if ev.provenance == "inferred" and ev.confidence is not None else "")
        return f"{ev.source} {ev.relation} {ev.target}{how}"
    if isinstance(ev, RunEvent):
        return f"run {ev.title!r}"
    if isinstance(ev, StreamEvent):
        return f"{ev.kind} stream {ev.name!r}"
    return ev.type


def event_pages(ctx: BuildContext) -> list[Page]:
    count = n_event_pages(ctx)
    return ([events_index_page(ctx, k) for k in range(n_pages(count))]
            + [events_page(ctx, p) for p in range(count)])


def n_event_pages(ctx: BuildContext) -> int:
    return max(1, (len(ctx.bundle.events) + EVENTS_PER_PAGE - 1) // EVENTS_PER_PAGE)


def events_page(ctx: BuildContext, p: int) -> Page:
    """Page ``p`` (0-based) of the log: ``EVENTS_PER_PAGE`` events with their refs."""
    chunk, more = ctx.event_chunk(p)
    path = event_page(p * EVENTS_PER_PAGE)
    rows: list[dict[str, Any]] = []
    for ev in chunk:
        refs = []
        for field, target, _allowed, _d in references(ev):
            if field in ("run", "stream"):
                continue
            refs.append({"field": field, "ref": ctx.ref(target, path)})
        raw = None
        if isinstance(ev, TraceRecordEvent):
            raw = ev.raw
            shipped = ctx.idx.transcript_artifacts.get(ev.source.transcript)
            if shipped is not None:     # the artifact that ships the transcript it quotes
                ref = ctx.ref(shipped, path)
                if ref.href is not None:    # at the row it quotes, where the page has one
                    ref = dataclasses.replace(
                        ref, href=ref.href + row_fragment(ctx, shipped, ev.source.line))
                refs.append({"field": "transcript", "ref": ref})
        extra: dict[str, Any] = {}   # free-form details, shown as JSON
        if ev.attributes:
            extra["attributes"] = ev.attributes
        for name in _extra_fields(type(ev)):
            if value := getattr(ev, name):
                extra[name] = value
        rows.append({
            # the few fields shown, not the event: a helper process that renders the page
            # is sent its context, and unpickling 500 events took 11-22 ms, 20 times
            # unpickling the rest of the page (the leaf below commits to every byte)
            "ev": {"seq": ev.seq, "type": ev.type, "time": ev.time, "stream": ev.stream,
                   "id": ev.id},
            "summary": summary(ev), "leaf": ctx.bundle.leaf_hash(ev.seq).hex()
            if (ev.seq + 1) * 32 <= len(ctx.bundle.leaf_hashes) else "",
            "line": ctx.bundle.event_lines.get(ev.seq),
            "refs": refs[:30], "more_refs": max(0, len(refs) - 30),
            "self": ctx.ref(ev.id, path) if ev.type in ("claim", "individual",
                                                        "workflow_node") else None,
            "raw": raw[:RAW_PREVIEW] if raw is not None else None,
            "raw_truncated": raw is not None and len(raw) > RAW_PREVIEW,
            "extra": extra,
        })
    first = chunk[0].seq if chunk else 0
    last = chunk[-1].seq if chunk else 0
    return Page(path, "pages/events.html", f"Events {first}–{last}", "events", {
        # no "of N": a page must not change when the log grows past it (appends
        # would otherwise re-render every page of the log)
        "rows": rows, "page_no": p + 1, "details_preview": DETAILS_PREVIEW,
        "prev": event_page((p - 1) * EVENTS_PER_PAGE).removeprefix("events/") if p else None,
        "next": event_page((p + 1) * EVENTS_PER_PAGE).removeprefix("events/") if more else None,
    }, breadcrumbs=[("Overview", "index.html"), ("Events", "events/index.html"),
                    (f"Page {p + 1}", None)])


def events_index_page(ctx: BuildContext, k: int = 0) -> Page:
    """Page ``k`` of the list of event-log pages (``PER_PAGE`` of them each)."""
    events = ctx.bundle.events
    count = n_event_pages(ctx)
    index_rows = []
    for p in page_slice(range(count), k):
        chunk = events[p * EVENTS_PER_PAGE:(p + 1) * EVENTS_PER_PAGE]
        index_rows.append({"href": event_page(p * EVENTS_PER_PAGE).removeprefix("events/"),
                           "first": chunk[0].seq if chunk else 0,
                           "last": chunk[-1].seq if chunk else 0, "n": len(chunk)})
    return Page(listing_path("events/index.html", k), "pages/events_index.html", "Event log",
                "events", {"pages": index_rows, "total": len(events),
                           "per_page": EVENTS_PER_PAGE,
                           "pager": pager("events/index.html", k, count, "Event log index")},
                breadcrumbs=[("Overview", "index.html"), ("Events", None)])
