"""Compacted events are the validated events, sharing what repeats."""

from __future__ import annotations

import json
from pathlib import Path

from bundler.model.events import EventBase
from bundler.verify.compact import Compactor
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
