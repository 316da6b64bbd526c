"""The cache folder stays bounded: a site whose manifest is dropped takes all its files."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from bundler.output import manifest as manifest_mod
from bundler.output.manifest import ORPHAN_SECONDS, manifest_path, save_manifest


@pytest.fixture(autouse=True)
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("REVIEW_BUNDLER_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(manifest_mod, "MAX_MANIFESTS", 2)
    return tmp_path / "cache" / "sites"


def _site_files(site: Path, age: float) -> list[Path]:
    """A manifest and the files beside it, last written ``age`` seconds ago."""
    m = manifest_path(site)
    m.parent.mkdir(parents=True, exist_ok=True)
    graphs = m.with_suffix(".graphs")
    graphs.mkdir()
    (graphs / "entry").write_text("svg")
    files = [m, m.with_suffix(".deps"), m.with_suffix(".texts"), graphs]
    for f in files[:3]:
        f.write_text("x")
    stamp = time.time() - age
    for f in [*files, graphs / "entry"]:
        os.utime(f, (stamp, stamp))
    return files


def test_a_dropped_manifest_takes_its_site_files_along(tmp_path: Path) -> None:
    oldest = _site_files(tmp_path / "a", age=300)
    middle = _site_files(tmp_path / "b", age=200)
    save_manifest(tmp_path / "c", "text\n")          # the newest: "a" is dropped
    assert not any(f.exists() for f in oldest)
    assert all(f.exists() for f in middle)
    assert manifest_path(tmp_path / "c").read_text() == "text\n"


def test_files_without_a_manifest_wait_a_day(tmp_path: Path, cache: Path) -> None:
    building = _site_files(tmp_path / "new", age=10)
    building[0].unlink()                             # a first build: no manifest yet
    stale = _site_files(tmp_path / "gone", age=ORPHAN_SECONDS + 60)
    stale[0].unlink()
    save_manifest(tmp_path / "c", "text\n")
    assert all(f.exists() for f in building[1:])
    assert not any(f.exists() for f in stale)
    assert sorted(p.name.split(".")[0] for p in cache.glob("*.manifest")) == \
        [manifest_path(tmp_path / "c").name.split(".")[0]]
