"""Bundle-relative paths: which ones stay inside the bundle.

Kept apart from :mod:`bundler.load.source` so that the archive expander
(:mod:`bundler.load.archive`), which :mod:`~bundler.load.source` uses, can check
entry names by the same rule without importing it back.
"""

from __future__ import annotations

__all__ = ["is_safe_relpath"]


def is_safe_relpath(rel: str) -> bool:
    """A relative POSIX path that stays inside its folder.

    Called for every payload (twice), so it splits the string itself: the components
    kept are exactly ``PurePosixPath(rel).parts`` for a path that does not start with
    a slash (empty and ``.`` components dropped), at a tenth of the cost.
    """
    if not rel or rel.startswith(("/", "\\")) or "\\" in rel or "\x00" in rel:
        return False
    parts = [p for p in rel.split("/") if p and p != "."]
    return bool(parts) and ".." not in parts and ":" not in parts[0]
