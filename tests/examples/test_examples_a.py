"""The committed example bundles air-quality, networkx-feature and multi-agent-paper.

What is checked, and why:

* each verifies with the pinned demo key and shows exactly the diagnostics
  it is meant to show (none, or the single deliberate RB503);
* regenerating it reproduces every committed file byte for byte, so the
  committed folders cannot drift from their generators;
* every claim binding equals the value read from its payload by a parser
  written here, independently of the generators' own resolver;
* the story each example tells is really in the log (failure then patch
  then successful rerun; contradicted then revised; retracted; steering).
"""

from __future__ import annotations

import csv
import io
import json
import math
import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from bundler.diagnostics import Severity
from bundler.model.events import (
    ArchiveEvent,
    ClaimEvent,
    EdgeEvent,
    EventBase,
    FitnessEvent,
    IndividualEvent,
    OperatorEvent,
    SteeringEvent,
    TraceRecordEvent,
)
from bundler.verify import Trust, VerificationReport, VerifyOptions, verify_bundle

REPO = Path(__file__).resolve().parents[2]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from example_bundles.make import air_quality, multi_agent_paper, networkx_feature  # noqa: E402
from example_bundles.make.common import demo_verifier_text  # noqa: E402

EXAMPLES = REPO / "example_bundles"
BUILDERS: dict[str, Callable[[Path | None], Path]] = {
    "air-quality": air_quality.build,
    "networkx-feature": networkx_feature.build,
    "multi-agent-paper": multi_agent_paper.build,
}
EXPECTED_CODES = {"air-quality": set(), "networkx-feature": set(),
                  "multi-agent-paper": {"RB503"}}


@pytest.fixture(scope="module")
def reports() -> dict[str, VerificationReport]:
    opts = VerifyOptions(trusted_keys=(demo_verifier_text(),))
    return {name: verify_bundle(EXAMPLES / name, opts) for name in BUILDERS}


def _events(report: VerificationReport) -> list[EventBase]:
    return report.bundle.events


def _by_id(report: VerificationReport) -> dict[str, EventBase]:
    return {e.id: e for e in _events(report)}


def _payload(report: VerificationReport, iid: str) -> tuple[bytes, str]:
    ev = _by_id(report)[iid]
    assert isinstance(ev, IndividualEvent) and ev.payload is not None, iid
    path = report.bundle.root / "payloads" / "sha256" / ev.payload.digest.removeprefix("sha256:")
    return path.read_bytes(), ev.payload.media_type.split(";")[0]


def _of(report: VerificationReport, kind: type[Any]) -> list[Any]:
    return [e for e in _events(report) if isinstance(e, kind)]


# ------------------------------------------------------------ verification
@pytest.mark.parametrize("name", sorted(BUILDERS))
def test_verifies_pinned_with_exactly_the_intended_diagnostics(
        name: str, reports: dict[str, VerificationReport]) -> None:
    report = reports[name]
    assert report.valid
    assert report.trust is Trust.PINNED
    assert {d.code for d in report.diagnostics} == EXPECTED_CODES[name]
    assert report.signed_prefix == len(report.bundle.events)


def test_multi_agent_paper_has_exactly_one_rb503_on_the_unverified_conclusion(
        reports: dict[str, VerificationReport]) -> None:
    report = reports["multi-agent-paper"]
    diags = report.diagnostics
    assert [(d.code, d.severity) for d in diags] == [("RB503", Severity.WARNING)]
    assert "'claim:general'" in diags[0].message
    assert report.ok(strict=False) and not report.ok(strict=True)


def test_air_quality_has_at_least_three_checkpoints(
        reports: dict[str, VerificationReport]) -> None:
    assert len(reports["air-quality"].bundle.checkpoints) >= 3


@pytest.mark.parametrize("name", sorted(BUILDERS))
def test_bundle_stays_under_the_size_budget(name: str) -> None:
    size = sum(p.stat().st_size for p in (EXAMPLES / name).rglob("*") if p.is_file())
    assert size < 1_500_000


