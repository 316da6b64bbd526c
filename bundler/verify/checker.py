"""A checker process for builds: the canonical-form check off the build's process.

A site build keeps every event, so its lines are analysed in its own process
(:mod:`bundler.verify.stream`: sending whole events between processes costs
more than validating them).  One part of that work needs no event kept: the
check that a line is in canonical form (RFC 8785), about a quarter of the
per-line cost.  So one forked *checker* runs
:func:`~bundler.integrity.canonical.fast_canonical_object` over the log, range
by range, and sends back the leaf hashes of the lines it accepts; a line whose
hash is among them is parsed here by
:func:`~bundler.integrity.canonical.parse_vouched`, the very parse the check
makes, and the check is skipped.  Every other line is checked here as usual,
which produces every finding.

* **Sound.**  A vouch names the SHA-256 of the bytes it was made for, so it
  covers exactly those bytes, whatever happens to the file in between.
* **Never waited for.**  Results are taken only if they have arrived; the
  checker runs at a lower priority, so on a busy machine it falls behind and
  only costs its CPU time.  A checker that dies or cannot be started costs
  speed, never output.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import pickle
import select
import signal
from collections.abc import Container, Iterator
from pathlib import Path

from bundler import interrupts
from bundler.integrity.canonical import fast_canonical_object
from bundler.load.events import read_lines
from bundler.verify.stream import (
    LineResult,
    analyse_lines,
    byte_ranges,
    can_fork,
    requested_workers,
    serve,
    usable_cpus,
)

#: Logs smaller than this are checked without a checker: the fork is not worth it.
CHECKER_MIN_BYTES = 1 << 20
#: Bytes of log per range; results arrive range by range.
CHECK_RANGE_BYTES = 256 << 10


def choose_checker(path: Path, *, requested: int | None) -> bool:
    """Whether events kept in this process get a checker process (module docstring):
    when ``requested`` (or ``REVIEW_BUNDLER_WORKERS``) asks for 2 or more workers,
    or, when nothing is asked, for a log of at least ``CHECKER_MIN_BYTES`` on a
    machine with a second CPU.  No load rule as for workers: nothing waits for the
    checker, so on a busy machine it only costs its (lowered-priority) CPU time."""
    requested = requested_workers(requested)
    if (requested is not None and requested <= 1) or not can_fork():
        return False
    if requested is not None:
        return True
    try:
        big = path.stat().st_size >= CHECKER_MIN_BYTES
    except OSError:
        return False
    return big and usable_cpus() >= 2


def vouch_range(path: Path, start: int, end: int, cap: int) -> list[bytes]:
    """Leaf hashes of the lines in bytes ``[start, end)`` that are canonical by
    :func:`fast_canonical_object` (the checker's work)."""
    out = []
    with open(path, "rb") as fh:
        fh.seek(start)
        for data, problem in read_lines(fh, cap, end):
            if problem is None and data is not None and fast_canonical_object(data) is not None:
                out.append(hashlib.sha256(b"\x00" + data).digest())
    return out


def checked_results(path: Path, cap: int, keep_models: bool, *, wait: bool = False
                    ) -> Iterator[LineResult]:
    """The lines analysed here, range by range, each with the leaf hashes the checker
    vouched for in it if they have arrived; without them (not yet, or no checker),
    each line is checked here as usual.  This process never waits for the checker,
    unless ``wait`` (for tests: then every vouch is used)."""
    ranges = byte_ranges(path, CHECK_RANGE_BYTES)
    try:
        checker: _Checker | None = _Checker(path, cap, ranges)
    except OSError:
        checker = None
    try:
        with open(path, "rb") as fh:
            for i, (start, end) in enumerate(ranges):
                got = checker.poll(i, wait) if checker is not None else None
                vouched: Container[bytes] = set(got) if got is not None else ()
                fh.seek(start)
                yield from analyse_lines(fh, cap, end, keep_models, vouched=vouched)
    finally:
        if checker is not None:
            checker.close()


class _Checker:
    """A forked process that vouches for the ranges of the log in order, at a lower
    priority: on a busy machine it falls behind, and its results are then not used."""

    def __init__(self, path: Path, cap: int, ranges: list[tuple[int, int]]) -> None:
        read_fd, write_fd = os.pipe()
        try:
            with interrupts.held_for_fork():
                pid = os.fork()
        except OSError:
            os.close(read_fd)
            os.close(write_fd)
            raise
        if pid == 0:  # the checker: never returns into the caller's code
            os.close(read_fd)
            with contextlib.suppress(OSError):
                os.nice(5)
            serve(path, cap, ranges, write_fd, vouch_range)
        os.close(write_fd)
        self.pid = pid
        self.fd: int | None = read_fd
        self.next = 0   # the range whose result comes next on the pipe

    def poll(self, i: int, wait: bool = False) -> list[bytes] | None:
        """Range ``i``'s leaf hashes if they have arrived (or, if ``wait``, once they
        have), else None at once; results of earlier ranges still on the pipe are
        dropped (those ranges were checked here)."""
        while self.fd is not None and self.next <= i:
            if not wait and not select.select([self.fd], [], [], 0)[0]:
                return None
            batch = self._read(self.fd)
            self.next += 1
            if batch is not None and self.next == i + 1:
                return batch
        return None

    def _read(self, fd: int) -> list[bytes] | None:
        try:
            size = int.from_bytes(_read_exact(fd, 8), "little")
            batch: list[bytes] = pickle.loads(_read_exact(fd, size))
        except Exception:  # EOF: the checker is gone; everything is checked here
            self.close()
            return None
        return batch

    def close(self) -> None:
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None
        if self.pid:    # once: a reaped pid may already name another process
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.pid, signal.SIGTERM)  # still running if it fell behind
            with contextlib.suppress(ChildProcessError):
                os.waitpid(self.pid, 0)
            self.pid = 0


def _read_exact(fd: int, n: int) -> bytes:
    parts = []
    while n > 0:
        part = os.read(fd, min(n, 1 << 20))
        if not part:
            raise EOFError("the checker's pipe closed mid-message")
        parts.append(part)
        n -= len(part)
    return b"".join(parts)
