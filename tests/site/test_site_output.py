"""Atomic output, exit codes and bad input for ``review-bundler build``.

A failed build (strict failure, missing bundle, a file instead of a bundle,
a refused output folder) must leave whatever was at the output path
byte-identical, exit like ``validate`` (0 ok, 1 invalid or strict failure,
2 usage or unreadable input) and never print a traceback.  An invalid bundle
still builds by default, and then says so loudly on every page.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
from site_helpers import DEMO_KEY, EXAMPLES_DIR, payload_owner, run_cli, tree, tree_diff

from bundler import layout
from bundler.render.urls import artifact_href
from bundler.verify import VerifyOptions, verify_bundle

SMALL = EXAMPLES_DIR / "unsupported-gain"


def _build(bundle: Path | str, out: Path, *extra: str) -> tuple[int, str]:
    proc = run_cli("build", bundle, "-o", out, "--trust-key", DEMO_KEY, "-q", *extra)
    output = proc.stdout + proc.stderr
    assert "Traceback" not in output, output
    return proc.returncode, output


@pytest.fixture(scope="module")
def previous(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, bytes]]:
    """A site built once; failed builds must leave it exactly as it is."""
    out = tmp_path_factory.mktemp("atomic") / "site"
    code, output = _build(SMALL, out)
    assert code == 0, output
    return out, tree(out)


def _unchanged(site: Path, before: dict[str, bytes]) -> None:
    diff = tree_diff(before, tree(site), labels=("before", "after"))
    assert not diff, diff
    leftovers = sorted(p.name for p in site.parent.iterdir() if p.name.startswith("."))
    assert not leftovers, f"temporary build folders left behind: {leftovers}"


def test_valid_build_exits_0_and_prints_the_site_url(tmp_path: Path) -> None:
    proc = run_cli("build", SMALL, "-o", tmp_path / "s", "--trust-key", DEMO_KEY)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == (tmp_path / "s" / "index.html").resolve().as_uri()
    assert re.search(r"built \d+ pages, \d+ graphs, \d+ files", proc.stderr)
    assert "verification: pinned (0 errors, 0 warnings)" in proc.stderr


def test_rebuild_of_unchanged_inputs_reports_the_recorded_verdict(tmp_path: Path) -> None:
    """The second build skips verification and says so; --no-cache verifies again; the
    exit code and the counts are the same each time, and so is the site."""
    bundle, out = EXAMPLES_DIR / "multi-agent-paper", tmp_path / "s"
    verdict = re.compile(r"verification: (pinned \(0 errors, [1-9]\d* warnings)(.*)\)")
    runs = []
    for extra in ((), (), ("--no-cache",)):
        proc = run_cli("build", bundle, "-o", out, "--trust-key", DEMO_KEY, *extra)
        assert proc.returncode == 0, proc.stderr
        match = verdict.search(proc.stderr)
        assert match is not None, proc.stderr
        runs.append((match.group(1), match.group(2), tree(out)))
    assert runs[0][0] == runs[1][0] == runs[2][0]
    assert [r[1] for r in runs] == ["", "; unchanged inputs, as at the last build", ""]
    assert runs[0][2] == runs[1][2] == runs[2][2]


def test_archive_bundle_rebuild_skips_verification_too(tmp_path: Path) -> None:
    """A .zip bundle is pinned by its bytes: the second build of the same archive is a
    carry-over, and an archive with other bytes is verified again."""
    archive = Path(shutil.copy(EXAMPLES_DIR / "unsupported-gain.zip", tmp_path / "b.zip"))
    out = tmp_path / "s"
    outputs = []
    for _ in range(2):
        proc = run_cli("build", archive, "-o", out, "--trust-key", DEMO_KEY)
        assert proc.returncode == 0, proc.stderr
        outputs.append(proc.stderr)
    assert "unchanged inputs" not in outputs[0] and "unchanged inputs" in outputs[1]
    with open(archive, "ab") as fh:
        fh.write(b"\0")       # trailing garbage after the zip's end record
    proc = run_cli("build", archive, "-o", out, "--trust-key", DEMO_KEY)
    assert "unchanged inputs" not in proc.stderr, proc.stderr


def test_warnings_build_without_strict(tmp_path: Path) -> None:
    code, output = _build(EXAMPLES_DIR / "multi-agent-paper", tmp_path / "s")
    assert code == 0, output
    assert (tmp_path / "s" / "index.html").is_file()


def test_strict_failure_leaves_previous_site(previous: tuple[Path, dict[str, bytes]]) -> None:
    site, before = previous
    code, output = _build(EXAMPLES_DIR / "multi-agent-paper", site, "--strict")
    assert code == 1, output
    assert "RB503" in output
    _unchanged(site, before)


def test_missing_bundle_exits_2(previous: tuple[Path, dict[str, bytes]], tmp_path: Path) -> None:
    site, before = previous
    code, output = _build(tmp_path / "no-such-bundle", site)
    assert code == 2, output
    assert "review-bundler: error" in output
    _unchanged(site, before)


def test_bundle_that_is_a_file_exits_2(previous: tuple[Path, dict[str, bytes]]) -> None:
    site, before = previous
    code, output = _build(DEMO_KEY, site)
    assert code == 2, output
    _unchanged(site, before)


def test_usage_errors_exit_2(previous: tuple[Path, dict[str, bytes]]) -> None:
    site, before = previous
    for extra in (("-j", "0"), ("--no-such-option",), ("--theme", str(DEMO_KEY))):
        code, output = _build(SMALL, site, *extra)
        assert code == 2, (extra, output)
    proc = run_cli("build", SMALL)  # no -o
    assert proc.returncode == 2
    _unchanged(site, before)


def test_refuses_foreign_non_empty_folder(tmp_path: Path) -> None:
    out = tmp_path / "docs"
    out.mkdir()
    (out / "important.txt").write_text("not a review site\n")
    (out / "sub").mkdir()
    (out / "sub" / "page.html").write_text("<p>mine</p>\n")
    before = tree(out)
    code, output = _build(SMALL, out)
    assert code != 0
    assert "not built by review-bundler" in output
    assert tree(out) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["docs"]


def test_refuses_output_that_is_a_file(tmp_path: Path) -> None:
    out = tmp_path / "site.html"
    out.write_text("keep me\n")
    code, output = _build(SMALL, out)
    assert code != 0, output
    assert out.read_text() == "keep me\n"


@pytest.mark.parametrize("where", ["under a file", "name too long", "cannot be made"])
def test_an_output_path_that_cannot_hold_a_site_is_an_output_error(
        where: str, tmp_path: Path) -> None:
    """Not an internal error ("a bug in review-bundler"): RB906, exit 1, naming the path."""
    (tmp_path / "file").write_text("keep me\n")
    out = {"under a file": tmp_path / "file" / "site",
           "name too long": tmp_path / ("x" * 300),
           "cannot be made": Path("/proc/review-bundler-site")}[where]
    code, output = _build(SMALL, out)
    assert code == 1, output
    assert f"error [RB906]: cannot write the site at {out}: " in output
    assert "internal error" not in output
    assert (tmp_path / "file").read_text() == "keep me\n"


def test_rebuild_replaces_own_site(previous: tuple[Path, dict[str, bytes]],
                                   tmp_path: Path) -> None:
    """A folder carrying the marker is ours: rebuilding replaces it completely."""
    site = tmp_path / "site"
    shutil.copytree(previous[0], site)
    (site / "stale.html").write_text("left over from an older build\n")
    code, output = _build(SMALL, site)
    assert code == 0, output
    assert not (site / "stale.html").exists()
    assert tree(site) == previous[1]


@pytest.fixture(scope="module")
def tampered(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str, bytes, int, str]:
    """A copy of the small bundle with one byte of one payload changed, and its site."""
    root = tmp_path_factory.mktemp("tampered")
    bundle = root / "bundle"
    shutil.copytree(SMALL, bundle)
    payload = sorted((bundle / layout.PAYLOADS / "sha256").iterdir())[0]
    data = bytearray(payload.read_bytes())
    data[len(data) // 2] ^= 0x01
    payload.write_bytes(bytes(data))
    code, output = _build(bundle, root / "site")
    return root / "site", "sha256:" + payload.name, bytes(data), code, output


def test_invalid_bundle_still_builds_and_says_so(
        tampered: tuple[Path, str, bytes, int, str]) -> None:
    site, _, _, code, output = tampered
    assert code == 1, output
    index = (site / "index.html").read_text(encoding="utf-8")
    assert 'class="banner-invalid"' in index
    assert "Verification: INVALID" in index
    assert 'badge trust-invalid' in index
    integrity = (site / "integrity.html").read_text(encoding="utf-8")
    assert "<code>RB400</code>" in integrity
    # every page carries the banner
    for page in site.rglob("*.html"):
        assert 'class="banner-invalid"' in page.read_text(encoding="utf-8"), page


def test_corrupt_bytes_are_not_shipped(tampered: tuple[Path, str, bytes, int, str]) -> None:
    site, digest, corrupt, _, _ = tampered
    assert not (site / "bundle" / "payloads" / "sha256" / digest[7:]).exists()
    for path in site.rglob("*"):
        if path.is_file():
            assert corrupt not in path.read_bytes(), path
    report = verify_bundle(SMALL, VerifyOptions())
    owner, _ = payload_owner(report.bundle.events, digest=digest)
    page = (site / artifact_href(owner)).read_text(encoding="utf-8")
    assert "state-corrupt" in page


@pytest.mark.parametrize("name", ["unsupported-gain", "closed-loop-lab"])
def test_shipped_bundle_copy_reverifies(name: str, tmp_path: Path) -> None:
    """``SITE/bundle`` is a bundle in its own right, valid under the same pinned key."""
    code, output = _build(EXAMPLES_DIR / name, tmp_path / "s")
    assert code == 0, output
    proc = run_cli("validate", tmp_path / "s" / "bundle", "--strict", "--trust-key", DEMO_KEY)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "VALID, signed by a pinned key" in proc.stdout
