"""One pass over the events builds every reverse index the later stages use.

The index is linear in the number of events and holds references to the
event models, not copies.
"""

from __future__ import annotations

import enum
from collections import defaultdict
from dataclasses import dataclass, field, fields

from bundler.graph.tracking import EVERYTHING, TrackedDict, TrackedList, note, query
from bundler.graph.transcripts import names_by_artifact, transcript_ties
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
from bundler.verify.result import LoadedBundle, PayloadState, PayloadStatus


class ClaimStatus(enum.StrEnum):
    """What a reviewer should think of a claim, worst first in listings."""

    CONTRADICTED = "contradicted"
    UNSUPPORTED = "unsupported"
    NEEDS_HUMAN_REVIEW = "needs_human_review"
    UNVERIFIED = "unverified"
    RETRACTED = "retracted"
    SUPPORTED = "supported"

    @property
    def attention(self) -> bool:
        return self in (ClaimStatus.CONTRADICTED, ClaimStatus.UNSUPPORTED,
                        ClaimStatus.NEEDS_HUMAN_REVIEW, ClaimStatus.UNVERIFIED)


STATUS_ORDER = {s: i for i, s in enumerate(ClaimStatus)}


@dataclass
class BundleIndex:
    bundle: LoadedBundle
    by_id: dict[str, EventBase] = field(default_factory=dict)
    runs: list[RunEvent] = field(default_factory=list)
    streams: dict[str, StreamEvent] = field(default_factory=dict)
    individuals: dict[str, IndividualEvent] = field(default_factory=dict)
    claims: dict[str, ClaimEvent] = field(default_factory=dict)
    operators: dict[str, OperatorEvent] = field(default_factory=dict)
    fitness: list[FitnessEvent] = field(default_factory=list)
    archives: dict[str, list[ArchiveEvent]] = field(default_factory=dict)
    steering: list[SteeringEvent] = field(default_factory=list)
    redactions: dict[str, RedactionEvent] = field(default_factory=dict)
    trace_records: dict[str, TraceRecordEvent] = field(default_factory=dict)
    evidence_nodes: dict[str, EvidenceNodeEvent] = field(default_factory=dict)
    workflow_nodes: dict[str, WorkflowNodeEvent] = field(default_factory=dict)
    edges: list[EdgeEvent] = field(default_factory=list)
    # reverse relations
    fitness_by_target: dict[str, list[FitnessEvent]] = field(default_factory=dict)
    children: dict[str, list[str]] = field(default_factory=dict)        # operator -> individuals
    used_by: dict[str, list[str]] = field(default_factory=dict)         # individual -> operators
    superseded_by: dict[str, list[str]] = field(default_factory=dict)
    derived_claims: dict[str, list[str]] = field(default_factory=dict)  # claim -> later claims
    cited_by: dict[str, list[str]] = field(default_factory=dict)        # evidence -> claims
    applied_by: dict[str, list[str]] = field(default_factory=dict)      # steering -> operators
    edges_out: dict[str, list[EdgeEvent]] = field(default_factory=dict)
    edges_in: dict[str, list[EdgeEvent]] = field(default_factory=dict)
    node_of_record: dict[str, str] = field(default_factory=dict)        # trace -> evidence node
    node_of_individual: dict[str, str] = field(default_factory=dict)
    workflow_of_node: dict[str, str] = field(default_factory=dict)      # evidence -> workflow
    archive_memberships: dict[str, list[ArchiveEvent]] = field(default_factory=dict)
    #: transcript name -> (line, seq) of each trace record that cites a line of it
    records_of_transcript: dict[str, list[tuple[int, int]]] = field(default_factory=dict)
    #: transcript name a trace record cites -> the artifact that ships it: the last in the
    #: log named so, or whose payload is (a session saved again as it grew); else the one
    #: whose name ends as the cited path does (:mod:`bundler.graph.transcripts`)
    transcript_artifacts: dict[str, str] = field(default_factory=dict)
    #: the reverse: artifact -> the cited names tied to it, its own names first
    transcript_names: dict[str, tuple[str, ...]] = field(default_factory=dict)
    #: cited name that ties to none because several shipped files end like it -> how many
    transcripts_alike: dict[str, int] = field(default_factory=dict)
    _status_memo: dict[str, ClaimStatus] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        """Every mapping and list of the index notes its reads while a page is being
        recorded (:mod:`bundler.graph.tracking`); each mapping under its field name."""
        for f in fields(self):
            value = getattr(self, f.name)
            if f.name.startswith("_"):
                continue
            if type(value) is dict:
                setattr(self, f.name, TrackedDict(f.name, value))
            elif type(value) is list:
                setattr(self, f.name, TrackedList(value))

    # ------------------------------------------------------------- queries
    def get(self, oid: str) -> EventBase | None:
        return self.by_id.get(oid)

    def payload_status(self, ind: IndividualEvent) -> PayloadStatus | None:
        if ind.payload is None:
            return None
        note("payloads", ind.payload.digest)
        return self.bundle.payloads.get(ind.payload.digest)

    def payload_state(self, ind: IndividualEvent) -> PayloadState | None:
        st = self.payload_status(ind)
        return st.state if st else None

    def claim_status(self, claim: ClaimEvent) -> ClaimStatus:
        """Latest verdict wins; explicit statuses on the claim itself come first.

        A claim with no verdict of its own that is ``derived_from`` an earlier
        claim with the same text, evidence and bindings carries that claim's
        status: a draft inheriting a checked sentence unchanged is not
        "never verified".  Memoised, so resolving every claim is linear; one read
        ``("status", id)`` for dependency records, whether memoised or not.
        """
        return query("status", claim.id, lambda: self._claim_status(claim))

    def _claim_status(self, claim: ClaimEvent) -> ClaimStatus:
        cached = self._status_memo.get(claim.id)
        if cached is not None:
            return cached
        status = self._own_status(claim)
        if status is ClaimStatus.UNVERIFIED:
            parent = self.inherited_from(claim)
            if parent is not None:
                status = self._claim_status(parent)
        self._status_memo[claim.id] = status
        return status

    def inherited_from(self, claim: ClaimEvent) -> ClaimEvent | None:
        """The earlier identical claim whose verdict this one carries, if any."""
        if claim.claim_status != "asserted" or self.fitness_by_target.get(claim.id):
            return None
        for d in claim.derived_from:
            p = self.claims.get(d)
            if p is not None and p.seq < claim.seq and p.text == claim.text \
                    and p.evidence == claim.evidence and p.bindings == claim.bindings:
                return p
        return None

    def _own_status(self, claim: ClaimEvent) -> ClaimStatus:
        if claim.claim_status == "retracted":
            return ClaimStatus.RETRACTED
        if claim.claim_status == "unsupported":
            return ClaimStatus.UNSUPPORTED
        for fit in reversed(self.fitness_by_target.get(claim.id, [])):
            if fit.verdict is not None:
                return ClaimStatus(fit.verdict)
            if fit.passed is not None:
                return ClaimStatus.SUPPORTED if fit.passed else ClaimStatus.UNSUPPORTED
        return ClaimStatus.UNVERIFIED

    def claims_by_status(self) -> list[tuple[ClaimEvent, ClaimStatus]]:
        rows = [(c, self.claim_status(c)) for c in self.claims.values()]
        rows.sort(key=lambda r: (STATUS_ORDER[r[1]], not r[0].final, r[0].seq))
        return rows

    def time_span(self) -> tuple[str, str] | None:
        note(*EVERYTHING)
        evs = self.bundle.events
        return (min(e.time for e in evs), max(e.time for e in evs)) if evs else None

    def label(self, oid: str) -> str:
        """A short human label for any object id (falls back to the id)."""
        ev = self.by_id.get(oid)
        if ev is None:
            return oid
        if isinstance(ev, ClaimEvent):
            return _clip(ev.name or ev.text)
        if isinstance(ev, IndividualEvent):
            return _clip(f"{ev.name} v{ev.version}" if ev.version > 1 else ev.name)
        if isinstance(ev, OperatorEvent):
            return _clip(f"{ev.custom_type or ev.op}" + (f": {ev.summary}" if ev.summary else ""))
        if isinstance(ev, FitnessEvent):
            return _clip(f"{ev.evaluator.name} {ev.evaluator.version}: {fitness_value(ev)}")
        if isinstance(ev, (EvidenceNodeEvent, WorkflowNodeEvent)):
            return _clip(ev.label)
        if isinstance(ev, TraceRecordEvent):
            return _clip(f"{ev.record_kind} ({ev.source.transcript}"
                         + (f":{ev.source.line}" if ev.source.line else "") + ")")
        if isinstance(ev, (RunEvent,)):
            return _clip(ev.title)
        if isinstance(ev, StreamEvent):
            return _clip(ev.name)
        if isinstance(ev, SteeringEvent):
            return _clip(f"{ev.command} by {ev.issuer}")
        return oid