# ------------------------------------------------------------ determinism
def _tree(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes()
            for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.mark.parametrize("name", sorted(BUILDERS))
def test_regenerating_reproduces_the_committed_files_byte_for_byte(
        name: str, tmp_path: Path) -> None:
    built = BUILDERS[name](tmp_path)
    assert built == tmp_path / name
    fresh, committed = _tree(built), _tree(EXAMPLES / name)
    assert sorted(fresh) == sorted(committed)
    differing = [rel for rel in sorted(fresh) if fresh[rel] != committed[rel]]
    assert differing == []


# ----------------------------------------------------------------- bindings
def _resolve(data: bytes, media: str, field: str) -> Any:
    """An independent reading of the binding field syntax (air_quality.py docstring)."""
    text = data.decode("utf-8")
    if field.startswith("re:"):
        m = re.search(field[3:], text, re.MULTILINE)
        assert m is not None, field
        return m.group(1) if m.re.groups else m.group(0)
    if media == "text/csv":
        table = list(csv.DictReader(io.StringIO(text)))
        if field == "#rows":
            return len(table)
        m = re.fullmatch(r"([^@]+)@([^=]+)=(.*)", field)
        assert m is not None, field
        hits = [r for r in table if r[m.group(2)] == m.group(3)]
        assert len(hits) == 1, field
        return hits[0][m.group(1)]
    assert media == "application/json", media
    node: Any = json.loads(text)
    for part in field.split("."):
        node = node[int(part)] if isinstance(node, list) else node[part]
    return node


def _same(value: Any, found: Any) -> bool:
    if isinstance(found, str) and isinstance(value, int | float) and not isinstance(value, bool):
        return float(found) == value
    return type(found) is type(value) and found == value


@pytest.mark.parametrize("name", sorted(BUILDERS))
def test_every_binding_equals_its_payload_value(
        name: str, reports: dict[str, VerificationReport]) -> None:
    report = reports[name]
    checked = 0
    for claim in _of(report, ClaimEvent):
        for b in claim.bindings:
            data, media = _payload(report, b.evidence)
            found = _resolve(data, media, b.field)
            assert _same(b.value, found), (claim.id, b.field, b.value, found)
            checked += 1
    assert checked >= {"air-quality": 20, "networkx-feature": 10, "multi-agent-paper": 10}[name]


def test_air_quality_claims_match_a_recomputation_from_the_raw_csv(
        reports: dict[str, VerificationReport]) -> None:
    report = reports["air-quality"]
    raw, _ = _payload(report, "ds:raw")
    lines = raw.decode().splitlines()
    header = lines[0].split(";")
    rows = [ln.split(";") for ln in lines[1:] if ln.strip(";")]
    hourly: dict[str, dict[int, list[float]]] = {}
    for name in ("CO", "NOx", "NO2", "C6H6"):
        col = header.index(f"{name}(GT)")
        hourly[name] = {}
        for r in rows:
            v = float(r[col].replace(",", "."))
            if v != -200:
                hourly[name].setdefault(int(r[1][:2]), []).append(v)
    claims = {c.id: c for c in _of(report, ClaimEvent)}
    bound = {(c.id, b.field): b.value for c in claims.values() for b in c.bindings}
    assert bound[("claim:row-count", "#rows")] == len(rows)
    assert bound[("claim:row-count", "skipped_blank_rows")] == len(lines) - 1 - len(rows)
    d, m, y = rows[0][0].split("/")
    assert bound[("claim:date-range", "date_range.first")] == f"{y}-{m}-{d}T{rows[0][1][:5]}" \
        .replace(".", ":")
    co_missing = sum(1 for r in rows if r[header.index("CO(GT)")] == "-200")
    assert bound[("claim:missing-co", "missing.CO")] == co_missing
    for name, by_hour in hourly.items():
        means = {h: sum(v) / len(v) for h, v in by_hour.items()}
        peak = max(sorted(means), key=lambda h: round(means[h], 3))
        assert bound[(f"claim:peak-{name}", f"peak_hour@pollutant={name}")] == peak
        assert bound[(f"claim:peak-{name}", f"{name}_mean@hour={peak}")] == \
            round(means[peak], 3)
        assert claims[f"claim:peak-{name}"].final


@pytest.mark.parametrize("name", ["air-quality", "networkx-feature"])
def test_every_final_claim_of_the_case_studies_is_bound_and_judged(
        name: str, reports: dict[str, VerificationReport]) -> None:
    report = reports[name]
    verdicts = {f.target: f.verdict for f in _of(report, FitnessEvent)}
    for claim in _of(report, ClaimEvent):
        if claim.final and claim.bindings:
            assert verdicts[claim.id] == "supported", claim.id
        elif claim.final:
            assert verdicts[claim.id] == "needs_human_review", claim.id


# ----------------------------------------------------------------- stories
def test_air_quality_failure_patch_rerun(reports: dict[str, VerificationReport]) -> None:
    report = reports["air-quality"]
    events = _events(report)
    seq = {e.id: e.seq for e in events}
    ops = _of(report, OperatorEvent)
    failed = [o for o in ops if o.outcome == "failure"]
    assert [o.op for o in failed] == ["execute"]
    fail = failed[0]
    out = next(e for e in _of(report, IndividualEvent) if e.produced_by == fail.id)
    assert out.kind == "command_output"
    text, _ = _payload(report, out.id)
    assert b"ModuleNotFoundError: No module named 'seaborn'" in text
    assert b"[exit status 1]" in text
    patches = [e for e in _of(report, IndividualEvent) if e.kind == "patch"]
    assert len(patches) == 1
    patch_op = next(o for o in ops if o.id == patches[0].produced_by)
    assert out.id in patch_op.parents and seq[patch_op.id] > seq[fail.id]
    diff, _ = _payload(report, patches[0].id)
    assert b"-import seaborn as sns" in diff
    fixed = next(e for e in _of(report, IndividualEvent)
                 if e.produced_by == patch_op.id and e.kind == "program")
    assert fixed.supersedes in fail.parents and fixed.version == 2
    rerun = [o for o in ops if o.op == "execute" and fixed.id in o.parents]
    assert len(rerun) == 1 and rerun[0].outcome == "success"
    assert seq[rerun[0].id] > seq[patch_op.id]
    made = {e.name for e in _of(report, IndividualEvent) if e.produced_by == rerun[0].id}
    assert {"out/cleaned.csv", "out/hourly_means.csv", "out/hourly_profile.svg",
            "out/report.md"} <= made


def test_air_quality_keeps_unparseable_and_unknown_transcript_rows(
        reports: dict[str, VerificationReport]) -> None:
    records = _of(reports["air-quality"], TraceRecordEvent)
    odd = {r.record_kind: r for r in records if r.record_kind in ("parse_error",
                                                                   "unrecognized")}
    assert set(odd) == {"parse_error", "unrecognized"}
    with pytest.raises(json.JSONDecodeError):
        json.loads(odd["parse_error"].raw)
    assert json.loads(odd["unrecognized"].raw)["type"] == "progress"
    # every other row is a well-formed transcript line
    for r in records:
        if r.record_kind not in odd:
            json.loads(r.raw)


def test_air_quality_uses_every_ledger_edge_relation(
        reports: dict[str, VerificationReport]) -> None:
    edges = _of(reports["air-quality"], EdgeEvent)
    assert {e.relation for e in edges} == {"uses", "produces", "checked_by", "supports",
                                           "informs", "frames"}
    assert any(e.provenance == "inferred" for e in edges)


def test_networkx_probe_contradicts_then_guard_and_tests_pass(
        reports: dict[str, VerificationReport]) -> None:
    report = reports["networkx-feature"]
    claims = {c.id: c for c in _of(report, ClaimEvent)}
    verdicts = {f.target: f.verdict for f in _of(report, FitnessEvent)}
    assert verdicts["claim:missing-nodes@1"] == "contradicted"
    assert claims["claim:missing-nodes@2"].derived_from == ["claim:missing-nodes@1"]
    assert verdicts["claim:missing-nodes@2"] == "supported"
    probe, _ = _payload(report, "out:probe")
    assert b"shortest_path_through(G, 0, 3, [9]) -> NodeNotFound: Target 9 is not in G" in probe
    guard, _ = _payload(report, "patch:guard")
    assert b'+            raise NodeNotFound(f"{role} {node} is not in G")' in guard
    pytest_out, _ = _payload(report, "out:pytest")
    summary = re.search(rb"=+ (\d+) passed in N\.NNs =+\n", pytest_out)
    assert summary is not None and b"FAILED" not in pytest_out
    new_tests = len(re.findall(rb"::test_through_\w+ PASSED", pytest_out))
    assert new_tests == 9 and int(summary.group(1)) == 13
    # every patch is checked by the test run
    checked = {e.source for e in _of(report, EdgeEvent) if e.relation == "checked_by"}
    assert {"en:patch-impl", "en:patch-guard", "en:patch-tests"} <= checked


def test_multi_agent_paper_claim_fates(reports: dict[str, VerificationReport]) -> None:
    report = reports["multi-agent-paper"]
    claims = {c.id: c for c in _of(report, ClaimEvent)}
    verdicts = {f.target: f.verdict for f in _of(report, FitnessEvent)}
    # inherited through three drafts
    assert claims["claim:estimate@3"].derived_from == ["claim:estimate@2"]
    assert claims["claim:estimate@2"].derived_from == ["claim:estimate@1"]
    assert claims["claim:estimate@1"].text == claims["claim:estimate@3"].text
    # revised: old stays, new derives from it
    assert verdicts["claim:rate@1"] == "contradicted"
    assert claims["claim:rate@2"].derived_from == ["claim:rate@1"]
    assert claims["claim:rate@1"].text != claims["claim:rate@2"].text
    # rejected: unsupported, removed from the archive, retracted
    assert verdicts["claim:bias@1"] == "unsupported"
    removed = [a for a in _of(report, ArchiveEvent) if a.action == "remove"]
    assert [(a.archive, a.member) for a in removed] == [("report-claims", "claim:bias@1")]
    assert claims["claim:bias@2"].claim_status == "retracted"
    # supported only by an inferred edge, and flagged for a human
    quad = claims["claim:quadruple"]
    assert quad.final and not quad.bindings
    support = [e for e in _of(report, EdgeEvent)
               if e.relation == "supports" and e.target == "en:claim:quadruple"]
    assert [(e.provenance, e.inferred_by is not None, e.confidence) for e in support] == \
        [("inferred", True, 0.7)]
    assert verdicts["claim:quadruple"] == "needs_human_review"
    # final and never verified: the RB503
    general = claims["claim:general"]
    assert general.final and not general.bindings and "claim:general" not in verdicts
    # the numbers: the fit slope is near -1/2, as the revised claim says
    fit, _ = _payload(report, "data:fit")
    assert math.isclose(json.loads(fit)["slope"], -0.5, abs_tol=0.05)


def test_multi_agent_paper_streams_and_steering(reports: dict[str, VerificationReport]) -> None:
    report = reports["multi-agent-paper"]
    streams = {e.id: e for e in _events(report) if e.type == "stream"}
    assert {"pi", "coder", "runner", "critic", "supervisor"} <= set(streams)
    steering = _of(report, SteeringEvent)
    assert {s.stream for s in steering} == {"supervisor"}
    applied = {o.steering: o.stream for o in _of(report, OperatorEvent) if o.steering}
    assert applied == {s.id: "pi" for s in steering}
    # hub and spoke: every bus message has the PI at one end, except the runner's sandbox call
    for record in _of(report, TraceRecordEvent):
        msg = json.loads(record.raw)
        assert record.stream == msg["from"]
        assert "pi" in (msg["from"], msg["to"]) or msg["to"] == "sandbox"
    drafts = [e for e in _of(report, IndividualEvent) if e.kind == "draft"]
    assert [(d.version, d.supersedes) for d in drafts] == \
        [(1, None), (2, "draft:report@1"), (3, "draft:report@2")]
