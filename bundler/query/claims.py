"""Claim queries: which claims are unsupported, which evidence is gone, which
bound values do not match their payloads, and the full trace of one claim."""

from __future__ import annotations

from bundler.errors import UsageError
from bundler.graph.index import BundleIndex, ClaimStatus
from bundler.graph.paths import GEdge, evidence_graph
from bundler.model.events import ClaimEvent, IndividualEvent
from bundler.query.common import NEGATIVE, Verdicts, claim_evidence, evaluator_name, seq_of
from bundler.query.model import QueryResult, QueryRow, counted, row
from bundler.query.regex_guard import RegexRunner
from bundler.query.values import OK, UNVERIFIABLE, FieldReader, parse_comparison, values_equal
from bundler.verify.result import PayloadState


def _revisions(idx: BundleIndex, claim: ClaimEvent) -> list[str]:
    return list(dict.fromkeys([*idx.superseded_by.get(claim.id, []),
                               *idx.derived_claims.get(claim.id, [])]))


# ------------------------------------------------------------ unsupported-claims
UNSUPPORTED_COLUMNS = ("claim", "final", "status", "checked_by", "revised_by", "reasons")


def unsupported_claims(idx: BundleIndex, arg: str | None) -> QueryResult:
    """Final claims lacking a binding, a verification or a positive verdict, plus any
    claim (final or not) whose verdict is negative: a contradicted draft claim stays a
    finding even after it was revised.  Retracted claims are withdrawals, not findings."""
    verdicts = Verdicts(idx)
    rows: list[QueryRow] = []
    examined = retracted = 0
    for claim in idx.claims.values():
        if claim.claim_status == "retracted":
            retracted += 1
            continue
        examined += 1
        v = verdicts(claim)
        negative = v.status in NEGATIVE
        if not claim.final and not negative:
            continue
        reasons: list[str] = []
        if claim.claim_status == "unsupported":
            reasons.append("its author marked it unsupported")
        elif negative and v.fitness is not None:
            reasons.append(f"verdict {v.status.value} from {evaluator_name(v.fitness)} "
                           f"({v.fitness.id})"
                           + (f", inherited from {v.inherited_from}" if v.inherited_from else ""))
        if not claim.bindings:
            reasons.append("no evidence binding")
        if v.status is ClaimStatus.UNVERIFIED:
            if v.checked_without_verdict is not None:
                reasons.append(f"checked by {v.checked_without_verdict.id} but no verdict "
                               "or pass/fail was recorded")
            else:
                reasons.append("no verification record")
        if not reasons:
            continue
        revised = _revisions(idx, claim)
        fit = v.fitness or v.checked_without_verdict
        what = "Final claim" if claim.final else "Claim (not final)"
        why = f"{what} {claim.id}: {'; '.join(reasons)}."
        if revised:
            why += f" Later revised by {', '.join(revised)}."
        rows.append(row(why, [claim.seq, fit.seq if fit else None],
                        [claim.id, fit.id if fit else None, *revised],
                        claim=claim.id, final=claim.final, status=v.status.value,
                        checked_by=fit.id if fit else None, revised_by=revised,
                        reasons=reasons))
    scope = (f"Examined {counted(examined, 'claim')}." if examined else
             "The log holds no claim to examine.")
    if retracted:
        scope += f" {counted(retracted, 'retracted claim')} left out."
    return QueryResult("unsupported-claims", UNSUPPORTED_COLUMNS, tuple(rows), scope, examined)


# ------------------------------------------------------------- missing-evidence
MISSING_COLUMNS = ("claim", "final", "evidence", "problem", "detail")
_BAD_STATES = (PayloadState.REDACTED, PayloadState.MISSING, PayloadState.CORRUPT,
               PayloadState.LEAKED)


def missing_evidence(idx: BundleIndex, arg: str | None) -> QueryResult:
    """Every claim's cited or bound evidence whose payload is not there as committed,
    or that names no event at all.  Redacted (private, with an authority) is kept
    apart from missing (gone without a record)."""
    rows: list[QueryRow] = []
    checked = external = 0
    citing: set[str] = set()
    for claim in idx.claims.values():
        for eid in claim_evidence(claim):
            ev = idx.get(eid)
            if ev is None and eid.startswith("ext:"):
                external += 1
                continue
            checked += 1
            citing.add(claim.id)
            if ev is None:
                rows.append(row(f"{claim.id} cites {eid}, which is not an event in the log.",
                                [claim.seq], [claim.id, eid], claim=claim.id,
                                final=claim.final, evidence=eid, problem="no-such-event",
                                detail="no event has this id"))
                continue
            if not isinstance(ev, IndividualEvent):
                continue
            st = idx.payload_status(ev)
            if st is None or st.state not in _BAD_STATES:
                continue
            problem = st.state.value
            if st.state is PayloadState.REDACTED:
                detail = f"redacted: {st.reason} (authority: {st.authority})"
                why = (f"{claim.id} rests on {eid}, whose payload was redacted by "
                       f"{st.authority} ({st.reason}); its commitment remains, the bytes do not.")
            else:
                detail = {"missing": "the payload bytes are absent and no redaction explains it",
                          "corrupt": "the payload bytes do not match their committed digest",
                          "leaked": "redacted, yet the bytes were still shipped"}[problem]
                why = f"{claim.id} rests on {eid}, whose payload is {problem}: {detail}."
            rows.append(row(why, [claim.seq, ev.seq, st.redaction_seq], [claim.id, eid],
                            claim=claim.id, final=claim.final, evidence=eid, problem=problem,
                            detail=detail))
    scope = (f"Checked {counted(checked, 'piece')} of evidence cited by "
             f"{counted(len(citing), 'claim')}." if checked else
             "No claim cites evidence in the log, so nothing was checked.")
    if external:
        scope += f" {counted(external, 'external reference')} (ext:) not checked."
    return QueryResult("missing-evidence", MISSING_COLUMNS, tuple(rows), scope, checked)


