"""Serialise a verification report as text, JSON or SARIF 2.1.0.

These are data formats, so they live in the library; the CLI only picks one.
Output is deterministic (sorted diagnostics, sorted keys) so reports can be
diffed and committed as golden files.
"""

from __future__ import annotations

import json
from collections import defaultdict
from typing import Any

from bundler import __version__, layout
from bundler.diagnostics import CODES, Diagnostic, Severity
from bundler.shown import shown
from bundler.verify.result import Trust, VerificationReport

TRUST_TEXT = {
    Trust.PINNED: "VALID, signed by a pinned key",
    Trust.BUNDLE_ONLY: "VALID, but signed only by a key found in the bundle (not pinned)",
    Trust.INVALID: "INVALID",
}


def to_json_obj(report: VerificationReport) -> dict[str, Any]:
    b = report.bundle
    return {
        "tool": {"name": "review-bundler", "version": __version__},
        "bundle": str(b.source_path),
        "title": b.metadata.title if b.metadata else None,
        "valid": report.valid,
        "trusted": report.trust is Trust.PINNED,
        "trust": report.trust.value,
        "pinned_keys": list(report.pinned_keys),
        "events": len(b.leaf_hashes) // 32,
        "signed_prefix": report.signed_prefix,
        "checkpoints": [
            {"path": c.path, "size": c.size, "root": c.root_hex, "root_matches": c.root_matches,
             "signatures": [{"name": s.key_name, "key_id": s.key_id, "valid": s.valid,
                             "pinned": s.pinned, "declared": s.declared} for s in c.signatures]}
            for c in b.checkpoints
        ],
        "payloads": {state: sum(1 for p in b.payloads.values() if p.state.value == state)
                     for state in sorted({p.state.value for p in b.payloads.values()})},
        "summary": report.summary(),
        "suppressed": dict(sorted(report.sink.suppressed.items())),
        "diagnostics": [d.as_dict() for d in report.diagnostics],
    }


def to_json(report: VerificationReport) -> str:
    return json.dumps(to_json_obj(report), indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def to_text(report: VerificationReport, *, color: bool = False) -> str:
    """Grouped by code, counted, worst first: readable at a glance."""
    b = report.bundle
    lines: list[str] = []
    title = b.metadata.title if b.metadata else "(no metadata)"
    verdict = TRUST_TEXT[report.trust]
    if color:
        code = {Trust.PINNED: "32", Trust.BUNDLE_ONLY: "33", Trust.INVALID: "31"}[report.trust]
        verdict = f"\x1b[1;{code}m{verdict}\x1b[0m"
    n = len(b.leaf_hashes) // 32
    lines.append(f"{shown(b.source_path)}: {shown(title)}")
    lines.append(f"  {verdict}")
    lines.append(f"  {n} events, {len(b.checkpoints)} checkpoints "
                 f"(signed prefix {report.signed_prefix}), {len(b.payloads)} payloads")
    s = report.summary()
    lines.append(f"  {s['error']} error(s), {s['warning']} warning(s), {s['info']} info")
    groups: dict[str, list[Diagnostic]] = defaultdict(list)
    for d in report.diagnostics:
        groups[d.code].append(d)
    for code, items in groups.items():
        sev = items[0].severity.label
        extra = report.sink.suppressed.get(code, 0)
        lines.append("")
        lines.append(f"{sev.upper()} {code} {CODES[code].title} ({len(items) + extra})")
        for d in items[:20]:
            lines.append(f"  {shown(d.location)}: {shown(d.message)}")
        if len(items) + extra > 20:
            lines.append(f"  … and {len(items) + extra - 20} more (use --format json)")
    return "\n".join(lines) + "\n"


_SARIF_LEVEL = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "note"}


def to_sarif(report: VerificationReport) -> str:
    """SARIF 2.1.0 for GitHub code scanning: findings become PR annotations.

    Locations are relative to the bundle folder, so upload with the bundle
    checked into the repository and ``--sarif-root`` pointing at it.
    """
    used = sorted({d.code for d in report.diagnostics})
    rules = [{
        "id": code,
        "name": CODES[code].title.title().replace(" ", "").replace("'", "")[:60],
        "shortDescription": {"text": CODES[code].title},
        "defaultConfiguration": {"level": _SARIF_LEVEL[CODES[code].severity]},
        "properties": {"step": CODES[code].step},
    } for code in used]
    index = {code: i for i, code in enumerate(used)}
    results = []
    for d in report.diagnostics:
        loc = d.location
        uri = loc.path or layout.EVENTS
        region: dict[str, int] = {}
        if loc.line is not None:
            region["startLine"] = loc.line
        phys: dict[str, Any] = {"artifactLocation": {"uri": uri, "uriBaseId": "BUNDLEROOT"}}
        if region:
            phys["region"] = region
        result: dict[str, Any] = {
            "ruleId": d.code, "ruleIndex": index[d.code], "level": _SARIF_LEVEL[d.severity],
            "message": {"text": d.message}, "locations": [{"physicalLocation": phys}],
        }
        if loc.seq is not None:
            result["properties"] = {"seq": loc.seq}
        results.append(result)
    doc = {
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {"name": "review-bundler", "version": __version__,
                                "rules": rules}},
            "originalUriBaseIds": {"BUNDLEROOT": {"description": {
                "text": "the bundle folder"}}},
            "results": results,
        }],
    }
    return json.dumps(doc, indent=2, sort_keys=True, ensure_ascii=False) + "\n"
