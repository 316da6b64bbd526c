"""Shared by the tests of bundle files that change while a build reads them."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from bundler.render import site as site_module

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