def fitness_value(fit: FitnessEvent) -> str:
    if fit.verdict is not None:
        return fit.verdict
    if fit.passed is not None:
        return "pass" if fit.passed else "fail"
    if fit.score is not None:
        s = f"{fit.metric + '=' if fit.metric else ''}{fit.score:g}"
        return s + (f" (threshold {fit.threshold:g})" if fit.threshold is not None else "")
    return "review"


def _clip(text: str, n: int = 80) -> str:
    text = " ".join(text.split())
    return text if len(text) <= n else text[: n - 1] + "…"


def _add(d: dict[str, list[str]], key: str, value: str) -> None:
    d.setdefault(key, []).append(value)


def build_index(bundle: LoadedBundle) -> BundleIndex:
    idx = BundleIndex(bundle)
    fit_by: defaultdict[str, list[FitnessEvent]] = defaultdict(list)
    shipped: dict[str, str] = {}      # file or artifact name -> the last artifact so named
    cited: set[str] = set()           # transcripts trace records cite
    for ev in bundle.events:
        idx.by_id.setdefault(ev.id, ev)
        if isinstance(ev, ClaimEvent):
            idx.claims[ev.id] = ev
            idx.individuals[ev.id] = ev
            for e in dict.fromkeys([*ev.evidence, *(b.evidence for b in ev.bindings)]):
                _add(idx.cited_by, e, ev.id)
            for d in ev.derived_from:
                _add(idx.derived_claims, d, ev.id)
        elif isinstance(ev, IndividualEvent):
            idx.individuals[ev.id] = ev
            if ev.payload is not None:
                for name in (ev.name, ev.payload.name):
                    if name:
                        shipped[name] = ev.id
        if isinstance(ev, IndividualEvent):
            if ev.produced_by:
                _add(idx.children, ev.produced_by, ev.id)
            if ev.supersedes:
                _add(idx.superseded_by, ev.supersedes, ev.id)
        elif isinstance(ev, OperatorEvent):
            idx.operators[ev.id] = ev
            for p in ev.parents:
                _add(idx.used_by, p, ev.id)
            if ev.steering:
                _add(idx.applied_by, ev.steering, ev.id)
        elif isinstance(ev, FitnessEvent):
            idx.fitness.append(ev)
            fit_by[ev.target].append(ev)
        elif isinstance(ev, ArchiveEvent):
            idx.archives.setdefault(ev.archive, []).append(ev)
            idx.archive_memberships.setdefault(ev.member, []).append(ev)
        elif isinstance(ev, SteeringEvent):
            idx.steering.append(ev)
        elif isinstance(ev, RedactionEvent):
            idx.redactions.setdefault(ev.target, ev)
        elif isinstance(ev, TraceRecordEvent):
            idx.trace_records[ev.id] = ev
            cited.add(ev.source.transcript)
            if ev.source.line is not None:
                idx.records_of_transcript.setdefault(ev.source.transcript, []).append(
                    (ev.source.line, ev.seq))
        elif isinstance(ev, EvidenceNodeEvent):
            idx.evidence_nodes[ev.id] = ev
            for r in ev.records:
                idx.node_of_record.setdefault(r, ev.id)
            if ev.individual:
                idx.node_of_individual.setdefault(ev.individual, ev.id)
        elif isinstance(ev, WorkflowNodeEvent):
            idx.workflow_nodes[ev.id] = ev
            for m in ev.members:
                idx.workflow_of_node.setdefault(m, ev.id)
        elif isinstance(ev, EdgeEvent):
            idx.edges.append(ev)
            idx.edges_out.setdefault(ev.source, []).append(ev)
            idx.edges_in.setdefault(ev.target, []).append(ev)
        elif isinstance(ev, RunEvent):
            idx.runs.append(ev)
        elif isinstance(ev, StreamEvent):
            idx.streams[ev.id] = ev
    idx.fitness_by_target = TrackedDict("fitness_by_target", fit_by)
    alike: dict[str, int] = {}
    ties = transcript_ties(sorted(cited), shipped, alike)
    idx.transcripts_alike = TrackedDict("transcripts_alike", alike)
    idx.transcript_artifacts = TrackedDict("transcript_artifacts", ties)
    own = {art: tuple(n for n in (ind.payload.name if ind.payload else None, ind.name) if n)
           for art in set(ties.values()) if (ind := idx.individuals.get(art)) is not None}
    idx.transcript_names = TrackedDict("transcript_names", names_by_artifact(ties, own))
    return idx
