"""The three graph shapes of agent work, one episode at a time.

* a **refinement chain**: one artifact revised version after version;
* an **evolutionary population**: generations of mutation, crossover and
  selection, with an elite archive;
* a **tree search**: a frontier of partial solutions expanded best-first,
  with a bounded frontier archive.

Each episode then concludes with claims about its best results, their
verification, and the LEDGER workflow layer over what happened.  An episode
keeps only its own ids (a few dozen), never the log.
"""

from __future__ import annotations

from collections.abc import Callable

from bundler.synth.generator import Synth
from bundler.synth.payloads import sentence

#: (individual id, fitness id, score, threshold) of a scored artifact
Scored = tuple[str, str, float, float]


def episode(s: Synth) -> None:
    first = s.episodes == 0
    s.episodes += 1
    ledger: list[str] = []
    if first or s.chance(0.04):
        steer(s, ledger)
    shapes: tuple[Callable[[Synth, list[str]], list[Scored]], ...] = (chain, evolution, tree)
    shape = s.rng.choices(shapes, weights=(4, 3, 3))[0]
    results = shape(s, ledger)
    if first or s.chance(0.02):
        leak_and_redact(s, results[0][0], ledger)
    conclude(s, results, ledger)


def steer(s: Synth, ledger: list[str]) -> None:
    """A human command, and the plan update that applies it."""
    plan, version = s.plan
    s.clock.advance(1_800)
    command = s.rng.choice(("force_plan", "approve", "pause", "resume", "reject"))
    sid = s.emit("steering", "steer", "reviewer", command=command, issuer="reviewer@example.org",
                 text=f"{command.replace('_', ' ')}: {sentence(s.rng, 8)}", target=plan)
    _, new = s.derive("plan_update", [plan], "plan", "plan", ledger=ledger, version=version + 1,
                      supersedes=plan, status="accepted", steering=sid, role="planner")
    s.plan = (new, version + 1)


def leak_and_redact(s: Synth, parent: str, ledger: list[str]) -> None:
    """A command output that leaked a credential, then its redaction record."""
    call = s.trace("shell", "command", {"cmd": "deploy --verbose"})
    opid = s.operator("execute", [parent], "coder", trace=[call])
    s.secrets += 1
    data, media_type = s.pool.unique_secret_log(s.secrets)
    ref = s.w.put_payload(data, media_type, "deploy.log")
    s.emit("individual", "ind", "shell", kind="command_output", name="deploy log",
           produced_by=opid, payload=ref.model_dump(mode="json", exclude_defaults=True))
    s.clock.advance(600)
    s.w.redact(ref.digest, reason="the log contains a credential (synthetic)",
               authority="security-reviewer@example.org", run=s.run,
               stream=s.streams["reviewer"])
    s.tick("redaction")


def chain(s: Synth, ledger: list[str]) -> list[Scored]:
    kind = s.rng.choice(("draft", "report", "table", "figure", "program", "protocol"))
    parents = [s.plan[0]]
    if s.chance(0.4):
        read = s.trace("python", "file_read", {"path": "data/input.csv"})
        external = "https://doi.org/10.5281/zenodo.000000" if s.chance(0.2) else None
        data = s.individual("dataset", "input data", "python", trace=[read], external=external)
        parents.append(data)
    name = f"{kind} {s.w.size}"
    opid, head = s.derive("extract" if len(parents) > 1 else "synthesize", parents, kind, name,
                          ledger=ledger)
    best: list[Scored] = []
    steps = s.rng.randint(2, 14)
    for v in range(2, steps + 2):
        op = s.rng.choice(("refine", "refine", "revise", "mutate"))
        last = v == steps + 1
        opid, head = s.derive(op, [head], kind, name, ledger=ledger, version=v, supersedes=head,
                              status="accepted" if last else "candidate")
        fid, value, threshold = s.score(head, opid)
        best.append((head, fid, value, threshold))
        if s.chance(0.25):
            s.edge("checked_by", head, fid)
        if s.chance(0.15):
            s.claim(head, fid, value, threshold, final=False, extra_evidence=[])
    s.archive("accepted", "add", head, "final version of the chain")
    best.sort(key=lambda r: -r[2])
    return best[:3]


