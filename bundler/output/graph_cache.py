"""A per-site store of laid-out graphs, so a page that must be rendered again
does not pay Graphviz and the SVG sanitiser for a graph that did not change.

Why: a page is rendered again when anything on it changed (a new user of an
artifact, a site-wide value, a new verdict) while most of its graphs often did
not, and layout plus sanitising is most of the cost of rendering a page.

* **Key.**  The caller hashes everything the SVG is a function of: the
  build salt (code, hence the sanitiser; Graphviz's version; templates...)
  and the full graph input (its final name, nodes, edges, links, clusters,
  title, description).  The key is the same encoding the page fingerprint
  trusts for the whole page (:mod:`bundler.output.cache`), so the store is
  exactly as sound as the page cache.
* **Where.**  Next to the site's page manifest in the cache folder, keyed by
  the site's absolute path; never in the site, and only *read* when the site
  being replaced is ours and was built with the same salt (the caller
  decides): removing a site folder makes the next build cold, graphs too.
* **Checked.**  Each entry records the SHA-256 of its key and its SVG; an
  entry whose bytes do not match (truncated, edited, renamed to another key)
  is ignored and laid out again.  The SVG is stored zlib-compressed (level 1:
  about 5x smaller; a 1M-event site has over a gigabyte of graphs), and the
  digest is checked on the decompressed text.  Writes are atomic (temporary file, rename),
  so concurrent worker processes and builds never see half an entry.
* **Bounded.**  A hit refreshes the entry's modification time; each build
  that opens the store removes entries no build among the last
  :data:`KEEP_BUILDS` has used or written.

Every failure to read or write the store only costs speed, never output.
"""

from __future__ import annotations

import hashlib
import os
import threading
import time
import zlib
from pathlib import Path

from bundler.output.manifest import manifest_path

HEADER = b"review-bundler graph v2 "
#: Largest SVG accepted from the store (a damaged entry cannot make us inflate more).
MAX_SVG = 64 << 20
#: Builds whose graphs are kept (a graph unused that long is laid out again if needed).
KEEP_BUILDS = 4
_BUILDS = "builds"


def store_path(site: Path) -> Path:
    """The graph store of the site at ``site`` (beside its page manifest)."""
    manifest = manifest_path(site)
    return manifest.with_name(manifest.name.removesuffix(".manifest") + ".graphs")


def _seal(key: str, svg: bytes) -> str:
    return hashlib.sha256(key.encode("ascii") + b"\x00" + svg).hexdigest()


class GraphCache:
    """Laid-out SVG by key, in one site's store; ``read=False`` only writes."""

    def __init__(self, root: Path, read: bool) -> None:
        self.root = root
        self.read = read
        self.hits = 0

    @classmethod
    def open(cls, site: Path, *, read: bool, now: float | None = None) -> GraphCache | None:
        """The store of ``site``, pruned; None when it cannot be created."""
        root = store_path(site)
        try:
            root.mkdir(parents=True, exist_ok=True)
            _prune(root, time.time() if now is None else now)
        except OSError:
            return None
        return cls(root, read)

    def _path(self, key: str) -> Path:
        if len(key) != 64 or not all(c in "0123456789abcdef" for c in key):
            raise ValueError(f"not a graph key: {key!r}")
        return self.root / f"{key}.svg"

    def get(self, key: str) -> str | None:
        """The SVG stored under ``key`` if its recorded digest matches, else None."""
        if not self.read:
            return None
        path = self._path(key)
        try:
            fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
            with os.fdopen(fd, "rb") as fh:
                data = fh.read()
            head, sep, packed = data.partition(b"\n")
            if not sep or not head.startswith(HEADER):
                return None
            inflate = zlib.decompressobj()
            body = inflate.decompress(packed, MAX_SVG)
            if inflate.unconsumed_tail or not inflate.eof or \
                    head != HEADER + _seal(key, body).encode("ascii"):
                return None
            svg = body.decode("utf-8")
            os.utime(path)
        except (OSError, UnicodeDecodeError, zlib.error):
            return None
        self.hits += 1
        return svg

    def put(self, key: str, svg: str) -> None:
        """Store ``svg`` under ``key`` (best effort, atomic)."""
        path = self._path(key)
        body = svg.encode("utf-8")
        tmp = path.with_name(f".{key}.{os.getpid()}.{threading.get_ident()}.tmp")
        try:
            tmp.write_bytes(HEADER + _seal(key, body).encode("ascii") + b"\n" +
                            zlib.compress(body, 1))
            os.replace(tmp, path)
        except OSError:
            tmp.unlink(missing_ok=True)


def _prune(root: Path, now: float) -> None:
    """Record this build's start; remove entries (and stray temporary files)
    untouched since the oldest of the last :data:`KEEP_BUILDS` builds started."""
    builds_file = root / _BUILDS
    try:
        starts = [float(x) for x in builds_file.read_text(encoding="ascii").split()]
    except (OSError, ValueError):
        starts = []
    starts = sorted([*starts, now])[-KEEP_BUILDS:]
    tmp = builds_file.with_name(f".{_BUILDS}.{os.getpid()}.tmp")
    tmp.write_text(" ".join(repr(s) for s in starts), encoding="ascii")
    os.replace(tmp, builds_file)
    if len(starts) < KEEP_BUILDS:
        return
    oldest = starts[0]
    with os.scandir(root) as entries:
        for entry in entries:
            if entry.name == _BUILDS:
                continue
            try:
                if entry.stat(follow_symlinks=False).st_mtime < oldest:
                    os.unlink(entry.path)
            except OSError:
                pass
