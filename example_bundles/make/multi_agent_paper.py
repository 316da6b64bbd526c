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
drafts, and the critic's checks recomputed from the payload bytes, are in
:mod:`example_bundles.make.multi_agent_drafts`.  Binding fields use the
syntax documented in :mod:`example_bundles.make.bindings`.
"""

from __future__ import annotations

from pathlib import Path

from example_bundles.make.common import FixedClock, fresh_writer, source_bytes
from example_bundles.make.multi_agent_drafts import CRITIC, Team, critic_recompute, write_drafts
from example_bundles.make.recording import TRACER, Recorder
from example_bundles.make.running import run_script, shell_transcript
from example_bundles.make.transcripts import TeamBus

NAME = "multi-agent-paper"
RUN = "run:team-mcpi-2026-05-06"
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
    write_drafts(team, clock, wf_run)
    a.artifact("log:bus", "transcript", bus.name, ("\n".join(bus.lines) + "\n").encode(),
               "application/x-ndjson", stream="tracer",
               attributes={"format": "team-bus-jsonl", "records": len(bus.lines)})


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
