"""Page names do not collide by chance, and cannot be made to collide silently.

A page's file name is a sanitised id plus a hash of the id (``urls.slug``): 8 hex
digits when the sanitised id fits in the name, 24 when it is cut.  Short ids that
differ only in characters the name drops can be searched for a shared 32-bit hash
in about a second; the pair below was found so.  Such ids get 24 digits too, and
the site shows both.  The rebuild that has to rename a page reuses nothing (links
to it are on pages that did not change), so it writes what a cold build does.
Only ids that share 96 bits still stop the build, naming both (RB906).

Cut ids are the ones a real log has many of with one prefix.  With 8 digits, the
pair ``GENERATION`` below (found by counting up, not by searching for odd ids)
shared a name, and a million of them would have about a hundred such pairs.
"""

from __future__ import annotations

import dataclasses
import hashlib
import re
from pathlib import Path

import pytest
from fixtures.builders import StepClock, make_signer

from bundler.author import BundleWriter
from bundler.cli import main
from bundler.errors import OutputError
from bundler.render import site, urls
from bundler.render.site import BuildOptions, build_site
from bundler.render.urls import (
    NAME_CHARS,
    artifact_href,
    claim_href,
    long_names,
    sharing_a_name,
    slug,
)

#: Two ids with one page name: 'c-0-1-2-3-4-5-6-7-3240a79f'.
COLLIDING = ("c.0:1/2+3/4.5/6/7", "c.0@1+2@3/4+5@6.7")
RUN = {"run": "run-1", "stream": "agent-1"}
#: Archive names may hold a terminal escape and a bidi override (ids may not).
SNEAKY = ("c\u202e0.1.2=3.4:5.6~7", "c\x1b0.1:2/3~4=5/6~7")
#: Two artifacts of one generation whose names shared 8 hex digits: da14209a.
GENERATION = tuple(f"evolutionary-search/run-2026-12-03T10:42:07Z/generation-0042/"
                   f"individual-{n}" for n in ("008687", "100923"))


def _bundle(path: Path, claim_ids: tuple[str, ...], artifact_ids: tuple[str, ...] = (),
            cited: tuple[str, ...] = (), late: tuple[str, ...] = ()) -> Path:
    """Artifacts ``cited`` first; each claim cites them, and "claim-b" derives from the
    first claim (so their pages link to it).  Claims ``late`` come last, citing nothing."""
    with BundleWriter.create(path, title="names", signer=make_signer(), clock=StepClock(),
                             checkpoint_every=1000) as w:
        w.append("run", id="run-1", title="names", objective="page names", **RUN)
        w.append("stream", id="agent-1", kind="agent", name="agent", run="run-1")
        for aid in cited:
            w.append("individual", id=aid, kind="table", name=aid, **RUN)
        for cid in claim_ids:
            w.append("claim", id=cid, name=cid, text=f"claim {cid}", evidence=list(cited),
                     **RUN)
        if cited and claim_ids:
            w.append("claim", id="claim-b", name="claim-b", text="claim b",
                     derived_from=[claim_ids[0]], **RUN)
        for aid in artifact_ids:
            w.append("individual", id=aid, kind="program", name=aid, **RUN)
        for cid in late:
            w.append("claim", id=cid, name=cid, text=f"claim {cid}", **RUN)
    return path


def _options(out: Path) -> BuildOptions:
    return BuildOptions(output=out, trusted_keys=(make_signer().verifier().to_text(),), jobs=1)


def _tree(site: Path) -> dict[str, bytes]:
    return {str(p.relative_to(site)): p.read_bytes() for p in site.rglob("*") if p.is_file()}


def test_the_pair_really_collides() -> None:
    a, b = COLLIDING
    assert a != b and slug(a) == slug(b) == "c-0-1-2-3-4-5-6-7-3240a79f"


