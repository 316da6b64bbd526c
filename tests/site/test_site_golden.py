"""The unsupported-gain site, compared file by file with a committed golden copy.

Any change to the output (a template, the theme, a graph, a page producer)
shows up here as a diff.  If the change is intended, regenerate the copy and
review it in the commit:

    bash scripts/regen_golden.sh
"""

from __future__ import annotations

from collections.abc import Callable

from site_helpers import REPO, BuiltSite, tree, tree_diff

GOLDEN = REPO / "tests" / "golden" / "unsupported-gain"


def test_golden_copy_is_present() -> None:
    assert (GOLDEN / "index.html").is_file(), \
        "tests/golden/unsupported-gain is missing: run bash scripts/regen_golden.sh"


def test_site_matches_golden(site_of: Callable[[str], BuiltSite]) -> None:
    built = site_of("unsupported-gain")
    expected, actual = tree(GOLDEN), tree(built.site)
    assert len(expected) > 50
    diff = tree_diff(expected, actual, labels=("golden", "built"))
    assert not diff, (
        "the unsupported-gain site differs from tests/golden/unsupported-gain; if the change "
        "is intended, run `bash scripts/regen_golden.sh` and review the diff\n" + diff)
