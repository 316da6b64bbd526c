"""Example bundle ``multi-agent-paper``: a hub-and-spoke team writes a short report.

A PI agent (the hub) hands work to a coder, a runner and a critic (the
spokes, who only ever talk to the PI); a human supervisor steers.  The
report, on how the error of a Monte Carlo estimate of pi shrinks with the
sample size, goes through three drafts, and its claims show every fate a
reviewer needs to tell apart:

* inherited: the headline estimate is carried from draft 1 to 3 (``derived_from``);
* revised: "the error falls like 1/n" is contradicted by the critic's fit and
  replaced by a claim derived from it (the old one stays in the log);
* rejected: "the estimator overestimates pi at n = 100" is judged
  ``unsupported``, removed from the claims archive and retracted;
* supported only by an inferred edge: "halving the error needs four times the
  samples" has no binding, and the critic asks for human review;
* final without any verification: the PI's closing generalisation, added
  after the critic's last pass.  ``validate --strict`` flags exactly this one
  (RB503), which is the point of the example.

The simulation is real: the coder's ``mc_pi.py`` is run (``python -I -S``)
and every number in the drafts and bindings is read from its outputs.  The
critic's checks are recomputed here from the payload bytes.  Binding fields
use the syntax documented in :mod:`example_bundles.make.bindings`.
"""

from __future__ import annotations

import csv
import io
import json
import math
import statistics
from pathlib import Path
from typing import Any

from example_bundles.make.bindings import Scalar
from example_bundles.make.common import FixedClock, fresh_writer, source_bytes
from example_bundles.make.recording import TRACER, Recorder
from example_bundles.make.running import run_script, shell_transcript
from example_bundles.make.transcripts import TeamBus

NAME = "multi-agent-paper"
RUN = "run:team-mcpi-2026-05-06"
CRITIC = {"name": "critic-agent", "version": "rubric-2"}
COMMAND = "python mc_pi.py out/"

DESCRIPTION = """\
A hub-and-spoke agent team (PI, coder, runner, critic) and a human supervisor
write a one-page report on how the error of a Monte Carlo estimate of pi
shrinks with the sample size.  Three drafts; one claim inherited, one
revised after the critic contradicted it, one rejected and retracted, one
resting only on an inferred edge, and one final claim that nobody verified,
which `validate --strict` reports as RB503 (on purpose).  The simulation
script was really run; every quoted number is bound to the cell it comes from.
"""

BRIEF = """\
# Brief

Write a one-page report: how does the error of the Monte Carlo estimate of
pi (4 x share of uniform points inside the quarter circle) shrink as the
number of samples n grows?  Use n = 100 ... 100,000 with 10 seeds each,
report the estimate at the largest n, the rate, and the limitations.
Every number must come from a table the team produced.
"""

# ---------------------------------------------------------------- the code
#: The coder's simulation, stored and run exactly as written.
SCRIPT = source_bytes(NAME, "mc_pi.py")


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
        self.c: dict[str, Any] = {}

    def claim(self, cid: str, text: str, bindings: list[tuple[str, str, Scalar]],
              trace: list[str], **fields: Any) -> str:
        self.a.claim(cid, text, bindings, trace, stream="pi", **fields)
        self.nodes[cid] = self.a.node(f"en:{cid}", "artifact", "claim", text, individual=cid)
        for evidence in sorted({b[0] for b in bindings}):
            self.a.edge("supports", self.nodes[evidence], self.nodes[cid])
        return cid

    def verdict(self, cid: str, verdict: str, review: str, evidence: list[str], op: str) -> None:
        self.w.append("fitness", id=f"fit:{cid}", run=RUN, stream="critic", target=cid,
                      evaluator=CRITIC, verdict=verdict, review=review, evidence=evidence,
                      operator=op, passed=verdict == "supported")

    def archive(self, action: str, member: str, op: str, reason: str = "",
                archive: str = "report-claims") -> None:
        self.w.append("archive", id=f"arch:{archive}:{action}:{member}", run=RUN, stream="pi",
                      archive=archive, action=action, member=member, operator=op, reason=reason)