def test_ids_made_to_share_a_name_get_longer_ones_and_both_pages(tmp_path: Path) -> None:
    assert sharing_a_name(["claim-a", *COLLIDING, "claim-b"]) == set(COLLIDING)
    result = build_site(_bundle(tmp_path / "hostile", COLLIDING), _options(tmp_path / "site"))
    assert result.renamed == tuple(sorted(COLLIDING))
    with long_names(COLLIDING):
        pages = [claim_href(cid) for cid in COLLIDING]
    assert pages[0] != pages[1] and claim_href(COLLIDING[0]) == claim_href(COLLIDING[1])
    listing = (tmp_path / "site" / "claims" / "index.html").read_text(encoding="utf-8")
    for cid, page in zip(COLLIDING, pages, strict=True):
        digest = hashlib.sha256(cid.encode()).hexdigest()[:24]
        assert page == f"claims/c-0-1-2-3-4-5-6-7-{digest}.html"
        html = (tmp_path / "site" / page).read_text(encoding="utf-8")
        assert f"<p>claim {cid}</p>" in html
        assert f'href="../{page}"' in listing
        assert (tmp_path / "site" / "proofs" / f"{page[7:-5]}.tlog-proof").is_file()
    assert not (tmp_path / "site" / claim_href(COLLIDING[0])).exists()


def test_the_build_command_names_the_renamed_ids(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Ids made to share a name are a sign of a hostile bundle: say so.  Names are
    escaped: ids cannot hold a control character, but archive names can."""
    key = tmp_path / "key.pub"
    key.write_text(make_signer().verifier().to_text() + "\n", encoding="utf-8")

    def build(bundle: Path, out: str) -> str:
        assert main(["build", str(bundle), "-o", str(tmp_path / out), "--trust-key",
                     str(key), "-j", "1"]) == 0
        return capsys.readouterr().err

    err = build(_bundle(tmp_path / "hostile", COLLIDING), "site")
    a, b = sorted(COLLIDING)
    assert (f"note: 2 ids were made to share a page name and were given longer ones: "
            f"{a!r}, {b!r}\n") in err
    assert "page name" not in build(_bundle(tmp_path / "fine", ("claim-a",)), "site2")

    monkeypatch.setattr(site, "build_site", lambda *args: dataclasses.replace(
        build_site(*args), renamed=(*SNEAKY, "a", "b", "c")))
    err = build(tmp_path / "fine", "site3")
    assert "note: 5 ids were made to share a page name and were given longer ones: " \
           f"{SNEAKY[0]!r}, {SNEAKY[1]!r}, 'a', 'b' and 1 more\n" in err
    assert "\\x1b" in err and "\\u202e" in err and not {"\x1b", "\u202e"} & set(err)


def test_a_rebuild_that_renames_a_page_writes_what_a_cold_build_writes(tmp_path: Path) -> None:
    """Claim X is named on the pages of artifact A and of claim-b, which read nothing
    that changes when claim Y is appended; but Y shares X's name, so X's page is
    renamed."""
    x, y = COLLIDING
    before = _bundle(tmp_path / "before", (x,), cited=("tbl-a",))
    after = _bundle(tmp_path / "after", (x,), cited=("tbl-a",), late=(y,))
    site = tmp_path / "site"
    for bundle in (before, after, after, before):
        build_site(bundle, _options(site))
        cold = tmp_path / f"cold-{bundle.name}"
        if not cold.exists():
            build_site(bundle, _options(cold))
        assert _tree(site) == _tree(cold), bundle.name
    build_site(after, _options(site))
    with long_names(COLLIDING):
        page = claim_href(x)
    for citing in (artifact_href("tbl-a"), claim_href("claim-b")):
        html = (site / citing).read_text(encoding="utf-8")
        assert f'href="../{page}"' in html and claim_href(x) not in html, citing


def test_ids_that_share_96_bits_stop_the_build_naming_both(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    build_site(_bundle(tmp_path / "good", ("claim-a", "claim-b")), _options(tmp_path / "site"))
    before = _tree(tmp_path / "site")
    real = urls.slug
    monkeypatch.setattr(urls, "slug", lambda oid: real(COLLIDING[0] if oid in COLLIDING else oid))
    with pytest.raises(OutputError) as info:
        build_site(_bundle(tmp_path / "hostile", COLLIDING), _options(tmp_path / "site"))
    message = str(info.value)
    assert info.value.code == "RB906"
    assert all(repr(cid) in message for cid in COLLIDING), message
    assert re.search(r"named 'claims/c-0-1-2-3-4-5-6-7-[0-9a-f]{24}\.html'", message), message
    assert _tree(tmp_path / "site") == before


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
    build_site(_bundle(tmp_path / "b", ("claim-a",), GENERATION), _options(tmp_path / "site"))
    pages = [tmp_path / "site" / artifact_href(aid) for aid in GENERATION]
    assert pages[0] != pages[1]
    for aid, page in zip(GENERATION, pages, strict=True):
        assert f"individual-{aid[-6:]}" in page.read_text(encoding="utf-8")
