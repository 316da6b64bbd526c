"""The verifier: numbered steps over one streaming pass of the log.

1. open the container safely (load.source)
2. read bundle.json and manifest.json
3. parse the checkpoints and check their signatures
4. stream events.jsonl: strict parse, canonical form, schema, seq, chain,
   Merkle roots at every checkpoint size, invariants (references first)
5. compare checkpoint roots with the log; trust summary
6. payload states (DESIGN-NOTES §3)
7. whole-log invariants (claim support, derivation cycles)

Nothing short-circuits to "valid": a step that cannot run leaves an error.
"""

from __future__ import annotations

import bisect
import functools
import hashlib
import os
from collections.abc import Callable, Iterator, Sequence
from contextlib import ExitStack, contextmanager, nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from bundler import layout
from bundler.diagnostics import DiagnosticSink, Location, Severity
from bundler.errors import UsageError
from bundler.gc_scopes import young_collections_only
from bundler.integrity.canonical import CanonicalError, parse_strict
from bundler.integrity.merkle import MerkleAccumulator
from bundler.integrity.note import KeyFormatError, VerifierKey, parse_verifier_key
from bundler.load.limits import DEFAULT_LIMITS, Limits
from bundler.load.source import BundleSource, open_bundle, unreadable
from bundler.model.events import FORMAT_VERSION
from bundler.model.metadata import BundleMetadata, Manifest
from bundler.verify.checker import checked_results, choose_checker
from bundler.verify.checkpoints import KeyRing, declared_keys, read_checkpoints, settle_checkpoints
from bundler.verify.compact import Compactor
from bundler.verify.facts import EventFacts
from bundler.verify.invariants import InvariantChecker, event_location
from bundler.verify.payloads import (
    Hashes,
    PayloadLedger,
    check_payloads,
    hash_share,
    manifest_files,
)
from bundler.verify.result import LoadedBundle, VerificationReport
from bundler.verify.schema import TimeOrder
from bundler.verify.stream import LineResult, LineStream, choose_workers, line_results

Progress = Callable[[str, int], None]


@dataclass(frozen=True)
class VerifyOptions:
    trusted_keys: tuple[str, ...] = ()
    severity_overrides: dict[str, Severity] = field(default_factory=dict)
    keep_events: bool = True
    limits: Limits = DEFAULT_LIMITS
    progress: Progress | None = None
    #: processes that analyse log lines: None picks (several only for a large log
    #: whose events are not kept), 0 or 1 keeps all work in this process
    workers: int | None = None


def parse_trusted_keys(texts: Sequence[str]) -> tuple[VerifierKey, ...]:
    keys = []
    for text in texts:
        try:
            keys.append(parse_verifier_key(text.strip()))
        except KeyFormatError as exc:
            raise UsageError(f"--trust-key {text!r}: {exc}") from exc
    return tuple(keys)


def verify_bundle(path: str | os.PathLike[str], options: VerifyOptions | None = None,
                  *, stack: ExitStack | None = None) -> VerificationReport:
    """Verify a bundle.  Pass ``stack`` to keep an expanded archive alive afterwards
    (the render stage reads payload bytes from ``report.bundle.root``)."""
    opts = options or VerifyOptions()
    pinned = parse_trusted_keys(opts.trusted_keys)
    sink = DiagnosticSink(overrides=dict(opts.severity_overrides))
    own = stack is None
    es = ExitStack() if own else stack
    assert es is not None
    try:
        src = es.enter_context(open_bundle(path, sink, opts.limits))
        with young_collections_only() if opts.keep_events else nullcontext():
            return _verify(src, opts, pinned, sink)
    except PermissionError as exc:
        raise unreadable(exc, path) from exc
    finally:
        if own:
            es.close()


def _read_model(src: BundleSource, rel: str, model: type[BaseModel], missing: str,
                invalid: str, sink: DiagnosticSink, limits: Limits, seen: dict[str, str]) -> Any:
    p = src.path(rel)
    if p is None or not p.is_file():
        sink.emit(missing, f"{rel} is missing", Location(path=rel))
        return None
    if p.stat().st_size > limits.max_side_file_bytes:
        sink.emit(invalid, f"{rel} is larger than {limits.max_side_file_bytes} bytes",
                  Location(path=rel))
        return None
    try:
        data = p.read_bytes()
        seen[rel] = hashlib.sha256(data).hexdigest()
        obj = parse_strict(data)
        return model.model_validate(obj)
    except CanonicalError as exc:
        sink.emit(invalid, f"{rel}: {exc}", Location(path=rel))
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(x) for x in first["loc"])
        if where == "format":
            sink.emit("RB204", f"{rel}: unsupported format (this tool reads {FORMAT_VERSION})",
                      Location(path=rel))
        else:
            sink.emit(invalid, f"{rel}: {where}: {first['msg']}", Location(path=rel))
    return None


