"""Prototype: a faster canonical-form check for event lines, measured end to end.

Today each line costs ``parse_strict`` (``json.loads`` with a Python
``object_pairs_hook`` for duplicate keys) plus ``check_canonical``, which
walks the object in Python and falls back to the pure-Python ``rfc8785``
encoder for every line holding a float (scores, confidences: about a quarter
of a realistic log).  The prototype accepts a line on a fast path only when
all of the following hold, and otherwise defers to the current code, so its
verdicts and diagnostics are those of the current code by construction:

1. the bytes decode as strict UTF-8 and ``json.loads`` (C scanner, no pairs
   hook) parses them to a dict;
2. every float literal, seen through a ``parse_float`` hook, is a finite,
   non-integral value with 1e-4 <= |v| < 1e16, where Python's ``repr`` and
   ECMAScript's Number::toString print the same shortest round-trip digits
   in the same fixed notation;
3. no run of 16+ digits (no integer beyond 2^53) and no 4-byte UTF-8
   sequence (key order by UTF-16 units could differ from code points);
4. ``json.dumps(sort_keys, compact, ensure_ascii=False)`` reproduces the
   bytes exactly.  That also rules out duplicate keys: a re-encoded dict has
   one member per key, so it cannot equal a text holding a duplicate.

    .venv/bin/python -m bench.proto_canonical [--events 100000]
"""

from __future__ import annotations

import argparse
import json
import random
import re
import statistics
import struct
import time
from pathlib import Path
from typing import Any

import rfc8785

import bundler.load.events as load_events
from bench.bench_verify import verify_pass
from bench.common import bundle, median_seconds, trust_key
from bundler.diagnostics import DiagnosticSink, Location

_LONG_DIGITS = re.compile(rb"[0-9]{16}")
_ASTRAL = re.compile(rb"[\xf0-\xf4]")
_unsafe_float = [False]
_current_parse = load_events._parse


def _float(text: str) -> float:
    value = float(text)
    if not 1e-4 <= abs(value) < 1e16 or value.is_integer():
        _unsafe_float[0] = True
    return value


def fast_parse(data: bytes, sink: DiagnosticSink, loc: Location) -> dict[str, Any] | None:
    """Drop-in for ``bundler.load.events._parse`` (same result, same diagnostics)."""
    try:
        text = data.decode("utf-8")
        _unsafe_float[0] = False
        obj = json.loads(text, parse_float=_float)
    except ValueError:  # UnicodeDecodeError and JSONDecodeError are ValueErrors
        return _current_parse(data, sink, loc)
    if type(obj) is dict and not _unsafe_float[0] and not _LONG_DIGITS.search(data) \
            and not _ASTRAL.search(data):
        try:
            again = json.dumps(obj, ensure_ascii=False, sort_keys=True, separators=(",", ":"),
                               allow_nan=False).encode("utf-8")
        except (ValueError, UnicodeEncodeError):
            again = b""
        if again == data:
            return obj
    return _current_parse(data, sink, loc)


def _mutations(line: bytes) -> list[bytes]:
    """Non-canonical or hostile spellings of a valid line."""
    obj = json.loads(line)
    out = [
        json.dumps(obj, sort_keys=True).encode(),                       # spaces
        json.dumps(obj, separators=(",", ":")).encode(),                # key order
        json.dumps(obj, sort_keys=True, separators=(",", ":")).encode(),  # \u escapes
        line.replace(b'"seq":', b'"seq":1,"seq":', 1),                   # duplicate key
        line[:-1] + b',"x":1.0}', line[:-1] + b',"x":1e-7}', line[:-1] + b',"x":1E2}',
        line[:-1] + b',"x":0.00001}', line[:-1] + b',"x":NaN}', line[:-1] + b',"x":-0}',
        line[:-1] + b',"x":12345678901234567}', line[:-1] + b',"x":"\\u00e9"}',
        line[:-1] + b',"x":"\\ud800"}', line[:-1] + b',"\xf0\x9f\x98\x80":1,"\xef\xbc\xa1":2}',
        line[:-1] + b',"x":"\xff"}', line[:-1] + b',"x":0.5e1}', line[:20],
    ]
    return out


def _same(data: bytes) -> bool:
    a, b = DiagnosticSink(), DiagnosticSink()
    loc = Location(line=1)
    ra, rb = _current_parse(data, a, loc), fast_parse(data, b, loc)
    return ra == rb and [(d.code, d.message) for d in a] == [(d.code, d.message) for d in b]


def check_equivalence(lines: list[bytes], fuzz: int) -> int:
    """Compare verdicts on real lines, their mutations and random floats; return cases."""
    cases = 0
    for i, line in enumerate(lines):
        variants = [line] + (_mutations(line) if i % 50 == 0 else [])
        for data in variants:
            if not _same(data):
                raise SystemExit(f"verdicts differ on {data[:120]!r}")
            cases += 1
    rng = random.Random(0)
    for _ in range(fuzz):
        value = struct.unpack("<d", rng.randbytes(8))[0] if rng.random() < 0.5 else \
            round(rng.uniform(-1e6, 1e6), rng.randint(0, 12))
        try:
            canon = rfc8785.dumps({"v": value})
        except rfc8785.CanonicalizationError:
            continue
        for data in (canon, b'{"v":' + repr(value).encode() + b"}"):
            if not _same(data):
                raise SystemExit(f"verdicts differ on {data!r}")
            cases += 1
    return cases


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.proto_canonical", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--events", type=int, default=100_000)
    ap.add_argument("--runs", type=int, default=4)
    ap.add_argument("--fuzz", type=int, default=200_000, help="random floats to cross-check")
    args = ap.parse_args(argv)
    path: Path = bundle(args.events)
    lines = (path / "events.jsonl").read_bytes().splitlines()
    cases = check_equivalence(lines, args.fuzz)
    print(f"equivalence: {cases:,} lines and variants, identical results and diagnostics")
    sink, loc = DiagnosticSink(), Location(line=1)
    for name, fn in (("current _parse", _current_parse), ("fast_parse", fast_parse)):
        t0 = time.process_time()
        for data in lines:
            fn(data, sink, loc)
        dt = time.process_time() - t0
        print(f"{name:>15}: {dt:.3f}s for {len(lines):,} lines "
              f"({1e6 * dt / len(lines):.1f} us/line)")
    key = trust_key()
    # Interleave the two variants so that load from other jobs hits both alike.
    walls: dict[str, list[float]] = {"now": [], "fast_parse": []}
    cpus: dict[str, list[float]] = {"now": [], "fast_parse": []}
    for _ in range(args.runs):
        for name, fn in (("now", _current_parse), ("fast_parse", fast_parse)):
            load_events._parse = fn
            try:
                wall, cpu = median_seconds(lambda: verify_pass(path, key), 1)
            finally:
                load_events._parse = _current_parse
            walls[name].append(wall)
            cpus[name].append(cpu)
    for what, table in (("wall", walls), ("CPU", cpus)):
        base, fast = statistics.median(table["now"]), statistics.median(table["fast_parse"])
        print(f"verify_bundle {args.events:,} events, median {what} of {args.runs}: {base:.2f}s "
              f"now, {fast:.2f}s with fast_parse ({base / fast:.2f}x; "
              f"{args.events / base:,.0f} -> {args.events / fast:,.0f} ev/s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
