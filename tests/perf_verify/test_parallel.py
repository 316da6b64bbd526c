"""Worker processes change the speed of verification, never its report.

The log is cut into many small byte ranges (a few lines each) so that every
worker handles many of them and line boundaries fall everywhere; the report
must equal the single-process one finding for finding, in order.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import pickle
import random
import shutil
from pathlib import Path

import pytest
from fixtures.bad import BAD_FIXTURES
from fixtures.builders import make_valid_bundle
from fixtures.hostile import make_hostile_bundle

import bundler.verify.stream as stream
from bundler.integrity.canonical import CanonicalError, canonicalize
from bundler.load.limits import Limits
from bundler.synth import generate
from bundler.verify import VerificationReport, VerifyOptions, verify_bundle


def _report(path: Path, workers: int, limits: Limits | None = None) -> list[object]:
    opts = VerifyOptions(keep_events=False, workers=workers, limits=limits or Limits())
    report = verify_bundle(path, opts)
    return _summary(report)


def _summary(report: VerificationReport) -> list[object]:
    b = report.bundle
    return [[(d.code, d.severity, d.message, str(d.location)) for d in report.diagnostics],
            report.valid, bytes(b.leaf_hashes), b.line_count, sorted(b.event_lines.items()),
            [(c.size, c.root_matches) for c in b.checkpoints],
            sorted((k, v.state) for k, v in b.payloads.items())]


def _mutants(base: Path, tmp: Path, n: int, seed: int) -> list[Path]:
    """Copies of ``base`` with lines swapped, dropped, repeated, re-timed, re-spelled."""
    rng = random.Random(seed)
    lines = (base / "events.jsonl").read_bytes().splitlines()
    ids = [json.loads(line)["id"] for line in lines]
    out = []
    for k in range(n):
        bent = list(lines)
        for _ in range(rng.randint(1, 4)):
            i = rng.randrange(len(bent))
            kind = rng.randrange(6)
            if kind == 0:
                j = min(i + 1, len(bent) - 1)
                bent[i], bent[j] = bent[j], bent[i]
            elif kind == 1:
                del bent[i]
            elif kind == 2:
                bent.insert(i, bent[i])
            else:
                obj = json.loads(bent[i])
                if kind == 3:
                    obj["time"] = rng.choice(["2020-01-01T00:00:00Z", "2030-01-01T01:00:00+01:00"])
                elif kind == 4:
                    obj["id"] = rng.choice(ids)
                else:
                    obj["x"] = rng.choice([1.0, 1e-7, 2**60, "\u00e9"])
                try:
                    spelled = canonicalize(obj) if rng.random() < 0.7 else b""
                except CanonicalError:  # 2**60: JCS refuses it, the verifier must too
                    spelled = b""
                bent[i] = spelled or json.dumps(obj).encode()
        dst = tmp / f"{base.name}-{k}"
        shutil.copytree(base, dst)
        tail = rng.choice([b"\n", b"\n", b'{"cut off'])
        (dst / "events.jsonl").write_bytes(b"\n".join(bent) + tail)
        out.append(dst)
    return out


@pytest.fixture(scope="module")
def cases(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    root = tmp_path_factory.mktemp("parallel")
    synth = generate(root / "synth", events=1500, seed=5)
    make_valid_bundle(root / "valid")
    make_hostile_bundle(root / "hostile")
    out = [synth, root / "valid", root / "hostile"]
    for fx in BAD_FIXTURES:
        if not fx.raises and fx.name != "huge_line":
            (root / fx.name).mkdir()
            out.append(fx.build(root / fx.name))
    out += _mutants(synth, root, 12, 1) + _mutants(root / "valid", root, 12, 2)
    return out


@pytest.fixture
def tiny_ranges(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(stream, "RANGE_BYTES", 900)  # two or three lines per range
    monkeypatch.setattr(stream, "MIN_RANGE_BYTES", 900)
    monkeypatch.setattr(stream, "CHUNK_LINES", 2)  # a range of three lines: two pickles


@pytest.mark.usefixtures("tiny_ranges")
@pytest.mark.parametrize("workers", [2, 3])
def test_same_report_in_workers(cases: list[Path], workers: int) -> None:
    found = set()
    for path in cases:
        single = _report(path, 0)
        assert _report(path, workers) == single, path.name
        found |= {code for code, *_ in single[0]}  # type: ignore[misc]
    assert {"RB112", "RB114", "RB115", "RB116", "RB202", "RB205", "RB206", "RB207", "RB300",
            "RB301", "RB501"} <= found


@pytest.mark.usefixtures("tiny_ranges")
def test_over_long_lines_across_ranges(tmp_path: Path) -> None:
    """A line longer than the limit and than a range is hashed as before and reported once."""
    path = make_valid_bundle(tmp_path / "b").path
    lines = (path / "events.jsonl").read_bytes().splitlines()
    lines.insert(5, b'{"x":"' + b"a" * 5000 + b'"}')
    (path / "events.jsonl").write_bytes(b"\n".join(lines) + b"\n")
    limits = Limits(max_line_bytes=3000)
    single = _report(path, 0, limits)
    assert [c for c, *_ in single[0]].count("RB113") == 1  # type: ignore[misc]
    assert _report(path, 2, limits) == single


def _expected_breaks(lines: list[bytes]) -> list[int]:
    """The lines whose prev is not the leaf hash of the line before, worked out here."""
    out, before = [], "0" * 64
    for number, line in enumerate(lines, 1):
        if json.loads(line).get("prev") != before:
            out.append(number)
        before = hashlib.sha256(b"\x00" + line).hexdigest()
    return out


@pytest.mark.usefixtures("tiny_ranges")
@pytest.mark.parametrize("workers", [0, 2])
def test_every_broken_link_is_found_where_the_analysis_checks_prev(tmp_path: Path,
                                                                    workers: int) -> None:
    """The analysis of a line checks its prev against the line before when it saw that line
    (all but the first of a range); the verifier checks the rest.  Links broken in every way
    (the hash of the line two back, of the line itself, of nothing, not a string) are each
    found, whichever side checks them."""
    path = generate(tmp_path / "b", events=60, seed=3)
    lines = (path / "events.jsonl").read_bytes().splitlines()
    leaf = [hashlib.sha256(b"\x00" + line).hexdigest() for line in lines]
    for i, prev in [(3, leaf[1]), (16, leaf[16]), (29, "0" * 64), (42, True), (54, leaf[53][:63])]:
        obj = json.loads(lines[i])
        obj["prev"] = prev
        lines[i] = canonicalize(obj)
    (path / "events.jsonl").write_bytes(b"".join(line + b"\n" for line in lines))
    expected = _expected_breaks(lines)
    assert {4, 5, 17, 18, 30, 31, 43, 44, 55, 56} == set(expected)
    got = [d.location.line for d in verify_bundle(path, VerifyOptions(
        keep_events=False, workers=workers)).diagnostics if d.code == "RB300"]
    assert got == expected


@pytest.mark.usefixtures("tiny_ranges")
def test_a_dead_worker_costs_speed_not_correctness(cases: list[Path],
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    expected = [_report(path, 0) for path in cases[:4]]

    def die(*args: object) -> None:
        os._exit(3)

    monkeypatch.setattr(stream, "serve", die)
    assert [_report(path, 2) for path in cases[:4]] == expected


def test_workers_are_reaped(cases: list[Path], monkeypatch: pytest.MonkeyPatch) -> None:
    pids: list[int] = []
    real = stream._ForkedWorkers.__init__

    def spy(self: stream._ForkedWorkers, *args: object) -> None:
        real(self, *args)  # type: ignore[arg-type]
        pids.extend(self.pids)

    monkeypatch.setattr(stream._ForkedWorkers, "__init__", spy)
    monkeypatch.setattr(stream, "RANGE_BYTES", 900)
    _report(cases[0], 2)
    # Stopping early (a consumer that breaks off) reaps them too.
    results = stream.line_results(cases[0] / "events.jsonl", 1 << 20, keep_models=False,
                                  workers=2)
    next(results)
    results.close()
    assert len(pids) == 4
    for pid in pids:
        with pytest.raises(ChildProcessError):
            os.waitpid(pid, os.WNOHANG)


def test_a_range_is_sent_in_chunks(cases: list[Path]) -> None:
    """A worker pickles a range a chunk at a time (never holding all its results), and
    the parent reads back exactly the lines, in order, that analysing it here gives."""
    log = cases[0] / "events.jsonl"
    start, end = stream.byte_ranges(log, stream.range_bytes(log.stat().st_size))[1]
    here = list(stream.analyse_range(log, start, end, 1 << 20))
    assert len(here) > 2 * stream.CHUNK_LINES  # the test needs a range of several chunks
    blob = stream.packed_range(log, start, end, 1 << 20)
    src, sizes = io.BytesIO(blob), []
    while src.tell() < len(blob):
        sizes.append(len(pickle.load(src)))
    assert sizes == [stream.CHUNK_LINES] * (len(here) // stream.CHUNK_LINES) + (
        [len(here) % stream.CHUNK_LINES] if len(here) % stream.CHUNK_LINES else [])
    assert list(stream.unpacked(blob)) == here
    assert list(stream.unpacked(b"")) == []


def test_range_sizes() -> None:
    """Mid-sized logs are cut into enough tasks to overlap; large ones into 2 MiB tasks."""
    assert stream.range_bytes(4 << 20) == (4 << 20) // stream.MIN_RANGES
    assert stream.range_bytes(400 << 20) == stream.RANGE_BYTES
    assert stream.range_bytes(100) == stream.MIN_RANGE_BYTES
    assert stream.range_bytes(0) == stream.MIN_RANGE_BYTES


@pytest.mark.usefixtures("tiny_ranges")
def test_tiny_ranges_cut_the_cases(cases: list[Path]) -> None:
    """The fixture the report comparisons rely on really cuts logs into many ranges."""
    log = cases[0] / "events.jsonl"
    assert len(stream.byte_ranges(log, stream.range_bytes(log.stat().st_size))) > 3


def test_choice_of_workers(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(stream.WORKERS_ENV, raising=False)
    small = tmp_path / "small.jsonl"
    small.write_bytes(b"{}\n")
    big = tmp_path / "big.jsonl"
    big.write_bytes(b"{}\n" * (stream.PARALLEL_MIN_BYTES // 3 + 1))
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1, 2, 3, 4, 5})
    monkeypatch.setattr(os, "getloadavg", lambda: (0.5, 0.5, 0.5))
    monkeypatch.setattr(stream, "runnable_others", lambda: None)   # the average alone
    assert stream.choose_workers(small, keep_models=False, requested=None) == 0
    assert stream.choose_workers(big, keep_models=False, requested=None) == 4
    assert stream.choose_workers(big, keep_models=True, requested=None) == 0
    assert stream.choose_workers(big, keep_models=False, requested=1) == 0
    assert stream.choose_workers(small, keep_models=False, requested=3) == 3
    monkeypatch.setenv(stream.WORKERS_ENV, "0")
    assert stream.choose_workers(big, keep_models=False, requested=None) == 0
    monkeypatch.setenv(stream.WORKERS_ENV, "3")
    assert stream.choose_workers(small, keep_models=False, requested=None) == 3
    assert stream.choose_workers(small, keep_models=False, requested=0) == 0
    monkeypatch.delenv(stream.WORKERS_ENV)
    monkeypatch.setattr(os, "getloadavg", lambda: (5.5, 0.5, 0.5))  # every CPU busy
    assert stream.choose_workers(big, keep_models=False, requested=None) == 0
    assert stream.choose_workers(big, keep_models=False, requested=2) == 2
    monkeypatch.setattr(os, "getloadavg", lambda: (4.5, 0.5, 0.5))
    assert stream.choose_workers(big, keep_models=False, requested=None) == 4
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0})
    monkeypatch.setattr(os, "getloadavg", lambda: (0.0, 0.0, 0.0))
    assert stream.choose_workers(big, keep_models=False, requested=None) == 0


@pytest.mark.parametrize(("average", "others", "workers"), [
    (5.5, 0, 2),        # a burst that has ended: the average still says busy
    (1.6, 0, 2),        # right after a build on 2 cores
    (5.5, 3, 0),        # busy now, and for the last minute
    (0.2, 3, 2),        # a job just started: the average has not seen it (as before)
    (5.5, None, 0),     # no /proc/loadavg: the average alone
    (0.5, None, 2),
])
def test_workers_follow_the_cpus_busy_now(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        average: float, others: int | None, workers: int) -> None:
    monkeypatch.delenv(stream.WORKERS_ENV, raising=False)
    big = tmp_path / "big.jsonl"
    big.write_bytes(b"{}\n" * (stream.PARALLEL_MIN_BYTES // 3 + 1))
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1})
    monkeypatch.setattr(os, "getloadavg", lambda: (average, 0.5, 0.5))
    monkeypatch.setattr(stream, "runnable_others", lambda: others)
    assert stream.choose_workers(big, keep_models=False, requested=None) == workers


def test_runnable_others_reads_this_machine() -> None:
    """On Linux the count is there, and this process (running) is not in it."""
    with open("/proc/loadavg", encoding="ascii") as fh:
        total = int(fh.read().split()[3].partition("/")[2])
    others = stream.runnable_others()
    assert others is not None and 0 <= others < total


@pytest.mark.usefixtures("tiny_ranges")
def test_no_fork_no_workers(cases: list[Path], monkeypatch: pytest.MonkeyPatch) -> None:
    expected = _report(cases[0], 0)
    started: list[int] = []
    real_fork = os.fork

    def fork_once() -> int:
        if started:
            raise OSError("EAGAIN")
        pid = real_fork()
        if pid:
            started.append(pid)
        return pid

    monkeypatch.setattr(os, "fork", fork_once)
    assert _report(cases[0], 3) == expected
    assert len(started) == 1
    with pytest.raises(ChildProcessError):  # the one that started was stopped and reaped
        os.waitpid(started[0], os.WNOHANG)
