"""Example bundle ``air-quality``: LEDGER case study 1, hourly air-quality analysis.

An analysis agent cleans a UCI-format hourly air-quality file, its first run
fails on a missing optional dependency (seaborn), a patch replaces the plot
with a dependency-free SVG writer, the rerun succeeds and the final claims
quote cells of the tables that rerun wrote.  Nothing here is mocked: the
data file is synthesised deterministically, the analysis script is really
executed twice (``python -I -S`` so that site-packages cannot hide the
failure), and every payload is the exact bytes the script produced.

Every final claim binds the table cell it quotes; the field syntax is stated
in :mod:`example_bundles.make.bindings`, and the evaluator re-reads each bound
value from the payload bytes before it records a ``supported`` verdict.
"""

from __future__ import annotations

import difflib
import json
from pathlib import Path

from example_bundles.make.air_quality_claims import EVALUATOR, record_claims
from example_bundles.make.air_quality_data import synth_raw_csv
from example_bundles.make.common import FixedClock, fresh_writer, source_bytes, source_text
from example_bundles.make.recording import TRACER, Recorder
from example_bundles.make.running import run_script, shell_transcript
from example_bundles.make.transcripts import ClaudeTranscript

NAME = "air-quality"
RUN = "run:airq-2026-03-02"
CWD = "/home/agent/airq"
COMMAND = "python analyze_air_quality.py data/airqualityuci.csv out/"


# ---------------------------------------------------- the task and the code
DESCRIPTION = """\
A reproducible tabular analysis of an hourly air-quality file in the UCI Air
Quality layout (`;`-separated, decimal commas, `-200` = missing).  The data are
**synthetic** (a seeded generator with weekday rush hours and instrument
outages); the analysis script is real and was really run.  Its first run failed
on a missing optional dependency (`seaborn`), a patch replaced the plot with a
dependency-free SVG writer, and the rerun wrote the tables, plot and report
that the final claims quote.  Every claim binds the cell it quotes, and an
independent evaluator recomputed each value from the payload bytes.
"""

PROMPT = """\
Analyse data/airqualityuci.csv (hourly air-quality readings, UCI format).
1. Inspect and clean it: parse timestamps, convert numbers, and handle the
   documented missing-value convention (-200).
2. Report the number of rows, the date range and the missingness per column.
3. Characterise the typical daily pattern of the main pollutants (CO, NOx,
   NO2, C6H6): the mean for each hour of the day and the peak hour of each.
Write the tables, a plot and a short Markdown report to out/."""


#: What the rerun writes to out/: (individual id, kind, file name, media type).
OUTPUTS = [("tbl:cleaned", "table", "cleaned.csv", "text/csv"),
           ("tbl:summary", "table", "summary.json", "application/json"),
           ("tbl:hourly", "table", "hourly_means.csv", "text/csv"),
           ("tbl:peaks", "table", "peaks.csv", "text/csv"),
           ("fig:profile", "figure", "hourly_profile.svg", "image/svg+xml"),
           ("rep:report", "report", "report.md", "text/markdown")]

#: The agent's cross-check of its own outputs, run with ``python -c``.
CHECK = source_text(NAME, "check_outputs.py")


def analysis_script(version: int) -> bytes:
    """Version 1 plots with seaborn (absent here); version 2 writes SVG by hand."""
    return source_bytes(NAME, f"analyze_air_quality.v{version}.py")


