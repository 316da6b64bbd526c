"""The audit pages in headless Chromium: clean load and no serious axe-core finding."""

from __future__ import annotations

from pathlib import Path

import pytest
from browser_util import axe_serious, chromium_context, watch

from bundler.render.site import BuildOptions, build_site

from .conftest import EXAMPLES, demo_key

pytestmark = pytest.mark.browser
PAGES = ["audit/index.html", "audit/unsupported-claims.html", "audit/claim-trace.html",
         "audit/steering-effects.html", "audit/missing-evidence.html"]


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("site") / "closed-loop-lab"
    build_site(EXAMPLES / "closed-loop-lab", BuildOptions(output=out,
                                                           trusted_keys=(demo_key(),)))
    return out


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_audit_pages_are_accessible(site: Path, scheme: str) -> None:
    found: list[str] = []
    with chromium_context(color_scheme=scheme, viewport={"width": 1200, "height": 900}) as ctx:
        page = ctx.new_page()
        log = watch(page)
        for rel in PAGES:
            page.goto((site / rel).as_uri())
            found += [f"{rel}: {v}" for v in axe_serious(page)]
        assert log.problems() == []
    assert not found, "\n".join(found)
