"""Hostile shapes: the largest page must not grow with the bundle.

The synthetic bundles are well behaved: no object there is used by more than a
few others.  Real ones are not always.  A benchmark input is evaluated by every
candidate of a search, and a tracer may have every evidence node of a session cite
the same records.  Each shape is built at N and at 10 N, in the same run:

* **fan-out**: one input used by N operators, evaluated N times and cited by N
  claims (each event small, so only the lists on the input's page grow);
* **shared records**: one phase of N evidence nodes, each citing the same 30 trace
  records of 2,000 characters.  Before session 17, every node showed each record
  verbatim: 200 nodes made a 91 MB page;
* **deep chain**: N artifacts, each derived from the one before, and a claim on every
  tenth, derived from the claim before it (lineage and evidence graphs whose ancestry
  is as long as the bundle);
* **lattice**: one phase of N evidence nodes in layers of two, each linked to both nodes
  of the next layer: 2^(N/2) paths from the first layer to the result a claim cites.

The rows give the largest HTML page at 10 N against N (the search data, loaded
lazily, is not a page; target: at most 1.10x, while the bundle grows about 10x) and
the build's wall time (target: at most 11x, as for the synthetic bundles).  Before
session 17, every claim citing the fan-out input walked all its evaluations: 10 N
took 19x the time of N.

    .venv/bin/python -m bench.bench_shapes [--size 1000]
"""

from __future__ import annotations

import argparse
import json
import shutil
from collections.abc import Callable
from pathlib import Path

from bench.bench_build import Row, build_once, log, render_rows
from bench.common import CACHE, compile_sources, trust_key
from bundler.author import BundleWriter
from bundler.synth import SyntheticClock, synthetic_signer

#: Bump when a shape changes, so that cached bundles are made again.
VERSION = 1
MAX_GROWTH = 1.10
MAX_SCALE = 11.0
MiB = 1 << 20
RUN = {"run": "run-1", "stream": "agent-1"}


def _fan_out(w: BundleWriter, n: int) -> None:
    ref = w.put_payload(b"benchmark inputs\n", "text/plain", "bench.txt")
    w.append("individual", id="bench", kind="dataset", name="benchmark", payload=ref, **RUN)
    for i in range(n):
        w.append("operator", id=f"op-{i}", op="execute", parents=["bench"], **RUN)
        w.append("fitness", id=f"fit-{i}", target="bench", metric="score", score=float(i),
                 evaluator={"name": "judge", "version": "1"}, run="run-1", stream="eval-1")
        w.append("claim", id=f"claim-{i}", name=f"result {i}", evidence=["bench"],
                 text=f"Run {i} scored {i} on the benchmark.", **RUN)


def _shared_records(w: BundleWriter, n: int) -> None:
    records = [w.append("trace_record", id=f"rec-{i}", record_kind="message",
                        source={"transcript": "session.jsonl", "line": i + 1},
                        raw=f"record {i:03d} " + "x" * 1989, **RUN).id for i in range(30)]
    nodes = [w.append("evidence_node", id=f"node-{k}", node_type="action",
                      category="tool_call", label=f"step {k}", records=records, **RUN).id
             for k in range(n)]
    w.append("workflow_node", id="wf-1", phase="execute", label="the whole session",
             members=nodes, **RUN)


def _deep_chain(w: BundleWriter, n: int) -> None:
    ref = w.put_payload(b"seed program\n", "text/plain", "seed.txt")
    w.append("individual", id="ind-0", kind="program", name="v0", payload=ref, **RUN)
    for i in range(1, n):
        w.append("operator", id=f"op-{i}", op="mutate", parents=[f"ind-{i - 1}"], **RUN)
        w.append("individual", id=f"ind-{i}", kind="program", name=f"v{i}",
                 produced_by=f"op-{i}", **RUN)
        if i % 10 == 0:
            w.append("claim", id=f"claim-{i}", name=f"v{i} is better", evidence=[f"ind-{i}"],
                     text=f"v{i} improves on v{i - 10}.",
                     derived_from=[f"claim-{i - 10}"] if i > 10 else [], **RUN)


