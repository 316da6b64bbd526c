"""young_collections_only: kept events are not walked by full GC passes."""

from __future__ import annotations

import gc

from bundler.verify.verifier import young_collections_only


def test_young_collections_only_skips_full_collections_and_restores() -> None:
    before = gc.get_threshold()
    full = gc.get_stats()[2]["collections"]
    with young_collections_only():
        assert gc.get_threshold()[:2] == before[:2] and gc.get_threshold()[2] >= 1 << 30
        keep = [[i] for i in range(300_000)]      # survivors: would trigger full passes
        assert gc.get_stats()[2]["collections"] == full
    assert gc.get_threshold() == before
    del keep
