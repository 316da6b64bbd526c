"""The build process runs no automatic full collection before and after its pages
(they walk every kept event and free nothing), but keeps the usual collector while
pages render: render workers fork then, and they do make cyclic garbage."""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from bundler.render import site as site_mod
from bundler.render import workers
from bundler.render.site import BuildOptions, build_site

from .conftest import build

REPO = Path(__file__).resolve().parents[2]
BUNDLE = REPO / "example_bundles" / "air-quality"


@pytest.mark.parametrize("jobs", [1, 2])
def test_full_collections_are_off_around_the_pages_only(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, jobs: int) -> None:
    seen: dict[str, tuple[int, int, int]] = {}
    real_prepare, real_finish, real_render_all = (
        site_mod._prepare, site_mod._finish, site_mod.render_all)

    def prepare(*args: Any, **kwargs: Any) -> Any:
        seen["prepare"] = gc.get_threshold()
        return real_prepare(*args, **kwargs)

    def finish(*args: Any) -> Any:
        seen["finish"] = gc.get_threshold()
        return real_finish(*args)

    def render_all(*args: Any) -> Iterator[Any]:
        seen["pages"] = gc.get_threshold()
        yield from real_render_all(*args)

    monkeypatch.setattr(site_mod, "_prepare", prepare)
    monkeypatch.setattr(site_mod, "_finish", finish)
    monkeypatch.setattr(site_mod, "render_all", render_all)
    usual = gc.get_threshold()
    result = build_site(BUNDLE, BuildOptions(output=tmp_path / "site", jobs=jobs))
    assert result.pages > 10
    assert seen["prepare"][:2] == seen["finish"][:2] == usual[:2]
    assert seen["prepare"][2] == seen["finish"][2] == 1 << 30
    assert seen["pages"] == usual
    assert gc.get_threshold() == usual


@pytest.mark.parametrize("helpers", [True, False])
def test_the_collector_pauses_while_this_process_only_makes_pages(
        synth_3k: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, helpers: bool) -> None:
    """Over the memory budget this process makes the pages and helper processes render
    them.  Making pages leaves next to no cyclic garbage, so the collector is off then
    (at 100k events its collections cost 4.1 s of this process's 24.6 s and freed 1,212
    objects); with threads instead of helpers the templates run here, and it stays on.

    The pause is only safe while that stays true: the garbage it leaves is counted."""
    monkeypatch.setenv("REVIEW_BUNDLER_MEMORY_MIB", "1")
    if not helpers:     # as when no process can be started
        monkeypatch.setattr(workers, "_graph_helpers", workers._LocalLayout)
    enabled: list[bool] = []
    real_start, real_paused = workers.start_tasks, workers.collector_paused

    def start(*args: Any) -> Any:
        enabled.append(gc.isenabled())
        return real_start(*args)

    left: list[int] = []

    @contextlib.contextmanager
    def paused() -> Iterator[None]:
        gc.collect()                        # earlier garbage (other tests') not counted
        with real_paused():
            yield
            left.append(gc.collect())       # the cyclic garbage made while paused

    monkeypatch.setattr(workers, "start_tasks", start)
    monkeypatch.setattr(workers, "collector_paused", paused)
    result = build(synth_3k, tmp_path / "site", jobs=2, incremental=False)
    assert len(enabled) > 10
    assert set(enabled) == {not helpers}
    assert gc.isenabled()
    if helpers:
        assert len(left) == 1 and left[0] < result.pages     # measured: 66 objects
    else:
        assert left == []
