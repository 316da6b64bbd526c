"""Page names do not collide by chance, and cannot be made to collide silently.

A page's file name is a sanitised id plus a hash of the id (``urls.slug``): 8 hex
digits when the sanitised id fits in the name, 24 when it is cut.  Short ids that
differ only in characters the name drops can be searched for a shared 32-bit hash
in about a second; the pair below was found so.  Such a bundle cannot have both
pages, and the build stops naming both ids (RB906) instead of reporting only the
path, and keeps the previous site.

Cut ids are the ones a real log has many of with one prefix.  With 8 digits, the
pair ``GENERATION`` below (found by counting up, not by searching for odd ids)
shared a name, and a million of them would have about a hundred such pairs.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest
from fixtures.builders import StepClock, make_signer

from bundler.author import BundleWriter
from bundler.errors import OutputError
from bundler.render.site import BuildOptions, build_site
from bundler.render.urls import NAME_CHARS, artifact_href, claim_href, slug

#: Two ids with one page name: 'c-0-1-2-3-4-5-6-7-3240a79f'.
COLLIDING = ("c.0:1/2+3/4.5/6/7", "c.0@1+2@3/4+5@6.7")
RUN = {"run": "run-1", "stream": "agent-1"}
#: Two artifacts of one generation whose names shared 8 hex digits: da14209a.
GENERATION = tuple(f"evolutionary-search/run-2026-12-03T10:42:07Z/generation-0042/"
                   f"individual-{n}" for n in ("008687", "100923"))


def _bundle(path: Path, claim_ids: tuple[str, ...], artifact_ids: tuple[str, ...] = ()) -> Path:
    with BundleWriter.create(path, title="names", signer=make_signer(), clock=StepClock(),
                             checkpoint_every=1000) as w:
        w.append("run", id="run-1", title="names", objective="page names", **RUN)
        w.append("stream", id="agent-1", kind="agent", name="agent", run="run-1")
        for cid in claim_ids:
            w.append("claim", id=cid, name=cid, text=f"claim {cid}",
                     **RUN)
        for aid in artifact_ids:
            w.append("individual", id=aid, kind="program", name=aid, **RUN)
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


def test_ids_that_fit_keep_their_names() -> None:
    """Names of ids that fit are as they were: links into published sites stay good."""
    assert slug("claim-a") == "claim-a-b8eccd74"
    assert slug("run:airq-2026-03-02") == "run-airq-2026-03-02-a71848c9"
    assert slug("") == "x-e3b0c442"
    assert len(slug("a" * NAME_CHARS)) == NAME_CHARS + 9


def test_cut_ids_carry_96_bits_and_never_meet_a_short_name() -> None:
    a, b = GENERATION
    assert a[:NAME_CHARS] == b[:NAME_CHARS]
    assert slug(a) != slug(b)
    for oid in (a, "b" * (NAME_CHARS + 1), "-" + "c" * NAME_CHARS + "/d"):
        name = slug(oid)
        assert len(name) == NAME_CHARS + 1 + 24, name
        assert name.rpartition("-")[2] == hashlib.sha256(oid.encode()).hexdigest()[:24]
    # every name of an id that fits is shorter than any cut name
    assert len(slug("e" * NAME_CHARS)) < len(slug("e" * (NAME_CHARS + 1)))


def test_a_generation_of_long_ids_builds_every_page(tmp_path: Path) -> None:
    opts = BuildOptions(output=tmp_path / "site", trusted_keys=(make_signer().verifier()
                                                                .to_text(),), jobs=1)
    build_site(_bundle(tmp_path / "b", ("claim-a",), GENERATION), opts)
    pages = [tmp_path / "site" / artifact_href(aid) for aid in GENERATION]
    assert pages[0] != pages[1]
    for aid, page in zip(GENERATION, pages, strict=True):
        assert f"individual-{aid[-6:]}" in page.read_text(encoding="utf-8")
