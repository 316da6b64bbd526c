"""Every benchmark in one run, on one machine, as one table of medians and ratios.

    .venv/bin/python -m bench.run_all            # 10k and 100k: about half an hour
    .venv/bin/python -m bench.run_all --full     # adds 1M events: an hour or more

Run it in the background with its output in a file; progress lines go to
stderr with a clock, the final table to stdout and ``.bench/run_all-*.md``::

    nohup .venv/bin/python -m bench.run_all --full > .bench/run_all.out 2>&1 &
    tail -f .bench/run_all.out

By default it measures the *committed* code: ``git archive HEAD`` is
unpacked into ``.bench/trees/<commit>`` and the run re-executes itself from
there, so edits in progress in the shared working tree neither break nor
flatter the figures.  ``--working-tree`` measures the checkout as it is.

Each comparison is measured in this run, alternating where it can (ours and
MkDocs, cold builds and rebuilds), and reported as a ratio, because on a
shared 2-core machine only same-run ratios are comparable across days.
"""

from __future__ import annotations

import argparse
import datetime
import importlib.metadata
import os
import platform
import subprocess
import sys
import tarfile
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path

from bench.bench_build import (
    Build,
    GiB,
    Row,
    cold_builds,
    fmt_build,
    log,
    render_rows,
    scaling,
)
from bench.common import CACHE, ROOT, bundle, compile_sources, median_seconds, trust_key

TREE_ENV = "RB_BENCH_TREE"


def machine() -> str:
    model = "unknown CPU"
    try:
        for line in Path("/proc/cpuinfo").read_text(encoding="utf-8").splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    mem = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / GiB
    versions = []
    for dist in ("mkdocs", "mkdocs-material", "playwright"):
        try:
            versions.append(f"{dist} {importlib.metadata.version(dist)}")
        except importlib.metadata.PackageNotFoundError:
            versions.append(f"{dist} missing")
    return (f"nproc {os.cpu_count()}, {model}, {mem:.0f} GiB RAM, Python "
            f"{platform.python_version()}, {platform.system()} {platform.release()}; "
            + ", ".join(versions))


def commit_of(root: Path) -> str:
    return subprocess.run(["git", "-C", str(root), "rev-parse", "HEAD"], check=True,
                          capture_output=True, text=True).stdout.strip()


def export_head() -> Path:
    """``git archive HEAD`` into ``.bench/trees/<commit>``, sharing this ``.bench`` cache."""
    sha = commit_of(ROOT)
    tree = CACHE / "trees" / sha[:12]
    if not (tree / "pyproject.toml").is_file():
        tmp = tree.with_name(tree.name + ".partial")
        subprocess.run(["rm", "-rf", str(tmp)], check=True)
        tmp.mkdir(parents=True)
        archive = subprocess.run(["git", "-C", str(ROOT), "archive", "--format=tar", "HEAD"],
                                 check=True, capture_output=True).stdout
        tar = tmp / "head.tar"
        tar.write_bytes(archive)
        with tarfile.open(tar) as tf:
            tf.extractall(tmp, filter="data")
        tar.unlink()
        (tmp / ".bench").symlink_to(CACHE.resolve())
        os.replace(tmp, tree)
    return tree


def reexec_in(tree: Path, argv: list[str]) -> None:
    """Run this module again from ``tree``: cwd first on sys.path for ``-m``, and
    inherited by every build child, so all code measured is the exported one."""
    env = dict(os.environ, **{TREE_ENV: tree.name,
                              "PYTHONPATH": os.pathsep.join(
                                  [str(tree), *filter(None, [os.environ.get("PYTHONPATH")])])})
    os.chdir(tree)
    os.execve(sys.executable, [sys.executable, "-m", "bench.run_all", *argv], env)


#: Verification within this factor of the floor (issue 6).
VERIFY_TARGET = 3.0


def verify_rows(sizes: tuple[int, ...]) -> list[Row]:
    """verify_bundle against the floor (json.loads + sha256 per line): CPU in this process,
    then wall time as ``validate`` runs on an idle machine (fresh processes, its workers)."""
    from bench.bench_verify import floor_pass, rounds, runs_for, verify_pass
    from bundler.verify.stream import workers_when_idle

    rows = []
    key = trust_key()
    for n in sizes:
        path = bundle(n, log=log)
        floor_pass(path)
        k = runs_for(n, None)
        log(f"verify vs floor, {n:,} events ({k} runs)")
        v_wall, v_cpu = median_seconds(partial(verify_pass, path, key), k)
        f_wall, f_cpu = median_seconds(partial(floor_pass, path), k)
        ratio = v_cpu / f_cpu
        rows.append(Row(f"verify {n:,} events vs floor (json.loads+sha256), CPU, median of {k}",
                        f"{v_cpu:.2f} s ({n / v_cpu:,.0f} ev/s; wall {v_wall:.2f} s)",
                        f"{f_cpu:.2f} s (wall {f_wall:.2f} s)", f"{ratio:.1f}x",
                        f"<= {VERIFY_TARGET:g}x", "yes" if ratio <= VERIFY_TARGET else "NO"))
        workers = workers_when_idle(path / "events.jsonl")  # as validate on an idle machine
        log(f"validate throughput, {n:,} events, {workers} workers ({k} rounds)")
        got = rounds(path, key, workers, k)
        (w_wall, w_cpu), (fl_wall, _) = got["verify"], got["floor"]
        ratio = w_wall / fl_wall
        rows.append(Row(f"validate {n:,} events vs floor, wall, fresh process, "
                        f"{workers or 'no'} workers, median of {k}",
                        f"{w_wall:.2f} s ({n / w_wall:,.0f} ev/s; CPU {w_cpu:.2f} s)",
                        f"{fl_wall:.2f} s", f"{ratio:.1f}x", f"<= {VERIFY_TARGET:g}x",
                        "yes" if ratio <= VERIFY_TARGET else "NO"))
    return rows


