"""Edge cases of the claim queries, each isolated in a hand-built bundle."""

from __future__ import annotations

from typing import Any

import pytest

from bundler.errors import UsageError
from bundler.query import QueryResult, run_query

from .conftest import Mini


def _col(result: QueryResult, *cols: str) -> list[tuple[Any, ...]]:
    return [tuple(r.values[c] for c in cols) for r in result.rows]


# ---------------------------------------------------------------- missing-evidence
def test_redacted_missing_corrupt_leaked_and_absent_evidence_are_told_apart(
        mini: Mini) -> None:
    red = mini.ind("ind:private", "secret rows")
    gone = mini.ind("ind:gone", "bytes that will vanish")
    bad = mini.ind("ind:bad", "bytes that will change")
    leak = mini.ind("ind:leak", "redacted but shipped")
    ok = mini.ind("ind:fine", "still here")
    mini.claim("claim:a", evidence=[red.id, gone.id, "nope:404", "ext:doi/10.1/x", ok.id],
               final=True)
    mini.claim("claim:b", bindings=[{"evidence": bad.id, "field": "x", "value": 1},
                                    {"evidence": leak.id, "field": "y", "value": 2}])
    mini.w.redact(red.payload.digest, reason="personal data", authority="DPO ticket 7",
                  run="run", stream="human")
    mini.w.redact(leak.payload.digest, reason="oops", authority="security", run="run",
                  stream="human")
    mini.finish()
    mini.payload_file(gone.payload.digest).unlink()
    mini.payload_file(bad.payload.digest).write_bytes(b"tampered")
    mini.payload_file(leak.payload.digest).write_bytes(b"redacted but shipped")
    report, idx = mini.report_and_index()
    assert not report.valid      # the bundle is invalid, and the query still answers
    res = run_query(idx, "missing-evidence")
    assert _col(res, "claim", "final", "evidence", "problem") == [
        ("claim:a", True, "ind:private", "redacted"),
        ("claim:a", True, "ind:gone", "missing"),
        ("claim:a", True, "nope:404", "no-such-event"),
        ("claim:b", False, "ind:bad", "corrupt"),
        ("claim:b", False, "ind:leak", "leaked")]
    assert res.rows[0].values["detail"] == "redacted: personal data (authority: DPO ticket 7)"
    assert "authority" not in res.rows[1].values["detail"]
    redaction_seq = idx.redactions[red.payload.digest].seq
    assert redaction_seq in res.rows[0].seqs


# ------------------------------------------------------------------ value-mismatch
def _mismatch(mini: Mini, bindings: list[dict[str, Any]], **kw: Any) -> list[tuple[Any, ...]]:
    mini.claim("claim:x", bindings=bindings, final=True, **kw)
    return _col(run_query(mini.index(), "value-mismatch"), "field", "recorded", "found",
                "status")


def test_json_list_index_binding(mini: Mini) -> None:
    mini.json("ind:log", {"runs": [{"score": 0.5}, {"score": 0.75}], "ok": True})
    assert _mismatch(mini, [
        {"evidence": "ind:log", "field": "runs.1.score", "value": 0.75},
        {"evidence": "ind:log", "field": "runs.0.score", "value": 0.75},
        {"evidence": "ind:log", "field": "runs.5.score", "value": 0.75},
        {"evidence": "ind:log", "field": "runs.first.score", "value": 0.75},
        {"evidence": "ind:log", "field": "ok", "value": True},
    ]) == [("runs.0.score", 0.75, 0.5, "mismatch"),
           ("runs.5.score", 0.75, None, "not-found"),
           ("runs.first.score", 0.75, None, "not-found")]