# ---------------------------------------------------------------- session
def record_session(a: Recorder, clock: FixedClock) -> None:
    w = a.w
    w.append("run", id=RUN, stream="pi", title="Team report: Monte Carlo error against n",
             objective=BRIEF, agent="hub-and-spoke team (pi, coder, runner, critic)")
    for sid, kind, name, desc in [
            ("supervisor", "human", "human supervisor", "Sets the brief and steers drafts."),
            ("pi", "agent", "PI agent", "The hub: plans, delegates, writes every draft."),
            ("coder", "agent", "coder agent", "Writes code on the PI's request."),
            ("runner", "worker", "runner", "Executes code in a sandbox; returns outputs."),
            ("critic", "evaluator", CRITIC["name"], "Checks each claim against the tables; "
             "recomputes fits and tests from the raw outputs."),
            ("tracer", "tracer", TRACER, "Groups records; its inferred edges say so.")]:
        w.append("stream", id=sid, run=RUN, kind=kind, name=name, description=desc)
    bus = TeamBus(w, clock, name="transcripts/team-bus.jsonl", run=RUN)
    team = Team(a, bus)
    n = team.nodes

    r_brief = bus.post("supervisor", "pi", "brief", BRIEF)
    a.artifact("doc:brief", "protocol", "brief.md", BRIEF.encode(), "text/markdown",
               stream="supervisor", status="accepted", trace=[r_brief])
    n["brief"] = a.node("en:brief", "action", "user_message", "Supervisor's brief", [r_brief])
    n["doc:brief"] = a.node("en:brief-doc", "artifact", "artifact", "brief.md",
                            individual="doc:brief")
    wf_context = a.phase("wf:context", "context", "Brief", [n["brief"], n["doc:brief"]])

    task = ("Write mc_pi.py: for n in 100, 1,000, 10,000, 100,000 and seeds 1-10 estimate pi "
            "by uniform sampling; write results.csv, summary.csv (mean estimate, mean |error|, "
            "sd, binomial SE, bias t per n), fit.json (log-log slope) and error.svg. "
            "Standard library only.")
    r_task = bus.post("pi", "coder", "task", task)
    w.append("operator", id="op:plan", run=RUN, stream="pi", op="plan_update",
             parents=["doc:brief"], trace=[r_task], summary="Split the brief into tasks")
    a.artifact("doc:plan", "plan", "plan.md",
               ("1. coder: " + task + "\n2. runner: run it.\n3. PI: draft.\n"
                "4. critic: check every number against the tables.\n").encode(),
               "text/markdown", stream="pi", produced_by="op:plan", trace=[r_task])
    n["task"] = a.node("en:task", "action", "message", "PI -> coder: task", [r_task])
    n["doc:plan"] = a.node("en:plan-doc", "artifact", "artifact", "plan.md",
                           individual="doc:plan")
    a.edge("produces", n["task"], n["doc:plan"])
    wf_plan = a.phase("wf:plan", "plan", "Delegation plan", [n["task"], n["doc:plan"]])
    a.edge("frames", wf_context, wf_plan)

    script = SCRIPT
    r_code = bus.post("coder", "pi", "artifact", "mc_pi.py attached (stdlib only).",
                      "file_write", attachment={"name": "mc_pi.py", "bytes": len(script)})
    w.append("operator", id="op:code", run=RUN, stream="coder", op="synthesize",
             parents=["doc:plan"], trace=[r_code], summary="Write mc_pi.py")
    a.artifact("prog:mc_pi", "program", "mc_pi.py", script, "text/x-python", stream="coder",
               produced_by="op:code", status="accepted", trace=[r_code])
    n["code"] = a.node("en:code", "action", "message", "coder -> PI: mc_pi.py", [r_code])
    n["prog:mc_pi"] = a.node("en:script", "artifact", "artifact", "mc_pi.py",
                             individual="prog:mc_pi")
    a.edge("produces", n["code"], n["prog:mc_pi"])
    wf_code = a.phase("wf:code", "execute", "Simulation code", [n["code"], n["prog:mc_pi"]])
    a.edge("informs", wf_plan, wf_code)

    code, out, made = run_script({"mc_pi.py": script}, ["mc_pi.py", "out/"],
                                 alias="/home/team/runner")
    assert code == 0, out
    r_ask = bus.post("pi", "runner", "task", f"Run `{COMMAND}` and send back out/.")
    r_exec = bus.post("runner", "sandbox", "exec", COMMAND, "command")
    r_out = bus.post("runner", "pi", "result", out, "tool_result", exit_status=code,
                     files=sorted(made))
    w.append("operator", id="op:run", run=RUN, stream="runner", op="execute", tool="python 3",
             parents=["prog:mc_pi"], params={"command": COMMAND, "exit_status": code},
             trace=[r_ask, r_exec, r_out], summary="Run the simulation")
    a.artifact("out:run", "command_output", "run.txt", shell_transcript(COMMAND, out, code),
               "text/plain", stream="runner", produced_by="op:run", trace=[r_out])
    n["run"] = a.node("en:run", "action", "tool_call", "runner: " + COMMAND,
                      [r_ask, r_exec, r_out])
    n["out:run"] = a.node("en:run-out", "artifact", "artifact", "run output",
                          individual="out:run")
    a.edge("uses", n["run"], n["prog:mc_pi"])
    a.edge("produces", n["run"], n["out:run"])
    for iid, kind, name, media in [("tbl:results", "table", "results.csv", "text/csv"),
                                   ("tbl:summary", "table", "summary.csv", "text/csv"),
                                   ("data:fit", "table", "fit.json", "application/json"),
                                   ("fig:error", "figure", "error.svg", "image/svg+xml")]:
        a.artifact(iid, kind, f"out/{name}", made[f"out/{name}"], media, stream="runner",
                   produced_by="op:run", status="accepted", trace=[r_out])
        n[iid] = a.node("en:" + iid.replace(":", "-"), "artifact", "artifact", name,
                        individual=iid)
        a.edge("produces", n["run"], n[iid])
    wf_run = a.phase("wf:run", "execute", "Simulation run",
                     [n["run"], n["out:run"], n["tbl:results"], n["tbl:summary"],
                      n["data:fit"], n["fig:error"]])
    a.edge("informs", wf_code, wf_run)
    team.c = critic_recompute(made["out/results.csv"], made["out/summary.csv"],
                              made["out/fit.json"])
    _drafts(team, clock, wf_run)
    a.artifact("log:bus", "transcript", bus.name, ("\n".join(bus.lines) + "\n").encode(),
               "application/x-ndjson", stream="tracer",
               attributes={"format": "team-bus-jsonl", "records": len(bus.lines)})