def evolution(s: Synth, ledger: list[str]) -> list[Scored]:
    kind = s.rng.choice(("program", "program", "agent_version", "patch"))
    size = s.rng.randint(4, 10)
    pop: list[Scored] = []
    for i in range(size):
        opid, ind = s.derive("synthesize", [s.plan[0]], kind, f"{kind} g0.{i}", ledger=ledger)
        pop.append((ind, *s.score(ind, opid)))
    elite = max(pop, key=lambda r: r[2])
    s.archive("elite", "add", elite[0], "best of generation 0")
    for gen in range(1, s.rng.randint(2, 6) + 1):
        children: list[Scored] = []
        for i in range(size):
            a = _tournament(s, pop)
            if s.chance(0.3):
                b = _tournament(s, pop)
                parents = [a[0], b[0]] if a[0] != b[0] else [a[0]]
                op = "crossover" if len(parents) == 2 else "mutate"
            else:
                parents, op = [a[0]], "mutate"
            opid, ind = s.derive(op, parents, kind, f"{kind} g{gen}.{i}", ledger=ledger)
            children.append((ind, *s.score(ind, opid)))
        everyone = pop + children
        call = s.trace("planner", "tool_call", {"tool": "select", "generation": gen})
        sel = s.operator("select", [r[0] for r in everyone], "planner", trace=[call],
                         generation=gen, keep=size)
        pop = sorted(everyone, key=lambda r: -r[2])[:size]
        if s.chance(0.4):
            s.claim(pop[0][0], pop[0][1], pop[0][2], pop[0][3], final=False,
                    extra_evidence=[sel])
        if pop[0][2] > elite[2]:
            s.archive("elite", "remove", elite[0], f"displaced in generation {gen}", sel)
            elite = pop[0]
            s.archive("elite", "add", elite[0], f"best of generation {gen}", sel)
    return pop[:3]


def _tournament(s: Synth, pop: list[Scored]) -> Scored:
    a, b = s.rng.choice(pop), s.rng.choice(pop)
    return a if a[2] >= b[2] else b


def tree(s: Synth, ledger: list[str]) -> list[Scored]:
    kind = s.rng.choice(("program", "protocol", "sample", "measurement"))
    opid, root = s.derive("synthesize", [s.plan[0]], kind, f"{kind} root", ledger=ledger)
    frontier: list[Scored] = [(root, *s.score(root, opid))]
    s.archive("frontier", "add", root, "root")
    scored: list[Scored] = list(frontier)
    cap = s.rng.randint(3, 8)
    for _ in range(s.rng.randint(2, 10)):
        frontier.sort(key=lambda r: -r[2])
        node = frontier.pop(0)
        s.archive("frontier", "remove", node[0], "expanded")
        for b in range(s.rng.randint(2, 3)):
            op = s.rng.choice(("refine", "extract", "revise", "execute"))
            opid, child = s.derive(op, [node[0]], kind, f"{kind} {node[0]}.{b}", ledger=ledger)
            rec: Scored = (child, *s.score(child, opid))
            frontier.append(rec)
            scored.append(rec)
            s.archive("frontier", "add", child, "new leaf")
        if s.chance(0.2):
            top = max(frontier, key=lambda r: r[2])
            s.claim(top[0], top[1], top[2], top[3], final=False, extra_evidence=[])
        while len(frontier) > cap:
            frontier.sort(key=lambda r: -r[2])
            dropped = frontier.pop()
            s.archive("frontier", "remove", dropped[0], "pruned: frontier full")
    scored.sort(key=lambda r: -r[2])
    return scored[:3]


def conclude(s: Synth, results: list[Scored], ledger: list[str]) -> None:
    """Claims about the best results, their checks, and the workflow layer."""
    execute = s.emit("workflow_node", "wf", "tracer", phase="execute",
                     label=f"episode {s.episodes}", members=ledger[:40])
    claim_nodes: list[str] = []
    for rank, (ind, fid, value, threshold) in enumerate(results[: s.rng.randint(2, 3)]):
        final = rank == 0 and s.chance(0.5)
        cid = s.claim(ind, fid, value, threshold, final=final, extra_evidence=ledger[-1:])
        s.edge("supports", fid, cid)
        verdict = s.check_claim(cid, [fid])
        node = s.emit("evidence_node", "en", "tracer", node_type="artifact",
                      category="claim", label=f"claim {cid}", individual=cid)
        claim_nodes.append(node)
        if s.chance(0.5):
            s.edge("checked_by", cid, verdict)
    validate = s.emit("workflow_node", "wf", "tracer", phase="claim",
                      label=f"claims of episode {s.episodes}", members=claim_nodes)
    s.edge("informs", execute, validate, inferred=True)
    if ledger and s.chance(0.5):
        s.edge("supports", ledger[-1], claim_nodes[0], inferred=True)
