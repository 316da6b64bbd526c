"""The build process runs no automatic full collection before and after its pages
(they walk every kept event and free nothing), but keeps the usual collector while
pages render: render workers fork then, and they do make cyclic garbage."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from bundler.render import site as site_mod
from bundler.render.site import BuildOptions, build_site

REPO = Path(__file__).resolve().parents[2]
BUNDLE = REPO / "example_bundles" / "air-quality"


@pytest.mark.parametrize("jobs", [1, 2])
def test_full_collections_are_off_around_the_pages_only(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, jobs: int) -> None:
    seen: dict[str, tuple[int, int, int]] = {}
    real_prepare, real_finish, real_render_all = (
        site_mod._prepare, site_mod._finish, site_mod.render_all)

    def prepare(*args: Any) -> Any:
        seen["prepare"] = gc.get_threshold()
        return real_prepare(*args)

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
