"""Session fixtures for the site tests: every example site is built once and shared.

Builds go through the library (``build_site``) so each test module can read
the :class:`BuildResult`; the CLI is exercised separately where exit codes
and output matter.  Sites are built lazily, on first use, so running one
test file builds only what it needs.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from fixtures.hostile import HostileBundle, make_hostile_bundle
from site_helpers import EXAMPLES_DIR, BuiltSite, PageScan, build, html_pages, scan_html

BUILD_SECONDS: dict[str, float] = {}


@pytest.fixture(scope="session")
def site_of(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Callable[[str], BuiltSite]]:
    """``site_of("air-quality")`` -> that example's site, built once per session."""
    cache: dict[str, BuiltSite] = {}
    root = tmp_path_factory.mktemp("example-sites")

    def get(name: str) -> BuiltSite:
        if name not in cache:
            bundle = EXAMPLES_DIR / name
            result = build(bundle, root / name, jobs=2)
            BUILD_SECONDS[name] = result.seconds
            cache[name] = BuiltSite(name, bundle, result.output, result)
        return cache[name]

    yield get


@pytest.fixture(scope="session")
def scans_of(site_of: Callable[[str], BuiltSite]) -> Callable[[BuiltSite], dict[str, PageScan]]:
    """``scans_of(site)`` -> every HTML page of that site, parsed once per session."""
    cache: dict[Path, dict[str, PageScan]] = {}

    def get(built: BuiltSite) -> dict[str, PageScan]:
        if built.site not in cache:
            cache[built.site] = {
                rel: scan_html((built.site / rel).read_text(encoding="utf-8"))
                for rel in html_pages(built.site)}
        return cache[built.site]

    return get


@pytest.fixture(scope="session")
def hostile(tmp_path_factory: pytest.TempPathFactory) -> tuple[HostileBundle, BuiltSite]:
    """The hostile bundle and its site (pinned with its own test key)."""
    root = tmp_path_factory.mktemp("hostile")
    bundle = make_hostile_bundle(root / "bundle")
    result = build(bundle.path, root / "site", bundle.verifier_key_text)
    return bundle, BuiltSite("hostile", bundle.path, result.output, result)


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """Print the build time of each example site (the report asks for them)."""
    if BUILD_SECONDS:
        terminalreporter.write_sep("-", "example site build times (BuildResult.seconds)")
        for name, seconds in sorted(BUILD_SECONDS.items()):
            terminalreporter.write_line(f"{name:22s} {seconds:6.2f} s")