def test_a_json_path_through_a_repeated_key_is_not_resolved(mini: Mini) -> None:
    """Python and jq read the last "score", other readers the first: the binding's value
    is whichever a tool picked, so it is not recomputed as either."""
    mini.ind("ind:log", '{"score": 0.9, "run": {"n": 1, "n": 2}, "score": 0.1, "ok": 3}',
             "application/json")
    rows = _mismatch(mini, [
        {"evidence": "ind:log", "field": "score", "value": 0.1},
        {"evidence": "ind:log", "field": "run.n", "value": 2},
        {"evidence": "ind:log", "field": "ok", "value": 3},
    ])
    assert rows == [("score", 0.1, None, "not-found"), ("run.n", 2, None, "not-found")]
    why = [r.why for r in run_query(mini.index(), "value-mismatch").rows]
    assert "'score': key 'score' appears 2 times in one object" in why[0], why


def test_value_mismatch_counts_the_bindings_it_checked(mini: Mini) -> None:
    """An empty answer over claims that bind nothing checked nothing, and says so."""
    mini.ind("ind:t", "k,v\na,1\n", "text/csv")
    mini.claim("claim:bare", final=True)
    mini.claim("claim:x", bindings=[{"evidence": "ind:t", "field": "v@k=a", "value": 1}])
    mini.claim("claim:y", bindings=[{"evidence": "ind:t", "field": "v@k=a", "value": 1},
                                    {"evidence": "ind:t", "field": "#rows", "value": 1}])
    res = run_query(mini.index(), "value-mismatch")
    assert (res.rows, res.scope, res.checked) == ((), "Checked 3 bindings of 2 claims.", 3)


def test_value_mismatch_with_no_binding_checked_nothing(mini: Mini) -> None:
    mini.claim("claim:bare", final=True)
    res = run_query(mini.index(), "value-mismatch")
    assert (res.rows, res.checked) == ((), 0)
    assert res.scope == "No claim binds a value to its evidence, so nothing was checked."


def test_numbers_compare_at_the_recorded_precision(mini: Mini) -> None:
    mini.ind("ind:t", "hour,CO,NO\n8,1.2999999,2.355\n9,1.3,4\n", "text/csv")
    assert _mismatch(mini, [
        {"evidence": "ind:t", "field": "CO@hour=8", "value": 1.3},       # rounds to 1.3
        {"evidence": "ind:t", "field": "CO@hour=8", "value": 4.2},       # 4.2 vs 1.3
        {"evidence": "ind:t", "field": "NO@hour=8", "value": 2.34},      # 2.34 vs 2.355
        {"evidence": "ind:t", "field": "NO@hour=8", "value": 2.34, "comparison": "approx"},
        {"evidence": "ind:t", "field": "NO@hour=9", "value": 4},
        {"evidence": "ind:t", "field": "#rows", "value": 2},
    ]) == [("CO@hour=8", 4.2, "1.2999999", "mismatch"),
           ("NO@hour=8", 2.34, "2.355", "mismatch")]


def test_csv_syntax_errors_and_free_text(mini: Mini) -> None:
    mini.ind("ind:t", "k,v\na,1\nb,2\nb,3\n", "text/csv; charset=utf-8")
    mini.ind("ind:tsv", "k\tv\na\t7\n", "text/tab-separated-values")
    mini.ind("ind:png", b"\x89PNG\r\n\x1a\n", "image/png")
    rows = _mismatch(mini, [
        {"evidence": "ind:t", "field": "v@k=zzz", "value": 1},
        {"evidence": "ind:t", "field": "v@k=b", "value": 2},
        {"evidence": "ind:t", "field": "w@k=a", "value": 1},
        {"evidence": "ind:t", "field": "the second row", "value": 1},
        {"evidence": "ind:tsv", "field": "v@k=a", "value": 7},
        {"evidence": "ind:png", "field": "panel b", "value": 1},
    ])
    assert rows == [("v@k=zzz", 1, None, "not-found"), ("v@k=b", 2, None, "not-found"),
                    ("w@k=a", 1, None, "not-found"), ("the second row", 1, None, "unverifiable"),
                    ("panel b", 1, None, "unverifiable")]


