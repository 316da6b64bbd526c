"""The committed example bundles unsupported-gain, evolutionary-search and closed-loop-lab.

What is checked, and why:

* each verifies with the pinned demo key and shows no diagnostic at all, so
  ``validate --strict`` exits 0 (checked once through the real CLI);
* regenerating reproduces every committed file byte for byte, and the zip
  copy is reproducible and verifies exactly like the folder;
* every binding equals the value an independent resolver reads from its
  evidence, except the one deliberate mismatch (the 4.2 claim);
* the numbers are real: the experiment and the benchmark are re-run here
  from the payload bytes and must reproduce the logged results;
* each story is really in the log (contradicted then revised; 288 evolved
  programs with near-duplicate collapse; delayed evidence, steering,
  redaction and a human-review verdict);
* across all six examples every event type and every verdict appears.
"""

from __future__ import annotations

import csv
import io
import json
import math
import re
import subprocess
import sys
import zipfile
from collections import Counter
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from bundler.model.events import (
    EVENT_MODELS,
    VERDICTS,
    ArchiveEvent,
    ClaimEvent,
    EdgeEvent,
    EventBase,
    FitnessEvent,
    IndividualEvent,
    OperatorEvent,
    RedactionEvent,
    SteeringEvent,
    TraceRecordEvent,
)
from bundler.verify import PayloadState, Trust, VerificationReport, VerifyOptions, verify_bundle

REPO = Path(__file__).resolve().parents[2]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from example_bundles.make import (  # noqa: E402
    closed_loop_lab,
    evolutionary_search,
    make_all,
    unsupported_gain,
)
from example_bundles.make.common import demo_verifier_text  # noqa: E402
from example_bundles.make.zipped import zip_bytes  # noqa: E402

EXAMPLES = REPO / "example_bundles"
BUILDERS: dict[str, Callable[[Path | None], Path]] = {
    "unsupported-gain": unsupported_gain.build,
    "evolutionary-search": evolutionary_search.build,
    "closed-loop-lab": closed_loop_lab.build,
}
ZIP = EXAMPLES / "unsupported-gain.zip"
ALL_SIX = ("air-quality", "networkx-feature", "multi-agent-paper", "unsupported-gain",
           "evolutionary-search", "closed-loop-lab")
#: The one binding whose value is meant to disagree with its evidence.
DELIBERATE_MISMATCH = ("claim:gain-v1", "metrics.accuracy_gain_pp")


def _verify(path: Path) -> VerificationReport:
    return verify_bundle(path, VerifyOptions(trusted_keys=(demo_verifier_text(),)))


@pytest.fixture(scope="module")
def reports() -> dict[str, VerificationReport]:
    return {name: _verify(EXAMPLES / name) for name in BUILDERS}


def _by_id(report: VerificationReport) -> dict[str, EventBase]:
    return {e.id: e for e in report.bundle.events}


def _of(report: VerificationReport, kind: type[Any]) -> list[Any]:
    return [e for e in report.bundle.events if isinstance(e, kind)]


def _payload(report: VerificationReport, iid: str) -> tuple[bytes, str]:
    ev = _by_id(report)[iid]
    assert isinstance(ev, IndividualEvent) and ev.payload is not None, iid
    path = report.bundle.root / "payloads" / "sha256" / ev.payload.digest.removeprefix("sha256:")
    return path.read_bytes(), ev.payload.media_type


def _verdicts(report: VerificationReport) -> dict[str, str | None]:
    return {f.target: f.verdict for f in _of(report, FitnessEvent) if f.verdict}


# ------------------------------------------------------------ verification
@pytest.mark.parametrize("name", sorted(BUILDERS))
def test_verifies_pinned_without_any_diagnostic(
        name: str, reports: dict[str, VerificationReport]) -> None:
    report = reports[name]
    assert [d.as_dict() for d in report.diagnostics] == []
    assert report.valid and report.trust is Trust.PINNED
    assert report.signed_prefix == len(report.bundle.events) > 0


