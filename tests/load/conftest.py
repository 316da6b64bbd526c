"""Shared by the tests of bundle files that change while a build reads them."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from fixtures.builders import make_valid_bundle

from bundler.errors import InputError
from bundler.render import site as site_module
from bundler.render.site import BuildOptions, build_site

AfterVerification = Callable[[Callable[[], None]], None]


@pytest.fixture
def after_verification(monkeypatch: pytest.MonkeyPatch) -> AfterVerification:
    """``after_verification(change)``: the next build runs ``change()`` once the bundle
    is verified, before any page is made (when the pages read the bundle again)."""
    def install(change: Callable[[], None]) -> None:
        original = site_module.claim_proofs

        def changed_then_proved(*args: Any, **kwargs: Any) -> Any:
            change()
            return original(*args, **kwargs)
        monkeypatch.setattr(site_module, "claim_proofs", changed_then_proved)
    return install


def rebuild_stops(tmp_path: Path, incremental: bool, after_verification: AfterVerification,
                  change: Callable[[Path], None]) -> None:
    """A valid bundle built into ``tmp_path/site``; rebuilt with ``change(bundle)`` made
    once it is verified, the build stops (RB902), and the site and the folder around it
    are as the first build left them: the changed bytes reach no file."""
    ref = make_valid_bundle(tmp_path / "bundle")
    out = tmp_path / "site"
    opts = BuildOptions(output=out, trusted_keys=(ref.verifier_key_text,), jobs=1,
                        incremental=incremental)
    build_site(ref.path, opts)
    before = {p: p.read_bytes() for p in out.rglob("*") if p.is_file()}
    after_verification(lambda: change(ref.path))
    with pytest.raises(InputError, match="changed during the build"):
        build_site(ref.path, dataclasses.replace(opts, title="made again"))
    assert {p: p.read_bytes() for p in out.rglob("*") if p.is_file()} == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bundle", "site"]
