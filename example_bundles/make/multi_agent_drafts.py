"""The multi-agent-paper team at work: three drafts, two critic reviews, two steering turns.

:func:`write_drafts` continues the session that
:mod:`example_bundles.make.multi_agent_paper` starts (brief, plan, code,
simulation run).  Every number a draft quotes is read from the run's
``summary.csv`` or ``fit.json`` and bound to its cell; the critic's verdicts
rest on :func:`critic_recompute`, its own arithmetic on the payload bytes.
The claims' fates (inherited, revised, rejected, inferred-only, unverified
final) are listed in the docstring of ``multi_agent_paper``.
"""

from __future__ import annotations

import csv
import io
import json
import math
import statistics
from typing import Any

from example_bundles.make.bindings import Scalar
from example_bundles.make.common import FixedClock
from example_bundles.make.recording import Recorder
from example_bundles.make.transcripts import TeamBus

CRITIC = {"name": "critic-agent", "version": "rubric-2"}


# ------------------------------------------------------------------ critic
def rows_by(data: bytes, key: str) -> dict[str, dict[str, str]]:
    return {r[key]: r for r in csv.DictReader(io.StringIO(data.decode()))}


def critic_recompute(results: bytes, summary: bytes, fit: bytes) -> dict[str, Any]:
    """The critic's own arithmetic, from the payload bytes only."""
    runs = list(csv.DictReader(io.StringIO(results.decode())))
    table = rows_by(summary, "n")
    sizes = sorted(int(n) for n in table)
    xs = [math.log10(n) for n in sizes]
    ys = [math.log10(float(table[str(n)]["mean_abs_error"])) for n in sizes]
    slope, _ = statistics.linear_regression(xs, ys)
    r2 = statistics.correlation(xs, ys) ** 2
    small = [float(r["estimate"]) for r in runs if r["n"] == str(sizes[0])]
    t = (statistics.fmean(small) - math.pi) / (statistics.stdev(small) / math.sqrt(len(small)))
    stated = json.loads(fit)
    # the run stored rounded per-seed estimates; agreement to the stated precision is the test
    assert abs(slope - stated["slope"]) < 0.002 and abs(r2 - stated["r2"]) < 0.002
    assert f"{t:.2f}" == table[str(sizes[0])]["bias_t"]
    return {"slope": stated["slope"], "r2": stated["r2"], "bias_t": float(f"{t:.2f}"),
            "sizes": sizes, "table": table, "seeds": len(small),
            "sd_small": float(table[str(sizes[0])]["sd"])}


# ----------------------------------------------------------------- drafts
def draft_text(version: int, c: dict[str, Any], claims: list[str]) -> bytes:
    """A draft's Markdown: the claim paragraphs, then the summary table they quote."""
    table = c["table"]
    rows = [f"| {n:,} | {table[str(n)]['mean_estimate']} | {table[str(n)]['mean_abs_error']} | "
            f"{table[str(n)]['binomial_se']} |" for n in c["sizes"]]
    parts = [f"# How fast does a Monte Carlo estimate of pi converge? (draft {version})", "",
             "We estimate pi as 4 x the share of uniform points in the unit square that fall "
             f"inside the quarter circle, for n = {', '.join(f'{n:,}' for n in c['sizes'])} "
             f"with {c['seeds']} seeds each (`mc_pi.py`).", "", "\n\n".join(claims), "",
             "| n | mean estimate | mean abs error | binomial SE |", "|---:|---:|---:|---:|",
             *rows, "", "![error against n](error.svg)", ""]
    return "\n".join(parts).encode()


