"""Time every audit query on synthetic bundles of 10k and 100k events.

Each bundle is verified and indexed once (that cost is reported apart, it is
the verify stage's), then each query runs ``--runs`` times and the median is
reported, with the ratio of the large size to the small one: linear work
shows as about 10x for 10x the events.

    .venv/bin/python -m bench.bench_query                  # 10k and 100k events
    .venv/bin/python -m bench.bench_query --sizes 2000 20000 --runs 3
"""

from __future__ import annotations

import argparse
import functools
import platform
import sys
import time
from contextlib import ExitStack

from bench.common import bundle, median_seconds, table, trust_key
from bundler.graph.index import BundleIndex
from bundler.query import QUERIES, open_index, run_query
from bundler.verify import VerifyOptions

SIZES = (10_000, 100_000)


def _arg(idx: BundleIndex, name: str) -> str | None:
    if name == "claim-trace":
        return next(iter(idx.claims))
    if name == "introduced-by":
        return "0.5"    # a value: the slower branch (a scan of every claim)
    return None


def measure(events: int, runs: int, stack: ExitStack) -> tuple[float, dict[str, tuple[float,
                                                                                   int]]]:
    path = bundle(events, log=lambda m: print(m, file=sys.stderr))
    t0 = time.perf_counter()
    _, idx = open_index(path, VerifyOptions(trusted_keys=(trust_key(),)), stack)
    load = time.perf_counter() - t0
    out: dict[str, tuple[float, int]] = {}
    for name in QUERIES:
        arg = _arg(idx, name)
        rows = len(run_query(idx, name, arg).rows)
        secs, _ = median_seconds(functools.partial(run_query, idx, name, arg), runs)
        out[name] = (secs, rows)
    return load, out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.bench_query", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", type=int, nargs=2, metavar=("SMALL", "LARGE"),
                    help="the two event counts to compare (default 10000 100000)")
    ap.add_argument("--runs", type=int, default=3, help="runs per query (median)")
    args = ap.parse_args(argv)
    small, large = args.sizes or SIZES
    print(f"python {platform.python_version()} on {platform.machine()}, "
          f"{platform.system()} {platform.release()}", file=sys.stderr)
    with ExitStack() as stack:
        load_s, res_s = measure(small, args.runs, stack)
        load_l, res_l = measure(large, args.runs, stack)
    rows = []
    for name in QUERIES:
        (ts, rs), (tl, rl) = res_s[name], res_l[name]
        rows.append([name, f"{rs:,}", f"{ts * 1000:.1f}", f"{rl:,}", f"{tl * 1000:.1f}",
                     f"{tl / ts:.1f}x" if ts > 0 else "-"])
    total_s = sum(t for t, _ in res_s.values())
    total_l = sum(t for t, _ in res_l.values())
    rows.append(["all queries", "", f"{total_s * 1000:.1f}", "", f"{total_l * 1000:.1f}",
                 f"{total_l / total_s:.1f}x"])
    rows.append(["(verify + index, once)", "", f"{load_s * 1000:.0f}", "",
                 f"{load_l * 1000:.0f}", f"{load_l / load_s:.1f}x"])
    print(table(["query", f"rows {small:,}", "ms", f"rows {large:,}", "ms", "ratio"], rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
