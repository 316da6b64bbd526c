"""A bundle that changes while a build reads it stops the build (RB902).

The verifier reads the bundle first; pages read payloads and log lines again
later.  A payload rewritten in place between the two (same size, its
modification time set back), a folder swapped for another, or a log appended
to by an agent still running must not reach a page: the build fails, keeping
the previous site.  :func:`tree_stamp` is what sees it.
"""

from __future__ import annotations

import dataclasses
import os
import shutil
from pathlib import Path

import pytest
from fixtures.builders import make_valid_bundle

from bundler import layout
from bundler.errors import InputError
from bundler.load.stamp import require_unchanged, tree_stamp
from bundler.render.site import BuildOptions, build_site

from .conftest import AfterVerification, rebuild_stops


def _rewrite_in_place(path: Path) -> None:
    """Same size, same modification time: only the change time tells."""
    st = path.stat()
    data = path.read_bytes()
    path.write_bytes(bytes(b ^ 1 for b in data[:1]) + data[1:])
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))


def _swap_folder(folder: Path) -> None:
    """The folder renamed away and replaced by a copy with one file changed."""
    aside = folder.with_name(folder.name + ".aside")
    folder.rename(aside)
    shutil.copytree(aside, folder, copy_function=shutil.copy2)
    changed = next(p for p in sorted(folder.rglob("*")) if p.is_file())
    _rewrite_in_place(changed)
    shutil.rmtree(aside)


def _append_line(path: Path) -> None:
    with open(path, "ab") as fh:
        fh.write(b'{"an agent": "still writing"}\n')


def test_reading_a_tree_keeps_its_stamp(tmp_path: Path) -> None:
    ref = make_valid_bundle(tmp_path / "bundle")
    stamp = tree_stamp(ref.path)
    for p in sorted(ref.path.rglob("*")):
        if p.is_file():
            p.read_bytes()
    assert tree_stamp(ref.path) == stamp
    require_unchanged(ref.path, stamp)


@pytest.mark.parametrize("change", ["rewrite", "swap", "append", "remove", "add", "chmod"])
def test_every_kind_of_change_moves_the_stamp(change: str, tmp_path: Path) -> None:
    ref = make_valid_bundle(tmp_path / "bundle")
    payload = ref.payload_file("table")
    stamp = tree_stamp(ref.path)
    {"rewrite": lambda: _rewrite_in_place(payload),
     "swap": lambda: _swap_folder(payload.parent),
     "append": lambda: _append_line(ref.path / layout.EVENTS),
     "remove": payload.unlink,
     "add": lambda: (ref.path / "payloads/extra").write_bytes(b"x"),
     "chmod": lambda: payload.chmod(0o600 if payload.stat().st_mode & 0o004 else 0o644),
     }[change]()
    assert tree_stamp(ref.path) != stamp
    with pytest.raises(InputError, match="changed during the build"):
        require_unchanged(ref.path, stamp)


def test_an_unreadable_entry_is_stamped_not_raised(tmp_path: Path) -> None:
    """A tree that turns unreadable (a folder removed mid-walk, a dangling root) gives
    a stamp, which differs from the readable tree's."""
    root = tmp_path / "bundle"
    root.mkdir()
    (root / "f").write_bytes(b"x")
    stamp = tree_stamp(root)
    shutil.rmtree(root)
    assert tree_stamp(root) != stamp


@pytest.mark.parametrize("incremental", [True, False], ids=["cached", "no-cache"])
@pytest.mark.parametrize("change", ["rewrite", "swap", "append"])
def test_a_bundle_changed_mid_build_keeps_the_previous_site(
        change: str, incremental: bool, tmp_path: Path,
        after_verification: AfterVerification) -> None:
    def change_it(bundle: Path) -> None:
        payload = bundle / "payloads"
        table = next(p for p in sorted(payload.rglob("*")) if p.is_file())
        {"rewrite": lambda: _rewrite_in_place(table),
         "swap": lambda: _swap_folder(table.parent),
         "append": lambda: _append_line(bundle / layout.EVENTS)}[change]()
    rebuild_stops(tmp_path, incremental, after_verification, change_it)


def test_a_bundle_left_alone_builds(tmp_path: Path) -> None:
    """The check passes when nothing changed: a build, then a rebuild that carries the
    previous site over (verification skipped), then one that makes every page again."""
    ref = make_valid_bundle(tmp_path / "bundle")
    opts = BuildOptions(output=tmp_path / "site", trusted_keys=(ref.verifier_key_text,),
                        jobs=1)
    assert build_site(ref.path, opts).report is not None
    assert build_site(ref.path, opts).report is None
    again = build_site(ref.path, dataclasses.replace(opts, title="other", incremental=False))
    assert again.report is not None and again.pages > 0
