"""Edge cases of the evaluation, steering, archive, lineage, reuse and duplicate queries."""

from __future__ import annotations

import random
from typing import Any

import pytest

from bundler.errors import UsageError
from bundler.query import QueryResult, run_query
from bundler.query.archives import downstream

from .conftest import Mini


def _col(result: QueryResult, *cols: str) -> list[tuple[Any, ...]]:
    return [tuple(r.values[c] for c in cols) for r in result.rows]


# ----------------------------------------------- accepted-without-independent-evaluator
def test_evaluator_from_the_producer_stream_is_not_independent(mini: Mini) -> None:
    mini.op("op:make", [], stream="agent")
    mini.ind("ind:self", "a", produced_by="op:make", status="accepted")
    mini.fit("fit:self", "ind:self", stream="agent", passed=True)
    mini.ind("ind:judged", "b", produced_by="op:make", status="accepted")
    mini.fit("fit:judged", "ind:judged", stream="judge", passed=True)
    mini.ind("ind:archived", "c", produced_by="op:make")
    mini.event("archive", "arc:1", archive="best", action="add", member="ind:archived")
    mini.ind("ind:candidate", "d", produced_by="op:make")          # never accepted
    mini.op("op:judge-made", [], stream="judge")
    mini.ind("ind:by-judge", "e", produced_by="op:judge-made", stream="agent", status="final")
    mini.fit("fit:by-judge", "ind:by-judge", stream="judge", verdict="supported")
    mini.ind("ind:passed", "f")                                     # own stream: agent
    mini.fit("fit:passed", "ind:passed", stream="agent", verdict="supported")
    res = run_query(mini.index(), "accepted-without-independent-evaluator")
    assert _col(res, "individual", "producer_stream", "accepted") == [
        ("ind:self", "agent", ["status accepted", "passed fit:self"]),
        ("ind:archived", "agent", ["added to archive best"]),
        ("ind:by-judge", "judge", ["status final", "passed fit:by-judge"]),
        ("ind:passed", "agent", ["passed fit:passed"])]
    assert res.rows[1].why == ("ind:archived was accepted (added to archive best), produced by "
                               "op:make on agent, but no fitness record judges it at all.")


# ------------------------------------------------------------- evaluator-disagreement
def test_disagreement_kinds(mini: Mini) -> None:
    for oid in ("ind:straddle", "ind:verdicts", "ind:agree", "ind:rerun", "ind:versions"):
        mini.ind(oid, oid)
    mini.fit("f1", "ind:straddle", name="bench", metric="acc", score=0.8, threshold=0.75)
    mini.fit("f2", "ind:straddle", name="other", metric="acc", score=0.7, stream="judge2")
    mini.fit("f3", "ind:verdicts", name="a", verdict="supported")
    mini.fit("f4", "ind:verdicts", name="b", verdict="needs_human_review")
    mini.fit("f5", "ind:agree", name="a", metric="acc", score=0.9, threshold=0.5)
    mini.fit("f6", "ind:agree", name="b", metric="acc", score=0.8, threshold=0.5)
    mini.fit("f7", "ind:rerun", name="a", passed=False)
    mini.fit("f8", "ind:rerun", name="a", passed=True)             # same evaluator: latest wins
    mini.fit("f9", "ind:rerun", name="b", passed=True)
    mini.fit("f10", "ind:versions", name="a", version="1", passed=True)
    mini.fit("f11", "ind:versions", name="a", version="2", passed=False)
    res = run_query(mini.index(), "evaluator-disagreement")
    assert _col(res, "individual", "disagreement") == [
        ("ind:straddle", ["acc scores straddle the threshold 0.75"]),
        ("ind:verdicts", ["verdicts differ (needs_human_review, supported)"]),
        ("ind:versions", ["pass and fail"])]
    assert res.rows[0].values["outcomes"] == ["bench 1: acc=0.8 (threshold 0.75)",
                                             "other 1: acc=0.7"]


