"""A site folder and its bundle must not hold one another (RB901, exit 2).

A build replaces its output folder whole: with the bundle inside it, the build
deleted the bundle.  A site folder inside the bundle became part of the bundle
(the next build warned about every page).  Both are refused before anything is
read or written, and the bundle is left as it was.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from fixtures.builders import make_valid_bundle

from bundler.cli import main
from bundler.errors import UsageError
from bundler.output.overlap import refuse_overlap
from bundler.render.site import BuildOptions, build_site


def _files(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in root.rglob("*") if p.is_file()}


@pytest.mark.parametrize(("bundle", "output", "says"), [
    ("b", "b", "is the bundle itself"),
    ("b", "b/site", "is inside the bundle"),
    ("b", "b/x/y/site", "is inside the bundle"),
    ("site/b", "site", "is inside the output folder"),
    ("site/copies/b.zip", "site", "is inside the output folder"),
])
def test_overlapping_paths_are_refused(bundle: str, output: str, says: str,
                                       tmp_path: Path) -> None:
    with pytest.raises(UsageError, match=says):
        refuse_overlap(tmp_path / bundle, tmp_path / output)


@pytest.mark.parametrize(("bundle", "output"), [
    ("b", "b-site"), ("site-b", "site"), ("a/b", "a/c"), ("b", "site")])
def test_neighbours_are_not_overlap(bundle: str, output: str, tmp_path: Path) -> None:
    refuse_overlap(tmp_path / bundle, tmp_path / output)     # raises nothing


def test_a_link_is_no_way_around_it(tmp_path: Path) -> None:
    (tmp_path / "site").mkdir()
    (tmp_path / "alias").symlink_to(tmp_path / "site")
    with pytest.raises(UsageError, match="is inside the output folder"):
        refuse_overlap(tmp_path / "alias" / "b", tmp_path / "site")


def test_a_bundle_copied_into_its_site_survives_a_build(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The case that lost data: the site built, the bundle put beside its pages, built
    again from there."""
    ref = make_valid_bundle(tmp_path / "bundle")
    site = tmp_path / "site"
    build_site(ref.path, BuildOptions(output=site, trusted_keys=(ref.verifier_key_text,)))
    shutil.copytree(ref.path, site / "copy")
    before = _files(site)
    code = main(["build", str(site / "copy"), "-o", str(site),
                 "--trust-key", ref.verifier_key_text])
    assert code == 2
    assert "error [RB901]" in capsys.readouterr().err
    assert _files(site) == before


def test_a_site_inside_the_bundle_is_not_written(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    ref = make_valid_bundle(tmp_path / "bundle")
    before = _files(ref.path)
    assert main(["build", str(ref.path), "-o", str(ref.path / "site")]) == 2
    assert "is inside the bundle" in capsys.readouterr().err
    assert _files(ref.path) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bundle"]