# ---------------------------------------------------------------- the session
def _inspect_commands(a: Recorder, t: ClaudeTranscript, raw: bytes,
                      raw_nodes: list[str]) -> list[str]:
    """head / wc / tail / environment check: each a real command result on the real file."""
    text = raw.decode()
    probe = ("import importlib.util as u; "
             "print({m: u.find_spec(m) is not None for m in ('pandas', 'numpy')})")
    code, env_out, _ = run_script({}, ["-c", probe], alias=CWD)
    assert code == 0, env_out
    commands = [
        ("head", "head -n 5 data/airqualityuci.csv", "Preview the header and first rows",
         "".join(text.splitlines(keepends=True)[:5])),
        ("wc", "wc -l data/airqualityuci.csv", "Count lines",
         f"{text.count(chr(10))} data/airqualityuci.csv\n"),
        ("tail", "tail -n 4 data/airqualityuci.csv", "Inspect the ending rows",
         "".join(text.splitlines(keepends=True)[-4:])),
        ("env", f'python -c "{probe}"', "Check which analysis libraries are installed",
         env_out),
    ]
    nodes = []
    for key, command, why, output in commands:
        call, tid = t.call("Bash", {"command": command, "description": why}, "command")
        res = t.result(tid, output.rstrip("\n"))
        op = f"op:{key}"
        a.w.append("operator", id=op, run=RUN, stream="agent", op="inspect", tool="Bash",
                   parents=["ds:raw"] if key != "env" else [], params={"command": command},
                   trace=[call, res], summary=why)
        out = a.artifact(f"out:{key}", "command_output", f"{key}.txt",
                         shell_transcript(command, output, 0), "text/plain", produced_by=op,
                         trace=[res])
        act = a.node(f"en:{key}", "action", "tool_call", f"{why}: `{command}`", [call, res])
        art = a.node(f"en:{key}-out", "artifact", "artifact", f"output of `{command}`",
                     individual=out)
        if key != "env":
            a.edge("uses", act, raw_nodes[0])
        a.edge("produces", act, art)
        nodes += [act, art]
    return nodes


def record_session(a: Recorder, clock: FixedClock) -> None:
    """The whole session, phase by phase, in the order its events are appended."""
    w = a.w
    w.append("run", id=RUN, stream="agent", title="Hourly air-quality analysis",
             objective=PROMPT, agent="claude-code 1.0.98 (claude-sonnet-4-20250514)")
    for sid, kind, name, desc in [
            ("user", "human", "analyst", "The person who asked for the analysis."),
            ("agent", "agent", "claude-code", "Claude Code 1.0.98 session in " + CWD),
            ("tracer", "tracer", TRACER, "Groups trace records into evidence and workflow "
             "nodes; edges it inferred say so (provenance inferred, with a confidence)."),
            ("evaluator", "evaluator", EVALUATOR["name"], "Re-reads the raw CSV and the bound "
             "table cells and recomputes every quoted value.")]:
        w.append("stream", id=sid, run=RUN, kind=kind, name=name, description=desc)
    t = ClaudeTranscript(w, clock, name="transcripts/airq-session.jsonl", seed=31,
                         run=RUN, cwd=CWD)
    raw = synth_raw_csv()

    en_raw, en_plan_doc, wf_plan = _context_and_plan(a, t, raw)
    en_note, wf_inspect = _inspect_phase(a, t, clock, raw, en_raw, wf_plan)
    files, arts, wf_exec = _execute(a, t, raw, en_raw, en_plan_doc, en_note, wf_inspect)
    wf_validate = _validate(a, t, files, arts, wf_exec)
    record_claims(a, t, raw, arts, wf_validate)
    a.artifact("log:transcript", "transcript", t.name, ("\n".join(t.lines) + "\n").encode(),
               "application/x-ndjson", stream="tracer",
               attributes={"format": "claude-code-jsonl", "records": len(t.lines)})


def _context_and_plan(a: Recorder, t: ClaudeTranscript, raw: bytes) -> tuple[str, str, str]:
    """The prompt and the source file, then the agent's plan: (raw node, plan node, plan phase)."""
    w = a.w
    r_prompt = t.user(PROMPT)
    a.artifact("ds:raw", "dataset", "data/airqualityuci.csv", raw, "text/csv; charset=utf-8",
               stream="user", status="accepted",
               attributes={"format": "UCI Air Quality layout: ';' separator, decimal comma, "
                           "-200 = missing", "synthetic": True, "seed": 2004})
    en_prompt = a.node("en:prompt", "action", "user_message", "Task prompt", [r_prompt])
    en_raw = a.node("en:dataset", "artifact", "artifact", "data/airqualityuci.csv",
                    individual="ds:raw")
    wf_context = a.phase("wf:context", "context", "Task and source data", [en_prompt, en_raw])

    plan_text = ("Plan: (1) inspect the file: header, row count, the last rows, installed "
                 "libraries; (2) write analyze_air_quality.py: parse Date+Time, decimal "
                 "commas, treat -200 as missing, drop blank rows; (3) write cleaned.csv, "
                 "summary.json, hourly_means.csv, peaks.csv, a plot and report.md; "
                 "(4) check the outputs against each other before reporting.")
    r_plan = t.say(plan_text)
    w.append("operator", id="op:plan", run=RUN, stream="agent", op="plan_update",
             parents=["ds:raw"], trace=[r_plan], summary="Cleaning and summary plan")
    a.artifact("doc:plan", "plan", "plan.md", (plan_text + "\n").encode(), "text/markdown",
               produced_by="op:plan", trace=[r_plan])
    en_plan = a.node("en:plan", "action", "assistant_message", "Cleaning and summary plan",
                     [r_plan])
    en_plan_doc = a.node("en:plan-doc", "artifact", "artifact", "plan.md", individual="doc:plan")
    a.edge("produces", en_plan, en_plan_doc)
    wf_plan = a.phase("wf:plan", "plan", "Cleaning and summary plan", [en_plan, en_plan_doc])
    a.edge("frames", wf_context, wf_plan)

    return en_raw, en_plan_doc, wf_plan