def test_redacted_payload_is_unverifiable_not_a_mismatch(mini: Mini) -> None:
    t = mini.ind("ind:t", "k,v\na,1\n", "text/csv")
    mini.claim("claim:x", bindings=[{"evidence": "ind:t", "field": "v@k=a", "value": 9}])
    mini.w.redact(t.payload.digest, reason="embargo", authority="PI", run="run", stream="human")
    res = run_query(mini.index(), "value-mismatch")
    assert _col(res, "status", "found") == [("unverifiable", None)]
    assert res.rows[0].why == ("claim:x binds 9 to ind:t 'v@k=a', which cannot be recomputed: "
                               "payload redacted (embargo; authority: PI), cannot recompute.")


def test_threshold_comparison_and_event_fields(mini: Mini) -> None:
    mini.ind("ind:cand", "x")
    mini.fit("fit:c", "ind:cand", score=0.85, threshold=0.9, passed=False)
    assert _mismatch(mini, [
        {"evidence": "fit:c", "field": "score", "value": 0.85, "comparison": ">= threshold 0.9"},
        {"evidence": "fit:c", "field": "score", "value": 0.85, "comparison": "<= 0.9"},
        {"evidence": "fit:c", "field": "passed", "value": False},
        {"evidence": "fit:c", "field": "threshold", "value": 0.8},
        {"evidence": "fit:c", "field": "scor", "value": 0.85},
    ]) == [("score", 0.85, 0.85, "comparison-fails"), ("threshold", 0.8, 0.9, "mismatch"),
           ("scor", 0.85, None, "not-found")]


def test_regex_fields_on_text_payloads(mini: Mini) -> None:
    mini.ind("ind:log", "collected 13 items\n==== 12 passed, 1 failed in 0.5s ====\n")
    assert _mismatch(mini, [
        {"evidence": "ind:log", "field": r"re:collected (\d+) items", "value": 13},
        {"evidence": "ind:log", "field": r"re:(\d+) passed", "value": 13},
        {"evidence": "ind:log", "field": r"re:(\d+) skipped", "value": 0},
        {"evidence": "ind:log", "field": r"re:(a+)+$", "value": "a"},
        {"evidence": "ind:log", "field": r"re:(\d+", "value": 1},
    ]) == [(r"re:(\d+) passed", 13, "12", "mismatch"),
           (r"re:(\d+) skipped", 0, None, "not-found"),
           (r"re:(a+)+$", "a", None, "unverifiable"),
           (r"re:(\d+", 1, None, "unverifiable")]


# -------------------------------------------------------------- unsupported-claims
def test_unsupported_claims_scope_and_reasons(mini: Mini) -> None:
    mini.ind("ind:t", "k,v\na,1\n", "text/csv")
    b = [{"evidence": "ind:t", "field": "v@k=a", "value": 1}]
    mini.claim("claim:bare", final=True)                                    # no binding, no check
    mini.claim("claim:reviewed", final=True, bindings=b)
    mini.fit("fit:r", "claim:reviewed", review="looks plausible")           # no verdict
    mini.claim("claim:own", final=True, claim_status="unsupported")
    mini.claim("claim:gone", final=True, claim_status="retracted")
    mini.claim("claim:draft")                                               # not final: skipped
    mini.claim("claim:v1", "same text", bindings=b)
    mini.fit("fit:v1", "claim:v1", verdict="supported")
    mini.claim("claim:v2", "same text", bindings=b, derived_from=["claim:v1"], final=True)
    mini.claim("claim:v3", "new text", bindings=b, derived_from=["claim:v2"], final=True)
    mini.claim("claim:bad", bindings=b)
    mini.fit("fit:bad", "claim:bad", verdict="contradicted", stream="judge")
    res = run_query(mini.index(), "unsupported-claims")
    assert _col(res, "claim", "status", "reasons") == [
        ("claim:bare", "unverified", ["no evidence binding", "no verification record"]),
        ("claim:reviewed", "unverified",
         ["checked by fit:r but no verdict or pass/fail was recorded"]),
        ("claim:own", "unsupported", ["its author marked it unsupported", "no evidence binding"]),
        ("claim:v3", "unverified", ["no verification record"]),
        ("claim:bad", "contradicted", ["verdict contradicted from judge 1 (fit:bad)"])]