# -------------------------------------------------------------------- steering
def test_steering_effects_transitive_unapplied_and_capped(mini: Mini) -> None:
    mini.ind("ind:plan", "p")
    mini.event("steering", "steer:ignored", stream="human", command="stop", issuer="PI")
    mini.event("steering", "steer:go", stream="human", command="force_plan", issuer="PI")
    mini.op("op:replan", ["ind:plan"], steering="steer:go", op="plan_update")
    mini.ind("ind:plan2", "p2", produced_by="op:replan")
    mini.op("op:use", ["ind:plan2"])
    mini.ind("ind:out", "o", produced_by="op:use")
    mini.claim("claim:c", produced_by="op:use")
    mini.claim("claim:c2", derived_from=["claim:c"])
    idx = mini.index()
    res = run_query(idx, "steering-effects")
    assert _col(res, "steering", "applied_by", "derived_count", "derived") == [
        ("steer:ignored", [], "0", []),
        ("steer:go", ["op:replan"], "4", ["ind:plan2", "ind:out", "claim:c", "claim:c2"])]
    assert res.rows[0].why == "stop by PI (steer:ignored): no operator records applying it."
    assert downstream(idx, ["op:replan"], limit=2) == (["ind:plan2", "ind:out"], True)


def test_archive_after_intervention_arguments(mini: Mini) -> None:
    mini.ind("ind:a", "a")
    mini.event("archive", "arc:before", archive="x", action="add", member="ind:a")
    mini.event("steering", "steer:s", stream="human", command="reject", issuer="PI")
    mini.op("op:apply", ["ind:a"], steering="steer:s")
    mini.event("archive", "arc:after", archive="x", action="remove", member="ind:a",
               operator="op:apply")
    idx = mini.index()
    res = run_query(idx, "archive-after-intervention")
    assert _col(res, "archive_event", "after", "linked") == [
        ("arc:after", "steer:s", "made by op:apply, which applied steer:s")]
    with pytest.raises(UsageError, match="'ind:a' is not a steering command"):
        run_query(idx, "archive-after-intervention", "ind:a")


def test_no_steering_no_rows(mini: Mini) -> None:
    idx = mini.index()
    assert run_query(idx, "archive-after-intervention").rows == ()
    assert run_query(idx, "steering-effects").rows == ()


# --------------------------------------------------------------------- archives
def test_archive_churn_removed_and_readded(mini: Mini) -> None:
    for oid in ("ind:a", "ind:b"):
        mini.ind(oid, oid)
    for n, (action, member) in enumerate([("add", "ind:a"), ("add", "ind:b"),
                                          ("remove", "ind:a"), ("add", "ind:a"),
                                          ("add", "ind:a"), ("remove", "ind:zz")]):
        mini.event("archive", f"arc:{n}", archive="elite", action=action, member=member)
    mini.event("archive", "arc:other", archive="other", action="add", member="ind:b")
    idx = mini.index()
    res = run_query(idx, "archive-churn", "elite")
    seq0 = res.rows[0].values["seq"]
    assert _col(res, "action", "member", "size", "note") == [
        ("add", "ind:a", 1, None), ("add", "ind:b", 2, None),
        ("remove", "ind:a", 1, f"member since seq {seq0}"),
        ("add", "ind:a", 2, f"re-added (removed at seq {seq0 + 2})"),
        ("add", "ind:a", 2, f"already a member since seq {seq0 + 3}"),
        ("remove", "ind:zz", 2, "removed but was not a member")]
    assert len(run_query(idx, "archive-churn").rows) == 7
    with pytest.raises(UsageError, match="no archive named 'nope'; archives: elite, other"):
        run_query(idx, "archive-churn", "nope")


