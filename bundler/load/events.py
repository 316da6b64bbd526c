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
from typing import Any

from bundler.diagnostics import DiagnosticSink, Location
from bundler.integrity.canonical import (
    CanonicalError,
    check_canonical,
    fast_canonical_object,
    parse_strict,
)
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


def iter_event_lines(path: Path, sink: DiagnosticSink, rel: str = "events.jsonl",
                     limits: Limits = DEFAULT_LIMITS) -> Iterator[RawEvent]:
    """Yield every complete line; diagnostics for lines that are not events.

    A line that cannot be parsed is still yielded (``obj`` is ``None``) so
    that the chain step can hash it: the chain over what is on disk must be
    checked whatever the content.
    """
    cap = limits.max_line_bytes
    with open(path, "rb") as fh:
        line_no = 0
        while True:
            chunk = fh.readline(cap + 1)
            if not chunk:
                return
            line_no += 1
            if chunk[-1:] == b"\n":
                data = chunk[:-1]
                # The common case stays in C and Rust code: no Location, no hooks.
                obj = fast_canonical_object(data)
                if obj is None:
                    obj = _parse(data, sink, Location(path=rel, line=line_no))
                yield RawEvent(line_no, data, obj)
                continue
            loc = Location(path=rel, line=line_no)
            if len(chunk) > cap:
                total = len(chunk) + _skip_rest_of_line(fh)
                sink.emit("RB113", f"line is {total} bytes; the limit is {cap} bytes "
                          "(Limits.max_line_bytes)", loc)
                yield RawEvent(line_no, b"", None)
                continue
            sink.emit("RB114", f"last line has {len(chunk)} bytes and no newline: the log "
                      "was cut off mid-write (a writer crash?); it is ignored and was "
                      "never signed", loc)
            return


def _skip_rest_of_line(fh: Any) -> int:
    skipped = 0
    while True:
        part = fh.readline(1 << 20)
        skipped += len(part)
        if not part or part.endswith(b"\n"):
            return skipped


def _parse(data: bytes, sink: DiagnosticSink, loc: Location) -> dict[str, Any] | None:
    """The strict path, for every line the fast check could not vouch for."""
    try:
        obj = parse_strict(data)
    except CanonicalError as exc:
        sink.emit(_KIND_TO_CODE.get(exc.kind, "RB112"), str(exc), loc)
        return None
    if not isinstance(obj, dict):
        sink.emit("RB112", f"an event must be a JSON object, not {type(obj).__name__}", loc)
        return None
    try:
        check_canonical(data, obj)
    except CanonicalError as exc:
        sink.emit("RB116", str(exc), loc)
        # Still usable for the remaining checks; the hash covers the bytes anyway.
    return obj
