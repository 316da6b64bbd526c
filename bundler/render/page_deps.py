"""Object pages carried over on their recorded reads, without being made again.

When a log grows, most claim, artifact and phase pages do not change, yet
finding that out by fingerprint means building each page's whole context
first, which is most of the cost of a rebuild.  Instead each such page is
made once while :func:`bundler.graph.tracking.recording` notes which index
entries it read; the record keeps one digest over those entries' values.  A
later build recomputes only those values (lookups and a few memoised queries,
for thousands of pages in the time one context takes) and, if the digest is
the same, carries the old file over: its inputs are the same, so its bytes
are too.

What a read's value is, for each namespace, is defined in one place,
:meth:`PageDeps.token`; a namespace it does not know makes the page
unrecordable (then it is simply made and fingerprinted every time).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable

from bundler.graph.tracking import EVERYTHING, Read, TrackedDict, paused
from bundler.model.events import ClaimEvent, EventBase, IndividualEvent
from bundler.output.cache import Encoder, Uncacheable
from bundler.output.deps_file import DepsRecord, decode_read, encode_read, parse_record
from bundler.render.pages.artifacts import few_artifacts
from bundler.render.pages.base import BuildContext
from bundler.render.pages.plan import PageTask

#: Pages made from lookups, so their reads say what they depend on: one object's
#: page, a page of one of its whole lists (an archive's too), and a page of the log.
#: Listings, audit queries and the overview read whole collections.
TRACKED_KINDS = frozenset({"claim", "artifact", "phase", "list", "archive-list", "events"})
#: Value tokens of reads kept per process (then the memo starts over): about 10 MB.
MEMO_SIZE = 50_000
#: A value longer than this enters a page's digest as its own SHA-256.  Values grow
#: with the bundle (the evaluations of an input every candidate is scored on), and
#: each page that read one hashed it whole again: quadratic in the bundle.
LONG_VALUE = 1_024

#: Index mappings by the type of their values: events, lists of events, ids, lists of ids.
_EVENT_MAPS = frozenset({"by_id", "streams", "individuals", "claims", "operators",
                         "redactions", "trace_records", "evidence_nodes", "workflow_nodes"})
_EVENTS_MAPS = frozenset({"fitness_by_target", "edges_out", "edges_in", "archives",
                          "archive_memberships"})
_ID_MAPS = frozenset({"node_of_record", "node_of_individual", "workflow_of_node",
                      "transcript_artifacts"})
_IDS_MAPS = frozenset({"children", "used_by", "superseded_by", "derived_claims", "cited_by",
                       "applied_by", "transcript_names"})
#: ... and plain data, encoded as it is: (line, seq) pairs of the records of a transcript.
_DATA_MAPS = frozenset({"records_of_transcript"})
_MAPS = _EVENT_MAPS | _EVENTS_MAPS | _ID_MAPS | _IDS_MAPS | _DATA_MAPS


class PageDeps:
    """Records the reads of pages being made and judges the records of the last build."""

    def __init__(self, ctx: BuildContext, encoder: Encoder,
                 previous: dict[str, str]) -> None:
        self.ctx = ctx
        self.encoder = encoder
        self.previous = previous
        self._memo: dict[str, str] = {}   # encoded read -> length-prefixed token
        self._event_key = encoder.event_key
        #: Make new records.  The builder turns this off once the record file is full;
        #: it is only a hint for the next build, so no page changes (pages rendered in
        #: forked workers, which see their own copy, go on recording).
        self.wanted = True

    def _event(self, ev: EventBase) -> str:
        """An event by the leaf hash of its line (which commits to all of it)."""
        key = self._event_key(ev) if self._event_key is not None else None
        return key.hex() if key is not None else self.encoder.encode(ev)

    def token(self, read: Read) -> str:
        """A text that changes whenever what ``read`` returns in this build changes
        (raises :class:`Uncacheable` for a read it cannot value)."""
        ns, key = read
        ctx, idx = self.ctx, self.ctx.idx
        if read == EVERYTHING:
            raise Uncacheable("a page that reads a whole collection")
        if ns in ("leaf", "proof", "events"):
            if type(key) is not int:
                raise Uncacheable(f"a {ns} read with a key that is not a position")
            if ns == "events":
                return self._events(key)
            return ctx.leaf_hex(key) if ns == "leaf" else repr(ctx.proofs.get(key))
        if type(key) is not str:
            raise Uncacheable(f"a {ns} read with a key that is not a string")
        mapping = getattr(idx, ns, None) if ns in _MAPS else None
        if isinstance(mapping, TrackedDict):
            if not dict.__contains__(mapping, key):
                return "-"
            value = dict.__getitem__(mapping, key)
            if ns in _EVENT_MAPS:
                return self._event(value)
            if ns in _EVENTS_MAPS:
                return ",".join(map(self._event, value))
            return self.encoder.encode(value)
        if ns in ("ref", "node"):
            return self._object(key)
        if ns == "status":
            claim = dict.get(idx.claims, key)
            return idx.claim_status(claim).value if claim is not None else "-"
        if ns == "payloads":
            return self.encoder.encode(ctx.bundle.payloads.get(key))
        if ns == "few-artifacts":
            return str(few_artifacts(idx))
        raise Uncacheable(f"no value is known for reads of {ns!r}")

    def _object(self, oid: str) -> str:
        """What a ref and a graph node of ``oid`` are made from: its event, a claim's
        status, an artifact's payload record (``test_page_deps`` checks that making
        either reads nothing else).  Spelling out the ref itself would cost a label,
        a link and a status per read: 40% of the time of checking the records."""
        idx = self.ctx.idx
        ev = dict.get(idx.by_id, oid)
        if ev is None:
            return "-"
        text = self._event(ev)
        if isinstance(ev, ClaimEvent):
            return f"{text}|{idx.claim_status(ev).value}"
        if isinstance(ev, IndividualEvent) and ev.payload is not None:
            payload = self.ctx.bundle.payloads.get(ev.payload.digest)
            return f"{text}|{self.encoder.encode(payload)}"
        return text

    def _events(self, p: int) -> str:
        """Page ``p`` of the log: its events, their lines and leaves, and whether more
        follow (what :meth:`BuildContext.event_chunk` stands for)."""
        with paused():
            chunk, more = self.ctx.event_chunk(p)
        lines = self.ctx.bundle.event_lines
        return ",".join(f"{self._event(ev)}@{lines.get(ev.seq)}/{self.ctx.leaf_hex(ev.seq)}"
                        for ev in chunk) + f";{more}"

    def digest(self, reads: Iterable[str]) -> str:
        """One digest over the values of ``reads`` (encoded, already sorted)."""
        memo = self._memo
        parts = []
        with paused():
            for text in reads:
                t = memo.get(text)
                if t is None:
                    read = decode_read(text)
                    if read is None:
                        raise Uncacheable("a read that does not decode")
                    value = self.token(read)
                    # length-prefixed, or "H" and a digest: no token can pass for the other
                    t = (f"{len(value)}:{value}" if len(value) <= LONG_VALUE else "H" +
                         hashlib.sha256(value.encode("utf-8", "surrogatepass")).hexdigest())
                    if len(memo) >= MEMO_SIZE:
                        memo.clear()
                    memo[text] = t
                parts.append(t)
        return hashlib.sha256("".join(parts).encode("utf-8", "surrogatepass")).hexdigest()

    def record(self, task: PageTask, fingerprint: str, graphs: int,
               reads: set[Read]) -> DepsRecord | None:
        """The record of a page just made from ``reads``; None if it cannot be judged."""
        if not fingerprint or EVERYTHING in reads or \
                any(type(k) not in (str, int) for _, k in reads):
            return None
        ordered = tuple(sorted(map(encode_read, reads)))
        try:
            digest = self.digest(ordered)
        except Uncacheable:
            return None
        return DepsRecord(task.path, task.kind, task.key, fingerprint, graphs, digest, ordered)

    def unchanged(self, task: PageTask) -> DepsRecord | None:
        """The last build's record of ``task`` if every read it made gives the same value."""
        line = self.previous.get(task.path)
        rec = parse_record(line) if line is not None else None
        if rec is None or rec.kind != task.kind or rec.key != task.key:
            return None
        try:
            return rec if self.digest(rec.reads) == rec.digest else None
        except Uncacheable:
            return None