def test_best_lineage_direction_parents_and_archive(mini: Mini) -> None:
    mini.op("op:init")
    for oid, score in (("c:a", 0.2), ("c:b", 0.6), ("c:u", None)):
        mini.ind(oid, oid, produced_by="op:init", attributes={"generation": 0})
        if score is not None:
            mini.fit(f"fit:{oid}", oid, metric="acc", score=score)
    mini.op("op:x", ["c:a", "c:b", "c:u"], op="crossover")
    mini.ind("c:child", "child", produced_by="op:x", attributes={"generation": 1})
    mini.fit("fit:child", "c:child", metric="acc", score=0.9)
    mini.op("op:m", ["c:u"], op="mutate")
    mini.ind("c:side", "side", produced_by="op:m")
    mini.fit("fit:side", "c:side", metric="acc", score=0.7)
    mini.fit("fit:loss", "c:a", name="other", metric="loss", score=0.01, higher_is_better=False)
    mini.event("archive", "arc:1", archive="kept", action="add", member="c:side")
    mini.event("archive", "arc:2", archive="kept", action="add", member="c:b")
    idx = mini.index()
    res = run_query(idx, "best-lineage")
    assert _col(res, "step", "individual", "score", "generation", "op") == [
        (0, "c:child", 0.9, 1, "crossover"), (1, "c:b", 0.6, 0, "refine")]
    kept = run_query(idx, "best-lineage", "kept")
    assert _col(kept, "individual", "score") == [("c:side", 0.7), ("c:u", None)]
    assert kept.rows[1].why.endswith("(no parent has a score).")


# -------------------------------------------------------------------- duplicates
def test_near_duplicates_levels_and_lineages(mini: Mini) -> None:
    same = "def f(x):\n    return x + 1\n"
    mini.op("op:1")
    mini.op("op:2")
    mini.ind("p:a", same, "text/x-python", produced_by="op:1", attributes={"generation": 3})
    mini.ind("p:b", same, "text/x-python", produced_by="op:2", attributes={"generation": 5})
    mini.ind("p:v1", "unique one\n", produced_by="op:1")
    mini.ind("p:v2", "unique one\n", produced_by="op:2", supersedes="p:v1", version=2)
    mini.ind("p:c", "# a comment\ndef g(y):\n  return y*2\n", "text/x-python")
    mini.ind("p:d", "def g(y):\n\n    return y * 2   \n", "text/x-python")
    long = " ".join(f"tok{i}" for i in range(200))
    mini.ind("p:e", long + " end", "text/plain")
    mini.ind("p:f", long + " fin", "text/plain")
    res = run_query(mini.index(), "near-duplicates")
    assert _col(res, "match", "members", "generations") == [
        ("identical", ["p:a", "p:b"], [3, 5]),
        ("normalised", ["p:c", "p:d"], []),
        ("similar (Jaccard >= 0.99)", ["p:e", "p:f"], [])]    # 198 of 200 trigrams


def test_near_duplicates_from_kept_features_reads_only_pairs_it_measures(mini: Mini) -> None:
    """Kept features stand for the texts: the result is the same, and only texts in a
    pair measured exactly are read again (here the 'similar' pair)."""
    from bundler.query.duplicates import near_duplicates_with

    mini.op("op:1")
    mini.ind("p:c", "# a comment\ndef g(y):\n  return y*2\n", "text/x-python")
    mini.ind("p:d", "def g(y):\n\n    return y * 2   \n", "text/x-python")
    long = " ".join(f"tok{i}" for i in range(200))
    e = mini.ind("p:e", long + " end", "text/plain")
    mini.ind("p:f", long + " fin", "text/plain")
    binary = mini.ind("p:bin", b"\xff\xfe not utf-8", "text/plain")
    idx = mini.index()
    first, used = near_duplicates_with(idx, {})
    assert binary.payload is not None and used[binary.payload.digest] is None
    assert len(used) == 5
    normalised = [m for m in idx.individuals.values() if m.id in ("p:c", "p:d")]
    for m in normalised:
        mini.payload_file(m.payload.digest).unlink()
    again, used_again = near_duplicates_with(idx, used)
    assert again == first
    assert used_again == used
    assert _col(again, "match", "members") == [
        ("normalised", ["p:c", "p:d"]), ("similar (Jaccard >= 0.99)", ["p:e", "p:f"])]
    # a kept digest no longer in the bundle drops out of what is kept
    stale = {**used, "sha256:" + "0" * 64: None}
    assert near_duplicates_with(idx, stale)[1] == used
    # the exact measure needs the text: without it the pair is not made, never invented
    mini.payload_file(e.payload.digest).unlink()
    gone, _ = near_duplicates_with(idx, used)
    assert _col(gone, "match") == [("normalised",)]


