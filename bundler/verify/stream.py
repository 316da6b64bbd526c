"""Per-line analysis of ``events.jsonl``: in this process, or in forked workers.

:func:`analyse` does everything that looks at one line alone: the leaf hash,
strict parse and canonical form, the schema, and the facts the ordered checks
need (:class:`~bundler.verify.facts.EventFacts`).  Lines are independent, so
on a large log worker processes analyse byte ranges of the file while the
verifier consumes the results strictly in log order.  Each result carries its
findings as data, and the verifier emits them in that order, so the report
is the same, finding for finding, whichever way the lines were analysed.

Workers are forked (they inherit the loaded models; nothing is imported
again) and only used where that is safe and pays: a large log, events not
kept (sending whole events back costs more than validating them), more than
one CPU, and no other threads in this process (forking a threaded process
can deadlock the child).  When events are kept (a site build),
:mod:`bundler.verify.checker` still takes the canonical-form check off this process.
"""

from __future__ import annotations

import contextlib
import functools
import gc
import hashlib
import io
import itertools
import os
import pickle
import signal
import threading
from collections.abc import Callable, Container, Iterator
from pathlib import Path
from typing import Any, BinaryIO, Literal, NoReturn

from bundler import interrupts
from bundler.gc_scopes import collector_paused
from bundler.integrity.canonical import parse_vouched
from bundler.load.events import Finding, parse_line, read_lines
from bundler.verify.facts import facts_of, facts_tuple
from bundler.verify.schema import check_event

#: One analysed line: ``(leaf_hash, findings, parsed, seq, prev, facts, rejected)``.
#:
#: - ``leaf_hash`` is ``None`` for a cut-off last line (nothing more follows);
#: - ``findings`` are the line's parse problems (RB111-RB116), emitted first;
#: - ``parsed``: the line held a JSON object, so seq, prev and the schema apply;
#: - ``seq`` is the ``seq`` member when it is an integer;
#: - ``prev`` is ``True`` when the ``prev`` member is the leaf hash of the line before
#:   (checked here when that line was analysed here too: a worker's range but its first
#:   line), else the member when it is a string, else ``(str(prev)[:16],)``: sending
#:   64 hex digits a line was a fifth of what a worker pickles;
#: - ``facts``: the event's :class:`EventFacts`, or from a worker the same values as
#:   a plain tuple (``EventFacts._make`` revives it), when the schema accepts it;
#: - ``rejected``: the ``(code, message)`` of the schema finding otherwise.
LineResult = tuple[bytes | None, tuple[Finding, ...], bool, int | None,
                   str | tuple[str] | Literal[True], tuple[Any, ...] | None, Finding | None]

_EMPTY_LEAF = hashlib.sha256(b"\x00").digest()
#: Logs smaller than this are verified in-process: starting workers costs more.  Measured
#: in fresh processes on 2 cores (session 10): two workers lost at 1k events (0.34 MiB),
#: gained about 15% of wall time at 3k (1.0 MiB; lost 10% in a run disturbed by another
#: job) and 20% at 5k (1.7 MiB).
PARALLEL_MIN_BYTES = 1 << 20
#: Most bytes of log per task; a log is cut into at least ``MIN_RANGES`` tasks (of at
#: least ``MIN_RANGE_BYTES``) so that the ordered checks in this process start early and
#: both workers stay busy to the end.  With 2 MiB tasks a 4 MiB log (10k events) was two
#: tasks, this process waited for the first, and workers gained nothing (3.8x the floor
#: against 3.8x in one process); with 16 tasks, 2.9x.  Above 32 MiB the size of a task
#: made no difference (512 KiB to 2 MiB at 100k events).
RANGE_BYTES = 2 << 20
MIN_RANGES = 16
MIN_RANGE_BYTES = 64 << 10
#: Lines per pickle within a range that a worker sends (:func:`packed_range`).
CHUNK_LINES = 64
#: Environment variable that sets the number of workers (0 or 1: none).
WORKERS_ENV = "REVIEW_BUNDLER_WORKERS"


