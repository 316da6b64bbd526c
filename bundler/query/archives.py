"""Steering, archives and lineage: what human commands changed, how archives moved,
and how the best candidate came to be."""

from __future__ import annotations

from collections import deque

from bundler.errors import UsageError
from bundler.graph.index import BundleIndex
from bundler.model.events import ArchiveEvent, FitnessEvent, SteeringEvent
from bundler.query.common import seq_of
from bundler.query.model import QueryResult, QueryRow, capped, plural, row

#: Downstream walks stop after this many individuals per command, so a command
#: that re-planned a 100k-event run costs the same as one that changed a leaf.
MAX_DOWNSTREAM = 2_000


def downstream(idx: BundleIndex, operators: list[str], limit: int = MAX_DOWNSTREAM
               ) -> tuple[list[str], bool]:
    """Individuals derived from ``operators``: their children, the operators that use
    those, their children, ... and claims derived from derived claims.  Returns the
    ids in log order and whether the walk stopped at ``limit``."""
    seen_ops = set(operators)
    found: dict[str, None] = {}
    todo = deque(operators)
    while todo:
        op = todo.popleft()
        for child in idx.children.get(op, []):
            nexts = [child, *idx.derived_claims.get(child, [])]
            for ind in nexts:
                if ind in found:
                    continue
                if len(found) >= limit:
                    return _in_log_order(idx, found), True
                found[ind] = None
                for user in idx.used_by.get(ind, []):
                    if user not in seen_ops:
                        seen_ops.add(user)
                        todo.append(user)
    return _in_log_order(idx, found), False


def _in_log_order(idx: BundleIndex, ids: dict[str, None]) -> list[str]:
    return sorted(ids, key=lambda i: seq_of(idx, i) or 0)


STEERING_COLUMNS = ("steering", "command", "issuer", "applied_by", "derived_count", "derived")


def steering_effects(idx: BundleIndex, arg: str | None) -> QueryResult:
    """Each human or external command, the operators that applied it (``steering:``)
    and the individuals derived downstream of them (at most 2,000 per command)."""
    rows: list[QueryRow] = []
    for s in idx.steering:
        ops = idx.applied_by.get(s.id, [])
        derived, cut = downstream(idx, ops)
        count = f"{len(derived)}+" if cut else str(len(derived))
        if not ops:
            why = f"{s.command} by {s.issuer} ({s.id}): no operator records applying it."
        elif not derived:
            why = (f"{s.command} by {s.issuer} ({s.id}) was applied by {', '.join(ops)}, "
                   "which derived nothing.")
        else:
            why = (f"{s.command} by {s.issuer} ({s.id}) was applied by {', '.join(ops)}; "
                   f"{count} individual(s) derive from it, first {derived[0]}.")
        rows.append(row(why, [s.seq, *(seq_of(idx, o) for o in ops)],
                        [s.id, *ops, *derived[:50]], steering=s.id, command=s.command,
                        issuer=s.issuer, applied_by=ops, derived_count=count,
                        derived=capped(derived)))
    return QueryResult("steering-effects", STEERING_COLUMNS, tuple(rows))


AFTER_COLUMNS = ("archive_event", "archive", "action", "member", "after", "linked", "reason")


def archive_after_intervention(idx: BundleIndex, arg: str | None) -> QueryResult:
    """Archive decisions made after the steering command ``arg`` (default: after the
    first command).  ``after`` is that command, or without an argument the latest
    command before the decision; ``linked`` says how the decision connects to it:
    its operator applied the command, its reason names it, or its member derives
    from the command (see ``steering-effects``); null when nothing connects them."""
    chosen: SteeringEvent | None = None
    if arg is not None:
        chosen = next((s for s in idx.steering if s.id == arg), None)
        if chosen is None:
            raise UsageError(f"archive-after-intervention: {arg!r} is not a steering command"
                             f" in this bundle (it has {plural(len(idx.steering), 'command')})")
    if not idx.steering:
        return QueryResult("archive-after-intervention", AFTER_COLUMNS, ())
    start = chosen.seq if chosen is not None else idx.steering[0].seq
    derived: dict[str, set[str]] = {}
    decisions = sorted((a for evs in idx.archives.values() for a in evs if a.seq > start),
                       key=lambda a: a.seq)
    rows: list[QueryRow] = []
    k = 0
    latest: SteeringEvent = idx.steering[0]
    for a in decisions:
        while k < len(idx.steering) and idx.steering[k].seq < a.seq:
            latest = idx.steering[k]
            k += 1
        s = chosen or latest
        if s.id not in derived:
            derived[s.id] = set(downstream(idx, idx.applied_by.get(s.id, []))[0])
        link = _link(idx, a, s, derived[s.id])
        why = (f"{a.action} {a.member} in archive {a.archive} at seq {a.seq}, after "
               f"{s.command} by {s.issuer} ({s.id}, seq {s.seq})"
               + (f"; {link}." if link else "; the decision does not name the command."))
        rows.append(row(why, [a.seq, s.seq, seq_of(idx, a.operator)],
                        [a.id, a.member, s.id, a.operator], archive_event=a.id,
                        archive=a.archive, action=a.action, member=a.member, after=s.id,
                        linked=link or None, reason=a.reason))
    return QueryResult("archive-after-intervention", AFTER_COLUMNS, tuple(rows))


def _link(idx: BundleIndex, a: ArchiveEvent, s: SteeringEvent, derived: set[str]) -> str:
    op = idx.operators.get(a.operator) if a.operator else None
    if op is not None and op.steering == s.id:
        return f"made by {op.id}, which applied {s.id}"
    if s.id in a.reason:
        return f"its reason names {s.id}"
    if a.member in derived:
        return f"{a.member} derives from {s.id}"
    return ""