def _drafts(team: Team, clock: FixedClock, wf_run: str) -> None:
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
    w.append("operator", id="op:draft1", run=RUN, stream="pi", op="synthesize",
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
    w.append("operator", id="op:review1", run=RUN, stream="critic", op="review",
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
    w.append("fitness", id="fit:draft:report@1", run=RUN, stream="critic",
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
    w.append("steering", id="steer:revise-1", run=RUN, stream="supervisor", command="revise",
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
    w.append("operator", id="op:draft2", run=RUN, stream="pi", op="revise",
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
    w.append("operator", id="op:review2", run=RUN, stream="critic", op="review",
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
    w.append("steering", id="steer:approve-2", run=RUN, stream="supervisor", command="approve",
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
    w.append("operator", id="op:draft3", run=RUN, stream="pi", op="revise",
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
    w.append("operator", id="op:publish", run=RUN, stream="pi", op="select",
             parents=["draft:report@3"], summary="Publish the approved report")
    team.archive("add", "draft:report@3", "op:publish", "approved by the supervisor",
                 archive="published")
    wf_d3 = a.phase("wf:draft-3", "claim", "Final report", [
        n["d3"], n["draft:report@3"], n["claim:estimate@3"], n["claim:rate@3"],
        n["claim:general"]])
    a.edge("frames", wf_s2, wf_d3)


def build(out_dir: Path | None = None) -> Path:
    w, clock = fresh_writer(
        NAME, title="Multi-agent report: Monte Carlo error against sample size",
        description=DESCRIPTION, start="2026-05-06T08:30:00Z", checkpoint_every=25,
        out_dir=out_dir, step_seconds=40.0)
    with w:
        record_session(Recorder(w, RUN, TRACER), clock)
    return Path(w.root)


if __name__ == "__main__":
    print(build())
