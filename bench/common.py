"""Shared plumbing for the benchmarks: cached bundles, timing, peak RSS, tables.

Bundles are generated once into ``.bench/`` (gitignored) and reused; a
bundle counts as cached only when its stamp file, written after generation
finished, names the same generator version and arguments.  The stamp sits
beside the bundle, not inside it, because the verifier reports unexpected
files in a bundle.
"""

from __future__ import annotations

import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from bundler.synth import generate, synthetic_signer
from bundler.synth.generator import GENERATOR
from bundler.synth.payloads import PayloadSize

ROOT = Path(__file__).resolve().parent.parent
CACHE = ROOT / ".bench"
PYTHON = sys.executable


def compile_sources(root: Path = ROOT) -> None:
    """Write the bytecode of ``bundler`` and ``bench`` under ``root``, as installing a
    wheel with pip does.  Without it, on a machine with ``PYTHONDONTWRITEBYTECODE``
    set (this one), every build child compiles every module again: 0.1-0.15 s per
    process, which is not the tool's cost (a tenth of a +1% rebuild at 10k)."""
    import compileall

    for package in ("bundler", "bench"):
        compileall.compile_dir(root / package, quiet=2)


def bundle(events: int, *, seed: int = 0, large: bool = False,
           log: Callable[[str], None] | None = None) -> Path:
    """The cached synthetic bundle for these arguments, generating it if needed."""
    size: PayloadSize = "large" if large else "small"
    name = f"synth-{events}-s{seed}-{size}"
    target = CACHE / name
    stamp = CACHE / f"{name}.stamp"
    want = {"generator": GENERATOR, "events": events, "seed": seed, "payloads": size,
            "checkpoint_every": 1000}
    if target.is_dir() and stamp.is_file():
        try:
            if json.loads(stamp.read_text(encoding="utf-8")).get("args") == want:
                return target
        except (OSError, ValueError):
            pass
    shutil.rmtree(target, ignore_errors=True)
    stamp.unlink(missing_ok=True)
    CACHE.mkdir(exist_ok=True)
    tmp = CACHE / f"{name}.partial"
    shutil.rmtree(tmp, ignore_errors=True)
    t0, c0 = time.perf_counter(), time.process_time()
    generate(tmp, events=events, seed=seed, payload_bytes=size)
    seconds, cpu = time.perf_counter() - t0, time.process_time() - c0
    os.replace(tmp, target)
    stamp.write_text(json.dumps({"args": want, "generate_seconds": round(seconds, 2),
                                 "generate_cpu_seconds": round(cpu, 2)}) + "\n",
                     encoding="utf-8")
    if log is not None:
        log(f"generated {target.name} in {seconds:.1f}s ({cpu:.1f}s CPU)")
    return target


def generation_seconds(path: Path) -> tuple[float, float] | None:
    """(wall, CPU) seconds the cached bundle took to generate, from its stamp."""
    try:
        data = json.loads(path.with_name(path.name + ".stamp").read_text(encoding="utf-8"))
        return float(data["generate_seconds"]), float(data["generate_cpu_seconds"])
    except (OSError, ValueError, KeyError, TypeError):
        return None


def trust_key(seed: int = 0) -> str:
    return synthetic_signer(seed).verifier().to_text()


def median_seconds(fn: Callable[[], object], runs: int) -> tuple[float, float]:
    """Median wall time and median CPU time of ``runs`` separately timed calls.

    CPU time (this process only) is the steadier figure on a shared 2-core
    machine, where other jobs stretch wall time; report both.
    """
    wall, cpu = [], []
    for _ in range(runs):
        t0, c0 = time.perf_counter(), time.process_time()
        fn()
        wall.append(time.perf_counter() - t0)
        cpu.append(time.process_time() - c0)
    return statistics.median(wall), statistics.median(cpu)


def peak_rss_kib(argv: Sequence[str]) -> tuple[int, int]:
    """(exit code, peak RSS in KiB) of a command, measured by a fresh parent process.

    ``RUSAGE_CHILDREN`` is a running maximum over every child a process ever
    waited for, so an intermediate Python process with exactly one child
    gives that child's peak alone, whatever this process ran before.
    """
    probe = (
        "import resource, subprocess, sys\n"
        "rc = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL).returncode\n"
        "print(rc, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n"
    )
    out = subprocess.run([PYTHON, "-c", probe, *argv], check=True, capture_output=True,
                         text=True).stdout.split()
    return int(out[0]), int(out[1])


def dir_bytes(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def table(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    """A plain Markdown table (readable in a terminal, pasteable into an issue)."""
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(headers)]
    def line(cells: Sequence[str]) -> str:
        return "| " + " | ".join(c.rjust(w) for c, w in zip(cells, widths, strict=True)) + " |"
    sep = "|" + "|".join("-" * (w + 2) for w in widths) + "|"
    return "\n".join([line(headers), sep, *(line(r) for r in rows)])
