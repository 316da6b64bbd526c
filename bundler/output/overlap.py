"""A site folder and the bundle it is built from must not hold one another.

A build replaces its output folder whole.  A bundle inside the site folder (a
copy put next to the pages, say) would be deleted by the next build; a site
folder inside the bundle changes the bundle while it is being built from, and
the next build would report every page as a file the manifest does not list.
Both are refused before anything is read or written.
"""

from __future__ import annotations

import os

from bundler.errors import UsageError


def refuse_overlap(bundle: str | os.PathLike[str], output: str | os.PathLike[str]) -> None:
    """Raise RB901 if ``output`` is ``bundle``, lies inside it or holds it (links
    resolved: two names for one folder are one folder)."""
    b, o = os.path.realpath(bundle), os.path.realpath(output)
    if b == o:
        raise UsageError(f"the output folder {os.fspath(output)} is the bundle itself; "
                         "choose an output folder outside the bundle")
    if _inside(o, b):
        raise UsageError(f"the output folder {os.fspath(output)} is inside the bundle "
                         f"{os.fspath(bundle)}: the site would become part of the bundle it "
                         "is built from; choose an output folder outside the bundle")
    if _inside(b, o):
        raise UsageError(f"the bundle {os.fspath(bundle)} is inside the output folder "
                         f"{os.fspath(output)}, which a build replaces whole (deleting the "
                         "bundle); choose another output folder")


def _inside(path: str, folder: str) -> bool:
    return os.path.commonpath([path, folder]) == folder and path != folder
