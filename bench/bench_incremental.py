"""Rebuilding a site into its existing output folder, against a cold build.

Two cases, each timed as ``review-bundler build`` children like the cold
builds, in alternation so machine load hits all of them alike:

* **unchanged**: build bundle N into site A, then build N into A again
  (target: at most 20% of the cold build);
* **+1%**: build N + N/100 (the same bundle with 1% more events appended
  at the end) into A, which holds the site of N (target: at most 30% of a
  cold build of N + N/100).

Each figure is the median wall time, with the median CPU time (the build and
every process it waited for) beside it: on a shared machine other jobs
stretch wall time far more than CPU time.  Whatever the builder reuses,
the result must be the site a cold build would write: A after the rebuild
is compared file by file (SHA-256 of every file, and the file list) with the
cold build, and a difference fails the run.

How the +1% bundle is made: the generator's output for N*1.01 *does* start
with the N-event log byte for byte (its random stream does not depend on the
event budget at these sizes), but its ``bundle.json`` names a different title
and origin, so every checkpoint signature and the title on every page differ:
that is a different bundle, not a grown one.  A log that grew keeps its
metadata, so the +1% bundle is a copy of N reopened with
``BundleWriter.open`` and extended by the generator's own episode code (new
runs, a different seed for payload bytes, timestamps continuing after N's
last event).  It is cached beside N in ``.bench/`` and must verify cleanly.

    .venv/bin/python -m bench.bench_incremental [--events 10000] [--runs 3]
"""

from __future__ import annotations

import argparse
import calendar
import hashlib
import json
import os
import shutil
import statistics
import time
from pathlib import Path

from bench.bench_build import Row, build_once, log, render_rows, verdict
from bench.common import CACHE, bundle, compile_sources, trust_key
from bundler.author import BundleWriter
from bundler.synth import START, SyntheticClock, synthetic_signer
from bundler.synth.generator import Done, Synth
from bundler.synth.shapes import episode
from bundler.verify import VerifyOptions, verify_bundle
from bundler.verify.result import Trust

MAX_UNCHANGED = 0.20
MAX_APPENDED = 0.30
#: Added to the bundle's seed for the appended episodes' random stream and payloads.
APPEND_SEED = 1_000_003


def _last_time(path: Path) -> str:
    with open(path / "events.jsonl", "rb") as fh:
        fh.seek(max(0, os.path.getsize(path / "events.jsonl") - 65536))
        last = fh.read().splitlines()[-1]
    return str(json.loads(last)["time"])


def _epoch(stamp: str) -> int:
    return calendar.timegm(time.strptime(stamp, "%Y-%m-%dT%H:%M:%SZ"))


def append_events(path: Path, extra: int, *, seed: int = 0) -> None:
    """Append ``extra`` events to the synthetic bundle at ``path``, in place."""
    clock = SyntheticClock()
    clock.offset = _epoch(_last_time(path)) - _epoch(START) + 2
    writer = BundleWriter.open(path, signer=synthetic_signer(seed), clock=clock)
    synth = Synth(writer, seed=seed + APPEND_SEED, events=writer.size + extra,
                  payload_bytes="small", clock=clock)
    with writer:
        try:
            while True:
                synth.start_run()
                for _ in range(synth.rng.randint(4, 16)):
                    episode(synth)
        except Done:
            pass