def _inspect_phase(a: Recorder, t: ClaudeTranscript, clock: FixedClock, raw: bytes,
                   en_raw: str, wf_plan: str) -> tuple[str, str]:
    """Inspection commands, two rows the tracer cannot normalise, the agent's format note."""
    inspect_nodes = _inspect_commands(a, t, raw, [en_raw])
    hook = {"parentUuid": t.parent, "isSidechain": False, "type": "progress",
            "data": {"type": "hook_progress", "hookEvent": "PostToolUse",
                     "hookName": "PostToolUse:Bash", "command": "ledger-hook capture"},
            "sessionId": t.session,
            "timestamp": clock.now.strftime("%Y-%m-%dT%H:%M:%S") + ".114Z"}
    r_odd = t.odd("unrecognized", json.dumps(hook, separators=(",", ":")),
                  "unrecognized transcript row type 'progress'; kept verbatim, not grouped")
    note = ("The file ends with 3 blank ';;;' rows and uses decimal commas. No pandas or "
            "numpy here, so I will parse with the csv module.")
    full = json.dumps({"parentUuid": t.parent, "type": "assistant", "message": {
        "role": "assistant", "content": [{"type": "text", "text": note}]}},
        separators=(",", ":"))
    cut = full[:118]
    try:
        json.loads(cut)
        raise AssertionError("the truncated row must not parse")
    except json.JSONDecodeError as exc:
        r_cut = t.odd("parse_error", cut, f"JSONDecodeError: {exc}")
    r_note = t.say(note)
    en_errors = a.node("en:trace-errors", "action", "trace_error",
                       "Rows the tracer could not normalise", [r_odd, r_cut])
    en_note = a.node("en:format-note", "action", "assistant_message",
                     "Format findings: blank tail rows, decimal commas, no pandas", [r_note])
    a.edge("informs", "en:tail-out", en_note, confidence=0.86,
           rationale="the note repeats what tail showed (3 blank rows)")
    a.edge("informs", "en:env-out", en_note, confidence=0.9,
           rationale="the note cites the library probe")
    wf_inspect = a.phase("wf:inspect", "inspect", "File and environment inspection",
                         [*inspect_nodes, en_errors, en_note])
    a.edge("informs", wf_plan, wf_inspect)

    return en_note, wf_inspect