def _verify(src: BundleSource, opts: VerifyOptions, pinned: tuple[VerifierKey, ...],
            sink: DiagnosticSink) -> VerificationReport:
    limits = opts.limits
    # Step 2: side files.
    seen: dict[str, str] = {}
    if src.archive_sha256 is not None:  # "": the bundle itself, as the rebuild cache names it
        seen[""] = src.archive_sha256
    meta: BundleMetadata | None = _read_model(src, layout.METADATA, BundleMetadata, "RB105",
                                              "RB108", sink, limits, seen)
    manifest: Manifest | None = _read_model(src, layout.MANIFEST, Manifest, "RB106", "RB109",
                                            sink, limits, seen)
    bundle = LoadedBundle(source_path=src.origin, root=src.root, metadata=meta, manifest=manifest,
                          file_sha256=seen, max_line_bytes=limits.max_line_bytes)
    report = VerificationReport(bundle, sink, tuple(k.to_text() for k in pinned))
    report.steps_completed.append("side files")
    # Step 4 begins first: worker processes (if any) analyse the log, and then hash the
    # manifest's payloads, while this process reads the checkpoints.
    events_path = src.path(layout.EVENTS)
    if events_path is not None and not events_path.is_file():
        events_path = None
    with _lines(events_path, opts, src, manifest) as results:
        # Step 3: checkpoints and signatures.
        ring = KeyRing(pinned, declared_keys(meta.keys, sink) if meta else ())
        parsed = read_checkpoints(src, ring, meta.origin if meta else None, sink,
                                  limits.max_side_file_bytes, seen)
        report.steps_completed.append("checkpoint signatures")
        # Step 4: the event stream.
        if events_path is None or results is None:
            sink.emit("RB107", f"{layout.EVENTS} is missing", Location(path=layout.EVENTS))
            bundle.checkpoints = settle_checkpoints(parsed, {}, 0, ring, sink)
            return report
        wanted = {pc.checkpoint.size for pc in parsed}
        roots: dict[int, bytes] = {0: MerkleAccumulator().root()} if 0 in wanted else {}
        ledger = PayloadLedger()
        invariants = InvariantChecker(sink)
        _stream_events(events_path, results, opts, bundle, ledger, invariants, roots, wanted,
                       sink)
        hashes: Hashes = {}
        for share in results.after if isinstance(results, LineStream) else ():
            hashes.update(share)
    report.steps_completed.append("event log")
    n = len(bundle.leaf_hashes) // 32
    if n == 0 and bundle.line_count == 0:
        sink.emit("RB110", "the event log is empty", Location(path=layout.EVENTS))
    # Step 5: checkpoints against the log.
    bundle.checkpoints = settle_checkpoints(parsed, roots, n, ring, sink)
    report.steps_completed.append("checkpoint roots")
    # Step 6: payloads.
    bundle.payloads = check_payloads(src, manifest, ledger, sink,
                                     signed_size=max((c.size for c in bundle.checkpoints),
                                                     default=0), hashes=hashes)
    report.steps_completed.append("payloads")
    # Step 7: whole-log invariants.
    invariants.finish()
    report.steps_completed.append("invariants")
    return report


@contextmanager
def _lines(path: Path | None, opts: VerifyOptions, src: BundleSource,
           manifest: Manifest | None) -> Iterator[Iterator[LineResult] | None]:
    """The analysed lines of the log at ``path`` (None: no log), closed on leaving.
    Worker processes, when used, start at once, and hash the manifest's payload files
    once their part of the log is done (:func:`~bundler.verify.payloads.hash_share`)."""
    if path is None:
        yield None
        return
    workers = choose_workers(path, keep_models=opts.keep_events, requested=opts.workers)
    cap = opts.limits.max_line_bytes
    results: Iterator[LineResult]
    if workers == 0 and opts.keep_events and choose_checker(path, requested=opts.workers):
        results = checked_results(path, cap, keep_models=True)
    else:
        files = manifest_files(manifest) if workers > 1 else []
        results = line_results(path, cap, keep_models=opts.keep_events, workers=workers,
                               after=functools.partial(hash_share, src, files) if files
                               else None)
    try:
        yield results
    finally:
        close = getattr(results, "close", None)
        if close is not None:
            close()


