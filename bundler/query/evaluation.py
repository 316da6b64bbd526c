"""Evaluation queries: acceptance without an independent judge, and judges that disagree."""

from __future__ import annotations

from bundler.graph.index import BundleIndex, fitness_value
from bundler.model.events import ClaimEvent, FitnessEvent
from bundler.query.common import evaluator_name, fitness_outcome, producer, seq_of
from bundler.query.model import QueryResult, QueryRow, counted, row

ACCEPTED_COLUMNS = ("individual", "kind", "producer_stream", "evaluations", "accepted")


def accepted_without_independent_evaluator(idx: BundleIndex, arg: str | None) -> QueryResult:
    """Individuals that were accepted (status ``accepted``/``final``, a ``supported``
    verdict or ``passed: true``) or added to an archive, and that no fitness record
    from another stream judged.  The producer stream is the producing operator's
    stream, else the individual's own: an agent grading its own work is not an
    independent evaluation.  Retracted claims are left out."""
    rows: list[QueryRow] = []
    accepted = 0
    for ind in idx.individuals.values():
        if isinstance(ind, ClaimEvent) and ind.claim_status == "retracted":
            continue
        fits = idx.fitness_by_target.get(ind.id, [])
        how: list[str] = []
        if ind.status in ("accepted", "final"):
            how.append(f"status {ind.status}")
        how += [f"passed {f.id}" for f in fits if f.verdict == "supported" or f.passed is True]
        adds = [a for a in idx.archive_memberships.get(ind.id, []) if a.action == "add"]
        how += list(dict.fromkeys(f"added to archive {a.archive}" for a in adds))
        if not how:
            continue
        accepted += 1
        op_id, stream = producer(idx, ind)
        if any(f.stream != stream for f in fits):
            continue
        evaluations = [f"{f.id} ({evaluator_name(f)}, stream {f.stream})" for f in fits]
        judged = (f"its only fitness records ({', '.join(f.id for f in fits)}) come from "
                  f"{stream}, the stream that produced it" if fits
                  else "no fitness record judges it at all")
        made = f"produced by {op_id} on {stream}" if op_id else f"recorded by {stream}"
        why = f"{ind.id} was accepted ({'; '.join(how)}), {made}, but {judged}."
        rows.append(row(why, [ind.seq, seq_of(idx, op_id), *(f.seq for f in fits),
                              *(a.seq for a in adds)],
                        [ind.id, op_id, stream, *(f.id for f in fits)],
                        individual=ind.id, kind=ind.kind, producer_stream=stream,
                        evaluations=evaluations, accepted=how))
    scope = (f"Examined {counted(accepted, 'accepted or archived individual')}." if accepted
             else "No individual was accepted or archived, so nothing was examined.")
    return QueryResult("accepted-without-independent-evaluator", ACCEPTED_COLUMNS, tuple(rows),
                       scope, accepted)


DISAGREE_COLUMNS = ("individual", "kind", "evaluators", "disagreement", "outcomes")


def _passes(score: float, threshold: float, higher_is_better: bool) -> bool:
    return score >= threshold if higher_is_better else score <= threshold


def _disagreements(latest: list[FitnessEvent]) -> list[str]:
    found: list[str] = []
    verdicts = sorted({f.verdict for f in latest if f.verdict})
    if len(verdicts) > 1:
        found.append(f"verdicts differ ({', '.join(verdicts)})")
    outcomes = {fitness_outcome(f) for f in latest} - {None}
    if len(outcomes) > 1:
        found.append("pass and fail")
    groups: dict[tuple[str | None, bool], list[FitnessEvent]] = {}
    for f in latest:
        if f.score is not None:
            groups.setdefault((f.metric, f.higher_is_better), []).append(f)
    for (metric, hib), fs in groups.items():
        if len(fs) < 2:
            continue
        for t in sorted({f.threshold for f in fs if f.threshold is not None}):
            if len({_passes(f.score, t, hib) for f in fs if f.score is not None}) > 1:
                found.append(f"{metric or 'score'} scores straddle the threshold {t:g}")
                break
    return found


def evaluator_disagreement(idx: BundleIndex, arg: str | None) -> QueryResult:
    """Individuals judged by two or more evaluators (name and version) whose latest
    records disagree: different verdicts, pass against fail (recorded, or derived
    from score and threshold), or scores on one metric on both sides of a threshold
    that one of the records declares."""
    found: list[tuple[int, QueryRow]] = []
    compared = 0
    for target, fits in idx.fitness_by_target.items():
        latest: dict[tuple[str, str], FitnessEvent] = {}
        for f in fits:
            latest[(f.evaluator.name, f.evaluator.version)] = f
        if len(latest) < 2:
            continue
        compared += 1
        judged = list(latest.values())
        kinds = _disagreements(judged)
        if not kinds:
            continue
        ev = idx.get(target)
        kind = getattr(ev, "kind", ev.type) if ev is not None else "missing"
        outcomes = [f"{evaluator_name(f)}: {fitness_value(f)}" for f in judged]
        why = (f"{len(judged)} evaluators judged {target} and disagree: {'; '.join(kinds)} "
               f"({'; '.join(outcomes)}).")
        found.append((ev.seq if ev is not None else fits[0].seq, row(
            why, [seq_of(idx, target), *(f.seq for f in judged)],
            [target, *(f.id for f in judged)], individual=target, kind=kind,
            evaluators=[evaluator_name(f) for f in judged], disagreement=kinds,
            outcomes=outcomes)))
    found.sort(key=lambda r: r[0])
    scope = (f"Compared the evaluators of {counted(compared, 'individual')} judged by two or "
             "more." if compared else
             "No individual was judged by two or more evaluators, so nothing was compared.")
    return QueryResult("evaluator-disagreement", DISAGREE_COLUMNS, tuple(r for _, r in found),
                       scope, compared)
