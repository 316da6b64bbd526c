"""A bundle's metadata stamp: did anything in it change while a build read it?

A build verifies the bundle first and reads parts of it again later: the head
of a payload for its viewer, log lines for a claim's proof, every payload for
the site's copy.  Between the two, the bundle may change: an agent still
appending to its log, a payload rewritten in place, a folder renamed and
replaced.  :func:`reopen` refuses a file swapped for a link or a pipe; it
cannot tell a regular file rewritten in place from the one verified.

The stamp can.  It digests, for every entry of the tree, its name, type,
device, inode, size and modification and change times.  The change time
(``st_ctime``) moves on every write, rename, link or permission change, and,
unlike the modification time, cannot be set back by the writer; a folder
swapped for another has another inode.  Taken before verification and again
before the site is committed, an equal stamp says the pages were made from
the bytes that were verified.

What it cannot see: on a file system whose timestamps are coarse (Linux
before 6.13 stamps files with the clock tick, a few milliseconds), a change
to a file within that tick of an earlier change that kept its size.  A bundle
written that close to the start of a build was still being written when the
build began.  So nothing read again rests on the clock alone: every byte a
build reads after verifying it is also held to a hash verification took
(payload copies and heads, the log and its proof lines, the side files; see
``tests/load/test_held_reads.py``).
"""

from __future__ import annotations

import hashlib
import os
import stat
from collections.abc import Iterator
from pathlib import Path

from bundler.errors import InputError

Entry = tuple[bytes, Path, "os.stat_result | OSError"]


def tree_entries(root: str | os.PathLike[str]) -> Iterator[Entry]:
    """(name below ``root``, path, ``lstat`` or the error) of every entry of the tree at
    ``root``, depth first with names sorted, so that two walks of one tree agree.

    ``root`` itself (name ``b""``) is ``stat``-ed: it may be a link to the bundle
    folder or archive.  Below it, links are reported, not followed.  A folder that
    cannot be listed is reported a second time, with that error.
    """
    todo: list[tuple[bytes, Path]] = [(b"", Path(root))]
    while todo:
        name, path = todo.pop()
        try:
            st = os.lstat(path) if name else os.stat(path)
        except OSError as exc:
            yield name, path, exc
            continue
        yield name, path, st
        if stat.S_ISDIR(st.st_mode):
            try:
                names = sorted(os.listdir(path), reverse=True)   # popped in order
            except OSError as exc:
                yield name, path, exc
                continue
            prefix = name + b"/" if name else b""
            todo += [(prefix + os.fsencode(n), path / n) for n in names]


def tree_stamp(root: str | os.PathLike[str]) -> str:
    """The stamp (hex) of the file or folder tree at ``root``.

    An entry that cannot be read is stamped with its error, so a tree that becomes
    unreadable changes its stamp instead of failing the comparison.
    """
    h = hashlib.sha256()
    for name, _, st in tree_entries(root):
        if isinstance(st, OSError):
            h.update(b"%d:%s !%d\x00" % (len(name), name, st.errno or 0))
        else:
            h.update(b"%d:%s %o %d %d %d %d %d\x00" % (
                len(name), name, st.st_mode, st.st_dev, st.st_ino, st.st_size,
                st.st_mtime_ns, st.st_ctime_ns))
    return h.hexdigest()


def require_digest(path: str | os.PathLike[str], hexdigest: str, expect: str | None) -> None:
    """Raise RB902 if bytes of ``path`` read again hash to ``hexdigest``, not to the
    ``expect`` verification took (None: no hash was taken, the stamp alone answers)."""
    if expect is not None and hexdigest != expect:
        raise InputError(f"{os.fspath(path)} changed during the build: its bytes no longer "
                         f"have the SHA-256 verified ({expect[:16]}…)")


def require_unchanged(root: str | os.PathLike[str], stamp: str) -> None:
    """Raise RB902 if the tree at ``root`` no longer has ``stamp``."""
    if tree_stamp(root) != stamp:
        raise InputError(f"{os.fspath(root)} changed during the build: a file in it was "
                         "written, replaced or removed after it was verified. No site was "
                         "written and the previous one is kept; build again once nothing "
                         "writes to the bundle")
