"""The per-event shortcuts of the streaming verifier give the plain answers.

Each shortcut (fast canonical check, reference lists by type, string
comparison of times) is compared with the straightforward computation it
replaces, on real logs and on hostile ones.
"""

from __future__ import annotations

import json
import random
import shutil
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
from fixtures.bad import BAD_FIXTURES
from fixtures.builders import make_valid_bundle
from fixtures.hostile import make_hostile_bundle

import bundler.load.events as load_events
from bundler.diagnostics import Diagnostic
from bundler.integrity.canonical import canonicalize
from bundler.model.events import (
    EVENT_MODELS,
    ClaimEvent,
    EdgeEvent,
    EventBase,
    FitnessEvent,
    IndividualEvent,
    RedactionEvent,
    parse_time,
)
from bundler.synth import generate
from bundler.verify import VerifyOptions, verify_bundle
from bundler.verify.facts import (
    EventFacts,
    commitment,
    facts_of,
    facts_tuple,
    reference_list,
)
from bundler.verify.invariants import references
from bundler.verify.schema import TimeOrder, check_event

EXAMPLES = Path(__file__).resolve().parents[2] / "example_bundles"


@pytest.fixture(scope="module")
def bundles(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    root = tmp_path_factory.mktemp("bundles")
    out = [generate(root / "synth", events=2500, seed=11)]
    make_hostile_bundle(root / "hostile")
    make_valid_bundle(root / "valid")
    out += [root / "hostile", root / "valid"]
    out += sorted(p for p in EXAMPLES.iterdir() if (p / "events.jsonl").is_file())
    return out


def _events(path: Path) -> list[EventBase]:
    out = []
    for line in (path / "events.jsonl").read_bytes().splitlines():
        ev = check_event(json.loads(line))
        assert isinstance(ev, EventBase)
        out.append(ev)
    return out


def test_reference_lists_match_the_generator(bundles: list[Path]) -> None:
    seen_types: set[str] = set()
    n_refs = 0
    for path in bundles:
        for ev in _events(path):
            assert reference_list(ev) == list(references(ev)), ev.id
            seen_types.add(ev.type)
            n_refs += len(reference_list(ev))
    assert seen_types == set(EVENT_MODELS)
    assert n_refs > 5000


def _every_reference_field() -> list[dict[str, Any]]:
    """One event of each type with every optional reference set (and lists of two)."""
    base = {"seq": 0, "prev": "0" * 64, "time": "2026-01-01T00:00:00Z", "run": "r",
            "stream": "s"}
    ind = {"kind": "k", "name": "n", "supersedes": "a", "produced_by": "b", "trace": ["t1", "t2"]}
    return [
        {**base, "type": "individual", "id": "i", **ind},
        {**base, "type": "claim", "id": "c", **ind, "text": "x", "evidence": ["e1", "e2"],
         "bindings": [{"evidence": "e1", "field": "f", "value": 1}], "derived_from": ["d"]},
        {**base, "type": "operator", "id": "o", "op": "refine", "parents": ["p1", "p2"],
         "steering": "st", "trace": ["t"]},
        {**base, "type": "fitness", "id": "f", "target": "t", "evaluator": {"name": "n",
         "version": "1"}, "score": 0.5, "operator": "o", "evidence": ["e"]},
        {**base, "type": "archive", "id": "a", "archive": "x", "action": "add", "member": "m",
         "operator": "o"},
        {**base, "type": "steering", "id": "st", "command": "stop", "issuer": "me",
         "target": "ext:x"},
        {**base, "type": "evidence_node", "id": "en", "node_type": "action", "category": "c",
         "label": "l", "records": ["r1"], "individual": "i"},
        {**base, "type": "workflow_node", "id": "w", "phase": "plan", "label": "l",
         "members": ["m1", "m2"]},
        {**base, "type": "edge", "id": "e", "relation": "uses", "source": "a", "target": "b"},
        {**base, "type": "run", "id": "r", "run": "r", "title": "t"},
        {**base, "type": "stream", "id": "s", "stream": "s", "kind": "agent", "name": "n"},
    ]


def test_reference_lists_with_every_optional_field() -> None:
    for obj in _every_reference_field():
        ev = check_event(obj)
        assert isinstance(ev, EventBase), ev
        assert reference_list(ev) == list(references(ev))
        assert len(reference_list(ev)) >= (0 if ev.type == "run" else 1)


def _plain_order(times: list[str]) -> list[str | None]:
    """What the verifier did before: parse every time, keep the latest (time, text)."""
    out: list[str | None] = []
    last: tuple[datetime, str] | None = None
    for text in times:
        t = parse_time(text)
        out.append(last[1] if last is not None and t < last[0] else None)
        if last is None or t >= last[0]:
            last = (t, text)
    return out


def test_time_order_matches_parsed_comparison() -> None:
    rng = random.Random(5)
    zones = ["Z", "Z", "Z", "+00:00", "+01:00", "-05:30"]
    for _ in range(300):
        times = []
        for _ in range(rng.randint(1, 30)):
            frac = rng.choice(["", "", ".5", ".123", ".123456", ".1234567", ".123456789",
                               ".000000001"])
            times.append(f"2026-0{rng.randint(1, 2)}-0{rng.randint(1, 3)}T0{rng.randint(0, 2)}:"
                         f"0{rng.randint(0, 1)}:0{rng.randint(0, 2)}{frac}{rng.choice(zones)}")
        order = TimeOrder()
        assert [order.earlier(t) for t in times] == _plain_order(times), times


def test_time_order_nanoseconds_compare_at_microseconds() -> None:
    order = TimeOrder()
    assert order.earlier("2026-01-01T00:00:00.0000009Z") is None
    # Same microsecond once truncated, so not earlier (as parse_time sees it).
    assert order.earlier("2026-01-01T00:00:00.0000001Z") is None
    assert order.earlier("2026-01-01T00:00:00.000000Z") is None
    assert order.earlier("2025-12-31T23:59:59Z") == "2026-01-01T00:00:00.000000Z"


def _diagnostics(path: Path, keep: bool) -> list[tuple[str, str, str]]:
    report = verify_bundle(path, VerifyOptions(keep_events=keep))
    return [_key(d) for d in report.diagnostics]


def _key(d: Diagnostic) -> tuple[str, str, str]:
    return d.code, d.message, str(d.location)


def _broken_copies(tmp: Path) -> list[Path]:
    """Bad-input fixtures and hand-broken lines: non-canonical, duplicated, hostile numbers."""
    out = []
    for fx in BAD_FIXTURES:
        if fx.raises or fx.name == "huge_line":
            continue
        (tmp / fx.name).mkdir()
        out.append(fx.build(tmp / fx.name))
    valid = make_valid_bundle(tmp / "base").path
    lines = (valid / "events.jsonl").read_bytes().splitlines()
    for i, extra in enumerate([b',"x":1.0}', b',"x":1e-05}', b',"x":12345678901234567}',
                               b',"x":"\\u00e9"}', b',"x":"\\ud800"}', b',"seq":3}']):
        bent = list(lines)
        bent[3] = bent[3][:-1] + extra
        obj = json.loads(lines[5])
        bent[5] = json.dumps(obj).encode() if i % 2 else canonicalize({**obj, "seq": 99})
        dst = tmp / f"bent-{i}"
        shutil.copytree(valid, dst)
        (dst / "events.jsonl").write_bytes(b"".join(b + b"\n" for b in bent))
        out.append(dst)
    return out


def test_fast_path_changes_no_diagnostic(bundles: list[Path], tmp_path: Path,
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    cases = [*bundles, *_broken_copies(tmp_path)]
    fast = {p: _diagnostics(p, keep) for p in cases for keep in (False, True)}
    monkeypatch.setattr(load_events, "fast_canonical_object", lambda data: None)
    strict = {p: _diagnostics(p, keep) for p in cases for keep in (False, True)}
    assert fast == strict
    found = {code for diags in fast.values() for code, _, _ in diags}
    assert {"RB111", "RB112", "RB115", "RB116", "RB300", "RB201"} <= found


def _facts_by_name(ev: EventBase) -> EventFacts:
    """EventFacts built field by field, by name: what facts_of's positional tuples must equal."""
    refs = reference_list(ev)
    common: dict[str, Any] = dict(
        id=ev.id, type=ev.type, seq=ev.seq, time=ev.time, run=ev.run, stream=ev.stream,
        ref_fields=tuple(r[0] for r in refs), ref_targets=tuple(r[1] for r in refs),
        ref_allowed=tuple(r[2] for r in refs), derived=tuple(r[1] for r in refs if r[3]))
    if isinstance(ev, ClaimEvent):
        common.update(evidence=ev.evidence, bound_evidence=[b.evidence for b in ev.bindings],
                      final=ev.final, claim_status=ev.claim_status)
    if isinstance(ev, IndividualEvent):
        common.update(version=ev.version, supersedes=ev.supersedes,
                      payload=commitment(ev.payload))
    if isinstance(ev, FitnessEvent):
        common.update(verdict=ev.verdict, passed=ev.passed, target=ev.target)
    if isinstance(ev, EdgeEvent):
        common.update(provenance=ev.provenance, inferred_by=ev.inferred_by,
                      confidence=ev.confidence)
    if isinstance(ev, RedactionEvent):
        common.update(redaction=ev)
    return EventFacts(**common)


def test_facts_fields_land_in_their_places(bundles: list[Path]) -> None:
    events = [ev for path in bundles for ev in _events(path)]
    events += [ev for obj in _every_reference_field()
               if isinstance(ev := check_event(obj), EventBase)]
    for ev in events:
        expected = _facts_by_name(ev)
        assert facts_of(ev, False) == expected
        assert EventFacts._make(facts_tuple(ev, False)) == expected
        assert facts_of(ev, True) == expected._replace(model=ev)
    assert {ev.type for ev in events} == set(EVENT_MODELS)
