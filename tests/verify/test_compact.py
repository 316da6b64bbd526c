"""Compacted events are the validated events, sharing what repeats."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bundler.model.events import EventBase, OperatorEvent
from bundler.verify.compact import Compactor
from bundler.verify.invariants import references
from bundler.verify.schema import check_event
from bundler.verify.verifier import VerifyOptions, verify_bundle

REPO = Path(__file__).resolve().parents[2]
BUNDLE = REPO / "example_bundles" / "evolutionary-search"


def _validated() -> list[EventBase]:
    """Each line validated on its own, never compacted."""
    out = []
    for line in (BUNDLE / "events.jsonl").read_text("utf-8").splitlines():
        ev = check_event(json.loads(line))
        assert isinstance(ev, EventBase)
        out.append(ev)
    return out


def test_kept_events_equal_the_validated_ones() -> None:
    plain = _validated()
    kept = list(verify_bundle(BUNDLE, VerifyOptions()).bundle.events)
    assert len(kept) == len(plain) > 100
    assert kept == plain
    assert [e.model_dump(mode="json") for e in kept] == [e.model_dump(mode="json") for e in plain]


def test_compacted_events_share_field_sets_and_repeated_strings() -> None:
    plain = _validated()
    c = Compactor()
    packed = [c(e) for e in plain]
    assert packed == plain
    sets = {id(e.__pydantic_fields_set__) for e in packed}
    assert len(sets) < len(packed) // 10          # one per shape, not one per event
    same_run = [e for e in packed if e.run == packed[-1].run]
    assert len(same_run) > 1 and all(e.run is same_run[0].run for e in same_run)


def test_a_full_intern_table_only_stops_sharing() -> None:
    plain = _validated()
    c = Compactor(max_interned=0)
    assert [c(e) for e in plain] == plain


EXAMPLES = sorted(p for p in (REPO / "example_bundles").iterdir() if (p / "events.jsonl").is_file())


@pytest.mark.parametrize("bundle", EXAMPLES, ids=lambda p: p.name)
def test_references_share_the_string_of_the_event_they_name(bundle: Path) -> None:
    """A kept reference is the referenced event's own ``id`` object, not a copy: every
    reference field is in REFERENCE_FIELDS."""
    kept = verify_bundle(bundle, VerifyOptions()).bundle.events
    first: dict[str, EventBase] = {}
    for ev in kept:
        first.setdefault(ev.id, ev)
    # run and stream are interned (one string for all events); the rest are shared ids
    refs = [(target, first[target]) for ev in kept
            for _field, target, _allowed, _derived in references(ev)
            if target in first and first[target].type not in ("run", "stream")]
    assert len(refs) > 20
    assert all(target is named.id for target, named in refs)


def test_an_unknown_id_or_a_string_outside_reference_fields_is_kept_as_it_is() -> None:
    """Only a reference to a kept event is swapped; the summary is not a reference."""
    plain = _validated()
    c = Compactor()
    for ev in plain:
        c.event(ev)
    op = next(e for e in plain if isinstance(e, OperatorEvent) and e.parents)
    ghost = op.model_copy(update={"parents": ["no-such-id", op.parents[0]],
                                  "summary": "x" * 300})
    packed = c(ghost)
    assert packed == ghost
    assert packed.parents[0] is ghost.parents[0]
    assert packed.summary is ghost.summary
