"""Ctrl-C that a finalizer swallows still stops the build (bundler.interrupts).

A ``KeyboardInterrupt`` raised inside a ``__del__`` is printed as "Exception
ignored" and dropped by Python; these tests swallow one that way on purpose.
"""

from __future__ import annotations

import multiprocessing
import multiprocessing.util
import os
import signal
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any, NoReturn

import pytest
from browser_util import poll
from fixtures.builders import make_valid_bundle

from bundler import interrupts
from bundler.cli import main
from bundler.output import writer
from bundler.render.site import BuildOptions, build_site
from bundler.verify import VerifyOptions, checker, stream, verify_bundle

REPO = Path(__file__).resolve().parent.parent


class _SwallowsCtrlC:
    """Sends this process SIGINT from a finalizer, where Python drops the exception."""

    def __del__(self) -> None:
        os.kill(os.getpid(), signal.SIGINT)
        for _ in range(10_000):     # Python code: where the handler gets to run
            pass


def _lose_a_ctrl_c() -> None:
    _SwallowsCtrlC()


def _record_unraisables(monkeypatch: pytest.MonkeyPatch) -> list[BaseException | None]:
    seen: list[BaseException | None] = []
    monkeypatch.setattr(sys, "unraisablehook", lambda info: seen.append(info.exc_value))
    return seen


def test_a_ctrl_c_lost_in_a_finalizer_is_still_seen(monkeypatch: pytest.MonkeyPatch) -> None:
    reported = _record_unraisables(monkeypatch)
    with interrupts.recorded():
        _lose_a_ctrl_c()                    # no exception reaches here
        assert interrupts.requested()
        with pytest.raises(KeyboardInterrupt):
            interrupts.check()
    assert reported == []                   # not reported as "Exception ignored"
    assert not interrupts.requested()
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def test_ctrl_c_still_raises_where_it_lands() -> None:
    with interrupts.recorded(), pytest.raises(KeyboardInterrupt):
        os.kill(os.getpid(), signal.SIGINT)
        for _ in range(10_000):
            pass


def test_other_exceptions_lost_in_finalizers_are_still_reported(
        monkeypatch: pytest.MonkeyPatch) -> None:
    reported = _record_unraisables(monkeypatch)

    class Fails:
        def __del__(self) -> None:
            raise RuntimeError("from a finalizer")

    with interrupts.recorded():
        Fails()
    assert [type(e) for e in reported] == [RuntimeError]


def test_an_ignored_sigint_stays_ignored() -> None:
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        with interrupts.recorded():
            assert signal.getsignal(signal.SIGINT) is signal.SIG_IGN
            os.kill(os.getpid(), signal.SIGINT)
            assert not interrupts.requested()
    finally:
        signal.signal(signal.SIGINT, previous)


def test_without_the_handler_check_never_raises() -> None:
    """A program embedding the library keeps its own SIGINT handling."""
    interrupts.check()
    assert not interrupts.requested()