def _lattice(w: BundleWriter, n: int) -> None:
    layers = n // 2
    for layer in range(layers):
        for k in range(2):
            w.append("evidence_node", id=f"n-{layer}-{k}", node_type="action",
                     category="tool_call", label=f"step {layer}.{k}", **RUN)
            if layer:
                for j in range(2):
                    w.append("edge", id=f"e-{layer}-{j}-{k}", relation="informs",
                             source=f"n-{layer - 1}-{j}", target=f"n-{layer}-{k}", **RUN)
    ref = w.put_payload(b"result\n", "text/plain", "result.txt")
    w.append("individual", id="result", kind="report", name="result", payload=ref, **RUN)
    w.append("evidence_node", id="n-result", node_type="artifact", category="artifact",
             label="result", individual="result", **RUN)
    for k in range(2):
        w.append("edge", id=f"e-result-{k}", relation="produces",
                 source=f"n-{layers - 1}-{k}", target="n-result", **RUN)
    w.append("workflow_node", id="wf-1", phase="execute", label="the whole session",
             members=[f"n-{layer}-{k}" for layer in range(layers) for k in range(2)]
             + ["n-result"], **RUN)
    w.append("claim", id="claim-1", name="the result holds", evidence=["result"],
             text="The result holds.", **RUN)


SHAPES: dict[str, Callable[[BundleWriter, int], None]] = {
    "fan-out": _fan_out, "shared records": _shared_records, "deep chain": _deep_chain,
    "lattice": _lattice}


def shape_bundle(name: str, n: int) -> Path:
    """The cached bundle of shape ``name`` at size ``n``, written if needed."""
    target = CACHE / f"shape-{name.replace(' ', '-')}-{n}"
    stamp = target.with_name(target.name + ".stamp")
    want = {"version": VERSION, "shape": name, "n": n}
    if target.is_dir() and stamp.is_file() and json.loads(stamp.read_text("utf-8")) == want:
        return target
    shutil.rmtree(target, ignore_errors=True)
    CACHE.mkdir(exist_ok=True)
    with BundleWriter.create(target, title=f"hostile shape: {name}, {n:,}",
                             signer=synthetic_signer(0), clock=SyntheticClock(),
                             checkpoint_every=1000) as w:
        w.append("run", id="run-1", title=name, objective="a hostile shape", **RUN)
        w.append("stream", id="agent-1", kind="agent", name="agent", run="run-1")
        w.append("stream", id="eval-1", kind="evaluator", name="judge", run="run-1")
        SHAPES[name](w, n)
    stamp.write_text(json.dumps(want), encoding="utf-8")
    return target


def _bytes(folder: Path, pattern: str) -> list[int]:
    return [p.stat().st_size for p in folder.rglob(pattern) if p.is_file()]


def measure(n: int) -> list[Row]:
    """Both shapes at ``n`` and ``10 n``: the largest page, and how the bundle grew."""
    key, rows = trust_key(), []
    for name in SHAPES:
        largest, sizes, wall = {}, {}, {}
        for size in (n, 10 * n):
            path = shape_bundle(name, size)
            site = CACHE / "sites" / path.name
            shutil.rmtree(site, ignore_errors=True)
            m, pages = build_once(path, site, key)
            largest[size], wall[size] = max(_bytes(site, "*.html")), m.wall
            sizes[size] = sum(_bytes(path, "*"))
            log(f"  {name} {size:,}: bundle {sizes[size] / MiB:.2f} MiB, {pages:,} pages, "
                f"largest {largest[size] / MiB:.2f} MiB, {m.wall:.1f} s, "
                f"peak {m.tree_kib / 1024:.0f} MiB")
            shutil.rmtree(site, ignore_errors=True)
        ratio = largest[10 * n] / largest[n]
        rows.append(Row(
            f"largest page, {name}: {10 * n:,} vs {n:,}",
            f"{largest[10 * n] / MiB:.2f} MiB", f"{largest[n] / MiB:.2f} MiB", f"{ratio:.2f}x",
            f"at most {MAX_GROWTH:.2f}x (the bundle grew {sizes[10 * n] / sizes[n]:.1f}x)",
            "yes" if ratio <= MAX_GROWTH else "NO"))
        scale = wall[10 * n] / wall[n]
        rows.append(Row(
            f"build time, {name}: {10 * n:,} vs {n:,}", f"{wall[10 * n]:.1f} s",
            f"{wall[n]:.1f} s", f"{scale:.1f}x", f"at most {MAX_SCALE:.0f}x",
            "yes" if scale <= MAX_SCALE else "NO"))
    return rows


def main() -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.bench_shapes", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--size", type=int, default=1_000, help="N (default 1000; also 10 N)")
    args = ap.parse_args()
    compile_sources()
    print(render_rows(measure(args.size)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