class Team:
    """Shared state of the session: recorder, bus, outputs and claim nodes."""

    def __init__(self, a: Recorder, bus: TeamBus) -> None:
        self.a, self.bus, self.w = a, bus, a.w
        self.nodes: dict[str, str] = {}
        self.c: dict[str, Any] = {}  # critic_recompute() of the simulation's outputs

    def claim(self, cid: str, text: str, bindings: list[tuple[str, str, Scalar]],
              trace: list[str], **fields: Any) -> str:
        self.a.claim(cid, text, bindings, trace, stream="pi", **fields)
        self.nodes[cid] = self.a.node(f"en:{cid}", "artifact", "claim", text, individual=cid)
        for evidence in sorted({b[0] for b in bindings}):
            self.a.edge("supports", self.nodes[evidence], self.nodes[cid])
        return cid

    def verdict(self, cid: str, verdict: str, review: str, evidence: list[str], op: str) -> None:
        self.w.append("fitness", id=f"fit:{cid}", run=self.a.run, stream="critic", target=cid,
                      evaluator=CRITIC, verdict=verdict, review=review, evidence=evidence,
                      operator=op, passed=verdict == "supported")

    def archive(self, action: str, member: str, op: str, reason: str = "",
                archive: str = "report-claims") -> None:
        self.w.append("archive", id=f"arch:{archive}:{action}:{member}", run=self.a.run,
                      stream="pi", archive=archive, action=action, member=member, operator=op,
                      reason=reason)


# ---------------------------------------------------------------- session
def write_drafts(team: Team, clock: FixedClock, wf_run: str) -> None:
    """Draft 1 and the critic's first review; then :func:`_later_drafts`."""
    a, bus, w, n, c = team.a, team.bus, team.w, team.nodes, team.c
    t = c["table"]
    big, small, mid = str(c["sizes"][-1]), str(c["sizes"][0]), c["sizes"][1:3]
    est = ("**Estimate.** At n = {:,} the mean estimate is {} (mean absolute error {})."
           .format(int(big), t[big]["mean_estimate"], t[big]["mean_abs_error"]))
    est_b: list[tuple[str, str, Scalar]] = [
        ("tbl:summary", f"mean_estimate@n={big}", float(t[big]["mean_estimate"])),
        ("tbl:summary", f"mean_abs_error@n={big}", float(t[big]["mean_abs_error"]))]
    e1, e2 = (t[str(m)]["mean_abs_error"] for m in mid)
    rate1 = (f"**Rate.** The mean absolute error drops from {e1} at n = {mid[0]:,} to {e2} at "
             f"n = {mid[1]:,}, so it falls like 1/n.")
    rate_b1: list[tuple[str, str, Scalar]] = [
        ("tbl:summary", f"mean_abs_error@n={m}", float(t[str(m)]["mean_abs_error"]))
        for m in mid]
    bias = (f"**Bias.** At n = {int(small):,} the estimator overestimates pi: the mean estimate "
            f"is {t[small]['mean_estimate']}.")
    bias_b: list[tuple[str, str, Scalar]] = [
        ("tbl:summary", f"mean_estimate@n={small}", float(t[small]["mean_estimate"]))]

    # draft 1 -------------------------------------------------------------------
    text1 = draft_text(1, c, [est, rate1, bias])
    r_d1 = bus.post("pi", "critic", "review_request", "Draft 1 attached; please check it.",
                    attachment={"name": "draft-1.md", "bytes": len(text1)})
    w.append("operator", id="op:draft1", run=a.run, stream="pi", op="synthesize",
             parents=["tbl:summary", "data:fit", "fig:error"], trace=[r_d1], summary="Draft 1")
    a.artifact("draft:report@1", "draft", "report.md", text1, "text/markdown", stream="pi",
               produced_by="op:draft1", status="candidate", trace=[r_d1])
    n["d1"] = a.node("en:draft1-act", "action", "message", "PI writes draft 1", [r_d1])
    n["draft:report@1"] = a.node("en:draft@1", "artifact", "artifact", "report.md v1",
                                 individual="draft:report@1")
    for src in ("tbl:summary", "data:fit", "fig:error"):
        a.edge("uses", n["d1"], n[src])
    a.edge("produces", n["d1"], n["draft:report@1"])
    team.claim("claim:estimate@1", est, est_b, [r_d1], final=False, name="estimate")
    team.claim("claim:rate@1", rate1, rate_b1, [r_d1], final=False, name="rate")
    team.claim("claim:bias@1", bias, bias_b, [r_d1], final=False, name="bias")
    for cid in ("claim:estimate@1", "claim:rate@1", "claim:bias@1"):
        team.archive("add", cid, "op:draft1")
    wf_d1 = a.phase("wf:draft-1", "claim", "Draft 1", [
        n["d1"], n["draft:report@1"], n["claim:estimate@1"], n["claim:rate@1"],
        n["claim:bias@1"]])
    a.edge("informs", wf_run, wf_d1)

    # review 1 ------------------------------------------------------------------
    excess = float(t[small]["mean_estimate"]) - math.pi
    review1 = "\n".join([
        "# Review of draft 1", "",
        f"- **Estimate**: matches summary.csv (n = {int(big):,}). Supported.",
        f"- **Rate**: contradicted. Refitting log10(mean abs error) on log10(n) over all "
        f"{len(c['sizes'])} sizes gives slope {c['slope']} (R² {c['r2']}); 1/n would be "
        f"slope -1. The two quoted points fall {float(e1) / float(e2):.2f}x for a 10x "
        "increase in n.",
        f"- **Bias**: unsupported. The excess {excess:.6f} at n = {int(small):,} is "
        f"{c['bias_t']} standard errors of the mean (sd {c['sd_small']} over {c['seeds']} "
        "seeds); the estimator is unbiased by construction.", "",
        "Score: 1 of 3 claims holds.", ""])
    assert c["slope"] > -0.6 and abs(c["bias_t"]) < 2
    r_r1 = bus.post("critic", "pi", "review", review1)
    w.append("operator", id="op:review1", run=a.run, stream="critic", op="review",
             parents=["draft:report@1", "tbl:results", "tbl:summary", "data:fit"],
             trace=[r_r1], summary="Critic checks draft 1 against the tables")
    a.artifact("rev:draft1", "review", "review-1.md", review1.encode(), "text/markdown",
               stream="critic", produced_by="op:review1", trace=[r_r1])
    for e, f, v in est_b:
        a.check(e, f, v)
    team.verdict("claim:estimate@1", "supported", "Both numbers match summary.csv.",
                 ["tbl:summary"], "op:review1")
    team.verdict("claim:rate@1", "contradicted",
                 f"Log-log slope over all sizes is {c['slope']}, not -1.",
                 ["data:fit", "tbl:summary"], "op:review1")
    team.verdict("claim:bias@1", "unsupported",
                 f"Excess is {c['bias_t']} standard errors; no evidence of bias.",
                 ["tbl:results", "tbl:summary"], "op:review1")
    w.append("fitness", id="fit:draft:report@1", run=a.run, stream="critic",
             target="draft:report@1", evaluator=CRITIC, metric="share of claims supported",
             score=0.333, threshold=1.0, passed=False, operator="op:review1",
             evidence=["rev:draft1"])
    n["r1"] = a.node("en:review1-act", "action", "message", "critic -> PI: review 1", [r_r1])
    n["rev:draft1"] = a.node("en:review1", "artifact", "artifact", "review-1.md",
                             individual="rev:draft1")
    a.edge("checked_by", n["draft:report@1"], n["r1"])
    a.edge("uses", n["r1"], n["data:fit"])
    a.edge("produces", n["r1"], n["rev:draft1"])
    wf_r1 = a.phase("wf:review-1", "validate", "Critic review of draft 1",
                    [n["r1"], n["rev:draft1"]])
    a.edge("checked_by", wf_d1, wf_r1)
    _later_drafts(team, clock, wf_r1, est, est_b)


