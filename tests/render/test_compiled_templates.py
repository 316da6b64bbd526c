"""Compiled templates are a cache: another version of the code building at the same
time, or the folder going away mid-build, must never fail a build."""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path
from typing import Any

import pytest

from bundler.render import incremental, workers
from bundler.render.environment import make_environment
from bundler.render.incremental import STALE_TEMPLATES_SECONDS, compiled_templates_dir
from bundler.render.site import BuildOptions, build_site

REPO = Path(__file__).resolve().parents[2]
BUNDLE = REPO / "example_bundles" / "air-quality"


@pytest.fixture(autouse=True)
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("REVIEW_BUNDLER_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path / "cache" / "templates"


def _folder(root: Path, name: str, age: float) -> Path:
    folder = root / name
    folder.mkdir(parents=True)
    (folder / "x.cache").write_bytes(b"compiled")
    stamp = time.time() - age
    os.utime(folder, (stamp, stamp))
    return folder


def test_other_versions_folders_go_only_once_unused_for_a_day(cache: Path) -> None:
    busy = _folder(cache, "another-version-building-now", age=60)
    stale = _folder(cache, "a-version-gone-for-days", age=STALE_TEMPLATES_SECONDS + 60)
    current = compiled_templates_dir()
    assert current.parent == cache
    assert busy.is_dir() and (busy / "x.cache").exists()
    assert not stale.exists()


def test_using_the_folder_marks_it_used(cache: Path) -> None:
    current = compiled_templates_dir()
    current.mkdir(parents=True)
    old = time.time() - STALE_TEMPLATES_SECONDS - 60
    os.utime(current, (old, old))
    assert compiled_templates_dir() == current
    assert time.time() - current.stat().st_mtime < 60


def test_a_vanished_cache_folder_costs_only_the_compiling(tmp_path: Path) -> None:
    compiled = tmp_path / "compiled"
    env = make_environment(None, compiled)
    shutil.rmtree(compiled)
    template = env.from_string("{{ x }}")
    assert template.render(x="<b>") == "&lt;b&gt;"
    loaded = env.get_template("pages/claim.html")      # compiled, but nowhere to store it
    assert loaded.name == "pages/claim.html"
    assert not compiled.exists()


def test_a_build_survives_its_compiled_templates_going_while_helpers_render(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """What another version's clean-up used to do to a running build: an A/B benchmark
    of two checkouts failed this way at 1M events, when a helper first needed a template
    late in the build.  Helpers load templates as their pages need them, so the folder
    is removed before every chunk (the build process has compiled them all already)."""
    real_start = workers.start_tasks
    removed: list[Path] = []

    def start(*args: Any) -> Any:
        folder = incremental.compiled_templates_dir()
        shutil.rmtree(folder, ignore_errors=True)
        removed.append(folder)
        return real_start(*args)

    monkeypatch.setattr(workers, "start_tasks", start)
    monkeypatch.setenv("REVIEW_BUNDLER_MEMORY_MIB", "1")    # pages made here, helpers render
    result = build_site(BUNDLE, BuildOptions(output=tmp_path / "site", jobs=2,
                                             incremental=False))
    assert len(removed) > 3 and result.pages > 10
    assert (tmp_path / "site" / "index.html").is_file()
