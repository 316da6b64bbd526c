"""Ctrl-C that a finalizer cannot swallow.

Python raises ``KeyboardInterrupt`` wherever the main thread is running Python code
when SIGINT arrives.  When that is a finalizer (a ``__del__``, a generator closed as
it is dropped, a weakref callback), the exception is reported as "ignored" and the
program carries on: a build the reviewer interrupted would then publish its site and
exit 0.  Which finalizers run during a build depends on the libraries and on timing,
so rather than hunt them, :func:`recorded` notes the signal as well as raising it, and
the one irreversible step of a build (swapping the new site in, see
:mod:`bundler.output.writer`) calls :func:`check` first.

That step itself is two renames, and a ``KeyboardInterrupt`` between them would leave
no site at all (the previous one renamed aside, the new one dropped).  So it starts
with :func:`point_of_no_return`: from there Ctrl-C is only noted, the build finishes
(the swap, then its cache records) and exits 0, as a build that ended a moment before
the key was pressed does.  Exit 130 always means the previous site is untouched.

Only the command line installs the handler: a program that embeds the library keeps
its own SIGINT handling, and :func:`check` never raises for it.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType
from typing import Any

_seen = False
_too_late = False


def requested() -> bool:
    """Whether Ctrl-C came while :func:`recorded` was active, even if its exception
    was lost, and before :func:`point_of_no_return`."""
    return _seen and not _too_late


def check() -> None:
    """Raise ``KeyboardInterrupt`` if Ctrl-C came, wherever its own exception went
    (never after :func:`point_of_no_return`)."""
    if requested():
        raise KeyboardInterrupt


def _on_sigint(signum: int, frame: FrameType | None) -> None:
    global _seen
    _seen = True
    raise KeyboardInterrupt


def _note_only(signum: int, frame: FrameType | None) -> None:
    global _seen
    _seen = True


def point_of_no_return() -> None:
    """Stop here if Ctrl-C came; from here on, it is too late: Ctrl-C no longer raises
    and :func:`check` no longer stops the build.

    The handler changes first, so a Ctrl-C that lands before it raises, one that lands
    between the two is noted and raised by the check, and one after is too late.
    Without :func:`recorded`'s handler (a program embedding the library, a worker
    thread) nothing changes."""
    global _too_late
    if threading.current_thread() is not threading.main_thread() or \
            signal.getsignal(signal.SIGINT) is not _on_sigint:
        check()
        return
    signal.signal(signal.SIGINT, _note_only)
    try:
        check()
    except KeyboardInterrupt:
        signal.signal(signal.SIGINT, _on_sigint)
        raise
    _too_late = True


def _drop_recorded_interrupts(hook: Any) -> Any:
    """An unraisable hook that stays quiet about a ``KeyboardInterrupt`` lost in a
    finalizer (it is recorded, and reported once as "interrupted") and passes
    everything else on."""
    def unraisable(info: Any) -> None:
        if _seen and isinstance(info.exc_value, KeyboardInterrupt):
            return
        hook(info)
    return unraisable


@contextmanager
def recorded() -> Iterator[None]:
    """Within the block, Ctrl-C raises ``KeyboardInterrupt`` as usual and is also
    recorded for :func:`check`.

    Nothing changes where Python would not raise either: outside the main thread, or
    when SIGINT is ignored (a job started in the background by a non-interactive
    shell, or under ``nohup``)."""
    global _seen, _too_late
    if threading.current_thread() is not threading.main_thread() or \
            signal.getsignal(signal.SIGINT) is not signal.default_int_handler:
        yield
        return
    _seen = _too_late = False
    hook = sys.unraisablehook
    previous = signal.signal(signal.SIGINT, _on_sigint)
    sys.unraisablehook = _drop_recorded_interrupts(hook)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
        sys.unraisablehook = hook
        _seen = _too_late = False


# ------------------------------------------------------------------ worker processes
_busy = False


def _interrupt_if_busy(signum: int, frame: FrameType | None) -> None:
    if _busy:
        raise KeyboardInterrupt


def quiet_while_idle() -> None:
    """Initializer of a forked worker: Ctrl-C (sent to the build's whole process group)
    interrupts the task it is running, inside :func:`busy`, but not its wait for the
    next one.

    Interrupted in a task, the worker hands the ``KeyboardInterrupt`` back to the build
    as that task's result.  Interrupted while waiting for work, it would die inside
    :mod:`multiprocessing` and print that module's traceback under the build's
    one-line "interrupted" (2 of 40 builds sent SIGINT at a random moment did).  The
    build stops its workers itself."""
    if signal.getsignal(signal.SIGINT) is not signal.SIG_IGN:
        signal.signal(signal.SIGINT, _interrupt_if_busy)
    released()


@contextmanager
def busy() -> Iterator[None]:
    """A worker's task: Ctrl-C interrupts it (see :func:`quiet_while_idle`)."""
    global _busy
    _busy = True
    try:
        yield
    finally:
        _busy = False


# ------------------------------------------------------------------ forking
_mask_before_hold: set[int | signal.Signals] | None = None


@contextmanager
def held_for_fork() -> Iterator[None]:
    """Hold Ctrl-C back (SIGINT blocked, so it stays pending) while the block forks.

    A forked child runs the handler it inherited until it installs its own, and Ctrl-C
    reaches the build's whole process group.  Landing in between, it raised inside
    :mod:`multiprocessing`'s start-up code, which printed its traceback under the
    build's one-line "interrupted" (one CI run of the suite did).  A child forked here
    starts with SIGINT blocked, and a Ctrl-C waits for it until its own handling is in
    place and it calls :func:`released`.  In this process the block costs a Ctrl-C no
    more than the fork's delay (the blocked signal is delivered when the block ends),
    and Python forgets a signal it had not handled yet in the child."""
    global _mask_before_hold
    if not hasattr(signal, "pthread_sigmask"):
        yield
        return
    outer = _mask_before_hold
    here = os.getpid()
    before = _mask_before_hold = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        yield
    finally:
        if os.getpid() == here:     # a child leaving the block holds on until released()
            signal.pthread_sigmask(signal.SIG_SETMASK, before)
            _mask_before_hold = outer


def released() -> None:
    """In a child forked inside :func:`held_for_fork`, once its own Ctrl-C handling is
    in place: the signal mask it had before, so a Ctrl-C that came meanwhile is handled
    now.  Elsewhere, nothing."""
    if _mask_before_hold is not None:
        signal.pthread_sigmask(signal.SIG_SETMASK, _mask_before_hold)


__all__ = ["busy", "check", "held_for_fork", "point_of_no_return", "quiet_while_idle",
           "recorded", "released", "requested"]
