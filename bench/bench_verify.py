"""Verification throughput against the floor, plus peak RSS of ``validate``.

The *floor* is the least any verifier of this format must do per line in
Python: read the line, ``json.loads`` it and SHA-256 it.  The ratio
verify/floor (time) says how much the checks cost on top of that; both are
measured in the same process, round by round, on the same cached bundle,
after one untimed pass so the page cache is warm for both.

``verify`` is what ``validate`` does (worker processes on a large log, when
more than one CPU is idle; ``--workers N`` forces N); ``1 proc`` is the same
with ``workers=0``.  CPU times include the worker processes, so a parallel
run is never cheaper in CPU than it really is.  Each round runs in a fresh
process, as ``validate`` does.

    .venv/bin/python -m bench.bench_verify            # 1k, 10k, 100k events
    .venv/bin/python -m bench.bench_verify --full     # and 1M
    .venv/bin/python -m bench.bench_verify --profile  # cProfile verify on 100k
"""

from __future__ import annotations

import argparse
import cProfile
import hashlib
import json
import platform
import pstats
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

from bench.common import (
    PYTHON,
    ROOT,
    bundle,
    compile_sources,
    dir_bytes,
    generation_seconds,
    peak_rss_kib,
    table,
    trust_key,
)
from bundler.verify import VerifyOptions, verify_bundle
from bundler.verify.result import Trust
from bundler.verify.stream import choose_workers

SIZES = (1_000, 10_000, 100_000)
FULL = (*SIZES, 1_000_000)


def floor_pass(path: Path) -> int:
    """json.loads + sha256 of every line: the cost no verifier can avoid."""
    n = 0
    with open(path / "events.jsonl", "rb") as fh:
        for line in fh:
            data = line[:-1]
            json.loads(data)
            hashlib.sha256(b"\x00" + data).digest()
            n += 1
    return n


def verify_pass(path: Path, key: str, workers: int | None = 0) -> None:
    """``workers=None`` chooses as ``validate`` does; the default 0 keeps all work (and all
    CPU time) in this process, for callers that time CPU with ``time.process_time``."""
    options = VerifyOptions(trusted_keys=(key,), keep_events=False, workers=workers)
    report = verify_bundle(path, options)
    if not report.valid or report.trust is not Trust.PINNED:
        codes = sorted({d.code for d in report.diagnostics})
        raise SystemExit(f"{path}: expected a valid pinned bundle, got {report.trust} {codes}")


def runs_for(events: int, override: int | None) -> int:
    if override is not None:
        return override
    return 5 if events <= 10_000 else 3 if events <= 100_000 else 1


def _cpu() -> float:
    """CPU seconds of this process and of its children that have been waited for.

    ``os.times`` counts in clock ticks (10 ms), coarser than the whole floor pass of
    a 1k log; ``process_time`` and ``getrusage`` count in microseconds or better."""
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.process_time() + kids.ru_utime + kids.ru_stime


def _ratio(a: float, b: float) -> str:
    """``a / b`` as shown in the table; "-" when ``b`` is too small to measure."""
    return f"{a / b:.1f}x" if b > 0 else "-"


def one_round(path: Path, key: str, workers: int) -> dict[str, tuple[float, float]]:
    """(wall, CPU incl. children) of verify, 1 proc and floor, in that order, in this process.

    Each round runs in a fresh process (see :func:`rounds`): forking workers from a
    process that has already verified a large log once made them markedly slower
    (its freed heap is shared with them, so their first writes fault page by page),
    and ``validate`` always starts fresh.
    """
    out = {}
    for name, fn in (("verify", lambda: verify_pass(path, key, workers=workers)),
                     ("single", lambda: verify_pass(path, key, workers=0)),
                     ("floor", lambda: floor_pass(path))):
        t0, c0 = time.perf_counter(), _cpu()
        fn()
        out[name] = (time.perf_counter() - t0, _cpu() - c0)
    return out


def rounds(path: Path, key: str, workers: int, runs: int) -> dict[str, tuple[float, float]]:
    """Median (wall, CPU) of each contestant over ``runs`` rounds, each a fresh process;
    within a round the three run back to back, so load from other jobs falls on all
    of them alike."""
    results = []
    for _ in range(runs):
        proc = subprocess.run([PYTHON, "-m", "bench.bench_verify", "--round", str(path), key,
                               str(workers)], capture_output=True, text=True, check=False,
                              cwd=ROOT)
        if proc.returncode != 0:
            raise SystemExit(f"measurement round failed: {proc.stderr[-2000:]}")
        results.append(json.loads(proc.stdout))
    return {name: (statistics.median(r[name][0] for r in results),
                   statistics.median(r[name][1] for r in results)) for name in results[0]}


