"""Page names cannot be made to collide silently.

A page's file name is a sanitised id plus 8 hex digits of the id's SHA-256
(``urls.slug``).  Ids that differ only in characters the name drops can be
searched for a shared 32-bit hash in about a second; the pair below was found
so.  Such a bundle cannot have both pages, and the build stops naming both ids
(RB906) instead of reporting only the path, and keeps the previous site.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from fixtures.builders import StepClock, make_signer

from bundler.author import BundleWriter
from bundler.errors import OutputError
from bundler.render.site import BuildOptions, build_site
from bundler.render.urls import claim_href, slug

#: Two ids with one page name: 'c-0-1-2-3-4-5-6-7-3240a79f'.
COLLIDING = ("c.0:1/2+3/4.5/6/7", "c.0@1+2@3/4+5@6.7")
RUN = {"run": "run-1", "stream": "agent-1"}


def _bundle(path: Path, claim_ids: tuple[str, ...]) -> Path:
    with BundleWriter.create(path, title="names", signer=make_signer(), clock=StepClock(),
                             checkpoint_every=1000) as w:
        w.append("run", id="run-1", title="names", objective="page names", **RUN)
        w.append("stream", id="agent-1", kind="agent", name="agent", run="run-1")
        for cid in claim_ids:
            w.append("claim", id=cid, name=cid, text=f"claim {cid}",
                     **RUN)
    return path


def test_the_pair_really_collides() -> None:
    a, b = COLLIDING
    assert a != b and slug(a) == slug(b) == "c-0-1-2-3-4-5-6-7-3240a79f"


def test_colliding_ids_stop_the_build_naming_both(tmp_path: Path) -> None:
    opts = BuildOptions(output=tmp_path / "site", trusted_keys=(make_signer().verifier()
                                                                .to_text(),), jobs=1)
    build_site(_bundle(tmp_path / "good", ("claim-a", "claim-b")), opts)
    before = {p: p.read_bytes() for p in (tmp_path / "site").rglob("*") if p.is_file()}
    assert (tmp_path / "site" / claim_href("claim-a")).is_file()
    with pytest.raises(OutputError) as info:
        build_site(_bundle(tmp_path / "hostile", COLLIDING), opts)
    message = str(info.value)
    assert info.value.code == "RB906"
    assert all(repr(cid) in message for cid in COLLIDING), message
    assert repr(claim_href(COLLIDING[0])) in message
    assert {p: p.read_bytes() for p in (tmp_path / "site").rglob("*") if p.is_file()} == before
