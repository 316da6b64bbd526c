"""Where results came from and where they went: introduced-by, reused-in-manuscript."""

from __future__ import annotations

import bisect
import math
import re
from collections.abc import Callable

from bundler.errors import UsageError
from bundler.graph.index import BundleIndex
from bundler.model.events import ClaimEvent, IndividualEvent
from bundler.query.common import MANUSCRIPT_KINDS, as_individual, claim_evidence, producer, seq_of
from bundler.query.model import QueryResult, QueryRow, row

INTRO_COLUMNS = ("role", "object", "version", "operator", "op", "stream", "time")
_NUMBER = re.compile(r"^[-+]?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?$")
_NUM_IN_TEXT = re.compile(r"(?<![\w.])[-+]?\d+(?:\.\d+)?(?![\w]|\.\d)")


def _intro_row(idx: BundleIndex, role: str, ind: IndividualEvent, why: str) -> QueryRow:
    op_id, stream = producer(idx, ind)
    op = idx.operators.get(op_id) if op_id else None
    return row(why, [ind.seq, op.seq if op else None], [ind.id, op_id, stream], role=role,
               object=ind.id, version=ind.version, operator=op_id,
               op=(op.custom_type or op.op) if op else None, stream=stream, time=ind.time)


def _produced_text(idx: BundleIndex, ind: IndividualEvent) -> str:
    op_id, stream = producer(idx, ind)
    if op_id is None:
        src = f" imported from {ind.external}" if ind.external else ""
        return f"recorded by stream {stream} without a producing operator{src}"
    return f"produced by operator {op_id} on stream {stream}"


def introduced_by(idx: BundleIndex, arg: str | None) -> QueryResult:
    """An artifact id: the operator and stream that produced its first version (and
    this version, when later).  Anything else is a value: the earliest claim that
    states it (in a binding, or as a number or phrase in its text), and the artifact
    that claim bound it to."""
    if not arg:
        raise UsageError("introduced-by needs an ARTIFACT id or a VALUE")
    ev = idx.get(arg)
    rows: list[QueryRow] = []
    if isinstance(ev, IndividualEvent):
        first = ev
        seen = {ev.id}
        while first.supersedes and first.supersedes not in seen:
            prev = idx.individuals.get(first.supersedes)
            if prev is None:
                break
            seen.add(prev.id)
            first = prev
        rows.append(_intro_row(idx, "introduced", first,
                               f"{first.id} (version {first.version}) was "
                               f"{_produced_text(idx, first)} at seq {first.seq}."))
        if first.id != ev.id:
            rows.append(_intro_row(idx, "this version", ev,
                                   f"{ev.id} (version {ev.version}) was "
                                   f"{_produced_text(idx, ev)} at seq {ev.seq}."))
    elif ev is not None:
        rows.append(row(f"{arg} is a {ev.type} event recorded on stream {ev.stream}; only "
                        "artifacts and claims have producers.", [ev.seq], [arg, ev.stream],
                        role="recorded", object=arg, version=None, operator=None, op=None,
                        stream=ev.stream, time=ev.time))
    else:
        rows = _value_rows(idx, arg)
    return QueryResult("introduced-by", INTRO_COLUMNS, tuple(rows))


def _value_test(value: str) -> tuple[Callable[[object], bool], Callable[[str], bool]]:
    """(binding-value test, claim-text test) for a value typed by the reviewer."""
    num = float(value) if _NUMBER.match(value.strip()) else None
    if num is not None:
        pattern = re.compile(r"(?<![\w.])" + re.escape(value.strip()) + r"(?![\w]|\.\d)")

        def bound(v: object) -> bool:
            return isinstance(v, int | float) and not isinstance(v, bool) \
                and math.isclose(num, float(v), rel_tol=1e-9, abs_tol=1e-12)
        return bound, lambda text: pattern.search(text) is not None
    needle = value.strip().casefold()
    return (lambda v: isinstance(v, str) and v.strip().casefold() == needle,
            lambda text: needle in text.casefold())


def _value_rows(idx: BundleIndex, value: str) -> list[QueryRow]:
    bound_test, text_test = _value_test(value)
    for claim in idx.claims.values():     # log order: the first hit is the earliest
        hit = next((b for b in claim.bindings if bound_test(b.value)), None)
        if hit is None and not text_test(claim.text):
            continue
        how = (f"binds {hit.value!r} to {hit.evidence} {hit.field!r}" if hit
               else "states it in its text")
        rows = [_intro_row(idx, "first claim", claim,
                           f"{claim.id} is the earliest claim stating {value!r} (it {how}); "
                           f"it was {_produced_text(idx, claim)}.")]
        evidence = idx.individuals.get(hit.evidence) if hit else None
        if evidence is not None:
            rows.append(_intro_row(idx, "bound evidence", evidence,
                                   f"{claim.id} took {value!r} from {evidence.id}, which was "
                                   f"{_produced_text(idx, evidence)}."))
        return rows
    return []


FIRST_COLUMNS = ("claim", "value", "first_claim", "how", "operator", "stream")