CHURN_COLUMNS = ("archive", "seq", "time", "action", "member", "size", "note")


def archive_churn(idx: BundleIndex, arg: str | None) -> QueryResult:
    """Every addition and removal, per archive in time order, with the size after it;
    ``note`` flags re-additions of removed members, removals of non-members and
    repeated additions."""
    names = sorted(idx.archives)
    if arg is not None:
        if arg not in idx.archives:
            raise UsageError(f"archive-churn: no archive named {arg!r}; archives: "
                             + (", ".join(capped(names, 10)) or "none"))
        names = [arg]
    rows: list[QueryRow] = []
    for name in names:
        members: dict[str, int] = {}
        removed: dict[str, int] = {}
        for a in idx.archives[name]:
            note = ""
            if a.action == "add":
                if a.member in members:
                    note = f"already a member since seq {members[a.member]}"
                elif a.member in removed:
                    note = f"re-added (removed at seq {removed[a.member]})"
                members.setdefault(a.member, a.seq)
            else:
                if a.member in members:
                    note = f"member since seq {members.pop(a.member)}"
                    removed[a.member] = a.seq
                else:
                    note = "removed but was not a member"
            why = f"{a.action} {a.member} in {name} at seq {a.seq}" + (
                f": {a.reason}" if a.reason else "") + (f" ({note})." if note else ".")
            rows.append(row(why, [a.seq], [a.id, a.member], archive=name, seq=a.seq,
                            time=a.time, action=a.action, member=a.member,
                            size=len(members), note=note or None))
    return QueryResult("archive-churn", CHURN_COLUMNS, tuple(rows))


LINEAGE_COLUMNS = ("step", "individual", "score", "metric", "generation", "produced_by", "op",
                   "parents")


def best_lineage(idx: BundleIndex, arg: str | None) -> QueryResult:
    """The best-scored candidate (within archive ``arg``'s current members, if given)
    and its ancestry.  Scores are compared within one (evaluator, metric, direction)
    key: the key that scores the most individuals, so a held-out check on one
    candidate never competes with the benchmark everyone ran.  ``higher_is_better``
    is respected; the latest record per individual counts; ties go to the earlier
    individual.  Each step back follows ``produced_by`` to the operator and picks its
    best-scored parent (unscored parents only when none is scored: the first one)."""
    scores: dict[tuple[str, str | None, bool], dict[str, FitnessEvent]] = {}
    for f in idx.fitness:
        if f.score is not None and f.target in idx.individuals and f.target not in idx.claims:
            scores.setdefault((f.evaluator.name, f.metric, f.higher_is_better), {})[f.target] = f
    pool: list[str] | None = None
    if arg is not None:
        if arg not in idx.archives:
            raise UsageError(f"best-lineage: no archive named {arg!r}; archives: "
                             + (", ".join(capped(sorted(idx.archives), 10)) or "none"))
        current: dict[str, None] = {}
        for a in idx.archives[arg]:
            if a.action == "add":
                current[a.member] = None
            else:
                current.pop(a.member, None)
        pool = list(current)
    coverage: dict[tuple[str, str | None, bool], int] = {}
    if pool is None:
        coverage = {k: len(v) for k, v in scores.items()}
    else:
        keys_of: dict[str, list[tuple[str, str | None, bool]]] = {}
        for k, v in scores.items():
            for oid in v:
                keys_of.setdefault(oid, []).append(k)
        for m in pool:
            for k in keys_of.get(m, ()):
                coverage[k] = coverage.get(k, 0) + 1
    if not coverage:
        return QueryResult("best-lineage", LINEAGE_COLUMNS, ())
    key = max(coverage, key=lambda k: coverage[k])    # first key seen wins a tie
    table = scores[key]
    hib = key[2]

    def rank(oid: str) -> tuple[float, int]:
        s = table[oid].score or 0.0
        return (-s if hib else s, idx.individuals[oid].seq)

    candidates = [m for m in (pool if pool is not None else table) if m in table]
    best = min(candidates, key=rank)
    rows: list[QueryRow] = []
    cur: str | None = best
    seen: set[str] = set()
    while cur is not None and cur not in seen and len(rows) < 10_000:
        seen.add(cur)
        ind = idx.individuals[cur]
        op = idx.operators.get(ind.produced_by) if ind.produced_by else None
        parents = [p for p in op.parents if p in idx.individuals] if op else []
        scored = [p for p in parents if p in table]
        nxt = min(scored, key=rank) if scored else (parents[0] if parents else None)
        fit = table.get(cur)
        gen = ind.attributes.get("generation")
        if not rows:
            within = f"archive {arg}" if arg else f"{len(candidates)} scored individuals"
            why = (f"{cur} has the best {key[1] or 'score'} ({fit.score if fit else None!r}, "
                   f"{'higher' if hib else 'lower'} is better, evaluator {key[0]}) in {within}.")
        elif cur in table:
            why = f"Step {len(rows)}: {cur} is the best-scored parent of the step before."
        else:
            why = (f"Step {len(rows)}: {cur} is the first parent of the step before "
                   "(no parent has a score).")
        if op is not None and nxt is not None:
            why += f" Produced by {op.id} ({op.op}) from {plural(len(parents), 'parent')}."
        rows.append(row(why, [ind.seq, fit.seq if fit else None, op.seq if op else None],
                        [cur, op.id if op else None, fit.id if fit else None],
                        step=len(rows), individual=cur, score=fit.score if fit else None,
                        metric=key[1], generation=gen if isinstance(gen, int | float | str)
                        else None, produced_by=op.id if op else ind.produced_by,
                        op=(op.custom_type or op.op) if op else None, parents=parents))
        cur = nxt
    return QueryResult("best-lineage", LINEAGE_COLUMNS, tuple(rows))
