"""The checker process of builds changes the speed of verification, never its result.

Mirrors ``test_parallel``: the same valid, hostile, bad-input and mutated logs,
cut into ranges of a few lines, verified with events kept, with and without
a checker; the reports and the kept events must be equal.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import pytest

import bundler.verify.checker as checker
import bundler.verify.stream as stream
from bundler.integrity.canonical import canonicalize
from bundler.verify import VerifyOptions, verify_bundle
from bundler.verify.result import VerificationReport
from perf_verify.test_parallel import _summary, cases  # noqa: F401  (the shared fixture)


def _verify(path: Path, workers: int) -> VerificationReport:
    return verify_bundle(path, VerifyOptions(keep_events=True, workers=workers))


def _outcome(report: VerificationReport) -> list[object]:
    return [*_summary(report), [e.model_dump() for e in report.bundle.events]]


@pytest.fixture
def tiny_ranges(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(checker, "CHECK_RANGE_BYTES", 900)  # two or three lines per range


@pytest.fixture
def waiting(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The build waits for every range's result (so every vouch is used), and counts
    the lines parsed on the checker's word."""
    used: list[int] = []
    real_checked, real_parse = checker.checked_results, stream.parse_vouched

    def checked(path: Path, cap: int, keep_models: bool, *, wait: bool = False
                ) -> object:
        return real_checked(path, cap, keep_models, wait=True)

    def parse(data: bytes) -> object:
        used.append(1)
        return real_parse(data)

    monkeypatch.setattr("bundler.verify.verifier.checked_results", checked)
    monkeypatch.setattr(stream, "parse_vouched", parse)
    return used


@pytest.mark.usefixtures("tiny_ranges")
def test_same_report_and_events_with_a_checker(cases: list[Path],  # noqa: F811
                                               waiting: list[int]) -> None:
    found = set()
    for path in cases:
        single = _outcome(_verify(path, 0))
        assert _outcome(_verify(path, 2)) == single, path.name
        found |= {code for code, *_ in single[0]}  # type: ignore[misc]
    assert waiting, "no line was parsed on the checker's word"
    assert {"RB112", "RB114", "RB116", "RB205", "RB300"} <= found


@pytest.mark.usefixtures("tiny_ranges")
def test_not_waiting_gives_the_same_result(cases: list[Path]) -> None:  # noqa: F811
    for path in cases[:6]:
        assert _outcome(_verify(path, 2)) == _outcome(_verify(path, 0)), path.name


@pytest.mark.usefixtures("tiny_ranges")
def test_a_vouch_covers_only_the_bytes_it_was_made_for(
        cases: list[Path], waiting: list[int],  # noqa: F811
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A checker that vouches for the canonical spelling of every line (as if the file
    had changed under it) must not excuse a line spelled otherwise."""
    def vouch_for_other_bytes(path: Path, start: int, end: int, cap: int) -> list[bytes]:
        out = []
        with open(path, "rb") as fh:
            fh.seek(start)
            for line in fh.read(end - start).splitlines():
                try:
                    spelled = canonicalize(json.loads(line))
                except Exception:
                    continue
                out.append(hashlib.sha256(b"\x00" + spelled).digest())
        return out

    monkeypatch.setattr(checker, "vouch_range", vouch_for_other_bytes)
    respelled = [p for p in cases if "RB116" in {c for c, *_ in _summary(_verify(p, 0))[0]}]  # type: ignore[misc]
    assert respelled
    for path in respelled:
        assert _outcome(_verify(path, 2)) == _outcome(_verify(path, 0)), path.name


@pytest.mark.usefixtures("tiny_ranges")
def test_a_dead_checker_costs_speed_not_correctness(
        cases: list[Path], waiting: list[int],  # noqa: F811
        monkeypatch: pytest.MonkeyPatch) -> None:
    expected = [_outcome(_verify(path, 0)) for path in cases[:4]]

    def die(*args: object) -> None:
        os._exit(3)

    monkeypatch.setattr(checker, "serve", die)
    assert [_outcome(_verify(path, 2)) for path in cases[:4]] == expected
    assert not waiting


def test_the_checker_is_reaped(cases: list[Path], monkeypatch: pytest.MonkeyPatch  # noqa: F811
                               ) -> None:
    pids: list[int] = []
    real = checker._Checker.__init__

    def spy(self: checker._Checker, *args: object) -> None:
        real(self, *args)  # type: ignore[arg-type]
        pids.append(self.pid)

    monkeypatch.setattr(checker._Checker, "__init__", spy)
    monkeypatch.setattr(checker, "CHECK_RANGE_BYTES", 900)
    _verify(cases[0], 2)
    results = checker.checked_results(cases[0] / "events.jsonl", 1 << 20, True)
    next(results)       # a consumer that breaks off early reaps it too
    results.close()
    assert len(pids) == 2
    for pid in pids:
        with pytest.raises(ChildProcessError):
            os.waitpid(pid, os.WNOHANG)


def test_choice_of_checker(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(stream.WORKERS_ENV, raising=False)
    small = tmp_path / "small.jsonl"
    small.write_bytes(b"{}\n")
    big = tmp_path / "big.jsonl"
    big.write_bytes(b"{}\n" * (checker.CHECKER_MIN_BYTES // 3 + 1))
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1})
    monkeypatch.setattr(os, "getloadavg", lambda: (9.0, 9.0, 9.0))  # busy: no matter
    assert checker.choose_checker(big, requested=None)
    assert not checker.choose_checker(small, requested=None)
    assert not checker.choose_checker(tmp_path / "missing.jsonl", requested=None)
    assert checker.choose_checker(small, requested=2)
    assert not checker.choose_checker(big, requested=0)
    monkeypatch.setenv(stream.WORKERS_ENV, "0")
    assert not checker.choose_checker(big, requested=None)
    monkeypatch.setenv(stream.WORKERS_ENV, "2")
    assert checker.choose_checker(small, requested=None)
    monkeypatch.delenv(stream.WORKERS_ENV)
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0})
    assert not checker.choose_checker(big, requested=None)