def section(title: str, rows: list[Row], results: list[tuple[str, list[Row]]]) -> None:
    results.append((title, rows))
    print(f"\n{title}\n{render_rows(rows)}", file=sys.stderr, flush=True)


def guarded(title: str, fn: Callable[[], list[Row]]) -> list[Row]:
    """A failing section becomes a failing row; the rest of the run goes on."""
    try:
        return fn()
    except (Exception, SystemExit) as exc:
        log(f"{title} FAILED: {exc}")
        return [Row(title, f"failed: {exc}"[:200], ok="NO")]


def main(argv: list[str] | None = None) -> int:
    args_list = list(sys.argv[1:] if argv is None else argv)
    ap = argparse.ArgumentParser(prog="python -m bench.run_all", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--full", action="store_true", help="also 1M events (an hour or more)")
    ap.add_argument("--runs", type=int, help="override runs per measurement (default 3; 1 at 1M)")
    ap.add_argument("--sizes", type=int, nargs=2, default=(10_000, 100_000),
                    metavar=("SMALL", "LARGE"),
                    help="the two bundle sizes (default 10000 100000; --full adds 10 x LARGE); "
                         "MkDocs and incremental use SMALL (--full: incremental LARGE too), "
                         "the browser LARGE")
    ap.add_argument("--mem-cap-gib", type=float, default=8.0,
                    help="address-space cap of every build (RLIMIT_AS), so a runaway build "
                         "fails alone instead of starting the OOM killer (default 8)")
    ap.add_argument("--timeout", type=float, default=3600, help="seconds per build")
    ap.add_argument("--working-tree", action="store_true",
                    help="measure the checkout as it is, not the committed HEAD")
    args = ap.parse_args(args_list)
    if not args.working_tree and TREE_ENV not in os.environ:
        tree = export_head()
        log(f"measuring committed HEAD from {tree}")
        reexec_in(tree, args_list)
    compile_sources()
    from bench import bench_browser, bench_incremental, bench_mkdocs, bench_shapes

    started = time.time()
    import bundler

    code = (f"commit {os.environ[TREE_ENV]}" if TREE_ENV in os.environ
            else f"working tree at {commit_of(ROOT)[:12]}")
    code += f" (bundler from {Path(bundler.__file__).parent})"
    header = (f"review-bundler benchmarks, {datetime.date.today().isoformat()}, code {code}\n"
              f"machine: {machine()}; load average at start "
              f"{os.getloadavg()[0]:.2f}\n")
    log(header.strip())
    runs = args.runs or 3
    cap = int(args.mem_cap_gib * GiB)
    small, large = args.sizes
    sizes = (small, large, 10 * large) if args.full else (small, large)
    results: list[tuple[str, list[Row]]] = []

    section("Verification", guarded("verification", lambda: verify_rows(
        sizes)), results)

    ours: dict[int, Build] = {}

    def mkdocs() -> list[Row]:
        rows, b = bench_mkdocs.compare(bundle(small, log=log), small, runs)
        ours[small] = b
        return rows
    section("Site build vs MkDocs + Material", guarded("mkdocs comparison", mkdocs), results)

    def scale() -> list[Row]:
        rows, builds = scaling(sizes, runs=args.runs, large=large, mem_cap=cap,
                               timeout=args.timeout, known=ours)
        ours.update(builds)
        return rows
    section("Build scaling and memory", guarded("scaling", scale), results)

    def browser() -> list[Row]:
        site = ours[large].site if large in ours else None
        if site is None:
            b = cold_builds(bundle(large, log=log), large, 1, mem_limit=cap)
            log(f"built the 100k site for the browser: {fmt_build(b)}")
            site = b.site
        return bench_browser.measure(site, max(runs, 5))
    section(f"Browser (headless Chromium, file://, {large:,}-event site)",
            guarded("browser", browser), results)

    section("Hostile shapes (fan-out, shared records)", guarded(
        "hostile shapes", lambda: bench_shapes.measure(1_000)), results)

    section("Incremental rebuild", guarded("incremental", lambda: bench_incremental.measure(
        small, runs)), results)
    if args.full:   # the large bundle too, once: the target is not about one size
        section(f"Incremental rebuild, {large:,} events", guarded(
            "incremental (large)", lambda: bench_incremental.measure(large, 1)), results)

    minutes = (time.time() - started) / 60
    rows = [row for _, section_rows in results for row in section_rows]
    text = (f"{header}\n{render_rows(rows)}\n\n(run took {minutes:.0f} min; load average "
            f"at end {os.getloadavg()[0]:.2f})\n")
    stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M")
    report = CACHE / f"run_all-{stamp}.md"
    report.write_text(text, encoding="utf-8")
    log(f"table written to {report}")
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