def analyse(data: bytes, keep_model: bool, plain: bool = False,
            vouched: Container[bytes] = (), expect: str | None = None) -> LineResult:
    """Everything about one complete line (without its newline) that needs no other line.

    ``plain``: facts as a plain tuple, to be sent to another process.
    ``vouched``: leaf hashes of lines found canonical by the checker process.
    ``expect``: the leaf hash (hex) of the line before, when known here.
    """
    h = hashlib.sha256(b"\x00" + data).digest()
    obj: dict[str, Any] | None = None
    findings: tuple[Finding, ...] = ()
    if h in vouched:
        obj = parse_vouched(data)
    if type(obj) is not dict:
        obj, findings = parse_line(data)
    if obj is None:
        return h, findings, False, None, "", None, None
    seq = obj.get("seq")
    if type(seq) is not int:  # JSON gives int or bool; bool is no seq
        seq = None
    prev = obj.get("prev")
    prev_token: str | tuple[str] | Literal[True] = (
        (True if prev == expect else prev) if type(prev) is str else (str(prev)[:16],))
    ev = check_event(obj)
    if isinstance(ev, tuple):
        return h, findings, True, seq, prev_token, None, ev
    facts = facts_tuple(ev, keep_model) if plain else facts_of(ev, keep_model)
    return h, findings, True, seq, prev_token, facts, None


def analyse_lines(fh: BinaryIO, cap: int, end: int | None, keep_model: bool,
                   plain: bool = False, vouched: Container[bytes] = ()) -> Iterator[LineResult]:
    expect: str | None = None  # the line before's leaf hash; not known at a range's start
    for data, problem in read_lines(fh, cap, end):
        if problem is None:
            assert data is not None
            got = analyse(data, keep_model, plain, vouched, expect)
            yield got
            expect = got[0].hex()  # type: ignore[union-attr]  # analyse always hashes
        elif data is None:  # cut off mid-write: reported, not hashed
            yield None, (problem,), False, None, "", None, None
        else:  # over the size limit: hashed as an empty line, as before it was read
            yield _EMPTY_LEAF, (problem,), False, None, "", None, None
            expect = _EMPTY_LEAF.hex()


def analyse_range(path: Path, start: int, end: int, cap: int) -> Iterator[LineResult]:
    """The lines in bytes ``[start, end)``, which begin and end at line starts."""
    with open(path, "rb") as fh:
        fh.seek(start)
        yield from analyse_lines(fh, cap, end, False, plain=True)


def packed_range(path: Path, start: int, end: int, cap: int) -> bytes:
    """:func:`analyse_range` as a worker sends it: pickles of ``CHUNK_LINES`` lines each,
    end to end (:func:`unpacked` reads them back).

    Pickling a range's results as one list made a worker hold all of them (2 MiB of
    log, thousands of tuples) at once: the cyclic GC walked them again and again, and
    each line's objects landed in fresh memory instead of the memory the line before
    had freed.  Measured at 100k events (session 37, medians of 10 rounds): analysing
    and pickling every range cost 1.87 s of CPU as whole lists and 1.29 s in chunks of
    256 lines; in another run, 1.27 s in chunks of 1,024 (GC off), 1.16 s of 256, 1.08
    s of 64 and 0.95 s analysing alone.  ``validate`` with two workers went from 2.85x
    to 2.56x the floor.  The bytes are compact, and the range is still one frame.
    """
    out = io.BytesIO()
    lines = analyse_range(path, start, end, cap)
    while chunk := list(itertools.islice(lines, CHUNK_LINES)):
        pickle.dump(chunk, out, protocol=pickle.HIGHEST_PROTOCOL)
    return out.getvalue()


def unpacked(blob: bytes) -> Iterator[LineResult]:
    """The lines of a :func:`packed_range`, one chunk alive at a time."""
    src = io.BytesIO(blob)
    while src.tell() < len(blob):
        yield from pickle.load(src)


def line_results(path: Path, cap: int, *, keep_models: bool, workers: int,
                 after: Callable[[int, int], Any] | None = None) -> LineStream:
    """Every line of the log, analysed, in order; by ``workers`` processes if above 1.

    The workers are forked here, not when the first line is asked for, so they analyse
    the log while the caller reads the checkpoints.  ``after(k, n)``: more work that
    worker ``k`` of ``n`` does once its ranges are done (the verifier's: hashing a share
    of the payloads), so that it overlaps the ordered checks of the last ranges instead
    of following them; the answers of the workers still alive are
    :attr:`LineStream.after` once every line was read (none without workers).
    """
    return LineStream(path, cap, keep_models=keep_models, workers=workers, after=after)


