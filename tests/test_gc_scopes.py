"""collector_paused: no collection inside, the collector as it was after (even on error)."""

from __future__ import annotations

import gc

import pytest

from bundler.gc_scopes import collector_paused


def test_collector_paused_disables_and_restores_even_on_error() -> None:
    assert gc.isenabled()
    runs = gc.get_stats()[0]["collections"]
    with pytest.raises(RuntimeError), collector_paused():
        assert not gc.isenabled()
        keep = [[i] for i in range(50_000)]     # would trigger young collections
        assert gc.get_stats()[0]["collections"] == runs
        del keep
        raise RuntimeError("stop")
    assert gc.isenabled()


def test_collector_paused_leaves_a_disabled_collector_disabled() -> None:
    gc.disable()
    try:
        with collector_paused():
            pass
        assert not gc.isenabled()
    finally:
        gc.enable()
