"""The profile's invariants (Appendix A) and the reference rules, one log each.

The writer rightly refuses most of these logs, so they are written from raw
event dicts by ``write_chained_bundle``: canonical lines, a correct
seq/prev chain and signed checkpoints.  The only diagnostics left are the
invariant violations under test (the key is pinned, so no RB307 either).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from fixtures.builders import (
    BASE_EVENTS,
    codes,
    ev,
    make_signer,
    payload_ref,
    sha256_digest,
    verify,
    where,
    write_chained_bundle,
)

from bundler.diagnostics import Severity
from bundler.verify import VerificationReport

DATA = b"measured: 0.93\n"
BINDING = {"evidence": "data-1", "field": "value", "value": 0.93}
KEY = make_signer().verifier().to_text()


def run(tmp_path: Path, *events: dict[str, Any], payloads: bool = True) -> VerificationReport:
    """Base events, one individual with a payload, then ``events``; verified, key pinned."""
    data_event = ev("individual", "data-1", kind="measurement", name="reading",
                    payload=payload_ref(DATA))
    write_chained_bundle(tmp_path / "b", [*BASE_EVENTS, data_event, *events],
                         checkpoint_every=3, payloads=[(DATA, "text/plain")] if payloads else ())
    return verify(tmp_path / "b", pin=KEY)


def claim(id_: str, **fields: Any) -> dict[str, Any]:
    return ev("claim", id_, name=id_, text="A claim.", **fields)


def test_baseline_raw_bundle_is_clean(tmp_path: Path) -> None:
    report = run(tmp_path, claim("c-1", evidence=["data-1"], bindings=[BINDING], final=True))
    assert report.diagnostics == []
    assert [c.size for c in report.bundle.checkpoints] == [3, 4]


def test_unresolved_reference(tmp_path: Path) -> None:
    report = run(tmp_path, claim("c-1", evidence=["data-1", "ghost"], bindings=[BINDING]))
    assert codes(report) == {"RB501"}
    [d] = report.diagnostics
    assert "evidence -> 'ghost'" in d.message
    assert (d.location.line, d.location.seq) == (4, 3)


def test_reference_to_a_later_event(tmp_path: Path) -> None:
    report = run(tmp_path,
                 ev("operator", "op-1", op="refine", parents=["data-2"]),
                 ev("individual", "data-2", kind="measurement", name="later"))
    assert codes(report) == {"RB501"}
    assert where(report, "RB501") == [("events.jsonl", 4, 3)]


def test_reference_to_the_wrong_kind_of_target(tmp_path: Path) -> None:
    report = run(tmp_path, ev("individual", "d-2", kind="table", name="t",
                              produced_by="agent-1"))  # a stream, not an operator
    assert codes(report) == {"RB506"}
    assert "is a stream, expected operator" in report.diagnostics[0].message


def test_derivation_cycle(tmp_path: Path) -> None:
    # claim-a names claim-b before claim-b exists (RB501); claim-b names claim-a: a cycle.
    report = run(tmp_path,
                 claim("claim-a", derived_from=["claim-b"]),
                 claim("claim-b", derived_from=["claim-a"]))
    assert codes(report) == {"RB501", "RB502"}
    [cycle] = [d for d in report.diagnostics if d.code == "RB502"]
    assert cycle.message == "derivation cycle: claim-a -> claim-b -> claim-a"


def test_self_derivation_is_a_cycle(tmp_path: Path) -> None:
    report = run(tmp_path, claim("claim-a", derived_from=["claim-a"]))
    assert codes(report) == {"RB501", "RB502"}


def test_supersedes_must_increase_the_version(tmp_path: Path) -> None:
    report = run(tmp_path, ev("individual", "data-1b", kind="measurement", name="again",
                              version=1, supersedes="data-1"))
    assert codes(report) == {"RB502"}


def test_final_claim_without_support_is_a_warning(tmp_path: Path) -> None:
    report = run(tmp_path, claim("c-1", evidence=["data-1"], final=True))
    assert codes(report) == {"RB503"}
    assert report.diagnostics[0].severity is Severity.WARNING
    assert report.valid and not report.ok(strict=True)


@pytest.mark.parametrize("support", ["unsupported_status", "failed_fitness", "binding"])
def test_final_claim_support_alternatives(tmp_path: Path, support: str) -> None:
    extra: list[dict[str, Any]] = []
    fields: dict[str, Any] = {"evidence": ["data-1"], "final": True}
    if support == "unsupported_status":
        fields["claim_status"] = "unsupported"
    elif support == "binding":
        fields["bindings"] = [BINDING]
    else:
        extra.append(ev("fitness", "fit-1", target="c-1", passed=False,
                        evaluator={"name": "checker", "version": "2.0"}))
    report = run(tmp_path, claim("c-1", **fields), *extra)
    assert report.diagnostics == []


def test_fitness_without_evaluator_version(tmp_path: Path) -> None:
    report = run(tmp_path, ev("fitness", "fit-1", target="data-1", score=0.5,
                              evaluator={"name": "checker"}))
    assert codes(report) == {"RB504"}
    assert "evaluator.version" in report.diagnostics[0].message


def test_fitness_without_target(tmp_path: Path) -> None:
    report = run(tmp_path, ev("fitness", "fit-1", score=0.5,
                              evaluator={"name": "checker", "version": "1"}))
    assert codes(report) == {"RB504"}


def test_redaction_of_an_uncommitted_digest(tmp_path: Path) -> None:
    report = run(tmp_path, ev("redaction", "red-1", target=sha256_digest(b"never committed"),
                              reason="privacy", authority="dpo"))
    assert codes(report) == {"RB505"}


@pytest.mark.parametrize("missing", ["confidence", "inferred_by"])
def test_inferred_edge_without_tracer_or_confidence(tmp_path: Path, missing: str) -> None:
    edge = {"relation": "supports", "source": "data-1", "target": "c-1",
            "provenance": "inferred", "inferred_by": "tracer-1.0", "confidence": 0.7}
    del edge[missing]
    report = run(tmp_path, claim("c-1", evidence=["data-1"], bindings=[BINDING]),
                 ev("edge", "e-1", **edge))
    assert codes(report) == {"RB507"}


def test_recorded_edge_needs_no_confidence(tmp_path: Path) -> None:
    report = run(tmp_path, claim("c-1", evidence=["data-1"], bindings=[BINDING]),
                 ev("edge", "e-1", relation="supports", source="data-1", target="c-1"))
    assert report.diagnostics == []


def test_external_import_reference_is_info(tmp_path: Path) -> None:
    ext = "ext:doi:10.1000/xyz123"
    report = run(tmp_path, claim("c-1", evidence=["data-1", ext],
                                 bindings=[BINDING, dict(BINDING, evidence=ext)]))
    assert codes(report) == {"RB508"}
    assert {d.severity for d in report.diagnostics} == {Severity.INFO}
    assert report.valid and report.ok(strict=True)


def test_undeclared_stream(tmp_path: Path) -> None:
    report = run(tmp_path, dict(ev("individual", "d-2", kind="table", name="t"),
                                stream="ghost-stream"))
    assert codes(report) == {"RB509"}
    assert "stream -> 'ghost-stream'" in report.diagnostics[0].message


def test_run_event_must_name_itself(tmp_path: Path) -> None:
    report = run(tmp_path, ev("run", "run-2", run="run-1", title="nested"))
    assert codes(report) == {"RB509"}


def test_binding_outside_the_evidence_list(tmp_path: Path) -> None:
    report = run(tmp_path, claim("c-1", bindings=[BINDING]))
    assert codes(report) == {"RB510"}
    assert report.diagnostics[0].severity is Severity.WARNING


def test_duplicate_object_id(tmp_path: Path) -> None:
    report = run(tmp_path, ev("individual", "data-1", kind="measurement", name="again"))
    assert codes(report) == {"RB202"}


def test_unknown_field_is_a_schema_error(tmp_path: Path) -> None:
    report = run(tmp_path, claim("c-1", evidence=["data-1"], bindings=[BINDING],
                                 confidence_level="very"))
    assert codes(report) == {"RB201"}
    assert "confidence_level" in report.diagnostics[0].message