def _execute(a: Recorder, t: ClaudeTranscript, raw: bytes, en_raw: str, en_plan_doc: str,
             en_note: str, wf_inspect: str) -> tuple[dict[str, bytes], dict[str, str], str]:
    """Write, fail, patch, rerun: returns (every file in the work folder, artifact nodes, phase)."""
    w = a.w
    v1, v2 = analysis_script(1), analysis_script(2)
    c_write, tid = t.call("Write", {"file_path": f"{CWD}/analyze_air_quality.py",
                                    "content": v1.decode()}, "file_write")
    r_write = t.result(tid, f"File created successfully at: {CWD}/analyze_air_quality.py",
                       extra={"type": "create", "filePath": f"{CWD}/analyze_air_quality.py"})
    w.append("operator", id="op:write", run=RUN, stream="agent", op="synthesize", tool="Write",
             parents=["doc:plan", "out:head", "out:tail"], trace=[c_write, r_write],
             summary="Write the analysis script")
    a.artifact("prog:analyze@1", "program", "analyze_air_quality.py", v1, "text/x-python",
               produced_by="op:write", status="candidate", trace=[c_write])
    files = {"data/airqualityuci.csv": raw, "analyze_air_quality.py": v1}
    code1, out1, _ = run_script(files, ["analyze_air_quality.py", "data/airqualityuci.csv",
                                        "out/"], alias=CWD)
    assert code1 == 1 and "No module named 'seaborn'" in out1, out1
    c_run1, tid = t.call("Bash", {"command": COMMAND, "description": "Run the analysis"},
                         "command")
    r_run1 = t.result(tid, f"Error: {out1.rstrip()}", is_error=True)
    w.append("operator", id="op:run1", run=RUN, stream="agent", op="execute", tool="Bash",
             parents=["prog:analyze@1", "ds:raw"], outcome="failure", trace=[c_run1, r_run1],
             params={"command": COMMAND, "exit_status": code1},
             summary="First run: ModuleNotFoundError for seaborn")
    a.artifact("out:run1", "command_output", "run1.txt", shell_transcript(COMMAND, out1, code1),
               "text/plain", produced_by="op:run1", trace=[r_run1])
    diag = ("seaborn is an optional plotting dependency and is not installed (no network "
            "here). Replacing the plot with a small dependency-free SVG writer.")
    r_diag = t.say(diag)
    patch = "".join(difflib.unified_diff(
        v1.decode().splitlines(keepends=True), v2.decode().splitlines(keepends=True),
        "a/analyze_air_quality.py", "b/analyze_air_quality.py")).encode()
    c_edit, tid = t.call("Write", {"file_path": f"{CWD}/analyze_air_quality.py",
                                   "content": v2.decode()}, "file_write")
    r_edit = t.result(tid, f"The file {CWD}/analyze_air_quality.py has been updated.",
                      extra={"type": "update", "filePath": f"{CWD}/analyze_air_quality.py",
                             "unifiedDiff": patch.decode()})
    w.append("operator", id="op:patch", run=RUN, stream="agent", op="revise", tool="Write",
             parents=["prog:analyze@1", "out:run1"], trace=[r_diag, c_edit, r_edit],
             summary="Drop seaborn; write the plot as hand-built SVG")
    a.artifact("patch:svg-plot", "patch", "analyze_air_quality.diff", patch, "text/x-diff",
               produced_by="op:patch", trace=[r_edit])
    a.artifact("prog:analyze@2", "program", "analyze_air_quality.py", v2, "text/x-python",
               version=2, supersedes="prog:analyze@1", produced_by="op:patch", status="accepted",
               trace=[c_edit])
    files["analyze_air_quality.py"] = v2
    code2, out2, made = run_script(files, ["analyze_air_quality.py", "data/airqualityuci.csv",
                                           "out/"], alias=CWD)
    assert code2 == 0, out2
    c_run2, tid = t.call("Bash", {"command": COMMAND, "description": "Rerun after the patch"},
                         "command")
    r_run2 = t.result(tid, out2.rstrip())
    w.append("operator", id="op:run2", run=RUN, stream="agent", op="execute", tool="Bash",
             parents=["prog:analyze@2", "ds:raw"], trace=[c_run2, r_run2],
             params={"command": COMMAND, "exit_status": code2}, summary="Rerun: 6 outputs")
    a.artifact("out:run2", "command_output", "run2.txt", shell_transcript(COMMAND, out2, code2),
               "text/plain", produced_by="op:run2", trace=[r_run2])
    for iid, kind, name, media in OUTPUTS:
        a.artifact(iid, kind, f"out/{name}", made[f"out/{name}"], media, produced_by="op:run2",
                   status="accepted", trace=[r_run2])
    en = {k: a.node(f"en:{k}", "action", "tool_call", label, recs) for k, label, recs in [
        ("write", "Write analyze_air_quality.py", [c_write, r_write]),
        ("run1", "Run the analysis (fails)", [c_run1, r_run1]),
        ("diagnose", "Diagnose: seaborn missing", [r_diag]),
        ("patch", "Patch: SVG plot without seaborn", [c_edit, r_edit]),
        ("run2", "Rerun the analysis", [c_run2, r_run2])]}
    arts = {iid: a.node("en:" + iid.replace(":", "-"), "artifact", "artifact", label,
                        individual=iid) for iid, label in [
        ("prog:analyze@1", "analyze_air_quality.py v1"), ("out:run1", "run 1 traceback"),
        ("patch:svg-plot", "unified diff v1 -> v2"),
        ("prog:analyze@2", "analyze_air_quality.py v2"),
        ("out:run2", "run 2 stdout"), *((iid, f"out/{name}") for iid, _, name, _ in OUTPUTS)]}
    a.edge("uses", en["write"], en_plan_doc)
    a.edge("informs", en_note, en["write"], confidence=0.82,
           rationale="the script skips blank rows and parses decimal commas as the note said")
    a.edge("produces", en["write"], arts["prog:analyze@1"])
    a.edge("uses", en["run1"], arts["prog:analyze@1"])
    a.edge("uses", en["run1"], en_raw)
    a.edge("produces", en["run1"], arts["out:run1"])
    a.edge("informs", arts["out:run1"], en["diagnose"], confidence=0.95,
           rationale="the diagnosis names the module from the traceback")
    a.edge("uses", en["patch"], arts["prog:analyze@1"])
    a.edge("produces", en["patch"], arts["patch:svg-plot"])
    a.edge("produces", en["patch"], arts["prog:analyze@2"])
    a.edge("uses", en["run2"], arts["prog:analyze@2"])
    a.edge("uses", en["run2"], en_raw)
    for iid in ("out:run2", *(o[0] for o in OUTPUTS)):
        a.edge("produces", en["run2"], arts[iid])
    wf_exec = a.phase("wf:execute", "execute", "Write, fail, patch and rerun the analysis",
                      [*en.values(), *arts.values()])
    a.edge("informs", wf_inspect, wf_exec)

    files.update(made)
    return files, arts, wf_exec


