"""The registry of audit queries, in the order the issue lists them."""

from __future__ import annotations

from bundler.errors import UsageError
from bundler.graph.index import BundleIndex
from bundler.query.archives import (
    archive_after_intervention,
    archive_churn,
    best_lineage,
    steering_effects,
)
from bundler.query.claims import claim_trace, missing_evidence, unsupported_claims, value_mismatch
from bundler.query.duplicates import near_duplicates
from bundler.query.evaluation import accepted_without_independent_evaluator, evaluator_disagreement
from bundler.query.model import QueryDef, QueryResult
from bundler.query.provenance import introduced_by, reused_in_manuscript
from bundler.query.support import inferred_support
from bundler.query.transcripts import transcript_mismatch

_DEFS = (
    QueryDef("unsupported-claims", "final claims with no binding, no verification or a "
             "negative verdict, and any claim a verifier rejected", None, unsupported_claims),
    QueryDef("missing-evidence", "claims whose evidence is redacted, missing, corrupt, leaked "
             "or not in the log", None, missing_evidence),
    QueryDef("value-mismatch", "bindings whose recorded value differs from the cited field, "
             "recomputed from the payload", None, value_mismatch),
    QueryDef("claim-trace", "every evidence path of one claim, and its stated gaps", "CLAIM",
             claim_trace),
    QueryDef("introduced-by", "the operator and stream that first produced an artifact, or "
             "the earliest claim stating a value", "ARTIFACT_OR_VALUE", introduced_by),
    QueryDef("accepted-without-independent-evaluator", "accepted or archived individuals that "
             "no other stream evaluated", None, accepted_without_independent_evaluator),
    QueryDef("evaluator-disagreement", "individuals whose evaluators disagree on verdict, "
             "pass/fail or threshold", None, evaluator_disagreement),
    QueryDef("steering-effects", "each human or external command, who applied it and what "
             "derives from it", None, steering_effects),
    QueryDef("archive-after-intervention", "archive decisions made after a steering command "
             "(default: the first)", "[STEERING]", archive_after_intervention),
    QueryDef("archive-churn", "additions and removals per archive over time, and re-added "
             "members", "[ARCHIVE]", archive_churn),
    QueryDef("best-lineage", "the best-scored candidate and its ancestry, with the score at "
             "each step", "[ARCHIVE]", best_lineage),
    QueryDef("reused-in-manuscript", "artifacts and archived claims later used by drafts or "
             "claims", None, reused_in_manuscript),
    QueryDef("near-duplicates", "candidates with identical or near-identical payloads across "
             "lineages (population collapse)", None, near_duplicates),
    QueryDef("inferred-support", "claims supported only through inferred edges, with path "
             "confidence", None, inferred_support),
    QueryDef("transcript-mismatch", "trace records whose raw line differs from the line of "
             "the transcript payload they cite", None, transcript_mismatch),
)

QUERIES: dict[str, QueryDef] = {d.name: d for d in _DEFS}


def run_query(idx: BundleIndex, name: str, arg: str | None = None) -> QueryResult:
    """Run one query by name.  Unknown names and a missing or unexpected argument are
    usage errors (exit code 2 in the CLI), never tracebacks."""
    return check_call(name, arg).run(idx, arg)


def check_call(name: str, arg: str | None) -> QueryDef:
    """The query named ``name``, if ``arg`` suits it; checks that need no bundle."""
    qd = QUERIES.get(name)
    if qd is None:
        raise UsageError(f"unknown query {name!r}; run 'review-bundler query --list' for the "
                         f"{len(QUERIES)} queries: {', '.join(QUERIES)}")
    if qd.arg is None and arg is not None:
        raise UsageError(f"query {name} takes no argument (got {arg!r})")
    if qd.arg_required and not arg:
        raise UsageError(f"query {name} needs an argument: {name} {qd.arg}")
    return qd