def _later_drafts(team: Team, clock: FixedClock, wf_r1: str, est: str,
                  est_b: list[tuple[str, str, Scalar]]) -> None:
    a, bus, w, n, c = team.a, team.bus, team.w, team.nodes, team.c
    clock.advance(hours=3)

    # the supervisor steers -------------------------------------------------------
    steer1 = ("Drop the bias claim unless you can show a test. Fix the rate using all four "
              "sizes. Keep it to one page.")
    r_s1 = bus.post("supervisor", "pi", "steer", steer1)
    w.append("steering", id="steer:revise-1", run=a.run, stream="supervisor", command="revise",
             text=steer1, issuer="human supervisor", target="draft:report@1")
    n["s1"] = a.node("en:steer1", "action", "steering", "Supervisor: revise", [r_s1])
    a.edge("informs", n["rev:draft1"], n["s1"], confidence=0.8,
           rationale="the steering repeats the critic's two objections")
    wf_s1 = a.phase("wf:steer-1", "plan", "Supervisor steering", [n["s1"]])
    a.edge("informs", wf_r1, wf_s1)

    # draft 2: inherit, revise, retract, add --------------------------------------------
    rate2 = (f"**Rate.** The mean absolute error falls like n^(-1/2): a least-squares fit of "
             f"log10(error) on log10(n) gives slope {c['slope']} (R² {c['r2']}).")
    rate_b: list[tuple[str, str, Scalar]] = [("data:fit", "slope", c["slope"]),
                                             ("data:fit", "r2", c["r2"])]
    quad = "**Cost.** Halving the error therefore needs about four times as many samples."
    text2 = draft_text(2, c, [est, rate2, quad])
    r_d2 = bus.post("pi", "critic", "review_request", "Draft 2 attached (bias claim dropped).",
                    attachment={"name": "draft-2.md", "bytes": len(text2)})
    w.append("operator", id="op:draft2", run=a.run, stream="pi", op="revise",
             steering="steer:revise-1", trace=[r_d2], summary="Draft 2 applies the steering",
             parents=["draft:report@1", "rev:draft1", "data:fit"])
    a.artifact("draft:report@2", "draft", "report.md", text2, "text/markdown", stream="pi",
               version=2, supersedes="draft:report@1", produced_by="op:draft2",
               status="candidate", trace=[r_d2])
    n["d2"] = a.node("en:draft2-act", "action", "message", "PI writes draft 2", [r_d2])
    n["draft:report@2"] = a.node("en:draft@2", "artifact", "artifact", "report.md v2",
                                 individual="draft:report@2")
    a.edge("produces", n["d2"], n["draft:report@2"])
    a.edge("informs", n["s1"], n["d2"])
    a.edge("informs", n["rev:draft1"], n["d2"], confidence=0.9,
           rationale="draft 2 changes exactly the two claims the review objected to")
    team.claim("claim:estimate@2", est, est_b, [r_d2], final=False, name="estimate",
               version=2, supersedes="claim:estimate@1", derived_from=["claim:estimate@1"])
    team.claim("claim:rate@2", rate2, rate_b, [r_d2], final=False, name="rate", version=2,
               supersedes="claim:rate@1", derived_from=["claim:rate@1"])
    team.archive("remove", "claim:bias@1", "op:draft2",
                 f"critic: unsupported (excess is {c['bias_t']} standard errors)")
    team.claim("claim:bias@2", "Retracted: the excess at n = 100 is within sampling noise.",
               [], [r_d2], final=False, name="bias", version=2, supersedes="claim:bias@1",
               derived_from=["claim:bias@1"], claim_status="retracted", status="rejected",
               evidence=["rev:draft1"])
    team.claim("claim:quadruple", quad, [], [r_d2], final=True, evidence=["data:fit"])
    a.edge("supports", n["data:fit"], n["claim:quadruple"], confidence=0.7,
           rationale="follows from a slope near -1/2; no table states it")
    for cid in ("claim:estimate@2", "claim:rate@2", "claim:quadruple"):
        team.archive("add", cid, "op:draft2")
    wf_d2 = a.phase("wf:draft-2", "claim", "Draft 2", [
        n["d2"], n["draft:report@2"], n["claim:estimate@2"], n["claim:rate@2"],
        n["claim:bias@2"], n["claim:quadruple"]])
    a.edge("frames", wf_s1, wf_d2)

    # review 2 --------------------------------------------------------------------
    review2 = "\n".join([
        "# Review of draft 2", "",
        "- **Estimate**: unchanged, still matches summary.csv. Supported.",
        f"- **Rate**: slope {c['slope']} and R² {c['r2']} match fit.json and my refit. "
        "Supported.",
        "- **Cost**: plausible from a slope near -1/2, but no table shows it and it "
        f"extrapolates beyond n = {c['sizes'][-1]:,}. Needs a human decision.", ""])
    r_r2 = bus.post("critic", "pi", "review", review2)
    w.append("operator", id="op:review2", run=a.run, stream="critic", op="review",
             parents=["draft:report@2", "tbl:summary", "data:fit"], trace=[r_r2],
             summary="Critic checks draft 2")
    a.artifact("rev:draft2", "review", "review-2.md", review2.encode(), "text/markdown",
               stream="critic", produced_by="op:review2", trace=[r_r2])
    for e, f, v in [*est_b, *rate_b]:
        a.check(e, f, v)
    team.verdict("claim:estimate@2", "supported", "Inherited unchanged; still matches.",
                 ["tbl:summary"], "op:review2")
    team.verdict("claim:rate@2", "supported", "Matches fit.json and an independent refit.",
                 ["data:fit", "tbl:summary"], "op:review2")
    team.verdict("claim:quadruple", "needs_human_review",
                 "Only an inferred link to fit.json supports it.", ["data:fit"], "op:review2")
    n["r2"] = a.node("en:review2-act", "action", "message", "critic -> PI: review 2", [r_r2])
    n["rev:draft2"] = a.node("en:review2", "artifact", "artifact", "review-2.md",
                             individual="rev:draft2")
    a.edge("checked_by", n["draft:report@2"], n["r2"])
    a.edge("produces", n["r2"], n["rev:draft2"])
    wf_r2 = a.phase("wf:review-2", "validate", "Critic review of draft 2",
                    [n["r2"], n["rev:draft2"]])
    a.edge("checked_by", wf_d2, wf_r2)

    # approval and the final draft --------------------------------------------------
    clock.advance(hours=20)
    steer2 = ("Approved once it has a limitations paragraph. Keep the cost remark; it stays "
              "flagged for review.")
    r_s2 = bus.post("supervisor", "pi", "steer", steer2)
    w.append("steering", id="steer:approve-2", run=a.run, stream="supervisor", command="approve",
             text=steer2, issuer="human supervisor", target="draft:report@2")
    n["s2"] = a.node("en:steer2", "action", "steering", "Supervisor: approve", [r_s2])
    wf_s2 = a.phase("wf:steer-2", "plan", "Supervisor approval", [n["s2"]])
    a.edge("informs", wf_r2, wf_s2)
    limits = (f"**Limitations.** {c['seeds']} seeds per n; n only up to {c['sizes'][-1]:,}; "
              "one pseudo-random generator (Mersenne Twister).")
    general = ("**Conclusion.** The same n^(-1/2) behaviour holds for Monte Carlo integration "
               "in any dimension, so the method scales to high-dimensional integrals.")
    text3 = draft_text(3, c, [est, rate2, quad, limits, general])
    r_d3 = bus.post("pi", "supervisor", "final", "Final draft attached.",
                    attachment={"name": "report.md", "bytes": len(text3)})
    w.append("operator", id="op:draft3", run=a.run, stream="pi", op="revise",
             steering="steer:approve-2", trace=[r_d3], summary="Final draft",
             parents=["draft:report@2", "rev:draft2"])
    a.artifact("draft:report@3", "draft", "report.md", text3, "text/markdown", stream="pi",
               version=3, supersedes="draft:report@2", produced_by="op:draft3",
               status="final", trace=[r_d3])
    n["d3"] = a.node("en:draft3-act", "action", "message", "PI writes the final draft", [r_d3])
    n["draft:report@3"] = a.node("en:draft@3", "artifact", "artifact", "report.md v3",
                                 individual="draft:report@3")
    a.edge("produces", n["d3"], n["draft:report@3"])
    a.edge("informs", n["s2"], n["d3"])
    team.claim("claim:estimate@3", est, est_b, [r_d3], name="estimate", version=3,
               supersedes="claim:estimate@2", derived_from=["claim:estimate@2"])
    team.claim("claim:rate@3", rate2, rate_b, [r_d3], name="rate", version=3,
               supersedes="claim:rate@2", derived_from=["claim:rate@2"])
    # Added after the critic's last pass: final, no binding, no verification (RB503).
    team.claim("claim:general", general, [], [r_d3], name="general")
    a.edge("informs", n["claim:rate@3"], n["claim:general"], confidence=0.55,
           rationale="the conclusion generalises the measured rate; nothing checks it")
    for cid in ("claim:estimate@3", "claim:rate@3", "claim:general"):
        team.archive("add", cid, "op:draft3")
    w.append("operator", id="op:publish", run=a.run, stream="pi", op="select",
             parents=["draft:report@3"], summary="Publish the approved report")
    team.archive("add", "draft:report@3", "op:publish", "approved by the supervisor",
                 archive="published")
    wf_d3 = a.phase("wf:draft-3", "claim", "Final report", [
        n["d3"], n["draft:report@3"], n["claim:estimate@3"], n["claim:rate@3"],
        n["claim:general"]])
    a.edge("frames", wf_s2, wf_d3)