# ------------------------------------------------------------------- claim-trace
def test_claim_trace_needs_a_claim(mini: Mini) -> None:
    mini.ind("ind:t", "x")
    mini.claim("claim:x", evidence=["ind:t"])
    idx = mini.index()
    with pytest.raises(UsageError, match="'ind:t' is not a claim"):
        run_query(idx, "claim-trace", "ind:t")
    with pytest.raises(UsageError, match="needs an argument"):
        run_query(idx, "claim-trace")
    res = run_query(idx, "claim-trace", "claim:x")
    assert _col(res, "kind", "path") == [
        ("path", "claim:x ← cited ← ind:t"),
        ("gap", "No evidence binding records which field or value supports the claim."),
        ("gap", "No evaluator or verifier has checked this claim.")]


# -------------------------------------------------------------- inferred-support
def _edge(mini: Mini, oid: str, rel: str, src: str, dst: str, conf: float | None = None,
          inferred: bool = True) -> None:
    fields: dict[str, Any] = {"relation": rel, "source": src, "target": dst}
    if inferred:
        fields |= {"provenance": "inferred", "inferred_by": "tracer 1", "confidence": conf}
    mini.event("edge", oid, stream="agent", **fields)


def test_inferred_support_chains_and_confidence(mini: Mini) -> None:
    mini.ind("ind:data", "x")
    mini.claim("claim:base", evidence=["ind:data"])
    mini.claim("claim:mid")
    mini.claim("claim:top", final=True)
    mini.claim("claim:recorded")
    mini.claim("claim:noconf")
    mini.claim("claim:weak", bindings=[{"evidence": "ind:data", "field": "f", "value": 1,
                                        "stance": "weakens"}])
    mini.event("evidence_node", "en:top", node_type="artifact", category="claim", label="t",
               individual="claim:top")
    _edge(mini, "e1", "supports", "claim:base", "claim:mid", 0.8)
    _edge(mini, "e2", "informs", "claim:mid", "en:top", 0.5)
    _edge(mini, "e3", "supports", "ind:data", "claim:recorded", 0.9)
    _edge(mini, "e4", "supports", "ind:data", "claim:recorded", inferred=False)
    _edge(mini, "e5", "supports", "ind:data", "claim:noconf", None)
    _edge(mini, "e6", "supports", "ind:data", "claim:weak", 0.6)
    res = run_query(mini.index(), "inferred-support")
    assert _col(res, "claim", "via", "confidence", "min_confidence", "cited_unbound") == [
        ("claim:mid", "claim:base", 0.8, 0.8, []),
        ("claim:top", "claim:mid", 0.4, 0.5, []),
        ("claim:noconf", "ind:data", None, None, []),
        ("claim:weak", "ind:data", 0.6, 0.6, []),   # a weakening binding is no support
    ]
    assert res.rows[1].values["path"] == (
        "claim:top ← informs (inferred, 0.5, by tracer 1) ← claim:mid "
        "← supports (inferred, 0.8, by tracer 1) ← claim:base")


def test_key_column_indexes_per_table_are_bounded(mini: Mini) -> None:
    from bundler.query.values import MAX_KEY_COLUMNS

    n = MAX_KEY_COLUMNS + 2
    header = ",".join(f"k{i}" for i in range(n))
    mini.ind("ind:wide", f"{header}\n" + ",".join(str(i) for i in range(n)) + "\n", "text/csv")
    rows = _mismatch(mini, [{"evidence": "ind:wide", "field": f"k0@k{i}={i}", "value": 0}
                            for i in range(n)])
    assert rows == [(f"k0@k{i}={i}", 0, None, "unverifiable") for i in range(MAX_KEY_COLUMNS, n)]
