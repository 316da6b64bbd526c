"""``--base-url``: every page's canonical link, and the addresses refused for it."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from fixtures.builders import make_valid_bundle

from bundler.cli import main
from bundler.errors import UsageError
from bundler.render.site import BuildOptions, build_site
from bundler.render.urls import check_base_url


@pytest.mark.parametrize("url", [
    "https://example.org/review/", "http://localhost:8000", "https://example.org/a%20b/"])
def test_absolute_http_addresses_are_taken(url: str) -> None:
    check_base_url(url)     # raises nothing


@pytest.mark.parametrize("url", [
    "example.org/review", "/review/", "javascript:alert(1)", "file:///tmp/site",
    "https://", "https://example.org/?x=1", "https://example.org/#top",
    "https://example.org/a b/", "https://example.org/\x00", "http://[::1"])
def test_anything_else_is_a_usage_error(url: str) -> None:
    with pytest.raises(UsageError, match="expected an absolute http"):
        check_base_url(url)


def test_every_page_names_itself_under_the_base_url(tmp_path: Path) -> None:
    ref = make_valid_bundle(tmp_path / "bundle")
    out = tmp_path / "site"
    build_site(ref.path, BuildOptions(output=out, base_url="https://example.org/r/&x"))
    pages = sorted(out.rglob("*.html"))
    assert len(pages) > 10
    for page in pages:
        rel = page.relative_to(out).as_posix()
        found = re.findall(r'<link rel="canonical" href="([^"]*)">', page.read_text())
        assert found == [f"https://example.org/r/&amp;x/{rel}"], rel


def test_a_refused_base_url_exits_2_before_anything_is_written(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    ref = make_valid_bundle(tmp_path / "bundle")
    code = main(["build", str(ref.path), "-o", str(tmp_path / "site"),
                 "--base-url", "example.org"])
    assert code == 2
    assert "error [RB901]: --base-url 'example.org'" in capsys.readouterr().err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bundle"]