# --------------------------------------------------------------- value-mismatch
MISMATCH_COLUMNS = ("claim", "final", "evidence", "field", "recorded", "found", "comparison",
                    "status")


def value_mismatch(idx: BundleIndex, arg: str | None) -> QueryResult:
    """Bindings whose recorded value differs from the value in the cited field,
    recomputed from the payload (CSV, JSON, ``re:`` on text) or the cited event.

    ``status``: ``mismatch`` (values differ), ``comparison-fails`` (values agree
    but the found value fails the binding's ``>=``/``<=`` threshold),
    ``not-found`` (the field does not resolve) or ``unverifiable`` (redacted or
    missing payload, a free-text locator, an unsupported media type: ``found``
    is null).  Bindings that match are not listed."""
    rows: list[QueryRow] = []
    bindings = claims = 0
    with RegexRunner() as regex:
        reader = FieldReader(idx, regex)
        for claim in idx.claims.values():
            claims += bool(claim.bindings)
            for b in claim.bindings:
                bindings += 1
                res = reader.resolve(b.evidence, b.field)
                cmp = parse_comparison(b.comparison)
                status, why = "", ""
                where = f"{b.evidence} {b.field!r}"
                if res.status != OK:
                    status = res.status
                    why = (f"{claim.id} binds {b.value!r} to {where}, which cannot be "
                           f"recomputed: {res.detail}." if status == UNVERIFIABLE else
                           f"{claim.id} binds {b.value!r} to {where}, which does not "
                           f"resolve: {res.detail}.")
                elif not values_equal(b.value, res.found, approx=cmp.approx):
                    status = "mismatch"
                    why = (f"{claim.id} records {b.value!r} for {where}; the "
                           f"{'payload' if _has_payload(idx, b.evidence) else 'event'} "
                           f"holds {res.found!r}.")
                elif cmp.holds(res.found) is False:
                    status = "comparison-fails"
                    why = (f"{claim.id} binds {where} = {res.found!r} with comparison "
                           f"{b.comparison!r}, which the value does not satisfy.")
                if not status:
                    continue
                rows.append(row(why, [claim.seq, seq_of(idx, b.evidence)],
                                [claim.id, b.evidence], claim=claim.id, final=claim.final,
                                evidence=b.evidence, field=b.field, recorded=b.value,
                                found=res.found if res.status == OK else None,
                                comparison=b.comparison, status=status))
    scope = (f"Checked {counted(bindings, 'binding')} of {counted(claims, 'claim')}."
             if bindings else
             "No claim binds a value to its evidence, so nothing was checked.")
    return QueryResult("value-mismatch", MISMATCH_COLUMNS, tuple(rows), scope, bindings)


def _has_payload(idx: BundleIndex, oid: str) -> bool:
    ev = idx.get(oid)
    return isinstance(ev, IndividualEvent) and ev.payload is not None


# ------------------------------------------------------------------ claim-trace
TRACE_COLUMNS = ("kind", "length", "inferred", "path")


def edge_text(e: GEdge) -> str:
    if not e.inferred:
        return e.relation
    bits = ["inferred"]
    if e.confidence is not None:
        bits.append(f"{e.confidence:g}")
    if e.by:
        bits.append(f"by {e.by}")
    return f"{e.relation} ({', '.join(bits)})"


def claim_trace(idx: BundleIndex, arg: str | None) -> QueryResult:
    """The claim's evidence paths exactly as its page draws them (claim first,
    walking upstream), then every gap the graph stage states explicitly."""
    if arg is None or arg not in idx.claims:
        raise UsageError(f"claim-trace needs the id of a claim; {arg!r} is not a claim "
                         "in this bundle" if arg else "claim-trace needs a CLAIM id")
    g = evidence_graph(idx, arg)
    rows: list[QueryRow] = []
    for path in g.paths:
        parts: list[str] = []
        inferred = False
        for oid, e in path:
            if e is not None:
                parts.append(edge_text(e))
                inferred = inferred or e.inferred
            parts.append(oid)
        ids = [oid for oid, _ in path]
        text = " ← ".join(parts)
        why = (f"Evidence path of {arg} with {len(path) - 1} step(s)"
               + (", including an inferred edge." if inferred else ", all recorded."))
        rows.append(row(why, [seq_of(idx, o) for o in ids] + [
            seq_of(idx, e.edge_id) for _, e in path if e is not None and e.edge_id],
            ids, kind="path", length=len(path) - 1, inferred=inferred, path=text))
    if g.paths_truncated:
        rows.append(row("The claim page shows the same limit.", [], [arg], kind="limit",
                        length=None, inferred=None,
                        path=f"only the first {len(g.paths)} paths are listed"))
    for gap in g.gaps:
        rows.append(row(f"Missing support stated for {arg}.", [seq_of(idx, arg)], [arg],
                        kind="gap", length=None, inferred=None, path=gap))
    return QueryResult("claim-trace", TRACE_COLUMNS, tuple(rows))
