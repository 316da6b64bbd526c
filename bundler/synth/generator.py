"""Synthetic review bundles of any size, for benchmarks and scale tests.

Everything goes through :class:`~bundler.author.BundleWriter`, so a synthetic
bundle is exactly what a real producer would write; the generator only
decides *what* to append.  Two properties matter more than realism:

* **Determinism.** Same ``(events, seed, checkpoint_every, payload_bytes)`` gives the
  same bytes: a fixed clock from 2026-01-01T00:00:00Z, one
  ``random.Random(seed)`` for every structural choice, a signing key derived
  from the seed, and payload bytes derived from ``(seed, kind, key)``.
* **Bounded memory.** Nothing here keeps the log: an episode holds its own
  few dozen ids, and across episodes only fixed-size windows survive (recent
  claims, the current plan, the payload cache whose key space is capped).
  The writer itself keeps every id (to refuse duplicates) and every manifest
  entry; that is O(events) strings and is the generator's only growth.
"""

from __future__ import annotations

import hashlib
import json
import random
import time
from collections import Counter, deque
from pathlib import Path
from typing import Any

from bundler.author import BundleWriter
from bundler.errors import UsageError
from bundler.integrity.note import SignerKey
from bundler.synth.payloads import PayloadPool, PayloadSize, Stored, sentence

START = "2026-01-01T00:00:00Z"
_START_EPOCH = 1_767_225_600  # 2026-01-01T00:00:00Z as a POSIX time
GENERATOR = "review-bundler synth/1"

#: role -> (stream kind, display name)
STREAMS: dict[str, tuple[str, str]] = {
    "planner": ("agent", "planner agent"),
    "coder": ("agent", "coding agent"),
    "python": ("tool", "python sandbox"),
    "shell": ("tool", "shell"),
    "tests": ("evaluator", "unit tests"),
    "judge": ("evaluator", "claim checker"),
    "reviewer": ("human", "human reviewer"),
    "tracer": ("tracer", "LEDGER trace builder"),
}
EVALUATORS: dict[str, dict[str, str]] = {
    "tests": {"name": "pytest", "version": "8.2.0"},
    "judge": {"name": "claim-checker", "version": "2.1.0"},
    "reviewer": {"name": "human-review", "version": "1"},
}
TRACER = "ledger-tracer/0.4"


def synthetic_signer(seed: int) -> SignerKey:
    """The deterministic signing key of synthetic bundles made with ``seed``.

    Private key = SHA-256(b"review-bundler synthetic" || decimal ASCII of seed).
    Public knowledge by construction: pin it to check that verification of a
    *synthetic* bundle reaches the "pinned" trust level, nothing more.
    """
    material = b"review-bundler synthetic" + str(seed).encode("ascii")
    return SignerKey(name="synthetic", private_key=hashlib.sha256(material).digest())


class SyntheticClock:
    """Starts at 2026-01-01T00:00:00Z and moves 2 s per event; ``advance`` adds gaps."""

    def __init__(self) -> None:
        self.offset = 0

    def __call__(self) -> str:
        stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(_START_EPOCH + self.offset))
        self.offset += 2
        return stamp

    def advance(self, seconds: int) -> None:
        self.offset += seconds


class Done(Exception):
    """The event budget is spent; raised right after the last event is written."""


