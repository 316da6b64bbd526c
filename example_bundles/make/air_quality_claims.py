"""Air-quality findings: the final answer's claims, each bound to the cells it quotes.

Every number in a claim comes from the tables the rerun wrote (``a.payloads``),
is bound to its cell (field syntax: :mod:`example_bundles.make.bindings`), and
must also equal :func:`~example_bundles.make.air_quality_data.independent_summary`,
the evaluator's own reading of the raw file.  Only then does the evaluator
record a ``supported`` verdict: two independent readings of the source agree.
"""

from __future__ import annotations

import csv
import io
import json

from example_bundles.make.air_quality_data import independent_summary
from example_bundles.make.bindings import Scalar
from example_bundles.make.recording import Recorder
from example_bundles.make.transcripts import ClaudeTranscript

EVALUATOR = {"name": "airq-recompute", "version": "1.0.0"}
UNITS = {"CO": "mg/m³", "NOx": "ppb", "NO2": "µg/m³", "C6H6": "µg/m³"}


def record_claims(a: Recorder, t: ClaudeTranscript, raw: bytes, arts: dict[str, str],
                  wf_validate: str) -> None:
    """The final answer's findings as bound claims, then the evaluator's verdict on each."""
    ref = independent_summary(raw)
    summary = json.loads(a.payloads["tbl:summary"][0])
    peaks = {r["pollutant"]: r for r in csv.DictReader(
        io.StringIO(a.payloads["tbl:peaks"][0].decode()))}
    specs: list[tuple[str, str, list[tuple[str, str, Scalar]]]] = [
        ("claim:row-count",
         f"The cleaned dataset has **{summary['rows']:,}** hourly rows; the "
         f"{summary['skipped_blank_rows']} blank `;;;` rows at the end of the file were skipped.",
         [("tbl:cleaned", "#rows", ref["rows"]), ("tbl:summary", "rows", ref["rows"]),
          ("tbl:summary", "skipped_blank_rows", ref["blank"])]),
        ("claim:date-range",
         f"The readings run from {ref['first'].replace('T', ' ')} to "
         f"{ref['last'].replace('T', ' ')}.",
         [("tbl:summary", "date_range.first", ref["first"]),
          ("tbl:summary", "date_range.last", ref["last"])]),
        ("claim:missing-co",
         f"CO(GT) is missing (-200) in {ref['missing']['CO']} of {ref['rows']:,} rows "
         f"({summary['missing_pct']['CO']}%); NOx(GT) in {ref['missing']['NOx']}.",
         [("tbl:summary", "missing.CO", ref["missing"]["CO"]),
          ("tbl:summary", "missing_pct.CO", ref["missing_pct"]["CO"]),
          ("tbl:summary", "missing.NOx", ref["missing"]["NOx"])]),
    ]
    for name, unit in UNITS.items():
        hour = ref["peaks"][name]
        mean = float(ref["means"][(hour, name)])
        assert int(peaks[name]["peak_hour"]) == hour and float(peaks[name]["peak_mean"]) == mean
        specs.append((f"claim:peak-{name}",
                      f"Mean {name} peaks at **{hour:02d}:00** ({mean:g} {unit} averaged over "
                      "all days).",
                      [("tbl:peaks", f"peak_hour@pollutant={name}", hour),
                       ("tbl:peaks", f"peak_mean@pollutant={name}", mean),
                       ("tbl:hourly", f"{name}_mean@hour={hour}", mean)]))
    final_text = "\n".join(["Done. Findings:", *(f"- {s[1]}" for s in specs),
                            "Tables, plot and report are in out/."])
    r_final = t.say(final_text)
    claim_nodes = []
    for cid, text, bindings in specs:
        a.claim(cid, text, bindings, [r_final])
        claim_nodes.append(a.node("en:" + cid, "artifact", "claim", text, individual=cid))
    en_final = a.node("en:final", "action", "assistant_message", "Final answer", [r_final])
    wf_claim = a.phase("wf:claim", "claim", "Findings", [en_final, *claim_nodes])
    a.edge("supports", wf_validate, wf_claim)
    w = a.w
    w.append("operator", id="op:recompute", run=a.run, stream="evaluator", op="verify",
             tool=f"{EVALUATOR['name']} {EVALUATOR['version']}",
             parents=["ds:raw", "tbl:cleaned", "tbl:summary", "tbl:hourly", "tbl:peaks"],
             summary="Recompute every bound value from the raw CSV and the bound cells")
    for (cid, _, bindings), node in zip(specs, claim_nodes, strict=True):
        for evidence in sorted({b[0] for b in bindings}):
            a.edge("supports", arts[evidence], node)
        for evidence, field, value in bindings:
            a.check(evidence, field, value)
        w.append("fitness", id=f"fit:{cid}", run=a.run, stream="evaluator", target=cid,
                 evaluator=EVALUATOR, metric="bound values recomputed", passed=True,
                 verdict="supported", operator="op:recompute",
                 evidence=["ds:raw", *sorted({b[0] for b in bindings})],
                 note=f"{len(bindings)} binding(s) equal the payload cells and an independent "
                      "recomputation from data/airqualityuci.csv")
