"""Copying a bundle's file into the site never follows a link swapped in for it."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import cast

import pytest
from fixtures.bad import swap_file

from bundler.errors import InputError
from bundler.output.manifest import PreviousSite
from bundler.output.writer import SiteWriter


def test_a_bundle_file_is_copied_byte_for_byte(tmp_path: Path) -> None:
    src = tmp_path / "events.jsonl"
    src.write_bytes(b"x" * 3_000_001)   # more than one read buffer
    with SiteWriter(tmp_path / "site") as out:
        out.copy_file("bundle/events.jsonl", src, from_bundle=True)
        assert out.bytes_written == 3_000_001
        target = out.commit()
    assert (target / "bundle/events.jsonl").read_bytes() == src.read_bytes()


def test_a_copy_records_the_digest_of_the_bytes_it_wrote(tmp_path: Path) -> None:
    """The site's manifest lists every file's digest (taken while copying): it is that of
    the bytes copied, not of what the source holds by the time the manifest is made."""
    src = tmp_path / "events.jsonl"
    data = bytes(range(256)) * 9_000    # more than two read buffers
    src.write_bytes(data)
    with SiteWriter(tmp_path / "site") as out:
        out.copy_file("bundle/events.jsonl", src, from_bundle=True)
        src.write_bytes(b"changed afterwards")
        assert out.digest("bundle/events.jsonl") == hashlib.sha256(data).hexdigest()


def test_a_failing_check_before_commit_keeps_the_previous_site(tmp_path: Path) -> None:
    """``before_commit`` runs once everything is written; raising there must leave the
    previous site as it was and no temporary folder behind."""
    with SiteWriter(tmp_path / "site") as out:
        out.write_text("index.html", "old")
        out.commit()

    def refuse() -> None:
        raise InputError("changed during the build")
    with pytest.raises(InputError), SiteWriter(tmp_path / "site") as out:
        out.write_text("index.html", "new")
        out.before_commit = refuse
        out.commit()
    assert (tmp_path / "site/index.html").read_text() == "old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["site"]


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


@pytest.mark.parametrize("carry", [False, True], ids=["fresh", "carried"])
def test_a_copy_is_held_to_the_digest_verified(carry: bool, tmp_path: Path) -> None:
    """``expect``: bytes that no longer hash to what was verified stop the build, whether
    they are copied or would be carried over from the previous site."""
    src = tmp_path / "payload"
    src.write_bytes(b"verified bytes")
    good = hashlib.sha256(b"verified bytes").hexdigest()
    with SiteWriter(tmp_path / "site") as out:
        out.copy_file("bundle/p", src, from_bundle=True, expect=good)
        out.commit()
    src.write_bytes(b"verified byteZ")
    with pytest.raises(InputError, match="no longer have the SHA-256 verified"), \
            SiteWriter(tmp_path / "site") as out:
        if carry:
            out.carry_from = cast(PreviousSite, _CarriesAnything())
        out.copy_file("bundle/p", src, from_bundle=True, expect=good)
    assert (tmp_path / "site/bundle/p").read_bytes() == b"verified bytes"


class _CarriesAnything:
    """A previous site that has every file: the check must come before carrying."""

    def carry(self, rel: str, digest: str, dst: Path) -> bool:
        dst.write_bytes(b"from the previous site")
        return True