def test_identical_digests_group_even_when_redacted(mini: Mini) -> None:
    a = mini.ind("p:a", "secret", produced_by=None)
    mini.ind("p:b", "secret")
    mini.w.redact(a.payload.digest, reason="r", authority="a", run="run", stream="human")
    res = run_query(mini.index(), "near-duplicates")
    assert _col(res, "match", "members") == [("identical", ["p:a", "p:b"])]


# ------------------------------------------------------------------ provenance
def test_reused_in_manuscript(mini: Mini) -> None:
    mini.ind("ind:table", "t")
    mini.claim("claim:kept")
    mini.event("archive", "arc:add", archive="claims", action="add", member="claim:kept")
    mini.claim("claim:dropped")
    mini.event("archive", "arc:add2", archive="claims", action="add", member="claim:dropped")
    mini.event("archive", "arc:rm", archive="claims", action="remove", member="claim:dropped")
    mini.claim("claim:plain")
    mini.op("op:write", ["ind:table", "claim:kept"], op="synthesize")
    mini.ind("draft:1", "d1", kind="draft", produced_by="op:write")
    mini.claim("claim:next", derived_from=["claim:kept", "claim:dropped", "claim:plain"])
    mini.event("evidence_node", "en:t", node_type="artifact", category="artifact", label="t",
               individual="ind:table")
    mini.event("evidence_node", "en:d", node_type="artifact", category="artifact", label="d",
               individual="draft:1")
    mini.event("edge", "e:uses", relation="uses", source="en:d", target="en:t")
    res = run_query(mini.index(), "reused-in-manuscript")
    assert _col(res, "item", "archived", "member_at_use", "used_by", "how") == [
        ("ind:table", [], False, "draft:1", ["parent of op:write", "uses edge e:uses"]),
        ("claim:kept", ["claims"], True, "draft:1", ["parent of op:write"]),
        ("claim:kept", ["claims"], True, "claim:next", ["derived_from"]),
        ("claim:dropped", ["claims"], False, "claim:next", ["derived_from"])]


def test_introduced_by_import_value_and_event(mini: Mini) -> None:
    mini.ind("ind:imported", None, external="https://doi.org/10.1/x", status="accepted")
    mini.claim("claim:first", "The Rate is HIGH at 12.5 units.")
    mini.claim("claim:second", "Again 12.5.", bindings=[
        {"evidence": "ind:imported", "field": "rate", "value": "12.5"}])
    idx = mini.index()
    res = run_query(idx, "introduced-by", "ind:imported")
    assert _col(res, "role", "operator", "stream") == [("introduced", None, "agent")]
    assert res.rows[0].why.endswith(
        "recorded by stream agent without a producing operator imported from "
        "https://doi.org/10.1/x at seq 5.")
    assert _col(run_query(idx, "introduced-by", "12.5"), "role", "object") == [
        ("first claim", "claim:first")]
    assert _col(run_query(idx, "introduced-by", "rate is high"), "object") == [("claim:first",)]
    assert run_query(idx, "introduced-by", "nothing like it").rows == ()
    assert _col(run_query(idx, "introduced-by", "agent"), "role", "stream") == [
        ("recorded", "agent")]


# -------------------------------------------------------------------- registry
def test_registry_usage_errors(mini: Mini) -> None:
    idx = mini.index()
    with pytest.raises(UsageError, match="unknown query 'nope'"):
        run_query(idx, "nope")
    with pytest.raises(UsageError, match="query near-duplicates takes no argument"):
        run_query(idx, "near-duplicates", "x")
    with pytest.raises(UsageError, match="introduced-by needs an argument"):
        run_query(idx, "introduced-by")


@pytest.mark.parametrize("n", [0, 1, 2, 3, 4, 50, 2000])
def test_shingles_are_the_trigram_hash_of_every_window(n: int) -> None:
    """The fast form of the shingle set is exactly ``_mix`` over each token trigram."""
    from bundler.query.duplicates import _mix, _shingles
    rng = random.Random(n)
    h = [rng.getrandbits(32) for _ in range(n)]
    want = frozenset(h) if n < 3 else frozenset(_mix(*h[i:i + 3]) for i in range(n - 2))
    assert _shingles(h) == want