class LineStream:
    """The iterator :func:`line_results` returns; :meth:`close` it (or read it to its end)
    so that its workers are reaped even if no line was ever read."""

    def __init__(self, path: Path, cap: int, *, keep_models: bool, workers: int,
                 after: Callable[[int, int], Any] | None) -> None:
        self.after: list[Any] = []
        self._pool: _ForkedWorkers | None = None
        self._lines: Iterator[LineResult]
        if workers > 1:
            ranges = byte_ranges(path, range_bytes(path.stat().st_size))
            try:
                self._pool = _ForkedWorkers(path, cap, ranges, workers, after)
            except OSError:  # no process to be had (a ulimit, say): then all of it here
                pass
            else:
                self._lines = self._ordered(path, cap, ranges, self._pool)
                return
        # (events are never kept with workers: sending them costs more than making them)
        self._lines = self._here(path, cap, keep_models and workers <= 1)

    @staticmethod
    def _here(path: Path, cap: int, keep_models: bool) -> Iterator[LineResult]:
        with open(path, "rb") as fh:
            yield from analyse_lines(fh, cap, None, keep_models)

    def _ordered(self, path: Path, cap: int, ranges: list[tuple[int, int]],
                 pool: _ForkedWorkers) -> Iterator[LineResult]:
        # Each batch is thousands of new tuples that all live until consumed: the pattern
        # that makes the cyclic GC rescan them over and over (a fifth of this process's
        # time).  They hold no cycles, nor does the ordered checking that consumes them.
        try:
            with collector_paused():
                for i, (start, end) in enumerate(ranges):
                    blob = pool.receive(i)
                    # A worker that died (killed, out of memory, a bug) costs speed, not
                    # correctness: its ranges are analysed here, and a bug then raises here.
                    yield from (unpacked(blob) if blob is not None
                                else analyse_range(path, start, end, cap))
                self.after = pool.receive_after()
        finally:
            self._reap()

    def __iter__(self) -> LineStream:
        return self

    def __next__(self) -> LineResult:
        return next(self._lines)

    def close(self) -> None:
        self._reap()
        close = getattr(self._lines, "close", None)
        if close is not None:
            close()

    def _reap(self) -> None:
        if self._pool is not None:
            self._pool.close()
            self._pool = None


