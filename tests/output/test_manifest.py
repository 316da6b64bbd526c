"""The page-cache manifest, written whole or line by line."""

from __future__ import annotations

from pathlib import Path

import pytest

from bundler.output.manifest import (
    CacheEntry,
    PreviousSite,
    SiteSummary,
    manifest_chunks,
    manifest_path,
    manifest_text,
    save_manifest,
)

SUMMARY = SiteSummary("b" * 64, 2, 1, "i" * 64, ("pinned", "0", "1"))
ENTRIES = {"b.html": CacheEntry("f" * 64, "1" * 64), "a/x.html": CacheEntry("-", "2" * 64),
           "a.html": CacheEntry("e" * 64, "3" * 64)}


@pytest.fixture(autouse=True)
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("REVIEW_BUNDLER_CACHE_DIR", str(tmp_path / "cache"))


def test_chunks_spell_the_same_text_and_read_back(tmp_path: Path) -> None:
    rows = [(p, e.fingerprint, e.digest) for p, e in sorted(ENTRIES.items())]
    text = manifest_text("s" * 64, SUMMARY, ENTRIES)
    assert "".join(manifest_chunks("s" * 64, SUMMARY, rows)) == text
    assert text.splitlines()[4:] == [f"{e.fingerprint} {e.digest} {p}"
                                     for p, e in sorted(ENTRIES.items())]
    site = tmp_path / "site"
    save_manifest(site, manifest_chunks("s" * 64, SUMMARY, iter(rows)))
    assert manifest_path(site).read_text(encoding="utf-8") == text
    back = PreviousSite.read(site)
    assert back is not None
    assert (back.salt, back.summary, back.entries) == ("s" * 64, SUMMARY, ENTRIES)


def test_a_bad_summary_fails_before_anything_is_written(tmp_path: Path) -> None:
    bad = SiteSummary("b" * 64, 2, 1, "two words", ())
    with pytest.raises(ValueError, match="unspaced"):
        save_manifest(tmp_path / "site", manifest_chunks("s" * 64, bad, []))
    assert not manifest_path(tmp_path / "site").parent.exists() or \
        not any(manifest_path(tmp_path / "site").parent.iterdir())
