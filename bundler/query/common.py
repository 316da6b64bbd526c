"""Small relations several queries share, computed from the graph index only."""

from __future__ import annotations

from dataclasses import dataclass

from bundler.graph.index import BundleIndex, ClaimStatus
from bundler.model.events import (
    ClaimEvent,
    EvidenceNodeEvent,
    FitnessEvent,
    IndividualEvent,
)

NEGATIVE = (ClaimStatus.CONTRADICTED, ClaimStatus.UNSUPPORTED, ClaimStatus.NEEDS_HUMAN_REVIEW)
MANUSCRIPT_KINDS = frozenset({"draft", "manuscript", "report", "paper"})


@dataclass(frozen=True)
class Verdict:
    status: ClaimStatus
    fitness: FitnessEvent | None = None     # the record the status comes from
    inherited_from: str | None = None       # earlier, identical claim it was taken from
    checked_without_verdict: FitnessEvent | None = None


class Verdicts:
    """A claim's verification outcome, memoised.

    ``BundleIndex.claim_status`` plus one rule: a claim with no fitness record
    of its own that is ``derived_from`` an earlier claim with the same text,
    evidence and bindings carries that claim's outcome (a draft inheriting a
    checked sentence unchanged is not "never verified").  Each claim is
    resolved once, so the cost is linear in the number of claims.
    """

    def __init__(self, idx: BundleIndex) -> None:
        self.idx = idx
        self.memo: dict[str, Verdict] = {}

    def __call__(self, claim: ClaimEvent) -> Verdict:
        chain: list[ClaimEvent] = []
        c: ClaimEvent | None = claim
        while c is not None and c.id not in self.memo:
            chain.append(c)
            c = self._identical_parent(c)   # strictly earlier, so this ends
        for c in reversed(chain):
            self.memo[c.id] = self._own(c)
        return self.memo[claim.id]

    def _identical_parent(self, c: ClaimEvent) -> ClaimEvent | None:
        if c.claim_status != "asserted" or self.idx.fitness_by_target.get(c.id):
            return None
        for d in c.derived_from:
            p = self.idx.claims.get(d)
            if p is not None and p.seq < c.seq and p.text == c.text \
                    and p.evidence == c.evidence and p.bindings == c.bindings:
                return p
        return None

    def _own(self, c: ClaimEvent) -> Verdict:
        status = self.idx.claim_status(c)
        fits = self.idx.fitness_by_target.get(c.id, [])
        if status is ClaimStatus.UNVERIFIED:
            parent = self._identical_parent(c)
            inherited = self.memo.get(parent.id) if parent is not None else None
            if parent is not None and inherited is not None \
                    and inherited.status is not ClaimStatus.UNVERIFIED:
                return Verdict(inherited.status, inherited.fitness,
                               inherited.inherited_from or parent.id)
            return Verdict(status, None, None, fits[-1] if fits else None)
        if c.claim_status != "asserted":
            return Verdict(status)
        source = next((f for f in reversed(fits)
                       if f.verdict is not None or f.passed is not None), None)
        return Verdict(status, source)


def producer(idx: BundleIndex, ind: IndividualEvent) -> tuple[str | None, str]:
    """(producing operator, producing stream): the operator's stream, else the artifact's."""
    op = idx.operators.get(ind.produced_by) if ind.produced_by else None
    if op is not None:
        return op.id, op.stream
    return ind.produced_by, ind.stream


def claim_evidence(claim: ClaimEvent) -> list[str]:
    """Cited and bound evidence, each id once, citation order first."""
    return list(dict.fromkeys([*claim.evidence, *(b.evidence for b in claim.bindings)]))


def as_individual(idx: BundleIndex, oid: str) -> str:
    """An evidence node stands for the individual it groups, when it names one."""
    ev = idx.get(oid)
    if isinstance(ev, EvidenceNodeEvent) and ev.individual:
        return ev.individual
    return oid


def seq_of(idx: BundleIndex, oid: str | None) -> int | None:
    ev = idx.get(oid) if oid else None
    return ev.seq if ev is not None else None


def evaluator_name(f: FitnessEvent) -> str:
    return f"{f.evaluator.name} {f.evaluator.version}"


def fitness_outcome(f: FitnessEvent) -> bool | None:
    """Pass/fail as recorded, else derived from score and threshold."""
    if f.passed is not None:
        return f.passed
    if f.score is not None and f.threshold is not None:
        return f.score >= f.threshold if f.higher_is_better else f.score <= f.threshold
    return None