def first_statements(idx: BundleIndex) -> QueryResult:
    """For every final claim's bound values: the earliest claim that stated the value.

    One pass indexes every claim's binding values and the numbers in its text, so
    the site can answer introduced-by for all final claims in linear time."""
    first: dict[tuple[str, object], tuple[ClaimEvent, str]] = {}
    for claim in idx.claims.values():
        for b in claim.bindings:
            k = _key(b.value)
            if k is not None and k not in first:
                first[k] = (claim, f"binding {b.evidence} {b.field}")
        for tok in _NUM_IN_TEXT.findall(claim.text):
            first.setdefault(("n", float(tok)), (claim, "text"))
    rows: list[QueryRow] = []
    for claim in idx.claims.values():
        if not claim.final:
            continue
        for v in dict.fromkeys(b.value for b in claim.bindings if _key(b.value) is not None):
            origin, how = first[_key(v)]  # type: ignore[index]
            op_id, stream = producer(idx, origin)
            same = origin.id == claim.id
            why = (f"{claim.id} is the first claim to state {v!r}." if same else
                   f"{v!r} in {claim.id} was first stated by {origin.id} ({how}), "
                   f"{_produced_text(idx, origin)}.")
            rows.append(row(why, [claim.seq, origin.seq, seq_of(idx, op_id)],
                            [claim.id, origin.id, op_id, stream], claim=claim.id, value=v,
                            first_claim=origin.id, how=how, operator=op_id, stream=stream))
    return QueryResult("introduced-by", FIRST_COLUMNS, tuple(rows))


def _key(v: object) -> tuple[str, object] | None:
    if isinstance(v, bool) or v is None:
        return None
    if isinstance(v, int | float):
        return ("n", float(v))
    if isinstance(v, str):
        return ("n", float(v)) if _NUMBER.match(v.strip()) else ("s", v.strip().casefold())
    return None


# -------------------------------------------------------- reused-in-manuscript
REUSE_COLUMNS = ("item", "item_kind", "archived", "member_at_use", "used_by", "user_kind", "how")


class _Membership:
    """Archive membership of one item over time, for bisecting by use seq."""

    def __init__(self, idx: BundleIndex, item: str) -> None:
        self.seqs: list[int] = []
        self.states: list[tuple[tuple[str, ...], tuple[str, ...]]] = []
        ever: dict[str, None] = {}
        now: dict[str, None] = {}
        for a in idx.archive_memberships.get(item, []):
            if a.action == "add":
                ever[a.archive] = None
                now[a.archive] = None
            else:
                now.pop(a.archive, None)
            self.seqs.append(a.seq)
            self.states.append((tuple(ever), tuple(now)))

    def at(self, seq: int) -> tuple[tuple[str, ...], tuple[str, ...]]:
        i = bisect.bisect_left(self.seqs, seq)
        return self.states[i - 1] if i else ((), ())


def reused_in_manuscript(idx: BundleIndex, arg: str | None) -> QueryResult:
    """Artifacts, and archived claims, that a later draft or claim used.

    A *use* is: a claim citing, binding or deriving from the item; a draft,
    manuscript, report or paper produced by an operator with the item among its
    parents; or a semantic edge ``user uses item`` / ``item supports|informs
    user`` (evidence nodes stand for their individuals).  A new version of the
    item itself (``supersedes``) is a revision, not a reuse.  Claims count as
    items only once they had been archived."""
    uses: dict[tuple[str, str], tuple[int, list[str], list[int]]] = {}

    def add(user: IndividualEvent, item: str, how: str, seq: int) -> None:
        if item == user.id or user.supersedes == item or item not in idx.individuals:
            return
        key = (user.id, item)
        got = uses.get(key)
        if got is None:
            uses[key] = (seq, [how], [seq])
        elif how not in got[1]:
            got[1].append(how)
            got[2].append(seq)

    for ind in idx.individuals.values():
        if isinstance(ind, ClaimEvent):
            bound = {b.evidence for b in ind.bindings}
            for eid in claim_evidence(ind):
                add(ind, eid, "binding" if eid in bound else "evidence", ind.seq)
            for d in ind.derived_from:
                add(ind, d, "derived_from", ind.seq)
        elif ind.kind in MANUSCRIPT_KINDS and ind.produced_by in idx.operators:
            op = idx.operators[ind.produced_by]
            for p in op.parents:
                add(ind, p, f"parent of {op.id}", ind.seq)
    for e in idx.edges:
        if e.relation == "uses":
            user_id, item_id = as_individual(idx, e.source), as_individual(idx, e.target)
        elif e.relation in ("supports", "informs"):
            user_id, item_id = as_individual(idx, e.target), as_individual(idx, e.source)
        else:
            continue
        u = idx.individuals.get(user_id)
        if u is not None and (isinstance(u, ClaimEvent) or u.kind in MANUSCRIPT_KINDS):
            add(u, item_id, f"{e.relation} edge {e.id}", e.seq)

    members: dict[str, _Membership] = {}
    rows: list[tuple[int, int, QueryRow]] = []
    for (user_id, item_id), (seq, hows, seqs) in uses.items():
        item, user = idx.individuals[item_id], idx.individuals[user_id]
        m = members.get(item_id) or members.setdefault(item_id, _Membership(idx, item_id))
        ever, now = m.at(seq)
        if isinstance(item, ClaimEvent) and not ever:
            continue
        user_kind = "claim" if isinstance(user, ClaimEvent) else user.kind
        arch = (f", a member of archive {', '.join(now)}" if now else
                f", archived earlier in {', '.join(ever)} (no longer a member)" if ever else "")
        why = (f"{user_kind.capitalize()} {user_id} uses {item_id}{arch} "
               f"({'; '.join(hows)}), produced at seq {item.seq}.")
        rows.append((seq, item.seq, row(
            why, [item.seq, user.seq, *seqs], [item_id, user_id], item=item_id,
            item_kind="claim" if isinstance(item, ClaimEvent) else item.kind,
            archived=list(ever), member_at_use=bool(now), used_by=user_id,
            user_kind=user_kind, how=hows)))
    rows.sort(key=lambda r: (r[0], r[1], r[2].values["used_by"]))
    return QueryResult("reused-in-manuscript", REUSE_COLUMNS, tuple(r[2] for r in rows))
