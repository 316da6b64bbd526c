"""Benchmark: N small graphs through one ``dot`` process per worker vs one process each.

Run by hand:  .venv/bin/python bench/bench_graphviz.py [--graphs 300] [--nodes 15] [--repeat 5]

Both sides go through the same public ``render_svgs`` (DOT generation and SVG
post-processing included), so the difference is the process start-up cost
that batching removes (DESIGN-NOTES §6).
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import time
from collections.abc import Callable

from bundler.graph.paths import GEdge, GNode
from bundler.render.graphviz import GraphSpec, find_dot, render_svgs

KINDS = ["claim", "individual", "operator", "fitness", "trace_record", "evidence_node",
         "workflow_node", "steering", "missing"]
RELATIONS = ["produces", "uses", "supports", "informs", "checked_by", "trace"]


def make_spec(i: int, n: int, rng: random.Random) -> GraphSpec:
    """A layered DAG shaped like an evidence graph: a claim at the sink."""
    nodes = [GNode(f"g{i}-0", "claim", f"Claim {i}: the model improves accuracy", "supported")]
    nodes += [GNode(f"g{i}-{j}", rng.choice(KINDS[1:]), f"artifact {i}.{j} result.csv",
                    rng.choice(["verified", "redacted", "missing", ""])) for j in range(1, n)]
    edges = []
    for j in range(1, n):
        dst = rng.randrange(0, j)
        inferred = rng.random() < 0.2
        edges.append(GEdge(f"g{i}-{j}", f"g{i}-{dst}", rng.choice(RELATIONS), inferred,
                           round(rng.random(), 2) if inferred else None))
    return GraphSpec(f"g{i}", f"Evidence for claim {i}", "bench", nodes, edges,
                     lambda nid: f"items/{nid}.html", root=f"g{i}-0",
                     clusters={"phase 1": [f"g{i}-{j}" for j in range(1, n, 3)]})


def timed(fn: Callable[[], object], repeat: int) -> list[tuple[float, float]]:
    """(wall, CPU) seconds per run; CPU includes the ``dot`` children, so the
    comparison stays meaningful on a machine that other jobs are loading."""
    out = []
    for _ in range(repeat):
        c0, t0 = os.times(), time.perf_counter()
        fn()
        wall, c1 = time.perf_counter() - t0, os.times()
        cpu = sum(c1[:4]) - sum(c0[:4])
        out.append((wall, cpu))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    ap.add_argument("--graphs", type=int, default=300)
    ap.add_argument("--nodes", type=int, default=15)
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    rng = random.Random(20240601)
    specs = [make_spec(i, args.nodes, rng) for i in range(args.graphs)]
    dot = find_dot()

    def per_process() -> None:
        for spec in specs:
            render_svgs([spec], dot=dot)

    reference = render_svgs(specs, jobs=1, dot=dot)          # warm-up + equality check
    assert render_svgs(specs, jobs=2, dot=dot) == reference
    assert {s.name: render_svgs([s], dot=dot)[s.name] for s in specs[:20]} == {
        s.name: reference[s.name] for s in specs[:20]}
    results = {
        "batched, jobs=1": timed(lambda: render_svgs(specs, jobs=1, dot=dot), args.repeat),
        "batched, jobs=2": timed(lambda: render_svgs(specs, jobs=2, dot=dot), args.repeat),
        "one process per graph": timed(per_process, args.repeat),
    }
    size = sum(len(v) for v in reference.values())
    print(f"{args.graphs} graphs x {args.nodes} nodes, {args.repeat} runs each, "
          f"{size / len(reference) / 1024:.1f} KiB SVG per graph, load average "
          f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
    med = {label: (statistics.median(w for w, _ in runs), statistics.median(c for _, c in runs))
           for label, runs in results.items()}
    for label, (wall, cpu) in med.items():
        print(f"  {label:<24} median wall {wall:7.3f} s   median CPU {cpu:7.3f} s   "
              f"({1000 * wall / args.graphs:.1f} ms/graph wall)")
    base_wall, base_cpu = med["one process per graph"]
    for label in ("batched, jobs=1", "batched, jobs=2"):
        wall, cpu = med[label]
        print(f"  ratio per-process / {label}: wall {base_wall / wall:5.1f}x, "
              f"CPU {base_cpu / cpu:5.1f}x")


if __name__ == "__main__":
    main()
