"""BundleSource path checks: links anywhere on the way are refused, folders are
remembered only inside ``remembering_folders``."""

from __future__ import annotations

import os
from pathlib import Path

from bundler.load.source import BundleSource


def _source(tmp_path: Path) -> tuple[BundleSource, Path]:
    root = tmp_path / "b"
    (root / "payloads" / "sha256").mkdir(parents=True)
    (root / "payloads" / "sha256" / "aa").write_bytes(b"x")
    return BundleSource(root=root, origin=root), root


def test_regular_file_and_path(tmp_path: Path) -> None:
    src, root = _source(tmp_path)
    (tmp_path / "outside").write_bytes(b"secret")
    os.symlink(tmp_path / "outside", root / "payloads" / "sha256" / "link")
    os.mkfifo(root / "payloads" / "sha256" / "fifo")
    assert src.regular_file("payloads/sha256/aa") == root / "payloads" / "sha256" / "aa"
    assert src.regular_file("payloads//sha256/./aa") == root / "payloads" / "sha256" / "aa"
    assert src.path("payloads/sha256/link") is None
    assert src.regular_file("payloads/sha256/link") is None
    assert src.regular_file("payloads/sha256/fifo") is None
    assert src.path("payloads/sha256/fifo") == root / "payloads" / "sha256" / "fifo"
    assert src.regular_file("payloads/sha256") is None  # a folder
    assert src.regular_file("payloads/sha256/missing") is None
    assert src.path("payloads/sha256/missing") == root / "payloads" / "sha256" / "missing"
    assert src.path("../outside") is None
    assert src.exists("payloads/sha256/aa") and not src.exists("payloads/sha256/link")


def test_a_folder_swapped_for_a_link_is_caught_outside_the_block(tmp_path: Path) -> None:
    src, root = _source(tmp_path)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "aa").write_bytes(b"secret")
    with src.remembering_folders():
        assert src.regular_file("payloads/sha256/aa") is not None
    os.rename(root / "payloads" / "sha256", tmp_path / "moved")
    os.symlink(elsewhere, root / "payloads" / "sha256")
    assert src.regular_file("payloads/sha256/aa") is None
    with src.remembering_folders():  # a new block checks every folder again
        assert src.regular_file("payloads/sha256/aa") is None


def test_an_unsafe_folder_is_refused_with_or_without_memory(tmp_path: Path) -> None:
    src, _ = _source(tmp_path)
    src.unsafe_paths.add("payloads/sha256")
    assert src.path("payloads/sha256/aa") is None
    with src.remembering_folders():
        assert src.path("payloads/sha256/aa") is None
        assert src.path("payloads/sha256/aa") is None
