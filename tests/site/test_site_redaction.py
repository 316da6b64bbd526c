"""Redacted bytes never reach the site, and a redaction is shown as one.

closed-loop-lab redacts a salted recipe; its generator knows the original
bytes (``recipe_bytes()``), so the whole output folder is searched for them:
the full bytes, every 16-byte window, their base64 at each alignment, their
hex, and the salt.  The LEAKED cases put the redacted bytes back into a copy
of the bundle (with and without the salt, and for an unsalted payload): the
build must report the problem and still never copy them.
"""

from __future__ import annotations

import base64
import shutil
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from fixtures.builders import SECRET_BYTES, make_valid_bundle
from site_helpers import EXAMPLES_DIR, REPO, BuiltSite, build, payload_owner

from bundler import layout
from bundler.render.urls import artifact_href
from bundler.verify import VerifyOptions, verify_bundle

if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))
from example_bundles.make import closed_loop_lab

RECIPE_ID = "ind:recipe"
REASON = "proprietary precursor recipe (supplier NDA)"
AUTHORITY = "IP office, ticket IP-2041"


def _needles(secret: bytes, salt: bytes | None = None) -> list[bytes]:
    """Byte strings whose presence anywhere would reveal ``secret``."""
    needles = [secret, secret.hex().encode()]
    needles += [secret[i:i + 16] for i in range(0, len(secret) - 15)]
    for shift in range(3):
        b64 = base64.b64encode(secret[shift:])
        needles.append(b64[4:-4])            # alignment-independent middle part
        needles.append(base64.urlsafe_b64encode(secret[shift:])[4:-4])
    if salt is not None:
        needles += [salt, salt.hex().encode(), base64.b64encode(salt)]
    return needles


def _assert_absent(site: Path, needles: list[bytes]) -> int:
    files = 0
    for path in sorted(site.rglob("*")):
        if not path.is_file():
            continue
        files += 1
        data = path.read_bytes()
        for needle in needles:
            assert needle not in data, \
                f"{path.relative_to(site)} contains redacted bytes {needle[:40]!r}"
    return files


def test_recipe_bytes_nowhere_in_the_site(site_of: Callable[[str], BuiltSite]) -> None:
    built = site_of("closed-loop-lab")
    secret = closed_loop_lab.recipe_bytes()
    assert b"TIP-23-0871" in secret  # the needles are the real recipe
    files = _assert_absent(built.site, _needles(secret, closed_loop_lab.RECIPE_SALT))
    assert files > 50


def test_recipe_page_shows_redacted_with_reason_and_authority(
        site_of: Callable[[str], BuiltSite]) -> None:
    built = site_of("closed-loop-lab")
    page = (built.site / artifact_href(RECIPE_ID)).read_text(encoding="utf-8")
    assert 'state-redacted' in page
    assert "state-missing" not in page and ">missing<" not in page
    assert f"Redacted by <strong>{AUTHORITY}</strong>: {REASON}." in page
    report = built.result.report
    _, digest = payload_owner(report.bundle.events, oid=RECIPE_ID)
    assert digest in page  # the commitment stays visible
    downloads = (built.site / "downloads.html").read_text(encoding="utf-8")
    row = next(r for r in downloads.split("<tr>") if digest[:23] in r)
    assert 'state-redacted' in row and REASON in row and AUTHORITY in row
    assert "<a " not in row  # nothing to download


def _recipe_digest() -> str:
    report = verify_bundle(EXAMPLES_DIR / "closed-loop-lab", VerifyOptions())
    return payload_owner(report.bundle.events, oid=RECIPE_ID)[1]


@pytest.mark.parametrize("with_salt", [True, False], ids=["bytes+salt", "bytes-only"])
def test_leaked_recipe_is_reported_not_copied(with_salt: bool, tmp_path: Path) -> None:
    bundle = tmp_path / "bundle"
    shutil.copytree(EXAMPLES_DIR / "closed-loop-lab", bundle)
    digest = _recipe_digest()
    secret = closed_loop_lab.recipe_bytes()
    (bundle / layout.payload_path(digest)).write_bytes(secret)
    if with_salt:
        (bundle / layout.salt_path(digest)).write_bytes(closed_loop_lab.RECIPE_SALT)
    result = build(bundle, tmp_path / "site")
    report = result.report
    assert not report.valid
    codes = {d.code for d in report.diagnostics}
    assert ("RB402" in codes) if with_salt else (codes & {"RB400", "RB402", "RB412"}), codes
    _assert_absent(result.output, _needles(secret, closed_loop_lab.RECIPE_SALT))
    page = (result.output / artifact_href(RECIPE_ID)).read_text(encoding="utf-8")
    state = report.bundle.payloads[digest].state.value
    assert state in ("leaked", "corrupt")
    assert f"state-{state}" in page
    assert 'class="banner-invalid"' in page


def test_leaked_unsalted_payload_is_not_copied(tmp_path: Path) -> None:
    ref = make_valid_bundle(tmp_path / "bundle")
    (ref.path / layout.payload_path(ref.redacted_digest)).write_bytes(SECRET_BYTES)
    result = build(ref.path, tmp_path / "site", ref.verifier_key_text)
    assert result.report.bundle.payloads[ref.redacted_digest].state.value == "leaked"
    assert "RB402" in {d.code for d in result.report.diagnostics}
    _assert_absent(result.output, _needles(SECRET_BYTES))
    page = (result.output / artifact_href("notes-1")).read_text(encoding="utf-8")
    assert "state-leaked" in page
