"""Copying a bundle's file into the site never follows a link swapped in for it."""

from __future__ import annotations

from pathlib import Path

import pytest
from fixtures.bad import swap_file

from bundler.errors import InputError
from bundler.output.writer import SiteWriter


def test_a_bundle_file_is_copied_byte_for_byte(tmp_path: Path) -> None:
    src = tmp_path / "events.jsonl"
    src.write_bytes(b"x" * 3_000_001)   # more than one read buffer
    with SiteWriter(tmp_path / "site") as out:
        out.copy_file("bundle/events.jsonl", src, from_bundle=True)
        assert out.bytes_written == 3_000_001
        target = out.commit()
    assert (target / "bundle/events.jsonl").read_bytes() == src.read_bytes()


@pytest.mark.parametrize("kind", ["link", "fifo", "folder"])
def test_a_bundle_file_that_is_no_longer_a_file_is_refused(kind: str, tmp_path: Path) -> None:
    """Checked when the site's list of files was made; swapped before the copy, the
    build stops with an input error instead of copying what a link points at, or
    blocking on a pipe."""
    secret = tmp_path / "secret"
    secret.write_bytes(b"outside the bundle")
    src = tmp_path / "events.jsonl"
    swap_file(src, kind, secret)
    with SiteWriter(tmp_path / "site") as out, pytest.raises(InputError, match="changed during"):
        out.copy_file("bundle/events.jsonl", src, from_bundle=True)
    assert not (tmp_path / "site").exists()


def test_a_theme_asset_may_still_be_a_link(tmp_path: Path) -> None:
    """Only bundle files are untrusted; a theme (the user's own) may link its assets."""
    real = tmp_path / "real.css"
    real.write_text("body{}")
    link = tmp_path / "site.css"
    link.symlink_to(real)
    with SiteWriter(tmp_path / "site") as out:
        out.copy_file("assets/site.css", link)
        target = out.commit()
    assert (target / "assets/site.css").read_text() == "body{}"
