"""The site is a pure function of the bundle and the options.

Two builds of one bundle, into different folders and with different worker
counts, are byte-identical; a build from the ``.zip`` equals the build from
the folder; and no absolute path of the build machine (bundle location,
output location, temporary folders, the repository) leaks into any file.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from site_helpers import EXAMPLES_DIR, REPO, build, tree, tree_diff

BUNDLE = EXAMPLES_DIR / "unsupported-gain"
ZIP = EXAMPLES_DIR / "unsupported-gain.zip"


@pytest.fixture(scope="module")
def builds(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("determinism")
    # the bundle itself is copied to a temporary path, so a leaked bundle path shows up
    copy = root / "bundle-copy" / "unsupported-gain"
    shutil.copytree(BUNDLE, copy)
    out = {
        "j1": build(copy, root / "one" / "site", jobs=1).output,
        "j2": build(copy, root / "two" / "nested" / "site", jobs=2).output,
        "zip": build(ZIP, root / "zip-site", jobs=2).output,
    }
    # a relative bundle path and a relative output path, from another working directory
    cwd = os.getcwd()
    os.chdir(root / "bundle-copy")
    try:
        out["relative"] = root / build(Path("unsupported-gain"), Path("../rel-site")).output
    finally:
        os.chdir(cwd)
    return out


def test_two_builds_byte_identical(builds: dict[str, Path]) -> None:
    diff = tree_diff(tree(builds["j1"]), tree(builds["j2"]), labels=("-j1", "-j2"))
    assert not diff, diff


def test_relative_paths_give_the_same_site(builds: dict[str, Path]) -> None:
    diff = tree_diff(tree(builds["j1"]), tree(builds["relative"].resolve()),
                     labels=("absolute", "relative"))
    assert not diff, diff


def test_zip_and_folder_give_the_same_site(builds: dict[str, Path]) -> None:
    a, b = tree(builds["j1"]), tree(builds["zip"])
    assert set(a) == set(b)
    differing = sorted(n for n in a if a[n] != b[n])
    # The only legitimate difference is the bundle's own name in the shipped
    # validation report ("unsupported-gain" vs "unsupported-gain.zip").
    assert differing in ([], ["report/validation.json"]), differing
    if differing:
        assert a["report/validation.json"].replace(b'"unsupported-gain"',
                                                   b'"unsupported-gain.zip"') == \
            b["report/validation.json"]


def test_no_absolute_path_in_output(builds: dict[str, Path], tmp_path: Path) -> None:
    needles = {str(REPO), str(BUNDLE), str(tmp_path.parent.parent), "/tmp/", os.path.expanduser(
        "~") + "/"}
    for name, site in builds.items():
        root = site.resolve()
        needles |= {str(root), str(root.parent)}
        for path in sorted(root.rglob("*")):
            if not path.is_file():
                continue
            data = path.read_bytes()
            for needle in sorted(needles):
                if needle.encode() in data and needle not in ("/", ""):
                    rel = path.relative_to(root)
                    at = data.index(needle.encode())
                    pytest.fail(f"{name}: {rel} contains the absolute path {needle!r}: "
                                f"{data[max(0, at - 60):at + 80]!r}")