def _stream_events(path: Path, results: Iterator[LineResult], opts: VerifyOptions,
                   bundle: LoadedBundle, ledger: PayloadLedger, invariants: InvariantChecker,
                   roots: dict[int, bytes], wanted: set[int], sink: DiagnosticSink) -> None:
    tree = MerkleAccumulator()
    prev_leaf: bytes | None = None  # the line before's leaf hash
    seqs = _SeqTracker()
    times = TimeOrder()
    progress = opts.progress
    compact = Compactor() if opts.keep_events else None
    # Lines are analysed one by one (stream.analyse, perhaps in worker processes);
    # this loop does what depends on their order.  It runs once per line of logs
    # with millions of lines: a Location is built only for a finding.
    for line, (h, found, parsed, seq, prev, facts, rejected) in enumerate(results, 1):
        for code, message in found:
            sink.emit(code, message, Location(path=layout.EVENTS, line=line))
        if h is None:  # a cut-off last line ends the log
            break
        bundle.line_count = line
        bundle.leaf_hashes += h
        tree.append(h)
        if tree.size in wanted:
            roots[tree.size] = tree.root()
        if parsed:
            if seq is not None:
                seqs.check(seq, line, sink)
            # True: the analysis already found prev to be the line before's hash
            if prev is not True and prev != (
                    expected := layout.ZERO_HASH if prev_leaf is None else prev_leaf.hex()):
                shown = prev if isinstance(prev, str) else prev[0]
                sink.emit("RB300", f"prev is {shown[:16]}…, expected "
                          f"{expected[:16]}… (leaf hash of line {line - 1})",
                          event_location(line, seq))
            if facts is not None:
                ev = facts if type(facts) is EventFacts else EventFacts._make(facts)
                bundle.event_lines[ev.seq] = line
                if (latest := times.earlier(ev.time)) is not None:
                    sink.emit("RB205", f"time {ev.time} is earlier than the previous event's "
                              f"{latest}", event_location(line, seq))
                invariants.observe(ev, line)
                if ev.payload is not None:
                    ledger.commit(ev.payload, ev.seq)
                elif ev.redaction is not None:
                    ledger.redact(ev.redaction)
                if compact is not None and ev.model is not None:
                    bundle.events.append(compact.event(ev.model))
            elif rejected is not None:
                sink.emit(rejected[0], rejected[1], event_location(line, seq))
        prev_leaf = h
        if progress is not None and line % 10_000 == 0:
            progress("verify", line)
    seqs.finish(sink)


class _SeqTracker:
    """Classify seq anomalies once each, instead of flagging every later line.

    A jump is only reported as missing events (RB203) at the end, for the
    numbers that never turned up: two swapped events jump ahead and then come
    back, which is a reorder (RB206), not a deletion.
    """

    def __init__(self) -> None:
        self.seen: set[int] = set()
        self.expected = 0
        self.gaps: list[tuple[int, int, int, int]] = []  # (first, last, line, seq)

    def check(self, seq: int, line: int, sink: DiagnosticSink) -> None:
        expected = self.expected
        if seq == expected:  # every seq seen so far is below expected
            self.seen.add(seq)
            self.expected = seq + 1
            return
        if seq in self.seen:
            sink.emit("RB207", f"seq {seq} appears again at line {line}: an event was inserted",
                      event_location(line, seq))
        elif seq > expected:
            self.gaps.append((expected, seq - 1, line, seq))
        elif seq < expected:
            sink.emit("RB206", f"seq {seq} at line {line} comes after seq {expected - 1}: "
                      "events were reordered", event_location(line, seq))
        self.seen.add(seq)
        self.expected = max(expected, seq + 1)

    def finish(self, sink: DiagnosticSink) -> None:
        ordered = sorted(self.seen) if self.gaps else []
        for first, last, line, gap_seq in self.gaps:
            # Counted with bisect, never by walking the range: a hostile seq can be 2**53.
            present = bisect.bisect_right(ordered, last) - bisect.bisect_left(ordered, first)
            n_missing = last - first + 1 - present
            if n_missing == 0:
                continue
            shown: list[str] = []
            s = first
            while len(shown) < 5 and s <= last:
                if s not in self.seen:
                    shown.append(str(s))
                s += 1
            text = ", ".join(shown) + (f" and {n_missing - len(shown)} more"
                                       if n_missing > len(shown) else "")
            sink.emit("RB203", f"seq jumps from {first - 1} to {last + 1} at line {line}: "
                      f"{n_missing} event(s) missing (seq {text}; deleted?)",
                      event_location(line, gap_seq))
