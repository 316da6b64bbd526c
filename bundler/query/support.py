"""inferred-support: claims whose only support is structure a tracer inferred.

LEDGER's future work asks to separate recorded from inferred structure and to
show uncertainty; this query is where that pays off.  A claim counts as
*recorded-supported* when it has a binding with stance ``supports`` or a
recorded semantic edge that supports it.  A bare ``evidence`` citation
without a binding says which artifact the claim points at, not which value
supports it, so it does not count (it is listed in ``cited_unbound``).  A
claim with no recorded support and at least one inferred supporting edge is
reported, once per inferred edge.

Support edges are ``X supports/informs claim`` and ``claim uses X``, on the
claim itself or on an evidence node that groups it; an evidence node stands
for the individual it names.  When the supporting object is itself a claim
with only inferred support, the path continues through it (following its
most confident inferred edge, at most 20 hops), so ``confidence``
is the product of the confidences along the path and ``min_confidence`` its
weakest link.  A link without a recorded confidence makes both null.
"""

from __future__ import annotations

from collections.abc import Iterator

from bundler.graph.index import BundleIndex
from bundler.model.events import ClaimEvent, EdgeEvent
from bundler.query.common import as_individual, seq_of
from bundler.query.model import QueryResult, QueryRow, row

MAX_HOPS = 20
COLUMNS = ("claim", "final", "status", "via", "confidence", "min_confidence", "cited_unbound",
           "path")


class _Support:
    def __init__(self, idx: BundleIndex) -> None:
        self.idx = idx
        self.nodes: dict[str, list[str]] = {}
        for node in idx.evidence_nodes.values():
            if node.individual:
                self.nodes.setdefault(node.individual, []).append(node.id)

    def links(self, claim_id: str) -> Iterator[tuple[str, EdgeEvent]]:
        """(supporting object, edge) for every support edge into the claim."""
        for t in (claim_id, *self.nodes.get(claim_id, ())):
            for e in self.idx.edges_in.get(t, ()):
                if e.relation in ("supports", "informs"):
                    yield as_individual(self.idx, e.source), e
            for e in self.idx.edges_out.get(t, ()):
                if e.relation == "uses":
                    yield as_individual(self.idx, e.target), e

    def recorded(self, claim: ClaimEvent) -> bool:
        if any(b.stance == "supports" for b in claim.bindings):
            return True
        return any(e.provenance == "recorded" for _, e in self.links(claim.id))

    def inferred(self, claim: ClaimEvent) -> list[tuple[str, EdgeEvent]]:
        if self.recorded(claim):
            return []
        links = [(s, e) for s, e in self.links(claim.id) if e.provenance == "inferred"]
        return sorted(links, key=lambda le: le[1].seq)


def _label(e: EdgeEvent) -> str:
    bits = ["inferred"] + ([f"{e.confidence:g}"] if e.confidence is not None else []) \
        + ([f"by {e.inferred_by}"] if e.inferred_by else [])
    return f"{e.relation} ({', '.join(bits)})"


def inferred_support(idx: BundleIndex, arg: str | None) -> QueryResult:
    sup = _Support(idx)
    rows: list[QueryRow] = []
    for claim in idx.claims.values():
        if claim.claim_status == "retracted":
            continue
        links = sup.inferred(claim)
        if not links:
            continue
        bound = {b.evidence for b in claim.bindings}
        unbound = [e for e in claim.evidence if e not in bound]
        status = idx.claim_status(claim).value
        for source, edge in links:
            chain = [edge]
            hops = [source]
            nxt = idx.claims.get(source)
            while nxt is not None and len(chain) < MAX_HOPS and nxt.id not in hops[:-1] \
                    and nxt.id != claim.id:
                more = sup.inferred(nxt)
                if not more:
                    break
                s2, e2 = max(more, key=lambda le: (le[1].confidence or 0.0, -le[1].seq))
                chain.append(e2)
                hops.append(s2)
                nxt = idx.claims.get(s2)
            confs = [e.confidence for e in chain]
            product: float | None = None
            low: float | None = None
            if all(c is not None for c in confs):
                product = 1.0
                for c in confs:
                    product *= c  # type: ignore[operator]
                product = round(product, 6)
                low = min(c for c in confs if c is not None)
            parts = [claim.id]
            for e, h in zip(chain, hops, strict=True):
                parts += [_label(e), h]
            conf_text = (f"path confidence {product:g} (weakest link {low:g})"
                         if product is not None else "a link on the path has no confidence")
            why = (f"{claim.id} has no recorded support (no supporting binding or recorded "
                   f"edge); {source} supports it only through {edge.id}, inferred by "
                   f"{edge.inferred_by or 'an unnamed tracer'}; {conf_text}.")
            if unbound:
                why += f" It cites {', '.join(unbound)} without a binding."
            rows.append(row(why, [claim.seq, *(e.seq for e in chain),
                                  *(seq_of(idx, h) for h in hops)],
                            [claim.id, *hops, *(e.id for e in chain)],
                            claim=claim.id, final=claim.final, status=status, via=source,
                            confidence=product, min_confidence=low, cited_unbound=unbound,
                            path=" ← ".join(parts)))
    return QueryResult("inferred-support", COLUMNS, tuple(rows))