def range_bytes(size: int) -> int:
    """Bytes per worker task for a log of ``size`` bytes."""
    return max(MIN_RANGE_BYTES, min(RANGE_BYTES, size // MIN_RANGES))


def byte_ranges(path: Path, step: int) -> list[tuple[int, int]]:
    """The log cut into byte ranges of about ``step`` bytes, at line starts."""
    size = path.stat().st_size
    bounds = [0]
    with open(path, "rb") as fh:
        while bounds[-1] < size:
            bounds.append(_line_start_at_or_after(fh, bounds[-1] + step, size))
    return list(itertools.pairwise(bounds))


class _ForkedWorkers:
    """Worker ``k`` analyses ranges ``k, k + n, k + 2n, ...`` and pickles each result to
    its own pipe, in order.  Reading range ``i`` from worker ``i % n`` yields the log in
    order with no coordination; a full pipe stops a worker that runs ahead, which bounds
    memory to about one range per worker."""

    def __init__(self, path: Path, cap: int, ranges: list[tuple[int, int]], n: int,
                 after: Callable[[int, int], Any] | None = None) -> None:
        self.n = n
        self.has_after = after is not None
        self.pipes: list[BinaryIO | None] = []
        self.pids: list[int] = []
        try:
            for k in range(n):
                read_fd, write_fd = os.pipe()
                try:
                    with interrupts.held_for_fork():
                        pid = os.fork()
                except OSError:
                    os.close(read_fd)
                    os.close(write_fd)
                    raise
                if pid == 0:  # the worker: never returns into the caller's code
                    os.close(read_fd)
                    serve(path, cap, ranges[k::n], write_fd, packed_range,
                          None if after is None else functools.partial(after, k, n))
                os.close(write_fd)
                self.pids.append(pid)
                self.pipes.append(os.fdopen(read_fd, "rb"))
        except OSError:
            self.close()
            raise

    def receive(self, i: int) -> bytes | None:
        """Range ``i`` as :func:`packed_range` made it; None if its worker is gone."""
        blob: bytes | None = self._frame(i % self.n)
        return blob

    def receive_after(self) -> list[Any]:
        """Each live worker's answer to ``after``, read once all its ranges were."""
        if not self.has_after:
            return []
        answers = [self._frame(k) for k in range(self.n)]
        return [a for a in answers if a is not None]

    def _frame(self, k: int) -> Any:
        pipe = self.pipes[k]
        if pipe is None:
            return None
        try:
            header = pipe.read(8)
            blob = pipe.read(int.from_bytes(header, "little")) if len(header) == 8 else b""
            return pickle.loads(blob)
        except Exception:  # EOF: the worker is gone; the caller takes over its ranges
            pipe.close()
            self.pipes[k] = None
            return None

    def close(self) -> None:
        for pipe in self.pipes:
            if pipe is not None:
                pipe.close()
        for pid in self.pids:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGTERM)  # only still running if we stopped early
            with contextlib.suppress(ChildProcessError):
                os.waitpid(pid, 0)


def serve(path: Path, cap: int, ranges: list[tuple[int, int]], write_fd: int,
           work: Callable[[Path, int, int, int], Any],
           after: Callable[[], Any] | None = None) -> NoReturn:
    """A worker's life: ``work`` on each range, each answer a frame on ``write_fd``;
    then ``after()``'s answer as one more frame."""
    status = 1
    try:
        interrupts.released()   # forked holding Ctrl-C: from here it ends this worker
        gc.freeze()  # inherited objects: never scanned, so their pages stay shared
        with os.fdopen(write_fd, "wb") as out:
            for start, end in ranges:
                _send(out, work(path, start, end, cap))
            if after is not None:
                _send(out, after())
        status = 0
    finally:
        os._exit(status)


def _send(out: BinaryIO, value: Any) -> None:
    blob = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
    out.write(len(blob).to_bytes(8, "little"))
    out.write(blob)
    out.flush()


def _line_start_at_or_after(fh: BinaryIO, pos: int, size: int) -> int:
    """The first line start at or after ``pos`` (``size`` if none): reads forward in blocks,
    so a hostile 100 MB line costs time, never memory."""
    if pos >= size:
        return size
    fh.seek(pos - 1)
    while True:
        block = fh.read(1 << 16)
        if not block:
            return size
        newline = block.find(b"\n")
        if newline >= 0:
            return fh.tell() - len(block) + newline + 1


def choose_workers(path: Path, *, keep_models: bool, requested: int | None) -> int:
    """How many worker processes to use; 0 means this process alone.

    ``requested`` None means choose: ``REVIEW_BUNDLER_WORKERS`` if set, else
    several only for a log of at least ``PARALLEL_MIN_BYTES`` on a machine
    with more than one CPU for this process and at least one of them idle
    (:func:`busy_cpus`).
    """
    requested = requested_workers(requested)
    if requested is not None and requested <= 1:
        return 0
    if keep_models or not can_fork():
        return 0
    if requested is not None:
        return requested
    # Workers only pay on idle CPUs: on a machine already busy with other jobs they
    # add their cost (about a tenth more CPU) and take no CPU from anyone.
    return 0 if busy_cpus() > usable_cpus() - 1 else workers_when_idle(path)


def busy_cpus() -> float:
    """CPUs that other jobs keep busy: the one-minute load average, or the tasks that
    are runnable right now besides this one, whichever is lower.

    The average trails the machine by a minute or more: right after two builds
    ended, it read 1.5 on an idle 2-core machine, and ``validate`` of a 10k log ran
    in one process at 4.5x the floor instead of 2.4x with workers.  A job that keeps a CPU
    busy is runnable at any instant, so the count only drops the jobs that are over;
    a job that has just started counts as the average did (not yet)."""
    busy = os.getloadavg()[0] if hasattr(os, "getloadavg") else 0.0
    others = runnable_others()
    return busy if others is None else min(busy, others)


def runnable_others() -> int | None:
    """Tasks runnable on the machine right now but this process (Linux's
    ``/proc/loadavg``: ``0.52 0.58 0.59 3/213 4321``); None where it cannot tell."""
    try:
        with open("/proc/loadavg", encoding="ascii") as fh:
            running = fh.read().split()[3].partition("/")[0]
        return max(0, int(running) - 1)
    except (OSError, ValueError, IndexError):
        return None


def requested_workers(requested: int | None) -> int | None:
    if requested is None and os.environ.get(WORKERS_ENV, "").strip().isdigit():
        return int(os.environ[WORKERS_ENV])
    return requested


def can_fork() -> bool:
    """Forking a process with other threads can deadlock the child."""
    return hasattr(os, "fork") and threading.active_count() == 1


def workers_when_idle(path: Path) -> int:
    """The workers :func:`choose_workers` picks for this log when a CPU is idle: several
    for a log of at least ``PARALLEL_MIN_BYTES`` on more than one CPU, else none."""
    try:
        if path.stat().st_size < PARALLEL_MIN_BYTES:
            return 0
    except OSError:
        return 0
    cpus = usable_cpus()
    return 0 if cpus < 2 else min(cpus, 4)


def usable_cpus() -> int:
    """CPUs this process may run on."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else \
        (os.cpu_count() or 1)
