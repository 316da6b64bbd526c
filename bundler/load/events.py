"""Stream ``events.jsonl`` line by line in bounded memory.

Lines are read with a length cap, so a 100 MB single line is rejected after
reading at most ``max_line_bytes`` of it into memory and the rest is skipped
in chunks.  Parsing is strict (duplicate keys, canonical form) because the
leaf hash covers the exact bytes: two spellings of one object would be two
different events.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

from bundler.diagnostics import DiagnosticSink, Location
from bundler.integrity.canonical import (
    CanonicalError,
    check_canonical,
    fast_canonical_object,
    parse_strict,
)
from bundler.integrity.merkle import leaf_hash
from bundler.load.limits import DEFAULT_LIMITS, Limits

_KIND_TO_CODE = {
    "utf8": "RB111",
    "json": "RB112",
    "constant": "RB112",
    "duplicate_key": "RB115",
    "not_canonical": "RB116",
}


@dataclass(slots=True)
class RawEvent:
    """One complete line: its bytes (hashed as-is) and its parsed object, if any."""

    line_no: int
    data: bytes
    obj: dict[str, Any] | None


#: A reading problem on one line: ``(code, message)``, emitted by the caller.
Finding = tuple[str, str]


def iter_event_lines(path: Path, sink: DiagnosticSink, rel: str = "events.jsonl",
                     limits: Limits = DEFAULT_LIMITS) -> Iterator[RawEvent]:
    """Yield every complete line; diagnostics for lines that are not events.

    A line that cannot be parsed is still yielded (``obj`` is ``None``) so
    that the chain step can hash it: the chain over what is on disk must be
    checked whatever the content.
    """
    with open(path, "rb") as fh:
        line_no = 0
        for data, problem in read_lines(fh, limits.max_line_bytes):
            line_no += 1
            if problem is not None:
                sink.emit(problem[0], problem[1], Location(path=rel, line=line_no))
                if data is None:
                    return
                yield RawEvent(line_no, data, None)
                continue
            assert data is not None
            # The common case stays in C and Rust code: no Location, no hooks.
            obj = fast_canonical_object(data)
            if obj is None:
                obj = _parse(data, sink, Location(path=rel, line=line_no))
            yield RawEvent(line_no, data, obj)


def read_lines(fh: BinaryIO, cap: int, end: int | None = None
               ) -> Iterator[tuple[bytes | None, Finding | None]]:
    """The lines of ``fh`` from its position up to byte ``end`` (a line start) or EOF.

    Yields ``(line, None)`` for each complete line (without its newline);
    ``(b"", RB113)`` for a line over ``cap`` bytes, read no further than
    ``cap + 1`` bytes and then skipped in chunks; ``(None, RB114)`` for a
    last line with no newline, after which it stops.
    """
    pos = fh.tell()
    while end is None or pos < end:
        chunk = fh.readline(cap + 1)
        if not chunk:
            return
        pos += len(chunk)
        if chunk[-1:] == b"\n":
            yield chunk[:-1], None
        elif len(chunk) > cap:
            skipped = _skip_rest_of_line(fh)
            pos += skipped
            yield b"", ("RB113", f"line is {len(chunk) + skipped} bytes; the limit is {cap} "
                        "bytes (Limits.max_line_bytes)")
        else:
            yield None, ("RB114", f"last line has {len(chunk)} bytes and no newline: the log "
                         "was cut off mid-write (a writer crash?); it is ignored and was "
                         "never signed")
            return


def leaf_hashes(fh: BinaryIO, cap: int) -> Iterator[bytes]:
    """The leaf hash of each line of ``fh`` as verification hashes it (a line over
    ``cap`` bytes as an empty one; a cut-off last line not at all), in order."""
    for data, _ in read_lines(fh, cap):
        if data is not None:
            yield leaf_hash(data)


def _skip_rest_of_line(fh: Any) -> int:
    skipped = 0
    while True:
        part = fh.readline(1 << 20)
        skipped += len(part)
        if not part or part.endswith(b"\n"):
            return skipped


def parse_line(data: bytes) -> tuple[dict[str, Any] | None, tuple[Finding, ...]]:
    """The object a line holds (``None`` if it holds none) and what is wrong with it."""
    obj = fast_canonical_object(data)
    return (obj, ()) if obj is not None else _strict(data)


def _strict(data: bytes) -> tuple[dict[str, Any] | None, tuple[Finding, ...]]:
    """The strict path, for every line the fast check could not vouch for."""
    try:
        parsed = parse_strict(data)
    except CanonicalError as exc:
        return None, ((_KIND_TO_CODE.get(exc.kind, "RB112"), str(exc)),)
    if not isinstance(parsed, dict):
        return None, (("RB112", f"an event must be a JSON object, not {type(parsed).__name__}"),)
    try:
        check_canonical(data, parsed)
    except CanonicalError as exc:
        # Still usable for the remaining checks; the hash covers the bytes anyway.
        return parsed, (("RB116", str(exc)),)
    return parsed, ()


def _parse(data: bytes, sink: DiagnosticSink, loc: Location) -> dict[str, Any] | None:
    obj, found = _strict(data)
    for code, message in found:
        sink.emit(code, message, loc)
    return obj
