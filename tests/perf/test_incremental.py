"""Incremental rebuilds: reuse what is unchanged, and never differ from a cold build."""

from __future__ import annotations

import shutil
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from markupsafe import Markup

from bundler.output.graph_cache import store_path
from bundler.output.manifest import manifest_path
from bundler.render import chunk_graphs, chunks, graphviz, proofs
from bundler.render import site as site_mod
from bundler.render.chunk_graphs import graph_name
from bundler.render.graphviz import GraphSpec
from bundler.render.pages.base import Page
from bundler.render.site import BuildOptions, build_site
from bundler.verify.result import CheckpointCheck

from .conftest import build, grow, tree


@pytest.fixture(scope="module")
def cold(synth_3k: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    """A cold build of the 3k-event bundle (no cache involved) and its file digests."""
    out = tmp_path_factory.mktemp("cold") / "site"
    result = build(synth_3k, out, incremental=False)
    assert result.reused == 0
    return out, tree(out)


def test_unchanged_rebuild_reuses_every_page_and_is_identical(
        synth_3k: Path, cold: tuple[Path, dict[str, str]], tmp_path: Path) -> None:
    site = tmp_path / "site"
    first = build(synth_3k, site, jobs=2)
    assert first.reused == 0
    assert tree(site) == cold[1]
    again = build(synth_3k, site, jobs=2)
    assert again.pages == first.pages
    assert again.reused == again.pages
    assert tree(site) == cold[1]


def test_grown_bundle_rebuild_matches_its_cold_build(synth_3k: Path, tmp_path: Path) -> None:
    grown = grow(synth_3k, tmp_path / "grown", 30)
    site = tmp_path / "site"
    build(synth_3k, site, jobs=2)
    warm = build(grown, site, jobs=2)
    fresh = tmp_path / "fresh"
    cold = build(grown, fresh, incremental=False)
    assert tree(site) == tree(fresh)
    assert warm.pages == cold.pages
    # most pages are untouched by 30 appended events; new and affected ones are not
    assert warm.pages * 0.5 < warm.reused < warm.pages


class LaidOut:
    """Records the graphs handed to Graphviz and the pages rendered (in-process
    builds, ``jobs=1``)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.names: list[str] = []
        self.pages: list[str] = []
        real_svgs, real_page = graphviz.prepare_svgs, chunks.render_page

        def counting(specs: list[GraphSpec], **kwargs: Any) -> graphviz.DotBatch:
            self.names += [s.name for s in specs]
            return real_svgs(specs, **kwargs)

        def rendering(job: chunks.RenderJob, page: Page, svg: dict[str, Markup],
                      made: dict[str, Any] | None = None) -> str:
            self.pages.append(page.path)
            return real_page(job, page, svg, made)

        monkeypatch.setattr(chunk_graphs, "prepare_svgs", counting)
        monkeypatch.setattr(chunks, "render_page", rendering)


def test_grown_rebuild_keeps_old_claim_pages(synth_3k: Path, tmp_path: Path) -> None:
    """Claim proofs are receipts against the first covering checkpoint, so appended
    events leave every old claim page as it was, and it is reused, not rendered."""
    grown = grow(synth_3k, tmp_path / "grown", 30)
    site = tmp_path / "site"
    build(synth_3k, site)
    before = {k: v for k, v in tree(site).items()
              if k.startswith("claims/") and not k.startswith("claims/index")}
    assert len(before) > 10

    def rendering(job: chunks.RenderJob, page: Page, svg: dict[str, Markup],
                  made: dict[str, Any] | None = None) -> str:
        rendered.append(page.path)
        return real_page(job, page, svg, made)

    rendered: list[str] = []
    real_page = chunks.render_page
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(chunks, "render_page", rendering)
        build(grown, site)
    after = tree(site)
    assert {k: after[k] for k in before} == before
    assert not set(rendered) & set(before)


def proofs_against_newest(monkeypatch: pytest.MonkeyPatch) -> None:
    """Claim proofs against the newest checkpoint: then a grown bundle changes every
    claim page but none of its graphs."""
    def newest(checkpoints: list[CheckpointCheck]) -> Callable[[int], CheckpointCheck | None]:
        def find(seq: int) -> CheckpointCheck | None:
            good = [c for c in checkpoints if c.root_matches and c.any_ok and c.size > seq]
            return max(good, key=lambda c: c.size) if good else None
        return find

    monkeypatch.setattr(proofs, "checkpoint_finder", newest)


def test_pages_rendered_again_take_unchanged_graphs_from_the_store(
        synth_3k: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    grown = grow(synth_3k, tmp_path / "grown", 30)
    site = tmp_path / "site"
    build(synth_3k, site)
    before = {p.relative_to(site).as_posix() for p in site.rglob("*.html")}
    proofs_against_newest(monkeypatch)
    laid = LaidOut(monkeypatch)
    warm = build(grown, site)
    again = [p for p in laid.pages if p in before and p.startswith("claims/")
             and not p.startswith("claims/index")]
    assert len(again) > 10
    prefixes = tuple(graph_name(p, "") for p in again)
    assert not [n for n in laid.names if n.startswith(prefixes)]
    assert len(laid.names) < warm.graphs / 4
    fresh = tmp_path / "fresh"
    build(grown, fresh, incremental=False)
    assert tree(site) == tree(fresh)


def test_a_build_without_the_page_cache_keeps_no_graphs(
        cold: tuple[Path, dict[str, str]]) -> None:
    assert not store_path(cold[0]).exists()


def test_damaged_graph_store_is_laid_out_again(
        synth_3k: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    grown = grow(synth_3k, tmp_path / "grown", 30)
    site = tmp_path / "site"
    build(synth_3k, site)
    entries = sorted(store_path(site).glob("*.svg"))
    assert entries
    for entry in entries:      # well-formed, other text: only the digest can tell
        head, packed = entry.read_bytes().split(b"\n", 1)
        text = zlib.decompress(packed).replace(b"<title", b"<TITLE")
        entry.write_bytes(head + b"\n" + zlib.compress(text))
    proofs_against_newest(monkeypatch)
    fresh_laid = LaidOut(monkeypatch)
    build(grown, site)
    assert any(n.startswith("claims-") for n in fresh_laid.names)
    fresh = tmp_path / "fresh"
    build(grown, fresh, incremental=False)
    assert tree(site) == tree(fresh)


def test_a_removed_site_does_not_read_its_graph_store(
        synth_3k: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    site = tmp_path / "site"
    first = build(synth_3k, site)
    shutil.rmtree(site)
    laid = LaidOut(monkeypatch)
    again = build(synth_3k, site)
    assert len(laid.names) == again.graphs == first.graphs


def test_edited_page_in_the_old_site_is_rendered_again(
        synth_3k: Path, cold: tuple[Path, dict[str, str]], tmp_path: Path) -> None:
    site = tmp_path / "site"
    build(synth_3k, site)
    page = site / "integrity.html"
    page.write_text(page.read_text(encoding="utf-8") + "<!-- edited -->", encoding="utf-8")
    again = build(synth_3k, site)
    assert again.reused == again.pages - 1
    assert tree(site) == cold[1]


def test_forged_or_foreign_manifest_is_not_trusted(
        synth_3k: Path, cold: tuple[Path, dict[str, str]], tmp_path: Path) -> None:
    site = tmp_path / "site"
    build(synth_3k, site)
    manifest = manifest_path(site)
    text = manifest.read_text(encoding="utf-8")
    # a site copied elsewhere has no manifest: everything is rendered
    moved = tmp_path / "moved"
    shutil.copytree(site, moved)
    assert build(synth_3k, moved).reused == 0
    # a manifest whose digests do not match the files reuses nothing
    lines = text.splitlines()
    forged = [*lines[:4]] + [f"{fp} {'0' * 64} {path}"
                             for fp, _, path in (ln.split(" ", 2) for ln in lines[4:])]
    manifest.write_text("\n".join(forged) + "\n", encoding="utf-8")
    assert build(synth_3k, site).reused == 0
    assert tree(site) == cold[1]
    # garbage is ignored
    manifest.write_text("not a manifest\n", encoding="utf-8")
    assert build(synth_3k, site).reused == 0
    assert tree(site) == cold[1]


def test_manifest_is_not_part_of_the_site(synth_3k: Path, tmp_path: Path) -> None:
    site = tmp_path / "site"
    build(synth_3k, site)
    assert manifest_path(site).is_file()
    assert not manifest_path(site).is_relative_to(site)
    assert sorted(p.name for p in site.iterdir() if p.name.startswith(".")) == [
        ".review-bundler-site"]


def test_symlinked_or_shared_pages_are_not_carried_over(
        synth_3k: Path, cold: tuple[Path, dict[str, str]], tmp_path: Path) -> None:
    site = tmp_path / "site"
    build(synth_3k, site)
    # a page replaced by a symlink to an identical copy elsewhere is rendered again
    outside = tmp_path / "outside.html"
    page = site / "steering.html"
    outside.write_bytes(page.read_bytes())
    page.unlink()
    page.symlink_to(outside)
    # a page with a second hard link elsewhere is copied, not linked
    other = site / "lineage.html"
    extra_link = tmp_path / "extra-link.html"
    extra_link.hardlink_to(other)
    again = build(synth_3k, site)
    assert again.reused == again.pages - 1
    assert tree(site) == cold[1]
    assert not (site / "steering.html").is_symlink()
    assert (site / "lineage.html").stat().st_ino != extra_link.stat().st_ino


def test_unchanged_bundle_reuses_the_whole_site_without_building_pages(
        synth_3k: Path, cold: tuple[Path, dict[str, str]], tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    site = tmp_path / "site"
    first = build(synth_3k, site, jobs=2)

    def no_pages(*_args: object) -> None:
        raise AssertionError("a page was built although nothing changed")

    monkeypatch.setattr(chunks, "make_page", no_pages)
    monkeypatch.setattr(site_mod, "build_index", no_pages)
    again = build(synth_3k, site, jobs=2)
    assert (again.pages, again.graphs, again.files) == (first.pages, first.graphs, first.files)
    assert again.reused == again.pages
    assert tree(site) == cold[1]


def test_a_tampered_copy_in_the_old_site_falls_back_to_page_reuse(
        synth_3k: Path, cold: tuple[Path, dict[str, str]], tmp_path: Path) -> None:
    site = tmp_path / "site"
    build(synth_3k, site)
    copied = site / "bundle" / "events.jsonl"
    copied.write_bytes(copied.read_bytes() + b"tampered\n")
    again = build(synth_3k, site)
    assert again.reused == again.pages      # pages are still fine; the copy is redone
    assert tree(site) == cold[1]


def test_different_trust_rebuilds_every_page(
        synth_3k: Path, tmp_path: Path) -> None:
    site = tmp_path / "site"
    build(synth_3k, site)
    unpinned = build_site(synth_3k, BuildOptions(output=site))     # bundle-only trust
    assert unpinned.reused == 0
    fresh = tmp_path / "fresh"
    build_site(synth_3k, BuildOptions(output=fresh, incremental=False))
    assert tree(site) == tree(fresh)


def test_the_manifest_lists_every_file_sorted_with_its_digest(
        synth_3k: Path, tmp_path: Path) -> None:
    """Written row by row from the page ledger: every file of the site but the marker,
    in path order, each with the SHA-256 of its bytes; pages with a fingerprint."""
    site = tmp_path / "site"
    result = build(synth_3k, site, jobs=2)
    lines = manifest_path(site).read_text(encoding="utf-8").splitlines()
    assert lines[3].split(" ")[2:] == [str(result.pages), str(result.graphs)]
    rows = [line.split(" ", 2) for line in lines[4:]]
    paths = [path for _, _, path in rows]
    assert paths == sorted(paths)
    files = tree(site)
    files.pop(".review-bundler-site")
    assert {path: digest for _, digest, path in rows} == files
    pages = [path for fp, _, path in rows if fp != "-"]
    assert len(pages) == result.pages
    assert all(p.endswith(".html") for p in pages)
    assert "search/docs.js" in paths and "search/docs.js" not in pages


def test_the_builder_does_not_hold_a_result_per_page(
        synth_3k: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Results are counted and turned into manifest rows as they come (0.5 KB a page
    held to the end was 87 MB at a million events)."""
    held: list[int] = []
    real_finish = site_mod._finish

    def finish(*args: Any) -> Any:
        import gc
        held.append(sum(isinstance(o, chunks.PageResult) for o in gc.get_objects()))
        return real_finish(*args)

    monkeypatch.setattr(site_mod, "_finish", finish)
    result = build(synth_3k, tmp_path / "site", jobs=1)
    assert result.pages > 300
    assert held and held[0] < 10
