"""Rebuilds of unchanged inputs skip verification, and nothing else does."""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

import pytest

from bundler.diagnostics import Severity
from bundler.errors import InputError, InvalidBundleError
from bundler.output import SiteWriter
from bundler.output.manifest import NO_INPUTS, PreviousSite, manifest_path
from bundler.render import incremental
from bundler.render import site as site_mod
from bundler.render.site import BuildOptions, build_site
from bundler.verify import Trust, Verdict

from .conftest import build, key, tree


class Verifications:
    """Counts the bundles the builder verifies."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.count = 0
        real = site_mod.verify_bundle

        def counting(*args: Any, **kwargs: Any) -> Any:
            self.count += 1
            return real(*args, **kwargs)

        monkeypatch.setattr(site_mod, "verify_bundle", counting)


@pytest.fixture
def bundle(synth_3k: Path, tmp_path: Path) -> Path:
    """A private copy: these tests edit it."""
    return Path(shutil.copytree(synth_3k, tmp_path / "bundle"))


def test_same_inputs_skip_verification_and_give_the_same_site(
        bundle: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    site = tmp_path / "site"
    first = build(bundle, site)
    before = tree(site)
    seen = Verifications(monkeypatch)
    again = build(bundle, site)
    assert seen.count == 0
    assert again.report is None
    assert first.report is not None and again.verdict == first.report.verdict()
    assert again.verdict.trust is Trust.PINNED
    assert again.reused == again.pages == first.pages
    assert tree(site) == before


@pytest.mark.parametrize("edit", ["payload byte", "stray file", "checkpoint", "empty folder"])
def test_any_changed_bundle_byte_is_verified_again(
        bundle: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, edit: str) -> None:
    site = tmp_path / "site"
    build(bundle, site)
    if edit == "payload byte":
        payload = next(p for p in sorted((bundle / "payloads").rglob("*")) if p.is_file())
        data = bytearray(payload.read_bytes())
        data[0] ^= 1
        payload.write_bytes(bytes(data))
    elif edit == "stray file":
        (bundle / "notes.txt").write_text("not part of the format\n", encoding="utf-8")
    elif edit == "checkpoint":
        cp = next(p for p in sorted((bundle / "checkpoints").iterdir()) if p.is_file())
        cp.write_bytes(cp.read_bytes() + b"\n")
    else:
        (bundle / "payloads" / "empty").mkdir()
    seen = Verifications(monkeypatch)
    warm = build(bundle, site)
    assert seen.count == 1 and warm.report is not None
    fresh = tmp_path / "fresh"
    cold = build(bundle, fresh, incremental=False)
    assert cold.report is not None and warm.verdict == cold.report.verdict()
    assert tree(site) == tree(fresh)


def test_other_options_are_other_inputs(
        bundle: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    site = tmp_path / "site"
    build(bundle, site)
    seen = Verifications(monkeypatch)
    unpinned = build_site(bundle, BuildOptions(output=site))     # no pinned key
    assert seen.count == 1
    assert unpinned.verdict.trust is Trust.BUNDLE_ONLY
    titled = build_site(bundle, BuildOptions(output=site, trusted_keys=(key(),), title="T"))
    assert seen.count == 2 and titled.verdict.trust is Trust.PINNED
    overrides = {"RB501": Severity.ERROR}
    overridden = build_site(bundle, BuildOptions(output=site, trusted_keys=(key(),), title="T",
                                                 severity_overrides=overrides))
    assert seen.count == 3 and overridden.report is not None


def test_a_symlink_inside_the_bundle_means_no_inputs_digest(bundle: Path) -> None:
    assert incremental.build_inputs(bundle, "env", trusted_keys=(), severity_overrides={},
                                    title=None, base_url=None) is not None
    os.symlink("events.jsonl", bundle / "link")
    assert incremental.build_inputs(bundle, "env", trusted_keys=(), severity_overrides={},
                                    title=None, base_url=None) is None
    os.unlink(bundle / "link")
    # the bundle folder itself may be named through a symlink
    alias = bundle.parent / "alias"
    os.symlink(bundle, alias)
    assert incremental.build_inputs(alias, "env", trusted_keys=(), severity_overrides={},
                                    title=None, base_url=None) is not None


def test_inputs_digest_names_every_file_and_byte(bundle: Path, tmp_path: Path) -> None:
    def digest(path: Path) -> str:
        inputs = incremental.build_inputs(path, "env", trusted_keys=(), severity_overrides={},
                                          title=None, base_url=None)
        assert inputs is not None
        return inputs.digest

    base = digest(bundle)
    assert digest(bundle) == base
    (bundle / "a").write_bytes(b"")
    empty_file = digest(bundle)
    (bundle / "a").unlink()
    (bundle / "a").mkdir()
    assert len({base, empty_file, digest(bundle)}) == 3
    (bundle / "a").rmdir()
    assert digest(bundle) == base
    # the same files under another path are another bundle (the report names it)
    moved = Path(shutil.copytree(bundle, tmp_path / "elsewhere"))
    assert digest(moved) != base


def test_bundle_changed_during_the_build_is_not_pinned(
        bundle: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    real = site_mod.verify_bundle

    def verify_then_edit(*args: Any, **kwargs: Any) -> Any:
        report = real(*args, **kwargs)
        (bundle / "late.txt").write_text("written while the site was built\n", encoding="utf-8")
        return report

    monkeypatch.setattr(site_mod, "verify_bundle", verify_then_edit)
    site = tmp_path / "site"
    with pytest.raises(InputError, match="changed during the build"):
        build(bundle, site)
    assert not site.exists()
    # changed again after the site is committed: built, but its inputs not recorded
    commit = SiteWriter.commit

    def commit_then_edit(self: SiteWriter) -> Path:
        target = commit(self)
        (bundle / "later.txt").write_text("written after the commit\n", encoding="utf-8")
        return target
    monkeypatch.setattr(site_mod, "verify_bundle", real)
    monkeypatch.setattr(SiteWriter, "commit", commit_then_edit)
    build(bundle, site)
    previous = PreviousSite.read(site)
    assert previous is not None and previous.summary.inputs == NO_INPUTS


def test_a_site_carried_over_after_verification_is_pinned_again(
        bundle: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A site left unpinned (the bundle was touched after the commit) and then found
    equal to its bundle by a full verification is carried over and pinned: the digest
    agrees with every file verification read, the log through the previous site's
    copy of it (held to the same leaf hashes).  The next build skips verification."""
    site = tmp_path / "site"
    commit = SiteWriter.commit

    def commit_then_touch(self: SiteWriter) -> Path:
        target = commit(self)
        os.utime(bundle / "bundle.json")
        return target
    monkeypatch.setattr(SiteWriter, "commit", commit_then_touch)
    build(bundle, site)
    assert (previous := PreviousSite.read(site)) is not None
    assert previous.summary.inputs == NO_INPUTS
    monkeypatch.setattr(SiteWriter, "commit", commit)
    seen = Verifications(monkeypatch)
    carried = build(bundle, site)
    assert seen.count == 1 and carried.report is not None and carried.reused == carried.pages
    assert (previous := PreviousSite.read(site)) is not None
    assert previous.summary.inputs != NO_INPUTS
    assert build(bundle, site).report is None and seen.count == 1


