"""Site build time and peak memory at 10k, 100k (and 1M) events, plus the result rows.

Every build is a fresh ``python -m bundler build`` child, timed from outside:
wall clock, CPU (user + system of the child *and* of the ``dot`` processes it
waited for, from ``os.wait4``) and peak RSS (``ru_maxrss`` of the same
rusage).  Measuring the CLI rather than calling ``build_site`` keeps start-up,
imports and the final write in the figure, which is what a user waits for,
and gives each build its own peak RSS.

Scaling is judged on wall time: 10x the events should cost at most 11x the
time (linear, with a little slack), and the 1 MiB-payload variant of the
100k bundle must not use more memory than the small one (payload bytes are
copied, never held).

    .venv/bin/python -m bench.bench_build                # 10k and 100k (+ large 100k)
    .venv/bin/python -m bench.bench_build --full         # and 1M
    .venv/bin/python -m bench.bench_build --sizes 10000 --runs 1
"""

from __future__ import annotations

import argparse
import itertools
import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from bench.common import CACHE, PYTHON, bundle, compile_sources, trust_key

SIZES = (10_000, 100_000)
FULL = (*SIZES, 1_000_000)
GiB = 1 << 30
#: Targets from the performance issue.
MAX_SCALE = 11.0            # time(10x events) / time(events)
MAX_RSS_1M = 2 * GiB        # peak RSS of the 1M build
MAX_PAYLOAD_GROWTH = 1.10   # peak RSS large payloads / small payloads, 100k

Log = Callable[[str], None]


def log(msg: str) -> None:
    """Progress on stderr with a clock, flushed: run_all is meant to run into a log file."""
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


@dataclass(frozen=True)
class Row:
    """One line of the final table; ``ok`` is "yes", "NO" or "-" (no target)."""

    measure: str
    value: str
    baseline: str = "-"
    ratio: str = "-"
    target: str = "-"
    ok: str = "-"


HEADERS = ("measure", "value", "baseline", "ratio", "target", "ok")


def render_rows(rows: Sequence[Row]) -> str:
    """A Markdown table, left-aligned: the cells are phrases, not numbers."""
    cells = [[r.measure, r.value, r.baseline, r.ratio, r.target, r.ok] for r in rows]
    widths = [max(len(h), *(len(c[i]) for c in cells)) for i, h in enumerate(HEADERS)]

    def line(cs: Sequence[str]) -> str:
        return "| " + " | ".join(c.ljust(w) for c, w in zip(cs, widths, strict=True)) + " |"
    return "\n".join([line(HEADERS), "|" + "|".join("-" * (w + 2) for w in widths) + "|",
                      *(line(c) for c in cells)])


def verdict(passed: bool | None) -> str:
    return "-" if passed is None else "yes" if passed else "NO"


@dataclass(frozen=True)
class Measured:
    """A finished child process: exit code, wall s, CPU s (with its children), peak RSS
    of its largest single process (``rss_kib``) and of its whole process tree
    (``tree_kib``, sampled, proportional set size so forked copy-on-write pages count once).
    """

    rc: int
    wall: float
    cpu: float
    rss_kib: int
    tree_kib: int
    stdout: str
    stderr: str
    timed_out: bool = False


