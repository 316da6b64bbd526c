"""Example bundle ``unsupported-gain``: the profile paper's worked example (section 6).

A writing agent runs a small, real experiment (nearest-centroid baseline
against Gaussian naive Bayes on synthetic data, five seeds), drafts a
manuscript and claims the new method "improves accuracy by 4.2 percentage
points".  The experiment log says the mean gain is much smaller: 4.2 is the
gain of the single best seed.  An extraction operator turns the sentence into
a claim whose binding records 4.2 against ``metrics.accuracy_gain_pp``; a
verifier marks it ``contradicted``; a revision operator derives a corrected
claim quoting the real value and a second draft supersedes the first.  The
old claim stays in the log, which is the point.

The seeds (75-79) were picked so that the best single seed gains exactly
4.2 points, the paper's figure; every other number follows from the run.
Every number in the drafts and claims is computed here from the experiment's
output, so the story cannot drift from its evidence.  Binding fields follow
the syntax documented in :mod:`example_bundles.make.bindings`.
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from example_bundles.make.common import EXAMPLES, csv_bytes, fresh_writer, source_text
from example_bundles.make.drawing import percent_bar_chart
from example_bundles.make.zipped import write_zip

NAME = "unsupported-gain"
START = "2026-03-02T09:00:00Z"
SEEDS = (75, 76, 77, 78, 79)
N_TRAIN, N_TEST = 200, 1000
CHECKER = {"name": "claim-checker", "version": "0.4.0"}

#: The experiment exactly as it ran: the generator executes this text and
#: ships the same bytes as the ``experiment.py`` payload.
EXPERIMENT_SRC = source_text(NAME, "experiment.py")


def run_experiment() -> list[dict[str, Any]]:
    namespace: dict[str, Any] = {}
    exec(compile(EXPERIMENT_SRC, "experiment.py", "exec"), namespace)  # our own source file
    runner: Callable[..., list[dict[str, Any]]] = namespace["run"]
    return runner(SEEDS, N_TRAIN, N_TEST)


def pct(x: float) -> float:
    return round(x * 100, 1)


def summarise(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Means over seeds; the headline gain is the mean difference, in points."""
    n = len(rows)
    base = sum(r["baseline"] for r in rows) / n
    new = sum(r["new"] for r in rows) / n
    gains = [pct(r["new"] - r["baseline"]) for r in rows]
    best = max(range(n), key=lambda i: (gains[i], -i))
    return {
        "baseline_accuracy_pct": pct(base), "new_accuracy_pct": pct(new),
        "accuracy_gain_pp": pct(new - base), "n_seeds": n,
        "max_seed_gain_pp": gains[best], "max_gain_seed": rows[best]["seed"],
        "min_seed_gain_pp": min(gains), "seeds_where_new_wins": sum(g > 0 for g in gains),
    }


def per_seed_csv(rows: list[dict[str, Any]]) -> bytes:
    return csv_bytes(["seed", "baseline_accuracy_pct", "new_accuracy_pct", "gain_pp"],
                     ([r["seed"], f"{pct(r['baseline']):.1f}", f"{pct(r['new']):.1f}",
                       f"{pct(r['new'] - r['baseline']):.1f}"] for r in rows))


def draft(version: int, m: dict[str, Any], gain_sentence: str, extra: str) -> bytes:
    return f"""# Per-feature variances matter: naive Bayes vs nearest centroid (draft v{version})

## Abstract

We compare a nearest-centroid classifier with Gaussian naive Bayes on a synthetic
four-feature binary task. {gain_sentence}

## Setup

Each of {m['n_seeds']} seeds draws {N_TRAIN} training and {N_TEST} test points
(`experiment.py`). Both methods estimate class means from the training split; naive
Bayes also estimates per-feature variances.

## Results

The baseline reaches a mean test accuracy of {m['baseline_accuracy_pct']:.1f}% and
naive Bayes {m['new_accuracy_pct']:.1f}% (`experiment_log.json`, `per_seed.csv`,
Figure 1). {extra}

![Figure 1: accuracy per seed](accuracy_by_seed.svg)
""".encode()


