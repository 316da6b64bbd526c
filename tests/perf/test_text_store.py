"""The per-site store of near-duplicates text features: sealed, salted, all or nothing."""

from __future__ import annotations

from pathlib import Path

import pytest

from bundler.output.text_store import TextStore, load_features, save_features, store_path
from bundler.query.duplicates import TextFeatures

D1, D2 = "sha256:" + "a" * 64, "sha256:" + "b" * 64
FEATURES: dict[str, TextFeatures | None] = {
    D1: TextFeatures("c" * 64, 40, tuple(range(3, 35))),
    D2: None,                       # bytes that are no comparable text
}


@pytest.fixture(autouse=True)
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("REVIEW_BUNDLER_CACHE_DIR", str(tmp_path / "cache"))


def test_features_come_back_for_the_same_salt_only(tmp_path: Path) -> None:
    site = tmp_path / "site"
    save_features(site, "salt1", FEATURES)
    assert load_features(site, "salt1") == FEATURES
    assert load_features(site, "salt2") == {}
    assert load_features(tmp_path / "other", "salt1") == {}
    assert not store_path(site).is_relative_to(site)


def test_a_short_sketch_is_all_the_shingles(tmp_path: Path) -> None:
    few = {D1: TextFeatures("c" * 64, 2, (5, 9))}
    save_features(tmp_path, "s", few)
    assert load_features(tmp_path, "s") == few


@pytest.mark.parametrize("edit", [
    lambda t: t.replace("40 ", "41 ", 1),              # body changed, seal not
    lambda t: t[:-10],                                 # truncated
    lambda t: t.replace("seal ", "seal 0", 1),         # seal damaged
    lambda t: t.replace("features v1", "features v0"),  # another format
])
def test_an_edited_store_is_ignored_whole(tmp_path: Path, edit: object) -> None:
    save_features(tmp_path, "s", FEATURES)
    path = store_path(tmp_path)
    path.write_text(edit(path.read_text()))      # type: ignore[operator]
    assert load_features(tmp_path, "s") == {}


@pytest.mark.parametrize("line", [
    f"{D1} {'c' * 64} 40 3,2",                  # sketch not ascending
    f"{D1} {'c' * 64} 40 1,2,3",                # too short for 40 shingles
    f"{D1} {'c' * 63} 2 1,2",                   # not a digest
    f"{D1} {'c' * 64} two 1,2",
    f"sha256:{'g' * 64} -",
    f"{D1}",
])
def test_a_sealed_but_malformed_line_is_ignored_whole(tmp_path: Path, line: str) -> None:
    import hashlib

    body = line + "\n"
    seal = hashlib.sha256(body.encode()).hexdigest()
    path = store_path(tmp_path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"review-bundler text features v1\nsalt s\nseal {seal}\n{body}")
    assert load_features(tmp_path, "s") == {}


def test_a_write_only_store_reads_nothing(tmp_path: Path) -> None:
    TextStore(tmp_path, "s", readable=True).save(FEATURES)
    assert TextStore(tmp_path, "s", readable=False).load() == {}
    assert TextStore(tmp_path, "s", readable=True).load() == FEATURES


def test_an_unwritable_cache_costs_nothing_but_speed(tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    monkeypatch.setenv("REVIEW_BUNDLER_CACHE_DIR", str(blocker))
    save_features(tmp_path, "s", FEATURES)          # no exception
    assert load_features(tmp_path, "s") == {}
