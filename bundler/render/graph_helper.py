"""Helper processes that do a chunk's side work beside in-process rendering.

A helper is a fresh interpreter (``python -I``) that imports this module, the
Graphviz module and the payload viewers alone (about 25 MB), reads pickled
:class:`~bundler.render.side_work.SideWork` requests on stdin and answers each
with its :class:`~bundler.render.side_work.SideResult` (or the exception it
raised) on stdout: the chunk's graphs laid out, sanitised and stored, its payload
viewers made, and its pages rendered from their contexts and written (Jinja and
the classes of those contexts are imported with the first page: at a million
events the two helpers and their ``dot`` runs then hold about 0.2 GiB together).
Each frame is an 8-byte little-endian length and a pickle.

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
import signal
import subprocess
import sys
from pathlib import Path
from typing import IO, Any

from bundler.errors import BundlerError
from bundler.render.side_work import SideResult, SideWork, do_side_work

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


class Pending:
    """The future result of the side work sent to a helper: :meth:`result` waits for it.

    Everything happens in the caller's thread.  Threads doing the round trips
    would read the answers into per-thread malloc arenas, which fragment: at 1M
    events the main process grew 0.15 GiB more than with one thread.
    """

    def __init__(self, helper: _Helper | None, work: SideWork) -> None:
        self.helper = helper
        self.work = work
        self.done = False
        self.value = SideResult({}, [])
        self.error: BaseException | None = None

    def result(self) -> SideResult:
        if not self.done:
            self._settle()
        if self.error is not None:
            raise self.error
        return self.value

    def _settle(self) -> None:
        helper = self.helper
        try:
            if helper is None or helper.unusable:
                self.value = do_side_work(self.work)
            else:
                try:
                    self.value = helper.receive()
                except HelperDied:
                    if helper.answered or helper.aborted:
                        raise
                    # It never came up: an interpreter that cannot run the module (an
                    # embedded or frozen Python).  Slower here, but the same bytes.
                    helper.unusable = True
                    self.value = do_side_work(self.work)
        except Exception as exc:    # raised by result(), like a local error
            self.error = exc
        self.done = True            # (not on Ctrl-C, which goes straight up)
        if helper is not None and helper.pending is self:
            helper.pending = None


class _Helper:
    """One helper process and its two pipes, with at most one batch outstanding, so
    neither side ever blocks writing while the other is writing too."""

    #: it has answered once: from then on, its death stops the build
    answered = False
    #: it never came up (no usable interpreter): its batches are laid out here instead
    unusable = False
    aborted = False

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
        self.pending: Pending | None = None

    def send(self, work: SideWork) -> Pending:
        if self.pending is not None:
            self.pending._settle()      # its answer first: the helper works in order
        job = Pending(self, work)
        if not self.unusable:
            assert self.proc.stdin is not None
            # a helper that is gone: receive() says so (or the batch is laid out here)
            with contextlib.suppress(OSError):
                _write_frame(self.proc.stdin, work)
        self.pending = job
        return job

    def receive(self) -> SideResult:
        assert self.proc.stdout is not None
        try:
            ok, value = _read_frame(self.proc.stdout)
        except (EOFError, OSError, pickle.UnpicklingError) as exc:
            self.proc.poll()
            raise HelperDied(
                "a helper process of the build (graphs, payload viewers, page writes) died "
                f"(exit status {self.proc.returncode}, {type(exc).__name__}); the build "
                "stopped and the previous site is kept"
            ) from None
        self.answered = True
        if not ok:
            raise value
        result: SideResult = value
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
    """``n`` helper processes, used in turn; :meth:`submit` returns the
    :class:`Pending` result of a chunk's side work.  Requests go round the helpers in
    order, so with as many in flight as there are helpers, each helper holds one."""

    def __init__(self, n: int) -> None:
        if getattr(sys, "frozen", False):   # sys.executable is the application, not Python
            raise OSError("no Python interpreter to start graph helpers with")
        self._helpers: list[_Helper] = []
        self._next = 0
        try:
            for _ in range(n):
                self._helpers.append(_Helper())
        except BaseException:
            self.abort()
            raise

    def submit(self, work: SideWork) -> Pending:
        helper = self._helpers[self._next % len(self._helpers)]
        self._next += 1
        return helper.send(work)

    def close(self) -> None:
        """End every helper (after its current batch)."""
        for helper in self._helpers:
            helper.close()

    def abort(self) -> None:
        """Stop now (the build failed or was interrupted): kill the helpers rather than
        wait for the batches they are laying out."""
        for helper in self._helpers:
            helper.aborted = True
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
            work = _read_frame(inp)
        except EOFError:
            return 0
        try:
            answer: tuple[bool, Any] = (True, do_side_work(work))
        except Exception as exc:  # sent back and raised in the build, like a local error
            answer = (False, exc)
        try:
            _write_frame(out, answer)
        except (pickle.PicklingError, TypeError, AttributeError) as exc:  # nothing written
            _write_frame(out, (False, BundlerError(f"graph helper: {answer[1]!r} ({exc})")))
