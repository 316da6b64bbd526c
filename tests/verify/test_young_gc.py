"""young_collections_only: kept events are not walked by full GC passes."""

from __future__ import annotations

import gc
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from bundler.gc_scopes import young_collections_only
from bundler.verify import VerifyOptions, verifier, verify_bundle

BUNDLE = Path(__file__).resolve().parents[2] / "example_bundles" / "air-quality"


def test_young_collections_only_skips_full_collections_and_restores() -> None:
    before = gc.get_threshold()
    full = gc.get_stats()[2]["collections"]
    with young_collections_only():
        assert gc.get_threshold()[:2] == before[:2] and gc.get_threshold()[2] >= 1 << 30
        keep = [[i] for i in range(300_000)]      # survivors: would trigger full passes
        assert gc.get_stats()[2]["collections"] == full
    assert gc.get_threshold() == before
    del keep


@pytest.mark.parametrize("keep_events", [True, False])
def test_verification_keeping_events_runs_young_collections_only_throughout(
        monkeypatch: pytest.MonkeyPatch, keep_events: bool) -> None:
    """Past the log too: settling checkpoints and checking payloads come after a
    million kept events (a full collection there walked them all: 0.97 s at 1M)."""
    seen: dict[str, int] = {}

    def spy(name: str, real: Callable[..., Any]) -> Callable[..., Any]:
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            seen[name] = gc.get_threshold()[2]
            return real(*args, **kwargs)
        return wrapper

    for name in ("read_checkpoints", "settle_checkpoints", "check_payloads"):
        monkeypatch.setattr(verifier, name, spy(name, getattr(verifier, name)))
    usual = gc.get_threshold()
    report = verify_bundle(BUNDLE, VerifyOptions(keep_events=keep_events))
    assert report.valid
    assert set(seen) == {"read_checkpoints", "settle_checkpoints", "check_payloads"}
    assert set(seen.values()) == ({1 << 30} if keep_events else {usual[2]})
    assert gc.get_threshold() == usual