def build(out_dir: Path | None = None) -> Path:
    rows = run_experiment()
    m = summarise(rows)
    w, clock = fresh_writer(
        NAME, title="Unsupported gain: a numerical claim checked against its experiment log",
        description=("The profile paper's worked example (section 6). A drafted manuscript "
                     f"claims a {m['max_seed_gain_pp']} point accuracy gain; the experiment "
                     f"log shows {m['accuracy_gain_pp']}. The claim is extracted, contradicted "
                     "by a verifier and revised, and the old claim stays in the log."),
        start=START, checkpoint_every=20, out_dir=out_dir)
    run = "run:paper-writer"
    w.append("run", id=run, title="Write up the variance-aware classifier experiment",
             objective="Run the comparison, draft a short paper, check every numerical claim.",
             agent="writer-agent 1.2", run=run, stream="stream:writer")
    for sid, kind, name, desc in (
            ("stream:writer", "agent", "writer agent", "drafts and revises the manuscript"),
            ("stream:runner", "tool", "experiment runner", "executes experiment.py"),
            ("stream:extractor", "agent", "claim extractor", "pulls claims out of drafts"),
            ("stream:verifier", "evaluator", "claim checker",
             "re-reads bound fields and compares them with the claimed values")):
        w.append("stream", id=sid, kind=kind, name=name, description=desc, run=run)

    def ind(sid: str, ident: str, kind: str, name: str, data: bytes, media: str,
            **extra: Any) -> Any:
        ref = w.put_payload(data, media, name)
        return w.append("individual", id=ident, kind=kind, name=name, payload=ref, run=run,
                        stream=sid, **extra)

    code = ind("stream:writer", "ind:experiment-code", "program", "experiment.py",
               EXPERIMENT_SRC.encode(), "text/x-python", status="accepted")
    w.append("operator", id="op:run-experiment", op="execute", parents=[code.id],
             tool="python3 experiment.py", run=run, stream="stream:runner",
             params={"seeds": list(SEEDS), "n_train": N_TRAIN, "n_test": N_TEST},
             summary=f"ran both methods on {len(SEEDS)} seeds")
    log_obj = {"experiment": "nearest-centroid vs gaussian-nb",
               "config": {"seeds": list(SEEDS), "n_train": N_TRAIN, "n_test": N_TEST},
               "per_seed": [{"seed": r["seed"], "baseline_accuracy": r["baseline"],
                             "new_accuracy": r["new"]} for r in rows],
               "metrics": m}
    log = ind("stream:runner", "ind:experiment-log", "experiment_log", "experiment_log.json",
              (json.dumps(log_obj, indent=2, sort_keys=True) + "\n").encode(),
              "application/json", produced_by="op:run-experiment", status="accepted")
    table = ind("stream:runner", "ind:per-seed", "table", "per_seed.csv", per_seed_csv(rows),
                "text/csv", produced_by="op:run-experiment", status="accepted")
    chart = percent_bar_chart(
        "Test accuracy per seed: nearest centroid vs Gaussian naive Bayes", "test accuracy",
        [(f"seed {r['seed']}", [pct(r["baseline"]), pct(r["new"])]) for r in rows],
        [("baseline", "#8c8c8c", "nearest centroid (baseline)"),
         ("new", "#1f77b4", "Gaussian naive Bayes (new)")])
    fig = ind("stream:runner", "ind:figure-1", "figure", "accuracy_by_seed.svg", chart,
              "image/svg+xml", produced_by="op:run-experiment", status="accepted")

    # The draft: the headline sentence quotes the best seed as if it were the result.
    w.append("operator", id="op:draft-v1", op="synthesize", parents=[log.id, table.id, fig.id],
             agent="writer-agent 1.2", run=run, stream="stream:writer",
             summary="first manuscript draft from the experiment outputs")
    bad = (f"Naive Bayes improves accuracy by {m['max_seed_gain_pp']} percentage points over "
           "the nearest-centroid baseline.")
    sig = "The improvement is statistically significant (p < 0.01)."
    v1_text = draft(1, m, bad, sig)
    d1 = ind("stream:writer", "ind:draft", "draft", "draft-v1.md", v1_text, "text/markdown",
             produced_by="op:draft-v1", status="candidate")

    w.append("operator", id="op:extract-v1", op="extract", parents=[d1.id],
             agent="claim-extractor 0.9", run=run, stream="stream:extractor",
             params={"pattern": "numeric and statistical assertions"},
             summary="three claims extracted from draft v1")
    gain_v1 = w.append(
        "claim", id="claim:gain-v1", name="headline accuracy gain", text=bad,
        produced_by="op:extract-v1", evidence=[log.id], run=run, stream="stream:extractor",
        bindings=[{"evidence": log.id, "field": "metrics.accuracy_gain_pp",
                   "value": m["max_seed_gain_pp"], "comparison": "equals",
                   "note": "value as written in draft v1, abstract"}])
    w.append("claim", id="claim:baseline-v1", name="baseline accuracy", run=run,
             text=f"The baseline reaches a mean test accuracy of {m['baseline_accuracy_pct']}%.",
             produced_by="op:extract-v1", evidence=[log.id, table.id], stream="stream:extractor",
             bindings=[{"evidence": log.id, "field": "metrics.baseline_accuracy_pct",
                        "value": m["baseline_accuracy_pct"]},
                       {"evidence": table.id, "field": "#rows", "value": m["n_seeds"],
                        "comparison": "equals (one row per seed)"}], final=True)
    w.append("claim", id="claim:significance-v1", name="significance", text=sig,
             produced_by="op:extract-v1", run=run, stream="stream:extractor")

    clock.advance(minutes=20)
    w.append("operator", id="op:verify-v1", op="verify", run=run, stream="stream:verifier",
             parents=["claim:gain-v1", "claim:baseline-v1", "claim:significance-v1"],
             tool=f"{CHECKER['name']} {CHECKER['version']}",
             summary="re-read every bound field and compared it with the claimed value")
    diff = round(m["max_seed_gain_pp"] - m["accuracy_gain_pp"], 1)
    w.append("fitness", id="fit:gain-v1", target=gain_v1.id, evaluator=CHECKER,
             metric="abs_error_pp", score=diff, threshold=0.05, higher_is_better=False,
             passed=False, verdict="contradicted", operator="op:verify-v1",
             evidence=[log.id, table.id], run=run, stream="stream:verifier",
             note=(f"expected metrics.accuracy_gain_pp = {m['max_seed_gain_pp']} (claimed), "
                   f"found {m['accuracy_gain_pp']} in experiment_log.json. "
                   f"{m['max_seed_gain_pp']} is gain_pp@seed={m['max_gain_seed']} in "
                   "per_seed.csv: the draft reported the best seed, not the mean."))
    w.append("fitness", id="fit:baseline-v1", target="claim:baseline-v1", evaluator=CHECKER,
             metric="abs_error_pp", score=0.0, threshold=0.05, higher_is_better=False,
             passed=True, verdict="supported", operator="op:verify-v1", evidence=[log.id],
             run=run, stream="stream:verifier",
             note=f"metrics.baseline_accuracy_pct = {m['baseline_accuracy_pct']} as claimed")
    w.append("fitness", id="fit:significance-v1", target="claim:significance-v1",
             evaluator=CHECKER, passed=False, verdict="unsupported", operator="op:verify-v1",
             run=run, stream="stream:verifier",
             note=("no evidence bound and no significance test in experiment_log.json; "
                   f"only {m['n_seeds']} seeds were run"))

    # Revision: a corrected claim derived from the contradicted one, and draft v2.
    w.append("operator", id="op:revise", op="revise", parents=[gain_v1.id, log.id, d1.id],
             agent="writer-agent 1.2", run=run, stream="stream:writer",
             params={"reason": "fit:gain-v1 contradicted; fit:significance-v1 unsupported"},
             summary="replace the best-seed figure with the mean gain; drop the p-value")
    good = (f"Averaged over {m['n_seeds']} seeds, naive Bayes improves accuracy by "
            f"{m['accuracy_gain_pp']} percentage points over the nearest-centroid baseline "
            f"(per-seed gains range from {m['min_seed_gain_pp']} to {m['max_seed_gain_pp']}).")
    gain_v2 = w.append(
        "claim", id="claim:gain-v2", name="headline accuracy gain", version=2,
        supersedes=gain_v1.id, derived_from=[gain_v1.id], produced_by="op:revise", text=good,
        evidence=[log.id, table.id], final=True, run=run, stream="stream:writer",
        bindings=[{"evidence": log.id, "field": "metrics.accuracy_gain_pp",
                   "value": m["accuracy_gain_pp"]},
                  {"evidence": log.id, "field": "metrics.min_seed_gain_pp",
                   "value": m["min_seed_gain_pp"]},
                  {"evidence": table.id, "field": f"gain_pp@seed={m['max_gain_seed']}",
                   "value": m["max_seed_gain_pp"], "comparison": "equals (upper end of range)"}])
    w.append("claim", id="claim:significance-v2", name="significance", version=2,
             supersedes="claim:significance-v1", derived_from=["claim:significance-v1"],
             produced_by="op:revise", claim_status="retracted", run=run, stream="stream:writer",
             text="Retracted: no significance test was run, so no p-value is reported.")
    extra = (f"Naive Bayes wins on {m['seeds_where_new_wins']} of {m['n_seeds']} seeds; "
             "with so few seeds we report no significance test.")
    v2_text = draft(2, m, good, extra)
    d2 = ind("stream:writer", "ind:draft-v2", "draft", "draft-v2.md", v2_text, "text/markdown",
             produced_by="op:revise", version=2, supersedes=d1.id, status="final")
    patch = "".join(difflib.unified_diff(
        v1_text.decode().splitlines(keepends=True), v2_text.decode().splitlines(keepends=True),
        "a/draft-v1.md", "b/draft-v2.md"))
    ind("stream:writer", "ind:draft-patch", "patch", "draft-v1-to-v2.diff", patch.encode(),
        "text/x-diff", produced_by="op:revise")

    w.append("operator", id="op:verify-v2", op="verify", parents=[gain_v2.id, d2.id],
             tool=f"{CHECKER['name']} {CHECKER['version']}", run=run, stream="stream:verifier",
             summary="re-checked the revised claim")
    w.append("fitness", id="fit:gain-v2", target=gain_v2.id, evaluator=CHECKER,
             metric="abs_error_pp", score=0.0, threshold=0.05, higher_is_better=False,
             passed=True, verdict="supported", operator="op:verify-v2",
             evidence=[log.id, table.id], run=run, stream="stream:verifier",
             note=(f"metrics.accuracy_gain_pp = {m['accuracy_gain_pp']}, min_seed_gain_pp = "
                   f"{m['min_seed_gain_pp']}, gain_pp@seed={m['max_gain_seed']} = "
                   f"{m['max_seed_gain_pp']}: all as claimed"))
    w.close()
    return w.root


if __name__ == "__main__":
    # The committed zip copy is refreshed too, so running this script alone
    # cannot leave example_bundles/unsupported-gain.zip stale.
    write_zip(build(), EXAMPLES / f"{NAME}.zip", NAME)
