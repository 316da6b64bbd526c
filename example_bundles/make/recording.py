"""The LEDGER vocabulary the examples record in: artifact, node, phase, edge, claim.

LEDGER (seeds 000/001) keeps an agent's raw trace records, groups them into
evidence nodes and workflow nodes (phases: context, plan, inspect, execute,
validate, claim) and links them with typed edges.  :class:`Recorder` writes
those layers with one short call each, so a generator reads as the story of
the session rather than as event plumbing.  Edges given a ``confidence`` are
recorded as *inferred* by the tracer; all others as *recorded*.

:meth:`Recorder.claim` refuses to write a binding whose value is not what
:func:`~example_bundles.make.bindings.resolve_field` reads from the payload
bytes, so a generator cannot drift from its own evidence.
"""

from __future__ import annotations

from typing import Any

from bundler.author import BundleWriter
from example_bundles.make.bindings import Scalar, resolve_field, value_matches

#: The tracer named on every inferred edge unless a generator says otherwise.
TRACER = "ledger-tracer 0.3.1"


class Recorder:
    """Appends LEDGER-shaped events for one run and remembers every payload it stored."""

    def __init__(self, w: BundleWriter, run: str, tracer: str = TRACER) -> None:
        self.w, self.run, self.tracer = w, run, tracer
        self.payloads: dict[str, tuple[bytes, str]] = {}

    def artifact(self, iid: str, kind: str, name: str, data: bytes, media: str,
                 **fields: Any) -> str:
        ref = self.w.put_payload(data, media, name)
        self.payloads[iid] = (data, media)
        self.w.append("individual", id=iid, run=self.run, stream=fields.pop("stream", "agent"),
                      kind=kind, name=name, payload=ref.model_dump(exclude_defaults=True),
                      **fields)
        return iid

    def node(self, nid: str, node_type: str, category: str, label: str,
             records: list[str] | None = None, individual: str | None = None) -> str:
        self.w.append("evidence_node", id=nid, run=self.run, stream="tracer", node_type=node_type,
                      category=category, label=label, records=records or [],
                      individual=individual)
        return nid

    def phase(self, wid: str, phase: str, label: str, members: list[str]) -> str:
        self.w.append("workflow_node", id=wid, run=self.run, stream="tracer", phase=phase,
                      label=label, members=members)
        return wid

    def edge(self, relation: str, source: str, target: str, *, confidence: float | None = None,
             rationale: str = "") -> None:
        inferred = confidence is not None
        self.w.append("edge", id=f"e:{source}:{relation}:{target}", run=self.run, stream="tracer",
                      relation=relation, source=source, target=target,
                      provenance="inferred" if inferred else "recorded",
                      inferred_by=self.tracer if inferred else None, confidence=confidence,
                      rationale=rationale)

    def check(self, evidence: str, field: str, value: Scalar) -> None:
        """Raise unless ``field`` of the payload stored as ``evidence`` equals ``value``."""
        data, media = self.payloads[evidence]
        resolved = resolve_field(data, media, field)
        if not value_matches(value, resolved):
            raise AssertionError(f"{evidence} {field} is {resolved!r}, not {value!r}")

    def claim(self, cid: str, text: str, bindings: list[tuple[str, str, Scalar]],
              trace: list[str], *, stream: str = "agent", **fields: Any) -> str:
        """Append a claim (final unless told otherwise) after checking every binding."""
        for evidence, field, value in bindings:
            self.check(evidence, field, value)
        fields.setdefault("final", True)
        fields.setdefault("status", "final" if fields["final"] else "candidate")
        fields.setdefault("evidence", sorted({b[0] for b in bindings}))
        fields.setdefault("name", cid.split(":", 1)[1])
        self.w.append("claim", id=cid, run=self.run, stream=stream, text=text, trace=trace,
                      bindings=[{"evidence": e, "field": f, "value": v} for e, f, v in bindings],
                      **fields)
        return cid