def test_forged_verdict_in_the_manifest_is_not_reported(
        bundle: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    site = tmp_path / "site"
    build(bundle, site)
    manifest = manifest_path(site)
    lines = manifest.read_text(encoding="utf-8").splitlines()
    word, digest, *_ = lines[1].split(" ")
    lines[1] = f"{word} {digest} pinned 3 0"       # pinned with errors: impossible
    manifest.write_text("\n".join(lines) + "\n", encoding="utf-8")
    seen = Verifications(monkeypatch)
    again = build(bundle, site)
    assert seen.count == 1 and again.verdict.errors == 0


def test_strict_rebuild_of_a_warned_bundle_still_fails_with_its_diagnostics(
        bundle: Path, tmp_path: Path) -> None:
    site = tmp_path / "site"
    build(bundle, site)
    manifest = manifest_path(site)
    lines = manifest.read_text(encoding="utf-8").splitlines()
    word, digest, *_ = lines[1].split(" ")
    lines[1] = f"{word} {digest} pinned 0 2"       # as if the last build had warnings
    manifest.write_text("\n".join(lines) + "\n", encoding="utf-8")
    # a strict build does not trust a recorded verdict that would fail it: it verifies,
    # and this bundle is clean, so it passes
    result = build_site(bundle, BuildOptions(output=site, trusted_keys=(key(),), strict=True))
    assert result.report is not None and result.verdict.ok(strict=True)


def test_strict_build_fails_on_warnings_even_with_a_cached_site(
        bundle: Path, tmp_path: Path) -> None:
    (bundle / "notes.txt").write_text("stray\n", encoding="utf-8")
    site = tmp_path / "site"
    first = build(bundle, site)
    if first.verdict.warnings == 0:
        pytest.skip("a stray file is not a warning in this format version")
    with pytest.raises(InvalidBundleError):
        build_site(bundle, BuildOptions(output=site, trusted_keys=(key(),), strict=True))


@pytest.mark.parametrize("words", [("pinned", "0", "0"), ("invalid", "2", "1"),
                                   ("bundle-only", "0", "5")])
def test_verdict_words_round_trip(words: tuple[str, str, str]) -> None:
    verdict = Verdict.from_words(words)
    assert verdict is not None and verdict.words() == words


@pytest.mark.parametrize("words", [(), ("pinned",), ("pinned", "1", "0"), ("invalid", "0", "0"),
                                   ("trusted", "0", "0"), ("pinned", "-1", "0"),
                                   ("pinned", "0", "x")])
def test_verdict_words_refused(words: tuple[str, ...]) -> None:
    assert Verdict.from_words(words) is None
