"""Trace records against the transcript they quote, line by line.

A trace record keeps one line of an agent tool's transcript as it was written
(``raw``, LEDGER's source of truth) and says where it came from
(``source.transcript``, ``source.line``).  When the bundle also ships that
transcript as a payload, the two are copies of one record of what the agent
did.  The log commits to both, but nothing made them agree: a record whose
line differs from the payload's, or points past its end, means one of the two
is not what the tool wrote.

Which payload is "the transcript": an artifact whose name or payload name is
the record's ``source.transcript``; when several are, the last in the log (a
session saved again as it grew); when none is, the one artifact whose name ends
as the cited path does (a tracer's ``/home/dev/.claude/projects/…/s.jsonl``
shipped as ``transcripts/s.jsonl``; :mod:`bundler.graph.transcripts`).  Lines
are split at ``\\n``, and a ``\\r`` before it is a line end, not text, as a
tracer reading the file sees it.
Records with no line number, or of a transcript the bundle does not ship,
are not compared (nothing to compare them with).
"""

from __future__ import annotations

from collections.abc import Iterable

from bundler.graph.index import BundleIndex
from bundler.model.events import IndividualEvent, TraceRecordEvent
from bundler.query.model import QueryResult, QueryRow, counted, row
from bundler.query.values import Resolved, payload_text

COLUMNS = ("record", "transcript", "line", "artifact", "status", "detail")
#: Characters of each side shown where a record and its line first differ.
SHOWN = 40


def _first_difference(a: str, b: str) -> int:
    """The 0-based index where ``a`` and ``b`` first differ (they do differ)."""
    return next((i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y),
                min(len(a), len(b)))


def transcript_mismatch(idx: BundleIndex, arg: str | None) -> QueryResult:
    """Trace records whose line differs from the line of the transcript payload they
    cite, or lies past its end; and transcripts shipped but not readable.

    ``status``: ``differs`` (``detail`` shows the first difference), ``past-end``, or
    ``unverifiable`` (one row per transcript whose payload is redacted, missing or not
    UTF-8 text, naming its first record).  Records that agree are not listed."""
    shipped = idx.transcript_artifacts
    alike = idx.transcripts_alike
    cited: dict[str, list[TraceRecordEvent]] = {}
    unshipped: dict[str, int] = {}     # transcript name -> records quoting it
    unsure: dict[str, int] = {}        # ... of a name several shipped files end like
    no_line = 0
    for rec in idx.trace_records.values():
        name = rec.source.transcript
        if rec.source.line is None:
            no_line += 1
        elif name in shipped:
            cited.setdefault(name, []).append(rec)
        else:
            where = unsure if name in alike else unshipped
            where[name] = where.get(name, 0) + 1
    rows: list[QueryRow] = []
    for name, records in cited.items():
        ind = idx.individuals[shipped[name]]
        text = payload_text(idx, ind)
        rows += (_unreadable(name, ind, records, text) if isinstance(text, Resolved)
                 else _compare(name, ind, records, text))
    compared = sum(map(len, cited.values()))
    return QueryResult("transcript-mismatch", COLUMNS, tuple(rows),
                       _scope(compared, len(cited), unshipped, no_line, unsure), compared)


def _scope(compared: int, transcripts: int, unshipped: dict[str, int], no_line: int,
           unsure: dict[str, int]) -> str:
    """What was compared and what could not be: records of transcripts the bundle does
    not ship are common (LEDGER keeps the records and leaves the files out), and they
    leave the answer empty without anything having been checked."""
    if not (compared or unshipped or no_line or unsure):
        return "The log holds no trace record, so nothing was compared."
    parts = [f"Compared {counted(compared, 'trace record')} with the "
             f"{counted(transcripts, 'transcript')} the bundle ships." if compared else
             "No trace record was compared: none quotes a line of a transcript the bundle "
             "ships."]
    if unshipped:
        n = sum(unshipped.values())
        parts.append(f"{counted(n, 'record')} {'quotes' if n == 1 else 'quote'} "
                     f"{counted(len(unshipped), 'transcript')} the bundle does not ship.")
    if unsure:
        n = sum(unsure.values())
        parts.append(f"{counted(n, 'record')} {'quotes' if n == 1 else 'quote'} "
                     f"{counted(len(unsure), 'transcript')} that several shipped files "
                     "could each be (their paths end alike), so none was picked.")
    if no_line:
        parts.append(f"{counted(no_line, 'record')} {'gives' if no_line == 1 else 'give'} "
                     "no line number.")
    return " ".join(parts)


def _unreadable(name: str, ind: IndividualEvent, records: list[TraceRecordEvent],
                text: Resolved) -> list[QueryRow]:
    first = records[0]
    why = (f"{len(records)} trace record(s) quote {name}, shipped as {ind.id}, whose lines "
           f"cannot be compared: {text.detail}.")
    return [row(why, [first.seq, ind.seq], [first.id, ind.id], record=first.id,
                transcript=name, line=first.source.line, artifact=ind.id,
                status="unverifiable", detail=text.detail)]


def _compare(name: str, ind: IndividualEvent, records: Iterable[TraceRecordEvent],
             text: str) -> list[QueryRow]:
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    rows: list[QueryRow] = []
    for rec in records:
        n = rec.source.line
        assert n is not None
        if n > len(lines):
            detail = f"the payload has {len(lines):,} line(s)"
            why = f"{rec.id} quotes line {n} of {name}, but {ind.id} has {len(lines):,}."
            status = "past-end"
        else:
            line = lines[n - 1].removesuffix("\r")
            if line == rec.raw:
                continue
            at = _first_difference(rec.raw, line)
            detail = (f"column {at + 1}: the record has {rec.raw[at:at + SHOWN]!r}, the "
                      f"payload {line[at:at + SHOWN]!r}")
            why = f"{rec.id} quotes line {n} of {name} otherwise than {ind.id} holds it ({detail})."
            status = "differs"
        rows.append(row(why, [rec.seq, ind.seq], [rec.id, ind.id], record=rec.id,
                        transcript=name, line=n, artifact=ind.id, status=status,
                        detail=detail))
    return rows
