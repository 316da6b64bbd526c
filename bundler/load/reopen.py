"""Opening a bundle's files again after verification, for pages and the site's copy.

The verifier reads every file through :class:`~bundler.load.source.BundleSource`,
which refuses links.  Pages are made later, by path: the head of a payload for
its viewer, a payload's text for a recomputed value, the lines of the log for a
claim's proof.  A file swapped for a link in between (to ``~/.ssh/id_ed25519``)
must not be followed into a page, nor a pipe block the build.  Opening without
following a link and checking for a regular file closes that for the file
itself; the folders above it were checked when it was verified.
"""

from __future__ import annotations

import errno
import io
import os
import stat

from bundler.errors import InputError


def open_regular(path: str | os.PathLike[str]) -> io.BufferedReader:
    """``path`` opened for reading; ``OSError`` if it is a link or not a regular file."""
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(errno.EINVAL, "not a regular file", os.fspath(path))
        return open(fd, "rb")  # the caller closes it
    except BaseException:
        os.close(fd)
        raise


def reopen(path: str | os.PathLike[str]) -> io.BufferedReader:
    """:func:`open_regular` for a file the build needs: a verified file that is gone,
    a link or no file now was changed while the build ran (RB902, not a bug)."""
    try:
        return open_regular(path)
    except OSError as exc:
        raise InputError(f"{os.fspath(path)} changed during the build: "
                         f"{exc.strerror or exc}") from exc
