"""The per-site graph store: entries are checked against their recorded digest, bounded."""

from __future__ import annotations

import hashlib
import os
import zlib
from pathlib import Path

import pytest

from bundler.output.graph_cache import KEEP_BUILDS, MAX_SVG, GraphCache, store_path

SVG = '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 1 1">\u00e9</svg>'


def _key(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def _open(site: Path, *, read: bool = True, now: float | None = None) -> GraphCache:
    store = GraphCache.open(site, read=read, now=now)
    assert store is not None
    return store


def test_stored_graph_comes_back(tmp_path: Path) -> None:
    store = _open(tmp_path / "site")
    store.put(_key("a"), SVG)
    assert store.get(_key("a")) == SVG
    assert store.get(_key("b")) is None
    assert store.hits == 1
    assert store.root == store_path(tmp_path / "site")
    assert not store.root.is_relative_to(tmp_path / "site")


def test_a_write_only_store_reads_nothing(tmp_path: Path) -> None:
    _open(tmp_path / "site").put(_key("a"), SVG)
    assert _open(tmp_path / "site", read=False).get(_key("a")) is None


def test_other_sites_do_not_share_graphs(tmp_path: Path) -> None:
    _open(tmp_path / "one").put(_key("a"), SVG)
    assert _open(tmp_path / "two").get(_key("a")) is None


@pytest.mark.parametrize("damage", ["edit", "truncate", "rename", "header", "symlink",
                                    "garbage", "bomb"])
def test_an_entry_that_does_not_match_its_digest_is_ignored(tmp_path: Path, damage: str) -> None:
    store = _open(tmp_path / "site")
    store.put(_key("a"), SVG)
    path = store.root / f"{_key('a')}.svg"
    data = path.read_bytes()
    head, packed = data.split(b"\n", 1)
    if damage == "edit":          # well-formed, other text: only the digest can tell
        text = zlib.decompress(packed).replace(b"0 0 1 1", b"0 0 9 9")
        path.write_bytes(head + b"\n" + zlib.compress(text))
    elif damage == "garbage":
        path.write_bytes(head + b"\n" + b"not zlib")
    elif damage == "bomb":        # would inflate past MAX_SVG
        path.write_bytes(head + b"\n" + zlib.compress(b" " * (MAX_SVG + 1), 9))
    elif damage == "truncate":
        path.write_bytes(data[:-3])
    elif damage == "rename":        # a valid entry filed under another key
        os.replace(path, store.root / f"{_key('b')}.svg")
        assert store.get(_key("b")) is None
        return
    elif damage == "header":
        path.write_bytes(packed)
    else:
        outside = tmp_path / "elsewhere.svg"
        outside.write_bytes(data)
        path.unlink()
        path.symlink_to(outside)
    assert store.get(_key("a")) is None


def test_entries_are_stored_compressed(tmp_path: Path) -> None:
    store = _open(tmp_path / "site")
    big = SVG.replace("\u00e9", "<g/>" * 5000)
    store.put(_key("a"), big)
    assert (store.root / f"{_key('a')}.svg").stat().st_size < len(big) / 5
    assert store.get(_key("a")) == big


def test_keys_must_be_digests(tmp_path: Path) -> None:
    store = _open(tmp_path / "site")
    with pytest.raises(ValueError, match="not a graph key"):
        store.get("../../etc/passwd")
    with pytest.raises(ValueError, match="not a graph key"):
        store.put("A" * 64, SVG)


def test_entries_unused_for_several_builds_are_removed(tmp_path: Path) -> None:
    site = tmp_path / "site"
    old = _open(site, now=1000.0)
    old.put(_key("old"), SVG)
    os.utime(old.root / f"{_key('old')}.svg", (1000.0, 1000.0))
    for i in range(1, KEEP_BUILDS):
        _open(site, now=1000.0 + i).put(_key(f"new{i}"), SVG)
    # the build that first used "old" is still among the last KEEP_BUILDS
    assert (old.root / f"{_key('old')}.svg").exists()
    _open(site, now=2000.0)
    assert not (old.root / f"{_key('old')}.svg").exists()
    assert (old.root / f"{_key('new1')}.svg").exists()      # written just now (real mtime)


def test_a_hit_keeps_an_entry_alive(tmp_path: Path) -> None:
    site = tmp_path / "site"
    store = _open(site, now=1000.0)
    store.put(_key("a"), SVG)
    path = store.root / f"{_key('a')}.svg"
    os.utime(path, (1000.0, 1000.0))
    assert store.get(_key("a")) == SVG
    assert path.stat().st_mtime > 1000.0