def test_cli_strict_with_the_pinned_key_exits_zero_for_all_four() -> None:
    for target in [*(EXAMPLES / n for n in sorted(BUILDERS)), ZIP]:
        proc = subprocess.run(
            [sys.executable, "-m", "bundler", "validate", str(target), "--strict",
             "--trust-key", str(EXAMPLES / "demo-key.pub"), "--format", "json"],
            capture_output=True, text=True, check=False, cwd=REPO)
        assert proc.returncode == 0, (target.name, proc.stdout, proc.stderr)
        out = json.loads(proc.stdout)
        assert "pinned" in json.dumps(out), target.name


@pytest.mark.parametrize("name", sorted(BUILDERS))
def test_bundle_stays_under_its_size_budget(name: str) -> None:
    size = sum(p.stat().st_size for p in (EXAMPLES / name).rglob("*") if p.is_file())
    assert size < (3_000_000 if name == "evolutionary-search" else 1_500_000)


# ------------------------------------------------------------ determinism
def _tree(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes()
            for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.mark.parametrize("name", sorted(BUILDERS))
def test_regenerating_reproduces_every_committed_file(name: str, tmp_path: Path) -> None:
    built = BUILDERS[name](tmp_path)
    assert built == tmp_path / name
    fresh, committed = _tree(built), _tree(EXAMPLES / name)
    assert sorted(fresh) == sorted(committed)
    assert [rel for rel in sorted(fresh) if fresh[rel] != committed[rel]] == []


def test_zip_is_reproducible_and_well_formed(tmp_path: Path) -> None:
    built = unsupported_gain.build(tmp_path)
    assert zip_bytes(built, "unsupported-gain") == ZIP.read_bytes()
    assert zip_bytes(EXAMPLES / "unsupported-gain", "unsupported-gain") == ZIP.read_bytes()
    with zipfile.ZipFile(ZIP) as zf:
        infos = zf.infolist()
        names = [i.filename for i in infos]
        assert names == sorted(names)
        assert names == ["unsupported-gain/" + rel for rel in _tree(EXAMPLES / "unsupported-gain")]
        for info in infos:
            assert info.date_time == (1980, 1, 1, 0, 0, 0)
            assert info.compress_type == zipfile.ZIP_DEFLATED
            assert info.external_attr >> 16 == 0o100644 and info.create_system == 3
            rel = info.filename.removeprefix("unsupported-gain/")
            assert zf.read(info) == (EXAMPLES / "unsupported-gain" / rel).read_bytes()


def test_zip_verifies_exactly_like_the_folder(reports: dict[str, VerificationReport]) -> None:
    folder, zipped = reports["unsupported-gain"], _verify(ZIP)
    assert zipped.diagnostics == [] and zipped.trust is Trust.PINNED
    assert zipped.bundle.leaf_hashes == folder.bundle.leaf_hashes
    assert zipped.bundle.events == folder.bundle.events
    assert zipped.bundle.payloads == folder.bundle.payloads
    assert [(c.size, c.root_hex) for c in zipped.bundle.checkpoints] == \
        [(c.size, c.root_hex) for c in folder.bundle.checkpoints]


def test_make_all_check_reports_a_changed_byte(tmp_path: Path) -> None:
    fresh, committed = tmp_path / "fresh", tmp_path / "committed"
    for base in (fresh, committed):
        (base / "b" / "payloads").mkdir(parents=True)
        (base / "b" / "events.jsonl").write_bytes(b"{}\n")
        (base / "b.zip").write_bytes(b"PK")
    assert make_all.differences(fresh, committed) == []
    (fresh / "b" / "payloads" / "new").write_bytes(b"x")
    (committed / "b" / "payloads" / "old").write_bytes(b"y")
    (committed / "b" / "events.jsonl").write_bytes(b"{ }\n")
    assert make_all.differences(fresh, committed) == [
        "differs: b/events.jsonl", "not committed: b/payloads/new",
        "no longer generated: b/payloads/old"]
    (committed / "b" / "events.jsonl").write_bytes(b"{}\n")
    (committed / "b.zip").write_bytes(b"PK!")
    assert make_all.differences(fresh, committed) == [
        "not committed: b/payloads/new", "no longer generated: b/payloads/old",
        "differs: b.zip"]


# ----------------------------------------------------------------- bindings
def _resolve(report: VerificationReport, evidence: str, field: str) -> Any:
    """An independent reading of the binding syntax (make_all.py docstring)."""
    ev = _by_id(report)[evidence]
    if not isinstance(ev, IndividualEvent) or ev.payload is None:
        node: Any = ev.model_dump(mode="json")
        for part in field.split("."):
            node = node[part]
        return node
    data, media = _payload(report, evidence)
    text = data.decode("utf-8")
    if media == "text/csv":
        rows = list(csv.DictReader(io.StringIO(text)))
        if field == "#rows":
            return len(rows)
        m = re.fullmatch(r"([^@]+)@([^=]+)=(.*)", field)
        assert m is not None, field
        hits = [r for r in rows if r[m.group(2)] == m.group(3)]
        assert len(hits) == 1, field
        return hits[0][m.group(1)]
    assert media == "application/json", media
    node = json.loads(text)
    for part in field.split("."):
        node = node[int(part)] if isinstance(node, list) else node[part]
    return node


def _same(value: Any, found: Any) -> bool:
    if isinstance(found, str) and isinstance(value, int | float) and not isinstance(value, bool):
        return float(found) == value
    return type(found) is type(value) and found == value


@pytest.mark.parametrize("name", sorted(BUILDERS))
def test_every_binding_but_the_deliberate_one_equals_its_evidence(
        name: str, reports: dict[str, VerificationReport]) -> None:
    report = reports[name]
    mismatches, checked = [], 0
    for claim in _of(report, ClaimEvent):
        for b in claim.bindings:
            found = _resolve(report, b.evidence, b.field)
            checked += 1
            if not _same(b.value, found):
                mismatches.append((claim.id, b.field, b.value, found))
    expected = {"unsupported-gain": [(*DELIBERATE_MISMATCH, 4.2, 1.5)]}.get(name, [])
    assert mismatches == expected
    assert checked >= {"unsupported-gain": 6, "evolutionary-search": 3, "closed-loop-lab": 6}[name]


# ---------------------------------------------------------- unsupported-gain
def test_unsupported_gain_contradicted_then_revised(
        reports: dict[str, VerificationReport]) -> None:
    report = reports["unsupported-gain"]
    events, verdicts = _by_id(report), _verdicts(report)
    old, new = events["claim:gain-v1"], events["claim:gain-v2"]
    assert isinstance(old, ClaimEvent) and isinstance(new, ClaimEvent)
    assert "4.2 percentage points" in old.text and not old.final
    assert [(b.field, b.value) for b in old.bindings] == [("metrics.accuracy_gain_pp", 4.2)]
    real = _resolve(report, "ind:experiment-log", "metrics.accuracy_gain_pp")
    assert real == 1.5 and f"{real} percentage points" in new.text
    extract = events[str(old.produced_by)]
    assert isinstance(extract, OperatorEvent) and extract.op == "extract"
    fit = next(f for f in _of(report, FitnessEvent) if f.target == old.id)
    assert (fit.verdict, fit.passed, fit.evaluator.name, fit.evaluator.version) == \
        ("contradicted", False, "claim-checker", "0.4.0")
    assert "expected metrics.accuracy_gain_pp = 4.2" in fit.note and "found 1.5" in fit.note
    revise = events[str(new.produced_by)]
    assert isinstance(revise, OperatorEvent) and revise.op == "revise" and old.id in revise.parents
    assert new.derived_from == [old.id] and new.final and verdicts[new.id] == "supported"
    assert verdicts["claim:significance-v1"] == "unsupported"
    assert events["claim:significance-v2"].claim_status == "retracted"  # type: ignore[attr-defined]
    d2 = events["ind:draft-v2"]
    assert isinstance(d2, IndividualEvent) and (d2.supersedes, d2.version) == ("ind:draft", 2)
    v1, _ = _payload(report, "ind:draft")
    v2, _ = _payload(report, "ind:draft-v2")
    assert b"4.2 percentage points" in v1 and b"1.5 percentage points" in v2
    patch, _ = _payload(report, "ind:draft-patch")
    assert b"-four-feature binary task. Naive Bayes improves accuracy by 4.2" in patch


def test_unsupported_gain_experiment_reruns_from_its_payload(
        reports: dict[str, VerificationReport]) -> None:
    report = reports["unsupported-gain"]
    code, _ = _payload(report, "ind:experiment-code")
    log = json.loads(_payload(report, "ind:experiment-log")[0])
    ns: dict[str, Any] = {}
    exec(compile(code, "experiment.py", "exec"), ns)  # the committed payload, not the generator
    cfg = log["config"]
    rows = ns["run"](cfg["seeds"], cfg["n_train"], cfg["n_test"])
    assert [[r["seed"], r["baseline"], r["new"]] for r in rows] == \
        [[r["seed"], r["baseline_accuracy"], r["new_accuracy"]] for r in log["per_seed"]]
    n = len(rows)
    gain = sum(r["new"] - r["baseline"] for r in rows) / n * 100
    assert round(gain, 1) == log["metrics"]["accuracy_gain_pp"]
    per_seed = [round((r["new"] - r["baseline"]) * 100, 1) for r in rows]
    assert max(per_seed) == 4.2 == log["metrics"]["max_seed_gain_pp"]


# ------------------------------------------------------- evolutionary-search
def test_evolutionary_search_population_lineage_and_archive(
        reports: dict[str, VerificationReport]) -> None:
    report = reports["evolutionary-search"]
    events = _by_id(report)
    cands = [e for e in _of(report, IndividualEvent)
             if e.kind == "program" and e.id.startswith("cand-")]
    assert len(cands) >= 200
    assert len({c.attributes["generation"] for c in cands}) >= 11  # generation 0 plus >= 10
    ops = Counter(events[str(c.produced_by)].op for c in cands)  # type: ignore[attr-defined]
    assert ops["mutate"] >= 50 and ops["crossover"] >= 50 and set(ops) == {
        "synthesize", "mutate", "crossover"}
    fitness = {f.target: f for f in _of(report, FitnessEvent) if f.metric == "rmse"
               and f.evaluator.name == "sr-bench"}
    assert set(fitness) == {c.id for c in cands}
    assert all(f.evaluator.version and f.score is not None and not f.higher_is_better
               for f in fitness.values())
    archive = _of(report, ArchiveEvent)
    assert {a.archive for a in archive} == {"elite"}
    removes = [a for a in archive if a.action == "remove"]
    assert removes and all(a.reason.startswith("displaced by cand-") for a in removes)
    members: set[str] = set()
    for a in archive:  # remove only what is there; never more than five members
        if a.action == "add":
            members.add(a.member)
        else:
            members.remove(a.member)
        assert len(members) <= 5
    assert len(report.bundle.checkpoints) >= 5


def test_evolutionary_search_collapses_onto_shared_payloads(
        reports: dict[str, VerificationReport]) -> None:
    report = reports["evolutionary-search"]
    cands = [e for e in _of(report, IndividualEvent) if e.id.startswith("cand-")]
    by_digest: dict[str, list[IndividualEvent]] = {}
    for c in cands:
        by_digest.setdefault(c.payload.digest, []).append(c)
    big = max(by_digest.values(), key=len)
    assert len(big) >= 10
    assert len({c.produced_by for c in big}) == len(big)  # separate derivations, same bytes
    late = [c for c in cands if c.attributes["generation"] >= 6]
    assert sum(c.attributes["repeat_of_earlier_payload"] for c in late) >= len(late) // 3
    fitness = {f.target: f.score for f in _of(report, FitnessEvent) if f.metric == "rmse"}
    assert len({fitness[c.id] for c in big}) == 1


def test_evolutionary_search_scores_rerun_from_payloads(
        reports: dict[str, VerificationReport]) -> None:
    report = reports["evolutionary-search"]
    bench, _ = _payload(report, "ind:benchmark")
    points, _ = _payload(report, "ind:train-points")
    xs = [float(r["x"]) for r in csv.DictReader(io.StringIO(points.decode()))]
    ns: dict[str, Any] = {}
    exec(compile(bench, "benchmark.py", "exec"), ns)
    fitness = {f.target: f.score for f in _of(report, FitnessEvent)
               if f.evaluator.name == "sr-bench"}
    for cid, score in fitness.items():
        src, _ = _payload(report, cid)
        assert ns["rmse"](src.decode(), xs) == score, cid


def test_evolutionary_search_final_claim_names_the_best_and_its_lineage(
        reports: dict[str, VerificationReport]) -> None:
    report = reports["evolutionary-search"]
    events = _by_id(report)
    fitness = {f.target: f.score for f in _of(report, FitnessEvent)
               if f.evaluator.name == "sr-bench"}
    best = min(fitness, key=lambda c: (fitness[c], c))
    (claim,) = _of(report, ClaimEvent)
    assert claim.final and f"`{best}`" in claim.text
    assert (claim.bindings[0].evidence, claim.bindings[0].field, claim.bindings[0].value) == \
        (f"fit:{best}", "score", fitness[best])
    assert _verdicts(report)[claim.id] == "supported"
    ancestors: set[str] = set()
    stack = [best]
    while stack:
        op = events[str(events[stack.pop()].produced_by)]  # type: ignore[attr-defined]
        for parent in op.parents:  # type: ignore[attr-defined]
            if parent not in ancestors:
                ancestors.add(parent)
                stack.append(parent)
    roots = sorted(a for a in ancestors if a.startswith("cand-g00-"))
    assert f"lineage has {len(ancestors)} ancestors" in claim.text
    assert f"({', '.join(roots)})" in claim.text
    assert math.isclose(fitness[best], 0.0, abs_tol=1e-3)


# ----------------------------------------------------------- closed-loop-lab
def _time(ev: EventBase) -> datetime:
    return datetime.fromisoformat(ev.time.replace("Z", "+00:00"))


def test_closed_loop_lab_redacted_recipe_is_gone_but_accounted_for(
        reports: dict[str, VerificationReport]) -> None:
    report = reports["closed-loop-lab"]
    recipe = _by_id(report)["ind:recipe"]
    assert isinstance(recipe, IndividualEvent) and recipe.payload is not None
    assert recipe.payload.salted
    status = report.bundle.payloads[recipe.payload.digest]
    assert status.state is PayloadState.REDACTED and status.path is None
    assert (status.reason, status.authority) == (
        "proprietary precursor recipe (supplier NDA)", "IP office, ticket IP-2041")
    states = Counter(s.state for s in report.bundle.payloads.values())
    assert states[PayloadState.REDACTED] == 1 and PayloadState.MISSING not in states
    (red,) = _of(report, RedactionEvent)
    assert red.target == recipe.payload.digest and red.stream == "stream:ip-office"
    secret = closed_loop_lab.recipe_bytes()
    assert len(secret) == recipe.payload.size
    for rel, data in _tree(EXAMPLES / "closed-loop-lab").items():
        assert secret not in data, rel
        assert b"TIP-23-0871" not in data and b"NBE-22-114" not in data, rel
        assert closed_loop_lab.RECIPE_SALT not in data, rel
        assert not rel.endswith(".salt"), rel


def test_closed_loop_lab_steering_delays_and_archive(
        reports: dict[str, VerificationReport]) -> None:
    report = reports["closed-loop-lab"]
    events = _by_id(report)
    steering = _of(report, SteeringEvent)
    assert [s.command for s in steering] == ["pause", "force_plan"]
    assert {events[s.stream].kind for s in steering} == {"human"}  # type: ignore[attr-defined]
    applied = {o.steering: o for o in _of(report, OperatorEvent) if o.steering}
    assert set(applied) == {s.id for s in steering}
    replan = applied["steer:force-plan"]
    assert replan.op == "plan_update" and steering[1].text
    plan2 = next(e for e in _of(report, IndividualEvent) if e.produced_by == replan.id)
    assert (plan2.kind, plan2.supersedes, plan2.version) == ("plan", "ind:plan-v1", 2)
    # evidence arrives long after the plan it answers
    for batch, plan in ((1, "ind:plan-v1"), (2, "ind:plan-v2")):
        xrd = [e for e in _of(report, IndividualEvent)
               if e.produced_by == f"op:xrd-b{batch}" and e.kind == "measurement"]
        assert len(xrd) == 4
        assert all((_time(x) - _time(events[plan])).days >= 3 for x in xrd)
    archive = _of(report, ArchiveEvent)
    assert {a.archive for a in archive} == {"accepted-samples"}
    cut = steering[0].seq
    assert any(a.seq < cut for a in archive) and any(a.seq > steering[1].seq for a in archive)
    assert [a.member for a in archive if a.action == "remove"] == ["ind:S-04"]


def test_closed_loop_lab_novelty_claim_and_human_review(
        reports: dict[str, VerificationReport]) -> None:
    report = reports["closed-loop-lab"]
    events, verdicts = _by_id(report), _verdicts(report)
    novel = events["claim:novel-S-07"]
    assert isinstance(novel, ClaimEvent) and novel.final
    kinds = [events[b.evidence].kind for b in novel.bindings]  # type: ignore[attr-defined]
    assert kinds == ["sample", "measurement", "acceptance_criteria"]
    assert verdicts[novel.id] == "supported"
    analysis = json.loads(_payload(report, "ind:analysis-b2")[0])["samples"]
    threshold = _resolve(report, "ind:acceptance", "novelty.max_explained_fraction")
    assert analysis["S-07"]["explained_fraction"] < threshold
    peak = novel.bindings[1].field.removeprefix("intensity@two_theta=")
    assert peak == f"{analysis['S-07']['unexplained_peaks'][0][0]:.2f}"
    assert verdicts["claim:novel-S-06"] == "needs_human_review"
    fit = next(f for f in _of(report, FitnessEvent) if f.target == "claim:novel-S-06")
    assert fit.review and abs(fit.score - threshold) <= 0.05
    # the LEDGER layers are present and the inferred edge says how sure it is
    types = Counter(e.type for e in report.bundle.events)
    assert types["trace_record"] >= 8 and types["evidence_node"] >= 8
    assert types["workflow_node"] >= 6 and types["edge"] >= 8
    inferred = [e for e in _of(report, EdgeEvent) if e.provenance == "inferred"]
    assert inferred and all(e.inferred_by and e.confidence is not None for e in inferred)
    transcript, _ = _payload(report, "ind:transcript")
    raws = [r.raw.encode() + b"\n" for r in _of(report, TraceRecordEvent)]
    assert b"".join(raws) == transcript


# --------------------------------------------------------------- whole set
def test_the_six_examples_cover_every_event_type_and_verdict() -> None:
    missing = [n for n in ALL_SIX if not (EXAMPLES / n / "events.jsonl").is_file()]
    assert missing == []
    types: set[str] = set()
    verdicts: set[str] = set()
    for name in ALL_SIX:
        for line in (EXAMPLES / name / "events.jsonl").read_text(encoding="utf-8").splitlines():
            obj = json.loads(line)
            types.add(obj["type"])
            if obj["type"] == "fitness" and "verdict" in obj:
                verdicts.add(obj["verdict"])
    assert types == set(EVENT_MODELS)
    assert verdicts == set(VERDICTS)
