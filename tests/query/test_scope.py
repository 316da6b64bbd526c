"""What a check examined: ``scope`` and ``checked`` beside its rows.

An empty answer is good news only when something was looked at.  Every query
that counts says so in one sentence, and a bundle with nothing to check gets 0,
so the site can tell "nothing matches" from "nothing to check".
"""

from __future__ import annotations

import pytest

from bundler.query import QUERIES, run_query
from bundler.query.model import QueryResult

from .conftest import Mini

#: The checks that count what they examine, and what they say when there is nothing.
NOTHING = {
    "unsupported-claims": "The log holds no claim to examine.",
    "missing-evidence": "No claim cites evidence in the log, so nothing was checked.",
    "value-mismatch": "No claim binds a value to its evidence, so nothing was checked.",
    "accepted-without-independent-evaluator":
        "No individual was accepted or archived, so nothing was examined.",
    "evaluator-disagreement":
        "No individual was judged by two or more evaluators, so nothing was compared.",
    "transcript-mismatch": "The log holds no trace record, so nothing was compared.",
}


def _run(mini: Mini, name: str) -> QueryResult:
    return run_query(mini.index(), name)


@pytest.mark.parametrize("name", sorted(NOTHING))
def test_a_bundle_with_nothing_to_check_says_so(mini: Mini, name: str) -> None:
    mini.ind("ind:a", "x")           # something in the log, but nothing these look at
    res = _run(mini, name)
    assert (res.rows, res.checked, res.scope) == ((), 0, NOTHING[name])


def test_the_other_queries_do_not_count(mini: Mini) -> None:
    """Lookups and listings answer a question; they check nothing, and say nothing."""
    index = mini.index()
    for name in sorted(set(QUERIES) - set(NOTHING) - {"claim-trace", "introduced-by"}):
        res = run_query(index, name)
        assert (res.scope, res.checked) == ("", None), name


def test_missing_evidence_counts_pieces_and_leaves_external_ones_out(mini: Mini) -> None:
    mini.ind("ind:a", "x")
    mini.claim("claim:1", evidence=["ind:a", "ext:doi:10.1/x"])
    mini.claim("claim:2", evidence=["ind:gone"])
    mini.claim("claim:3", evidence=["ext:doi:10.1/y"])
    res = _run(mini, "missing-evidence")
    assert [r.values["evidence"] for r in res.rows] == ["ind:gone"]
    assert (res.checked, res.scope) == (2, "Checked 2 pieces of evidence cited by 2 claims. "
                                           "2 external references (ext:) not checked.")


def test_evaluator_disagreement_counts_only_individuals_with_two_judges(mini: Mini) -> None:
    for oid in ("ind:a", "ind:b", "ind:c"):
        mini.ind(oid, "x")
    mini.fit("fit:a1", "ind:a", passed=True)
    mini.fit("fit:a2", "ind:a", stream="judge2", name="other", passed=True)
    mini.fit("fit:b1", "ind:b", passed=True)
    mini.fit("fit:b2", "ind:b", passed=False)       # same evaluator again: its latest counts
    mini.fit("fit:c1", "ind:c", passed=True)
    mini.fit("fit:c2", "ind:c", stream="judge2", name="other", passed=False)
    res = _run(mini, "evaluator-disagreement")
    assert [r.values["individual"] for r in res.rows] == ["ind:c"]
    assert (res.checked, res.scope) == (
        2, "Compared the evaluators of 2 individuals judged by two or more.")


def test_unsupported_claims_and_acceptance_count_what_they_examined(mini: Mini) -> None:
    mini.ind("ind:a", "x", status="accepted")
    mini.ind("ind:b", "x")
    mini.fit("fit:b", "ind:b", passed=True)
    mini.claim("claim:1", final=True)
    mini.claim("claim:2")
    mini.claim("claim:3", claim_status="retracted")
    index = mini.index()
    res = run_query(index, "unsupported-claims")
    assert (res.checked, res.scope) == (2, "Examined 2 claims. 1 retracted claim left out.")
    res = run_query(index, "accepted-without-independent-evaluator")
    assert (res.checked, res.scope) == (2, "Examined 2 accepted or archived individuals.")