class Synth:
    """The writer plus the small amount of state needed to pick references.

    Every ``emit`` checks the budget *after* appending, so generation stops
    between two complete events and payload bytes are only stored for an
    event that is then certainly written.
    """

    def __init__(self, writer: BundleWriter, *, seed: int, events: int,
                 payload_bytes: PayloadSize, clock: SyntheticClock) -> None:
        self.w = writer
        self.rng = random.Random(seed)
        self.budget = events
        self.clock = clock
        self.pool = PayloadPool(self._put, seed=seed, events=events, size=payload_bytes)
        self.counts: Counter[str] = Counter()
        self.run = ""
        self.streams: dict[str, str] = {}
        self.lines: Counter[str] = Counter()
        self.recent_claims: deque[str] = deque(maxlen=32)
        self.plan = ("", 0)  # current plan individual id and version
        self.secrets = 0
        self.episodes = 0

    # ----------------------------------------------------------------- basics
    def _put(self, data: bytes, media_type: str, ext: str) -> Stored:
        ref = self.w.put_payload(data, media_type)
        return Stored(ref.digest, ref.size, media_type, ext)

    def tick(self, etype: str) -> None:
        self.counts[etype] += 1
        if self.w.size >= self.budget:
            raise Done

    def emit(self, etype: str, prefix: str, role: str, **fields: Any) -> str:
        eid = f"{prefix}-{self.w.size}"
        self.w.append(etype, id=eid, run=self.run, stream=self.streams[role], **fields)
        self.tick(etype)
        return eid

    def chance(self, p: float) -> bool:
        return self.rng.random() < p

    # ------------------------------------------------------------------- runs
    def start_run(self) -> None:
        run = f"run-{self.w.size}"
        self.run = run
        self.streams = {role: f"{run}/{role}" for role in STREAMS}
        self.lines.clear()
        self.w.append("run", id=run, run=run, stream=self.streams["planner"],
                      title=f"Synthetic run {run}: {sentence(self.rng, 4)[:-1]}",
                      objective=sentence(self.rng, 12), agent="synthetic-agent/1.0")
        self.tick("run")
        for role, (kind, name) in STREAMS.items():
            sid = self.streams[role]
            self.w.append("stream", id=sid, run=run, stream=sid, kind=kind, name=name,
                          description=f"{name} of {run}")
            self.tick("stream")
        msg = self.trace("planner", "message", {"role": "user", "content": sentence(self.rng, 10)})
        node = self.emit("evidence_node", "en", "tracer", node_type="action",
                         category="user_message", label="task statement", records=[msg])
        ctx = self.emit("workflow_node", "wf", "tracer", phase="context", label="task",
                        members=[node])
        plan = self.individual("plan", "plan", "planner", status="accepted", trace=[msg])
        self.plan = (plan, 1)
        art = self.emit("evidence_node", "en", "tracer", node_type="artifact",
                        category="artifact", label="initial plan", individual=plan)
        wf = self.emit("workflow_node", "wf", "tracer", phase="plan", label="initial plan",
                       members=[art])
        self.edge("frames", ctx, wf)

    # ------------------------------------------------------------ event kinds
    def trace(self, role: str, kind: str, body: dict[str, Any]) -> str:
        self.lines[role] += 1
        fields: dict[str, Any] = {}
        raw = json.dumps(body, ensure_ascii=False, sort_keys=True)
        if self.chance(0.01):
            kind, raw = "parse_error", raw[: len(raw) // 2]
            fields["error"] = "unterminated JSON object (transcript line cut off)"
        return self.emit("trace_record", "tr", role,
                         source={"transcript": f"transcripts/{self.run}/{role}.jsonl",
                                 "line": self.lines[role]},
                         record_kind=kind, raw=raw, **fields)

    def individual(self, kind: str, name: str, role: str, *, produced_by: str | None = None,
                   version: int = 1, supersedes: str | None = None, status: str = "candidate",
                   trace: list[str] | None = None, external: str | None = None) -> str:
        stored = self.pool.draw(kind, self.rng)
        payload = {"digest": stored.digest, "size": stored.size,
                   "media_type": stored.media_type, "name": f"{name}.{stored.ext}"}
        return self.emit("individual", "ind", role, kind=kind, name=name, version=version,
                         supersedes=supersedes, produced_by=produced_by, payload=payload,
                         status=status, trace=trace or [], external=external)

    def operator(self, op: str, parents: list[str], role: str, *, trace: list[str],
                 steering: str | None = None, **params: Any) -> str:
        tool = {"coder": "python", "planner": "planner-llm", "judge": "claim-checker"}.get(role)
        failed = self.chance(0.03)
        return self.emit("operator", "op", role, op=op, parents=parents, tool=tool,
                         agent="synthetic-agent/1.0", params=params, trace=trace,
                         steering=steering, outcome="failure" if failed else None,
                         summary=f"{op}: {sentence(self.rng, self.rng.randint(3, 9))}")

    def fitness(self, target: str, role: str, **fields: Any) -> str:
        return self.emit("fitness", "fit", role, target=target, evaluator=EVALUATORS[role],
                         **fields)

    def score(self, target: str, op: str | None = None) -> tuple[str, float, float]:
        """A test-suite score with threshold; returns (fitness id, score, threshold)."""
        value = round(self.rng.random(), 4)
        threshold = self.rng.choice((0.5, 0.6, 0.75, 0.9))
        fid = self.fitness(target, "tests", metric="pass_rate", score=value, threshold=threshold,
                           passed=value >= threshold, operator=op)
        return fid, value, threshold

    def edge(self, relation: str, source: str, target: str, *, inferred: bool = False) -> str:
        if inferred:
            return self.emit("edge", "e", "tracer", relation=relation, source=source,
                             target=target, provenance="inferred", inferred_by=TRACER,
                             confidence=round(self.rng.uniform(0.3, 0.99), 2),
                             rationale=sentence(self.rng, 6))
        return self.emit("edge", "e", "tracer", relation=relation, source=source, target=target)

    def archive(self, name: str, action: str, member: str, reason: str,
                op: str | None = None) -> str:
        return self.emit("archive", "arc", "planner", archive=f"{name}/{self.run}",
                         action=action, member=member, reason=reason, operator=op)

    def derive(self, op: str, parents: list[str], kind: str, name: str, *,
               ledger: list[str], version: int = 1, supersedes: str | None = None,
               status: str = "candidate", steering: str | None = None,
               role: str = "coder") -> tuple[str, str]:
        """tool call -> operator -> tool result -> child individual (+ LEDGER nodes)."""
        call = self.trace(role, "tool_call", {"tool": "python", "op": op, "parents": parents})
        opid = self.operator(op, parents, role, trace=[call], steering=steering,
                             temperature=round(self.rng.uniform(0.0, 1.2), 2),
                             attempt=self.rng.randint(1, 3))
        records = [call]
        if self.chance(0.7):
            records.append(self.trace("python", "tool_result",
                                      {"exit": 0, "stdout": sentence(self.rng, 5)}))
        ind = self.individual(kind, name, role, produced_by=opid, version=version,
                              supersedes=supersedes, status=status, trace=records[1:])
        if self.chance(0.5):
            action = self.emit("evidence_node", "en", "tracer", node_type="action",
                               category="tool_call", label=f"{op} {name}", records=records)
            art = self.emit("evidence_node", "en", "tracer", node_type="artifact",
                            category="artifact", label=name, individual=ind)
            self.edge("produces", action, art)
            ledger.extend((action, art))
        return opid, ind

    # ------------------------------------------------------------------ claims
    def claim(self, subject: str, fid: str, value: float, threshold: float, *,
              final: bool, extra_evidence: list[str]) -> str:
        """A claim citing a scored artifact; final claims always carry a binding
        (or say ``unsupported``), so RB503 can never fire, even if truncated."""
        evidence = [subject, fid, *extra_evidence]
        bindings: list[dict[str, Any]] = []
        status = None
        if self.chance(0.9):
            bindings.append({"evidence": fid, "field": "score", "value": value,
                             "comparison": f">= threshold {threshold}"})
            if self.chance(0.2):
                bindings.append({"evidence": fid, "field": "passed", "value": value >= threshold,
                                 "stance": "weakens" if value < threshold else "supports",
                                 "note": sentence(self.rng, 5)})
        elif final:
            status = "unsupported"
        derived = [self.rng.choice(self.recent_claims)] \
            if self.recent_claims and self.chance(0.3) else []
        text = (f"`{subject}` reaches a pass rate of **{value}** "
                f"({'at or above' if value >= threshold else 'below'} the {threshold} "
                f"threshold). {sentence(self.rng, self.rng.randint(4, 20))}")
        cid = self.emit("claim", "claim", "planner", name=f"claim about {subject}", text=text,
                        evidence=evidence, bindings=bindings, final=final or None,
                        claim_status=status, derived_from=derived)
        self.recent_claims.append(cid)
        return cid

    def check_claim(self, cid: str, evidence: list[str]) -> str:
        """Verification operator and its verdict, sometimes escalated to a human."""
        call = self.trace("judge", "tool_call", {"tool": "claim-checker", "claim": cid})
        opid = self.operator("verify", [cid], "judge", trace=[call], strictness="high")
        verdict = self.rng.choices(
            ("supported", "unsupported", "contradicted", "needs_human_review"),
            weights=(60, 15, 10, 15))[0]
        fid = self.fitness(cid, "judge", verdict=verdict, operator=opid, evidence=evidence,
                           review=f"{verdict.replace('_', ' ')}: {sentence(self.rng, 8)}")
        if verdict == "needs_human_review" and self.chance(0.5):
            self.clock.advance(3_600)
            ok = self.chance(0.6)
            self.fitness(cid, "reviewer", passed=ok, verdict="supported" if ok else
                         "unsupported", review=f"Reviewed by hand. {sentence(self.rng, 10)}")
        return fid


def generate(path: Path, *, events: int, seed: int = 0, checkpoint_every: int = 1000,
             payload_bytes: PayloadSize = "small") -> Path:
    """Write a synthetic bundle with exactly ``events`` events to the empty folder ``path``."""
    from bundler.synth.shapes import episode

    if events < 2:
        # A run must name a stream that is declared by a later stream event.
        raise UsageError("a synthetic bundle needs at least 2 events (a run and its stream)")
    if payload_bytes not in ("small", "large"):
        raise UsageError(f"payload_bytes must be 'small' or 'large', not {payload_bytes!r}")
    clock = SyntheticClock()
    writer = BundleWriter.create(
        path, title=f"Synthetic bundle: {events:,} events (seed {seed}, {payload_bytes} payloads)",
        description=("Generated by `review-bundler generate` for benchmarks and scale tests. "
                     "Every artifact, score and claim in it is made up."),
        signer=synthetic_signer(seed), created=START, checkpoint_every=checkpoint_every,
        origin=f"synthetic.review-bundler.invalid/seed-{seed}/events-{events}/{payload_bytes}",
        clock=clock, generator=GENERATOR)
    synth = Synth(writer, seed=seed, events=events, payload_bytes=payload_bytes, clock=clock)
    with writer:
        try:
            while True:
                synth.start_run()
                for _ in range(synth.rng.randint(4, 16)):
                    episode(synth)
        except Done:
            pass
    return Path(path)