def grown_bundle(events: int) -> Path:
    """The cached bundle of ``events`` with 1% more events appended (made once)."""
    base = bundle(events, log=log)
    extra = max(1, events // 100)
    target = CACHE / f"{base.name}-plus{extra}"
    stamp = target.with_name(target.name + ".stamp")
    want = {"base": base.name, "base_stamp": base.with_name(base.name + ".stamp").read_text(
        encoding="utf-8"), "extra": extra, "append_seed": APPEND_SEED}
    try:
        if target.is_dir() and json.loads(stamp.read_text(encoding="utf-8")) == want:
            return target
    except (OSError, ValueError):
        pass
    shutil.rmtree(target, ignore_errors=True)
    tmp = target.with_name(target.name + ".partial")
    shutil.rmtree(tmp, ignore_errors=True)
    shutil.copytree(base, tmp)
    append_events(tmp, extra)
    report = verify_bundle(tmp, VerifyOptions(trusted_keys=(trust_key(),), keep_events=False))
    if not report.valid or report.trust is not Trust.PINNED or report.diagnostics:
        codes = sorted({d.code for d in report.diagnostics})
        raise SystemExit(f"the +1% bundle does not verify cleanly: {report.trust} {codes}")
    os.replace(tmp, target)
    stamp.write_text(json.dumps(want), encoding="utf-8")
    log(f"made {target.name}: {events:,} + {extra:,} events")
    return target


def tree_digest(root: Path) -> dict[str, str]:
    """Relative path -> SHA-256 of every file under ``root``."""
    out = {}
    for p in sorted(root.rglob("*")):
        if p.is_file():
            h = hashlib.sha256()
            with open(p, "rb") as fh:
                while chunk := fh.read(1 << 20):
                    h.update(chunk)
            out[p.relative_to(root).as_posix()] = h.hexdigest()
    return out


def differences(a: dict[str, str], b: dict[str, str]) -> list[str]:
    return sorted(k for k in a.keys() | b.keys() if a.get(k) != b.get(k))


def measure(events: int, runs: int) -> list[Row]:
    base = bundle(events, log=log)
    grown = grown_bundle(events)
    key = trust_key()
    site_a = CACHE / "sites" / "incremental-a"
    site_b = CACHE / "sites" / "incremental-b"
    t: dict[str, list[float]] = {"cold": [], "same": [], "cold+": [], "grow": []}
    cpu: dict[str, list[float]] = {k: [] for k in t}
    diffs: list[str] = []
    for i in range(runs):
        shutil.rmtree(site_a, ignore_errors=True)
        shutil.rmtree(site_b, ignore_errors=True)
        cold, _ = build_once(base, site_a, key)
        before = tree_digest(site_a)
        same, _ = build_once(base, site_a, key)
        diffs += [f"unchanged: {d}" for d in differences(before, tree_digest(site_a))]
        grow, _ = build_once(grown, site_a, key)
        cold_plus, _ = build_once(grown, site_b, key)
        diffs += [f"+1%: {d}" for d in differences(tree_digest(site_a), tree_digest(site_b))]
        for k, m in (("cold", cold), ("same", same), ("grow", grow), ("cold+", cold_plus)):
            t[k].append(m.wall)
            cpu[k].append(m.cpu)
        log(f"  incremental run {i + 1}/{runs} (wall / CPU): cold {cold.wall:.1f} / "
            f"{cold.cpu:.1f} s, unchanged {same.wall:.1f} / {same.cpu:.1f} s, +1% "
            f"{grow.wall:.1f} / {grow.cpu:.1f} s, cold +1% {cold_plus.wall:.1f} / "
            f"{cold_plus.cpu:.1f} s, {len(diffs)} differing files so far")
    shutil.rmtree(site_b, ignore_errors=True)
    return rows(events, runs, t, cpu, diffs)


def rows(events: int, runs: int, wall: dict[str, list[float]], cpu: dict[str, list[float]],
         diffs: list[str]) -> list[Row]:
    """The table: medians of wall time (the targets) with CPU time beside them.

    CPU time (the build and every process it waited for) is shown because
    other jobs on a shared machine stretch wall time far more than CPU time;
    the verdict stays on wall time, which is what the targets are about.
    """
    med = {k: statistics.median(v) for k, v in wall.items()}
    mcpu = {k: statistics.median(v) for k, v in cpu.items()}
    size = f"{events // 1000:,}k"
    out = []
    for label, k, base, limit in (
            (f"rebuild unchanged {size} bundle into its site (median of {runs})", "same",
             "cold", MAX_UNCHANGED),
            (f"rebuild {size} + 1% appended events into the {size} site", "grow", "cold+",
             MAX_APPENDED)):
        ratio, cpu_ratio = med[k] / med[base], mcpu[k] / mcpu[base]
        out.append(Row(label, f"{med[k]:.1f} s (CPU {mcpu[k]:.1f} s)",
                       f"{med[base]:.1f} s cold (CPU {mcpu[base]:.1f} s)",
                       f"{100 * ratio:.0f}% (CPU {100 * cpu_ratio:.0f}%)",
                       f"<= {100 * limit:.0f}%", verdict(ratio <= limit)))
    out.append(Row("rebuilt sites byte-identical to cold builds",
                   "yes" if not diffs else f"NO: {len(diffs)} files differ, e.g. {diffs[0]}",
                   target="identical", ok=verdict(not diffs)))
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.bench_incremental", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--events", type=int, default=10_000, help="bundle size (default 10k)")
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args(argv)
    compile_sources()
    print(render_rows(measure(args.events, args.runs)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
