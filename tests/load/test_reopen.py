"""Bundle files read again while pages are made never follow a link swapped in.

The verifier refuses links; pages read payloads and log lines again later, by
path.  A file swapped for a link (or a pipe, or a folder) between the two must
stop the build with RB902, keeping the previous site, instead of putting what
the link points at into a page.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from fixtures.bad import swap_file
from fixtures.builders import make_valid_bundle

from bundler import layout
from bundler.errors import InputError
from bundler.load.reopen import open_regular, reopen
from bundler.render.site import BuildOptions, build_site

from .conftest import AfterVerification

SECRET = b"review-bundler-test: outside the bundle\n"


@pytest.mark.parametrize("kind", ["link", "fifo", "folder"])
def test_open_regular_refuses_all_but_a_regular_file(kind: str, tmp_path: Path) -> None:
    secret, f = tmp_path / "secret", tmp_path / "f"
    secret.write_bytes(SECRET)
    f.write_bytes(b"verified")
    with open_regular(f) as fh:
        assert fh.read() == b"verified"
    swap_file(f, kind, secret)
    with pytest.raises(OSError):
        open_regular(f).close()
    with pytest.raises(InputError, match="changed during the build"):
        reopen(f).close()


@pytest.mark.parametrize("which", ["payload", "events"])
def test_a_file_swapped_for_a_link_mid_build_stops_it(
        which: str, tmp_path: Path, after_verification: AfterVerification) -> None:
    ref = make_valid_bundle(tmp_path / "bundle")
    out = tmp_path / "site"
    opts = BuildOptions(output=out, trusted_keys=(ref.verifier_key_text,), jobs=1)
    build_site(ref.path, opts)
    before = {p: p.read_bytes() for p in out.rglob("*") if p.is_file()}
    secret = tmp_path / "secret"
    secret.write_bytes(SECRET)
    target = (ref.payload_file("table") if which == "payload"
              else ref.path / layout.EVENTS)
    after_verification(lambda: swap_file(target, "link", secret))
    with pytest.raises(InputError, match="changed during the build"):
        build_site(ref.path, dataclasses.replace(opts, incremental=False))  # made again
    assert {p: p.read_bytes() for p in out.rglob("*") if p.is_file()} == before
    assert not [p for p in tmp_path.glob(".site*")]