def test_a_build_whose_ctrl_c_was_swallowed_keeps_the_previous_site(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Without the record, this build would publish its site and exit 0."""
    built = make_valid_bundle(tmp_path / "bundle")
    site = tmp_path / "site"
    argv = ["build", str(built.path), "-o", str(site), "-q", "-j", "1", "--no-cache"]
    assert main(argv) == 0
    before = (site / "index.html").read_bytes()
    (site / "index.html").write_bytes(before + b"<!-- previous -->")
    capsys.readouterr()

    reserve = writer.SiteWriter.reserve
    lost: list[bool] = []

    def reserve_and_lose_ctrl_c(self: writer.SiteWriter, rel: str) -> Path:
        if not lost:
            lost.append(True)
            _lose_a_ctrl_c()
        return reserve(self, rel)

    monkeypatch.setattr(writer.SiteWriter, "reserve", reserve_and_lose_ctrl_c)
    assert main(argv) == 130
    assert lost
    assert capsys.readouterr().err == "review-bundler: interrupted\n"
    assert (site / "index.html").read_bytes() == before + b"<!-- previous -->"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bundle", "site"]  # no staging


class _CtrlCWhileNamed:
    """A descriptor whose ``__set_name__`` gets Ctrl-C, as an import's class statement
    can: Python 3.11 turns the KeyboardInterrupt into a RuntimeError (a CI run's
    build so ended in RB900 instead of "interrupted")."""

    def __set_name__(self, owner: type, name: str) -> None:
        os.kill(os.getpid(), signal.SIGINT)
        for _ in range(10_000):
            pass


def _make_a_class_under_ctrl_c() -> None:
    type("_Table", (), {"keys": _CtrlCWhileNamed()})


def test_ctrl_c_turned_into_another_error_is_still_an_interruption(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    with interrupts.recorded(), pytest.raises(RuntimeError) as info:
        _make_a_class_under_ctrl_c()
    assert isinstance(info.value.__cause__, KeyboardInterrupt)   # what Python does
    built = make_valid_bundle(tmp_path / "bundle")
    site = tmp_path / "site"
    argv = ["build", str(built.path), "-o", str(site), "-q", "-j", "1", "--no-cache"]
    assert main(argv) == 0
    (site / "previous").write_text("kept", encoding="utf-8")
    capsys.readouterr()
    reserve = writer.SiteWriter.reserve

    def reserve_under_ctrl_c(self: writer.SiteWriter, rel: str) -> Path:
        _make_a_class_under_ctrl_c()
        return reserve(self, rel)

    monkeypatch.setattr(writer.SiteWriter, "reserve", reserve_under_ctrl_c)
    assert main(argv) == 130
    assert capsys.readouterr().err == "review-bundler: interrupted\n"
    assert (site / "previous").read_text(encoding="utf-8") == "kept"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bundle", "site"]


def test_an_error_without_ctrl_c_is_still_an_internal_error(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    built = make_valid_bundle(tmp_path / "bundle")

    def broken(self: writer.SiteWriter, rel: str) -> Path:
        raise RuntimeError("a bug")
    monkeypatch.setattr(writer.SiteWriter, "reserve", broken)
    assert main(["build", str(built.path), "-o", str(tmp_path / "site"), "-q", "-j", "1"]) == 1
    assert capsys.readouterr().err.startswith(
        "review-bundler: internal error [RB900]: RuntimeError: a bug")


def _interrupted_while_busy() -> None:
    with interrupts.busy():
        os.kill(os.getpid(), signal.SIGINT)
        time.sleep(5)


def test_a_render_worker_ignores_ctrl_c_while_idle_and_not_while_busy(
        capfd: pytest.CaptureFixture[str]) -> None:
    """Ctrl-C reaches the forked render workers with the build.  One waiting for work
    used to die inside multiprocessing, printing its traceback under the build's
    "interrupted"."""
    context = multiprocessing.get_context("fork")
    with ProcessPoolExecutor(1, mp_context=context,
                             initializer=interrupts.quiet_while_idle) as pool:
        pid = pool.submit(os.getpid).result()       # started, now waiting for work
        os.kill(pid, signal.SIGINT)
        time.sleep(0.3)
        assert pool.submit(os.getpid).result() == pid   # the same worker, still there
        with pytest.raises(KeyboardInterrupt):
            pool.submit(_interrupted_while_busy).result(timeout=4)
    assert "Traceback" not in capfd.readouterr().err


def _busy_python() -> None:
    for _ in range(10_000):     # Python code: where a handler gets to run
        pass


def test_ctrl_c_after_the_point_of_no_return_is_too_late() -> None:
    with interrupts.recorded():
        interrupts.point_of_no_return()
        os.kill(os.getpid(), signal.SIGINT)
        _busy_python()                      # no KeyboardInterrupt
        assert not interrupts.requested()
        interrupts.check()
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    with interrupts.recorded(), pytest.raises(KeyboardInterrupt):   # the next run starts over
        os.kill(os.getpid(), signal.SIGINT)
        _busy_python()


def test_a_ctrl_c_that_came_before_stops_at_the_point_of_no_return() -> None:
    with interrupts.recorded():
        _lose_a_ctrl_c()
        with pytest.raises(KeyboardInterrupt):
            interrupts.point_of_no_return()
        with pytest.raises(KeyboardInterrupt):      # Ctrl-C raises again, as before
            os.kill(os.getpid(), signal.SIGINT)
            _busy_python()


def test_ctrl_c_between_the_two_renames_of_the_swap_keeps_a_site(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The swap renames the previous site aside, then the new one into place.  Ctrl-C
    between the two used to leave no site at all (the new one dropped with the
    staging folder, the previous one aside, to be deleted by the next build) and exit
    130.  Now it is too late to stop: the new site is in place and the build exits 0,
    as one that ended a moment before the key was pressed."""
    built = make_valid_bundle(tmp_path / "bundle")
    site = tmp_path / "site"
    argv = ["build", str(built.path), "-o", str(site), "-q", "-j", "1", "--no-cache"]
    assert main(argv) == 0
    (site / "previous").write_text("the site before", encoding="utf-8")
    capsys.readouterr()
    replace = os.replace
    renames: list[str] = []

    def replace_then_ctrl_c(src: Path, dst: Path) -> None:
        replace(src, dst)
        renames.append(Path(dst).name)
        if len(renames) == 1:               # the previous site is aside now
            os.kill(os.getpid(), signal.SIGINT)
            _busy_python()

    monkeypatch.setattr(writer.os, "replace", replace_then_ctrl_c)
    assert main(argv) == 0
    assert len(renames) == 2 and renames[1] == "site", renames
    assert capsys.readouterr().err == ""
    assert (site / "index.html").is_file() and not (site / "previous").exists()
    poll(lambda: sorted(p.name for p in tmp_path.iterdir()) == ["bundle", "site"],
         timeout=30, what="the previous site's detached removal")


# ------------------------------------------------------------ Ctrl-C as a child starts
class _StartMarks:
    """Where forked render workers that lived through their Ctrl-C leave a mark."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder


def _ctrl_c_as_it_starts(marks: _StartMarks) -> None:
    """A :mod:`multiprocessing` after-fork hook: Ctrl-C lands in a worker before its
    initializer has run (where one CI run's did)."""
    os.kill(os.getpid(), signal.SIGINT)
    _busy_python()
    (marks.folder / str(os.getpid())).touch()


def test_a_render_worker_sent_ctrl_c_before_its_handler_is_set_waits_for_it(
        tmp_path: Path, capfd: pytest.CaptureFixture[str]) -> None:
    """Without the hold, each worker died inside multiprocessing's start-up code,
    printing its traceback, and the build failed on a broken pool."""
    (tmp_path / "marks").mkdir()
    marks = _StartMarks(tmp_path / "marks")
    multiprocessing.util.register_after_fork(marks, _ctrl_c_as_it_starts)
    try:
        result = build_site(REPO / "example_bundles" / "air-quality",
                            BuildOptions(output=tmp_path / "site", jobs=2,
                                         incremental=False))
    finally:
        del marks                   # the registry holds it weakly: the hook goes with it
    assert len(list((tmp_path / "marks").iterdir())) == 2   # both workers lived
    assert result.pages > 10 and (tmp_path / "site" / "index.html").is_file()
    assert "Traceback" not in capfd.readouterr().err


def test_a_verify_worker_sent_ctrl_c_before_it_is_ready_never_runs_the_callers_code(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A forked verify worker returning into the caller's code would go on as a second
    copy of the build (its "interrupted", its clean-up).  Held, the Ctrl-C ends the
    worker inside :func:`~bundler.verify.stream.serve`, and the build takes over its
    ranges: the report is the same."""
    built = make_valid_bundle(tmp_path / "bundle")
    escaped = tmp_path / "escaped"
    real_serve = stream.serve

    def serve(*args: Any) -> NoReturn:
        try:
            os.kill(os.getpid(), signal.SIGINT)
            _busy_python()
        except KeyboardInterrupt:
            escaped.touch()
            os._exit(99)
        (tmp_path / f"served-{os.getpid()}").touch()
        real_serve(*args)

    one = verify_bundle(built.path, VerifyOptions(keep_events=False, workers=1))
    log = built.path / "events.jsonl"
    alone = list(checker.checked_results(log, 1 << 20, False))
    monkeypatch.setattr(stream, "serve", serve)
    monkeypatch.setattr(checker, "serve", serve)
    two = verify_bundle(built.path, VerifyOptions(keep_events=False, workers=2))
    assert not escaped.exists()
    assert len(list(tmp_path.glob("served-*"))) == 2
    assert [d.code for d in two.diagnostics] == [d.code for d in one.diagnostics]
    assert two.valid and bytes(two.bundle.leaf_hashes) == bytes(one.bundle.leaf_hashes)
    # the checker, forked the same way to vouch for ranges of the log
    assert list(checker.checked_results(log, 1 << 20, False, wait=True)) == alone
    assert not escaped.exists()
    assert len(list(tmp_path.glob("served-*"))) == 3
