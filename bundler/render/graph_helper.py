"""Helper processes that lay out and sanitise graphs beside in-process rendering.

A helper is a fresh interpreter (``python -I``) that imports this module and the
Graphviz module alone (about 40 MB), reads pickled
:class:`~bundler.render.graphviz.DotBatch` requests on stdin and answers each
with its SVG by graph name (or the exception it raised) on stdout.  Each frame
is an 8-byte little-endian length and a pickle.

Why not :mod:`multiprocessing`: its ``fork`` start method copies a parent that is
by then holding a huge bundle (a forked helper un-shares those pages as it
allocates: 0.12 GiB each at 100k events), and ``spawn`` re-imports the
program's ``__main__``, which breaks any caller whose script lacks the
``if __name__ == "__main__"`` guard.  A plain subprocess has neither problem.

Pickle crosses only between this program and its own child, over pipes it
created: nothing from the bundle is unpickled that this process did not pickle.
"""

from __future__ import annotations

import contextlib
import pickle
import queue
import signal
import subprocess
import sys
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import IO, Any

from bundler.errors import BundlerError
from bundler.render.graphviz import DotBatch, lay_out

_HEADER = 8
#: The helper's entry point, run as ``python -I -c _BOOT ROOT``.
_BOOT = ("import sys\n"
         "root = sys.argv[1]\n"
         "if root not in sys.path:\n"
         "    sys.path.insert(0, root)\n"
         "from bundler.render.graph_helper import main\n"
         "raise SystemExit(main())\n")


def _write_frame(out: IO[bytes], value: Any) -> None:
    blob = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
    out.write(len(blob).to_bytes(_HEADER, "little"))
    out.write(blob)
    out.flush()


def _read_frame(inp: IO[bytes]) -> Any:
    """The next value, or ``EOFError`` when the other side is gone."""
    header = inp.read(_HEADER)
    if len(header) < _HEADER:
        raise EOFError
    size = int.from_bytes(header, "little")
    blob = inp.read(size)
    if len(blob) < size:
        raise EOFError
    return pickle.loads(blob)


class HelperDied(BundlerError):
    """A helper process ended (or never started) instead of answering."""


class _Helper:
    """One helper process and its two pipes; used by one thread at a time."""

    #: it has answered once: from then on, its death stops the build
    answered = False
    #: it never came up (no usable interpreter): its batches are laid out here instead
    unusable = False

    def __init__(self) -> None:
        # Isolated mode (-I): neither the working directory nor PYTHON* variables
        # reach sys.path, so a folder named "bundler" where the build runs (a bundle
        # could ship one) is never imported; the child imports this same copy of the
        # package, from the folder it was loaded from.  A session of its own: Ctrl-C in
        # a terminal reaches the build alone, which then closes this helper's stdin
        # (also when the build is killed outright).
        root = str(Path(__file__).resolve().parents[2])
        self.proc = subprocess.Popen(
            [sys.executable, "-I", "-c", _BOOT, root],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, start_new_session=True)

    def lay_out(self, batch: DotBatch) -> dict[str, str]:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        try:
            _write_frame(self.proc.stdin, batch)
            ok, value = _read_frame(self.proc.stdout)
        except (EOFError, OSError, pickle.UnpicklingError) as exc:
            self.proc.poll()
            raise HelperDied(
                f"a Graphviz helper process died (exit status {self.proc.returncode}, "
                f"{type(exc).__name__}); the build stopped and the previous site is kept"
            ) from None
        self.answered = True
        if not ok:
            raise value
        result: dict[str, str] = value
        return result

    def close(self) -> None:
        if self.proc.stdin is not None:
            with contextlib.suppress(OSError):
                self.proc.stdin.close()     # end of input: the helper exits
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        if self.proc.stdout is not None:
            self.proc.stdout.close()


class GraphHelpers:
    """``n`` helper processes; :meth:`submit` returns the future SVG of a batch.

    One thread per helper does the round trip (pipes release the GIL), so the
    caller never blocks on a pipe and a helper's long answer cannot deadlock
    against the next request.
    """

    def __init__(self, n: int) -> None:
        if getattr(sys, "frozen", False):   # sys.executable is the application, not Python
            raise OSError("no Python interpreter to start graph helpers with")
        self._free: queue.SimpleQueue[_Helper] = queue.SimpleQueue()
        self._helpers: list[_Helper] = []
        self._aborted = False
        try:
            for _ in range(n):
                helper = _Helper()
                self._helpers.append(helper)
                self._free.put(helper)
        except BaseException:
            self.close()
            raise
        self._threads = ThreadPoolExecutor(max_workers=n,
                                           thread_name_prefix="review-bundler-graphs")

    def submit(self, batch: DotBatch) -> Future[dict[str, str]]:
        return self._threads.submit(self._run, batch)

    def _run(self, batch: DotBatch) -> dict[str, str]:
        helper = self._free.get()
        try:
            if not helper.unusable:
                try:
                    return helper.lay_out(batch)
                except HelperDied:
                    if helper.answered or self._aborted:
                        raise
                    # It never came up: an interpreter that cannot run the module (an
                    # embedded or frozen Python).  Slower here, but the same bytes.
                    helper.unusable = True
            return lay_out(batch)
        finally:
            self._free.put(helper)

    def close(self) -> None:
        """Wait for running batches, drop queued ones, end every helper."""
        if hasattr(self, "_threads"):
            self._threads.shutdown(wait=True, cancel_futures=True)
        for helper in self._helpers:
            helper.close()

    def abort(self) -> None:
        """Stop now (the build failed or was interrupted): kill the helpers rather than
        wait for the batches they are laying out, then clean up as :meth:`close`."""
        self._aborted = True
        for helper in self._helpers:
            with contextlib.suppress(OSError):
                helper.proc.kill()
        self.close()


def main() -> int:
    """The helper's loop: one answer per request, until stdin ends."""
    # Should a SIGINT still come (sent to this process by hand), the build decides:
    # it closes our stdin, so a helper never prints a traceback of its own.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    inp, out = sys.stdin.buffer, sys.stdout.buffer
    sys.stdout = sys.stderr         # nothing else may write into the answer stream
    while True:
        try:
            batch = _read_frame(inp)
        except EOFError:
            return 0
        try:
            answer: tuple[bool, Any] = (True, lay_out(batch))
        except Exception as exc:  # sent back and raised in the build, like a local error
            answer = (False, exc)
        try:
            _write_frame(out, answer)
        except (pickle.PicklingError, TypeError, AttributeError) as exc:  # nothing written
            _write_frame(out, (False, BundlerError(f"graph helper: {answer[1]!r} ({exc})")))


if __name__ == "__main__":
    sys.exit(main())