def _kib(pid: int) -> int:
    """Proportional set size of one process (RSS where smaps_rollup is unavailable)."""
    try:
        with open(f"/proc/{pid}/smaps_rollup", "rb") as fh:
            for line in fh:
                if line.startswith(b"Pss:"):
                    return int(line.split()[1])
    except (OSError, ValueError, IndexError):
        pass
    try:
        with open(f"/proc/{pid}/statm", "rb") as fh:
            return int(fh.read().split()[1]) * (os.sysconf("SC_PAGE_SIZE") // 1024)
    except (OSError, ValueError, IndexError):
        return 0


def _tree(root: int) -> list[int]:
    """``root`` and all its descendants, from the parent pids in /proc/*/stat."""
    kids: dict[int, list[int]] = {}
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/stat", "rb") as fh:
                stat = fh.read()
        except OSError:
            continue
        ppid = int(stat[stat.rindex(b")") + 2:].split()[1])
        kids.setdefault(ppid, []).append(int(entry.name))
    out, todo = [], [root]
    while todo:
        pid = todo.pop()
        out.append(pid)
        todo += kids.get(pid, [])
    return out


class TreeSampler(threading.Thread):
    """Samples the summed PSS of a process tree a few times a second; keeps the peak.

    ``ru_maxrss`` only knows the largest single process, and the build forks
    render workers, so the memory a build really takes is the sum.
    """

    def __init__(self, root: int, interval: float = 0.25) -> None:
        super().__init__(daemon=True)
        self.root, self.interval = root, interval
        self.peak_kib = 0
        self.stopped = threading.Event()

    def run(self) -> None:
        while not self.stopped.is_set():
            total = sum(_kib(pid) for pid in _tree(self.root))
            self.peak_kib = max(self.peak_kib, total)
            self.stopped.wait(self.interval)


def run_measured(argv: Sequence[str], *, mem_limit: int | None = None,
                 timeout: float | None = None) -> Measured:
    """Run ``argv`` and read its own rusage with ``os.wait4`` (not RUSAGE_CHILDREN,
    which would mix in every earlier child of this process).

    ``mem_limit`` caps the child's address space (RLIMIT_AS) so that a build
    that would exhaust the machine fails with MemoryError in the child instead
    of waking the kernel's OOM killer, which might pick someone else's process.
    """
    def limit() -> None:
        if mem_limit is not None:
            resource.setrlimit(resource.RLIMIT_AS, (mem_limit, mem_limit))

    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        t0 = time.perf_counter()
        proc = subprocess.Popen(list(argv), stdout=out, stderr=err, preexec_fn=limit)
        killed = threading.Event()

        def kill() -> None:
            killed.set()
            proc.kill()

        timer = threading.Timer(timeout, kill) if timeout else None
        if timer is not None:
            timer.start()
        sampler = TreeSampler(proc.pid)
        sampler.start()
        try:
            _, status, usage = os.wait4(proc.pid, 0)
        finally:
            sampler.stopped.set()
            if timer is not None:
                timer.cancel()
        sampler.join()
        wall = time.perf_counter() - t0
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        return Measured(proc.returncode, wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss,
                        max(sampler.peak_kib, usage.ru_maxrss),
                        out.read().decode("utf-8", "replace"),
                        err.read().decode("utf-8", "replace"), killed.is_set())


_BUILT = re.compile(r"built ([\d,]+) pages")


@dataclass(frozen=True)
class Build:
    """Median of several builds of one bundle (peak memory: the largest of the runs).

    ``rss_kib`` is the largest single process; ``tree_kib`` the whole process
    tree (sampled PSS sum, at least ``rss_kib``): the figure the targets use.
    """

    events: int
    runs: int
    pages: int
    wall: float
    cpu: float
    rss_kib: int
    tree_kib: int
    site: Path

    @property
    def ms_per_page(self) -> float:
        return 1000 * self.wall / self.pages


class BuildFailed(Exception):
    """The build did not finish (exit code, timeout or memory cap); the message says which."""


def build_argv(path: Path, out: Path, key: str) -> list[str]:
    return [PYTHON, "-m", "bundler", "build", str(path), "-o", str(out), "--trust-key", key]


def build_once(path: Path, out: Path, key: str, *, mem_limit: int | None = None,
               timeout: float | None = None) -> tuple[Measured, int]:
    """One build of ``path`` into ``out`` as it stands (cold if ``out`` is absent)."""
    m = run_measured(build_argv(path, out, key), mem_limit=mem_limit, timeout=timeout)
    if m.timed_out:
        raise BuildFailed(f"build of {path.name} killed after {timeout:.0f} s")
    if m.rc != 0:
        tail = m.stderr.strip().splitlines()[-3:]
        cap = f" (address space capped at {mem_limit / GiB:.1f} GiB)" if mem_limit else ""
        raise BuildFailed(f"build of {path.name} exited {m.rc}{cap}: {' / '.join(tail)}")
    found = _BUILT.search(m.stderr)
    if found is None:
        raise BuildFailed(f"build of {path.name} printed no page count: {m.stderr[-300:]}")
    return m, int(found.group(1).replace(",", ""))


def site_dir(path: Path) -> Path:
    """Where the benchmark keeps the site of a cached bundle (the browser bench reuses it)."""
    return CACHE / "sites" / path.name


def cold_builds(path: Path, events: int, runs: int, *, mem_limit: int | None = None,
                timeout: float | None = None, out: Path | None = None) -> Build:
    """``runs`` cold builds (output folder removed first, untimed); medians."""
    key = trust_key()
    target = out or site_dir(path)
    walls, cpus, rss, tree, pages = [], [], [], [], 0
    for i in range(runs):
        shutil.rmtree(target, ignore_errors=True)
        m, pages = build_once(path, target, key, mem_limit=mem_limit, timeout=timeout)
        walls.append(m.wall)
        cpus.append(m.cpu)
        rss.append(m.rss_kib)
        tree.append(m.tree_kib)
        log(f"  build {path.name} run {i + 1}/{runs}: {m.wall:.1f} s wall, {m.cpu:.1f} s CPU, "
            f"peak {gib(m.tree_kib)} process tree, {gib(m.rss_kib)} largest process, "
            f"{pages:,} pages")
    return Build(events, runs, pages, statistics.median(walls), statistics.median(cpus),
                 max(rss), max(tree), target)


def median_build(builds: Sequence[Build]) -> Build:
    """One :class:`Build` for several of the same bundle: median times, largest peaks."""
    last = builds[-1]
    return Build(last.events, sum(b.runs for b in builds), last.pages,
                 statistics.median(b.wall for b in builds),
                 statistics.median(b.cpu for b in builds), max(b.rss_kib for b in builds),
                 max(b.tree_kib for b in builds), last.site)


@dataclass(frozen=True)
class Interleaved:
    """Builds of a big bundle, each between two builds of the small one."""

    big: Build
    small: Build
    #: medians over the big builds of (big build) / (mean of its two neighbours)
    wall_ratio: float
    cpu_ratio: float


def interleaved_builds(big: Path, big_events: int, small: Path, small_events: int, runs: int,
                       *, mem_limit: int | None = None,
                       timeout: float | None = None) -> Interleaved:
    """``runs`` cold builds of ``big`` in the order small, big, small, big, ..., small.

    The machine's speed drifts by 20-40% within minutes; builds of the two sizes made
    in two blocks a quarter of an hour apart put that drift into the scaling ratio (a
    run read 11.1x for 100k / 10k that way, the run before 9.5x, for the same code).
    Dividing each big build by the mean of the small builds just before and just
    after it cancels a drift that is steady over the three."""
    def one(path: Path, events: int) -> Build:
        return cold_builds(path, events, 1, mem_limit=mem_limit, timeout=timeout)

    smalls, bigs = [one(small, small_events)], []
    for _ in range(runs):
        bigs.append(one(big, big_events))
        smalls.append(one(small, small_events))
    pairs = [(b, (smalls[i].wall + smalls[i + 1].wall) / 2,
              (smalls[i].cpu + smalls[i + 1].cpu) / 2) for i, b in enumerate(bigs)]
    return Interleaved(median_build(bigs), median_build(smalls),
                       statistics.median(b.wall / w for b, w, _ in pairs),
                       statistics.median(b.cpu / c for b, _, c in pairs))


def runs_for(events: int, override: int | None) -> int:
    if override is not None:
        return override
    return 3 if events <= 100_000 else 1


def default_mem_cap() -> int:
    """70% of physical memory, at most 16 GiB: a runaway build fails, the machine survives."""
    phys = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    return min(16 * GiB, int(phys * 0.7))


def fmt_build(b: Build) -> str:
    return (f"{b.wall:.1f} s wall ({b.cpu:.1f} s CPU), {b.ms_per_page:.1f} ms/page, "
            f"{b.pages:,} pages, {b.runs} run{'s' if b.runs != 1 else ''}")


def gib(kib: int) -> str:
    return f"{kib / 2**20:.2f} GiB"


def scaling(sizes: Sequence[int], *, runs: int | None, large: int | None, mem_cap: int,
            timeout: float, known: dict[int, Build] | None = None
            ) -> tuple[list[Row], dict[int, Build]]:
    """Rows for build time, the scaling ratios, peak RSS and payload independence.

    ``large`` is the size whose 1 MiB-payload variant is built too (None: none).
    ``known`` holds builds already measured in this run (the 10k one of the
    MkDocs comparison), which are reused rather than repeated.
    """
    rows: list[Row] = []
    builds: dict[int, Build] = dict(known or {})
    paired: dict[int, Interleaved] = {}     # big size -> its builds beside the small one
    ordered = sorted(sizes)
    for n in ordered:
        path = bundle(n, log=log)
        smaller = n // 10 if n // 10 in ordered and n % 10 == 0 else None
        try:
            if smaller is not None and smaller in builds:
                count = runs_for(n, runs)
                log(f"building {n:,} events ({count} runs, each between two builds of "
                    f"{smaller:,})")
                paired[n] = interleaved_builds(path, n, bundle(smaller, log=log), smaller,
                                               count, mem_limit=mem_cap, timeout=timeout)
                builds[n] = paired[n].big
            elif n not in builds:
                log(f"building {n:,} events ({runs_for(n, runs)} runs)")
                builds[n] = cold_builds(path, n, runs_for(n, runs), mem_limit=mem_cap,
                                        timeout=timeout)
        except BuildFailed as exc:
            log(f"  FAILED: {exc}")
            rows.append(Row(f"build {n:,} events", f"failed: {exc}"[:160], ok="NO"))
            continue
        b = builds[n]
        rows.append(Row(f"build {n:,} events", fmt_build(b)))
        rows.append(Row(f"build {n:,} events: peak memory, whole process tree (PSS)",
                        f"{gib(b.tree_kib)} (largest process {gib(b.rss_kib)})",
                        target="< 2 GiB" if n >= 1_000_000 else "-",
                        ok=verdict(b.tree_kib * 1024 < MAX_RSS_1M) if n >= 1_000_000 else "-"))
    for small, big in itertools.pairwise(ordered):
        if big != 10 * small:
            continue
        label = (f"build time {big // 1000:,}k / {small // 1000:,}k events, each "
                 f"{big // 1000:,}k build between two {small // 1000:,}k builds")
        if big in paired:
            # Both must hold: wall is what users wait for, CPU is what load from
            # other jobs on a shared machine disturbs least.
            p = paired[big]
            rows.append(Row(label, f"{p.big.wall:.1f} s wall, {p.big.cpu:.1f} s CPU",
                            f"{p.small.wall:.1f} s wall, {p.small.cpu:.1f} s CPU",
                            f"{p.wall_ratio:.1f}x wall, {p.cpu_ratio:.1f}x CPU",
                            f"<= {MAX_SCALE:.0f}x",
                            verdict(max(p.wall_ratio, p.cpu_ratio) <= MAX_SCALE)))
        else:
            rows.append(Row(label, "not measured (a build failed)", target=f"<= {MAX_SCALE:.0f}x",
                            ok="NO"))
    if large is not None and large in builds:
        rows.append(payload_row(builds[large], runs=runs, mem_cap=mem_cap, timeout=timeout))
    return rows, builds


def payload_row(small: Build, *, runs: int | None, mem_cap: int, timeout: float) -> Row:
    """Peak RSS of the 1 MiB-payload variant against the small one (same events)."""
    path = bundle(small.events, large=True, log=log)
    log(f"building {small.events:,} events with large payloads")
    label = f"build {small.events // 1000:,}k peak memory (tree): large / small payloads"
    target = f"<= {MAX_PAYLOAD_GROWTH:.2f}x"
    try:
        big = cold_builds(path, small.events, runs_for(small.events, runs), mem_limit=mem_cap,
                          timeout=timeout)
    except BuildFailed as exc:
        return Row(label, f"failed: {exc}"[:160], target=target, ok="NO")
    ratio = big.tree_kib / small.tree_kib
    return Row(label, f"{gib(big.tree_kib)} ({big.wall:.1f} s)",
               f"{gib(small.tree_kib)} ({small.wall:.1f} s)", f"{ratio:.2f}x", target,
               verdict(ratio <= MAX_PAYLOAD_GROWTH))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.bench_build", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--full", action="store_true", help="also 1M events")
    ap.add_argument("--sizes", type=int, nargs="+", help="explicit event counts")
    ap.add_argument("--runs", type=int, help="builds per size (default 3, 1 at 1M)")
    ap.add_argument("--no-large", action="store_true", help="skip the large-payload variant")
    ap.add_argument("--timeout", type=float, default=3600, help="seconds per build")
    args = ap.parse_args(argv)
    compile_sources()
    sizes = args.sizes or (FULL if args.full else SIZES)
    large = None if args.no_large else 100_000 if 100_000 in sizes else max(sizes)
    rows, _ = scaling(sizes, runs=args.runs, large=large, mem_cap=default_mem_cap(),
                      timeout=args.timeout)
    print(render_rows(rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