def measure(events: int, *, large: bool, runs: int | None, workers: int | None) -> list[str]:
    path = bundle(events, large=large, log=lambda m: print(m, file=sys.stderr))
    key = trust_key()
    floor_pass(path)  # warm the page cache for all contestants
    k = runs_for(events, runs)
    used = choose_workers(path / "events.jsonl", keep_models=False, requested=workers)
    times = rounds(path, key, used, k)
    (verify_s, verify_cpu), (single_s, single_cpu) = times["verify"], times["single"]
    floor_s, floor_cpu = times["floor"]
    rc, rss = peak_rss_kib([PYTHON, "-m", "bundler", "validate", str(path), "--trust-key", key])
    if rc != 0:
        raise SystemExit(f"validate {path} exited {rc}")
    gen = generation_seconds(path)
    return [f"{events:,}", "large" if large else "small", f"{dir_bytes(path) / 2**20:.1f}",
            "-" if gen is None else f"{gen[0]:.1f} / {gen[1]:.1f}", str(k), str(used),
            f"{verify_s:.3f} / {verify_cpu:.3f}", f"{events / verify_s:,.0f}",
            f"{events / verify_cpu:,.0f}", f"{single_s:.3f} / {single_cpu:.3f}",
            f"{floor_s:.3f} / {floor_cpu:.3f}", f"{events / floor_s:,.0f}",
            f"{_ratio(verify_s, floor_s)} / {_ratio(verify_cpu, floor_cpu)}",
            f"{_ratio(single_s, floor_s)} / {_ratio(single_cpu, floor_cpu)}", f"{rss / 1024:.0f}"]


def profile(events: int, top: int) -> None:
    """cProfile one verification and print the heaviest functions with % of the total."""
    path = bundle(events, log=lambda m: print(m, file=sys.stderr))
    key = trust_key()
    floor_pass(path)
    prof = cProfile.Profile()
    prof.enable()
    verify_pass(path, key)  # in this process: the profiler does not follow workers
    prof.disable()
    stats = pstats.Stats(prof)
    raw = stats.stats  # type: ignore[attr-defined]
    total = max(ct for (_cc, _nc, _tt, ct, _callers) in raw.values())
    print(f"\ncProfile of verify_bundle on {events:,} events: {total:.2f}s under the profiler")
    for title, col in (("self time (tottime)", 2), ("cumulative time (cumtime)", 3)):
        print(f"\n{title}:")
        ranked = sorted(raw.items(), key=lambda kv: -kv[1][col])[:top]
        for (filename, line, func), row in ranked:
            where = filename.split("site-packages/")[-1].split("/work/main/")[-1]
            print(f"  {100 * row[col] / total:5.1f}%  {row[col]:7.2f}s  {row[1]:>9} calls  "
                  f"{func}  ({where}:{line})")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.bench_verify", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--full", action="store_true", help="also 1M events (generation ~minutes)")
    ap.add_argument("--sizes", type=int, nargs="+", help="explicit event counts")
    ap.add_argument("--runs", type=int, help="runs per measurement (default 5/3/1 by size)")
    ap.add_argument("--large", action="store_true",
                    help="add rows for the large-payload variant (1 MiB datasets)")
    ap.add_argument("--profile", action="store_true",
                    help="cProfile one verification of the 100k bundle instead of timing")
    ap.add_argument("--top", type=int, default=20, help="rows of profile output")
    ap.add_argument("--workers", type=int, help="workers for the verify column (default: what "
                    "validate would choose now: none on a busy machine)")
    ap.add_argument("--round", nargs=3, metavar=("BUNDLE", "KEY", "WORKERS"),
                    help=argparse.SUPPRESS)  # one measurement round, run in a child process
    args = ap.parse_args(argv)
    compile_sources()
    if args.round:
        bundle_dir, key, workers = args.round
        floor_pass(Path(bundle_dir))
        print(json.dumps(one_round(Path(bundle_dir), key, int(workers))))
        return 0
    if args.profile:
        profile(max(args.sizes or [100_000]), args.top)
        return 0
    sizes = args.sizes or (FULL if args.full else SIZES)
    print(f"python {platform.python_version()} on {platform.machine()}, "
          f"{platform.system()} {platform.release()}", file=sys.stderr)
    rows = []
    for n in sizes:
        for large in (False, True) if args.large else (False,):
            rows.append(measure(n, large=large, runs=args.runs, workers=args.workers))
            print(f"done: {n:,} events ({'large' if large else 'small'})", file=sys.stderr)
    print(table(["events", "payloads", "MiB", "gen s wall/CPU", "runs", "workers",
                 "verify s wall/CPU", "verify ev/s", "verify ev/CPU-s", "1 proc s wall/CPU",
                 "floor s wall/CPU", "floor ev/s", "verify/floor wall/CPU",
                 "1 proc/floor wall/CPU", "validate peak RSS MiB"], rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