def _validate(a: Recorder, t: ClaudeTranscript, files: dict[str, bytes], arts: dict[str, str],
              wf_exec: str) -> str:
    """The agent's own cross-check of tables, plot and report, really run."""
    w = a.w
    code3, out3, _ = run_script(files, ["-c", CHECK], alias=CWD)
    assert code3 == 0 and out3.endswith("OK\n"), out3
    c_check, tid = t.call("Bash", {"command": f"python - <<'EOF'\n{CHECK}EOF",
                                   "description": "Cross-check tables, plot and report"},
                          "command")
    r_check = t.result(tid, out3.rstrip())
    checked = [o[0] for o in OUTPUTS]
    w.append("operator", id="op:check", run=RUN, stream="agent", op="verify", tool="Bash",
             parents=checked, trace=[c_check, r_check], summary="Outputs agree with each other")
    a.artifact("out:check", "command_output", "check.txt",
               shell_transcript("python - <<'EOF' ... EOF", out3, code3), "text/plain",
               produced_by="op:check", trace=[r_check])
    w.append("fitness", id="fit:check", run=RUN, stream="agent", target="rep:report",
             evaluator={"name": "agent output cross-check", "version": "1"}, passed=True,
             operator="op:check", evidence=["out:check", *checked],
             note="row counts, argmax peaks, SVG polylines and report table agree")
    en_check = a.node("en:check", "action", "tool_call", "Cross-check outputs", [c_check, r_check])
    en_check_out = a.node("en:check-out", "artifact", "artifact", "check output",
                          individual="out:check")
    a.edge("produces", en_check, en_check_out)
    for iid in checked:
        a.edge("checked_by", arts[iid], en_check)
    wf_validate = a.phase("wf:validate", "validate", "Validate report, tables and plot",
                          [en_check, en_check_out])
    a.edge("checked_by", wf_exec, wf_validate)

    return wf_validate


def build(out_dir: Path | None = None) -> Path:
    w, clock = fresh_writer(
        NAME, title="Air quality: daily pollutant patterns (LEDGER case study 1)",
        description=DESCRIPTION, start="2026-03-02T09:14:00Z", checkpoint_every=40,
        out_dir=out_dir, step_seconds=9.0)
    with w:
        record_session(Recorder(w, RUN), clock)
    return w.root


if __name__ == "__main__":
    print(build())
