"""The per-site cache manifest: what the previous build of a site wrote, and from what.

One text file per site, in the user's cache folder, keyed by the site's
absolute path (never in the site: the site must stay a pure function of the
bundle and the options).  It records, in this order:

* ``inputs``: the digest of every byte a build of this site read (the bundle
  files, the options, the code, templates, theme, libraries and Graphviz) and
  the verdict the verifier reached.  A rebuild whose inputs digest matches may
  skip verification altogether: the same inputs give the same report.
* ``salt`` and ``bundle``: the build-wide salt and the bundle fingerprint
  (:mod:`bundler.render.incremental`), with the page and graph counts.
* one ``fingerprint digest path`` line per file of the site: the inputs the
  page was rendered from and the SHA-256 of the bytes written.

Nothing in it is trusted blindly: a file is only carried over after its bytes
are hashed again and found equal to what the manifest promises.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import io
import itertools
import os
import shutil
import stat
import time
from collections.abc import Iterable, Iterator
from pathlib import Path

MANIFEST_HEADER = "review-bundler page cache v3"
#: Fingerprint of a file that is not a page (a copy, an asset, a report): it is
#: only reused when the whole bundle is unchanged.
NOT_A_PAGE = "-"
#: The inputs digest of a build that could not compute one (never matches).
NO_INPUTS = "-"
#: Manifests kept in the cache folder (least recently written go first); the other
#: files of a site whose manifest goes go with it.
MAX_MANIFESTS = 64
#: A site file without a kept manifest is removed once it is this old (a build in
#: progress has not written its manifest yet).
ORPHAN_SECONDS = 24 * 3600


@dataclasses.dataclass(frozen=True)
class CacheEntry:
    fingerprint: str
    digest: str     # SHA-256 of the bytes written


def cache_dir() -> Path:
    """``$REVIEW_BUNDLER_CACHE_DIR``, else ``$XDG_CACHE_HOME/review-bundler``, else
    ``~/.cache/review-bundler``."""
    explicit = os.environ.get("REVIEW_BUNDLER_CACHE_DIR")
    if explicit:
        return Path(explicit)
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg) if xdg else Path.home() / ".cache") / "review-bundler"


def manifest_path(site: Path) -> Path:
    key = hashlib.sha256(str(site.absolute()).encode("utf-8", "surrogateescape")).hexdigest()
    return cache_dir() / "sites" / f"{key[:32]}.manifest"


def save_manifest(site: Path, text: str | Iterable[str]) -> None:
    """Best effort (an unwritable cache only costs the next build its reuse).  ``text``
    may come in pieces (:func:`manifest_chunks`): at a million events the whole text
    is 24 MB, made when the build is at its largest."""
    path = manifest_path(site)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
        with open(tmp, "w", encoding="utf-8") as fh:
            if isinstance(text, str):
                fh.write(text)
            else:
                fh.writelines(text)
        os.replace(tmp, path)
        kept = sorted(path.parent.glob("*.manifest"), key=lambda p: p.stat().st_mtime,
                      reverse=True)
        _prune(path.parent, kept)
    except OSError:
        pass


def _prune(folder: Path, manifests: list[Path], now: float | None = None) -> None:
    """Keep the sites of the first :data:`MAX_MANIFESTS` of ``manifests`` (newest
    first) and remove every file of the others: manifest, page records, text
    features and graph store, all named by the site's key.  Files of a key with no
    manifest at all go only once :data:`ORPHAN_SECONDS` old (a site's first build
    writes graphs before its manifest exists).  Without this, graph stores of sites
    long gone piled up (8 GB on a benchmark machine)."""
    keep = {p.name.split(".")[0] for p in manifests[:MAX_MANIFESTS]}
    evicted = {p.name.split(".")[0] for p in manifests[MAX_MANIFESTS:]}
    cutoff = (time.time() if now is None else now) - ORPHAN_SECONDS
    for entry in folder.iterdir():
        key = entry.name.split(".")[0]
        if key in keep:
            continue
        try:
            st = entry.lstat()
            if key not in evicted and st.st_mtime > cutoff:
                continue
            if stat.S_ISDIR(st.st_mode):
                shutil.rmtree(entry, ignore_errors=True)
            else:
                entry.unlink(missing_ok=True)
        except OSError:
            continue


def forget_manifest(site: Path) -> None:
    """Drop the record of ``site`` (a build that records nothing must not leave an older
    build's record behind to describe it)."""
    with contextlib.suppress(OSError):
        manifest_path(site).unlink(missing_ok=True)


@dataclasses.dataclass(frozen=True)
class SiteSummary:
    """What a build of the whole site produced: its bundle fingerprint and counts."""

    bundle: str        # fingerprint of everything the site is made from
    pages: int
    graphs: int
    #: digest of every input of the build (:data:`NO_INPUTS` when unknown)
    inputs: str = NO_INPUTS
    #: the verifier's verdict, as words without spaces (``trust errors warnings``)
    verdict: tuple[str, ...] = ()


class PreviousSite:
    """The reusable part of an existing site: its folder and its manifest entries."""

    def __init__(self, root: Path, salt: str, summary: SiteSummary,
                 entries: dict[str, CacheEntry]) -> None:
        self.root = root
        self.salt = salt
        self.summary = summary
        self.entries = entries

    @classmethod
    def read(cls, root: Path) -> PreviousSite | None:
        """The manifest of the site at ``root`` as it is, or None if there is none
        (or it is unreadable, or of another format)."""
        try:
            with open(manifest_path(root), encoding="utf-8") as fh:
                if fh.readline().rstrip("\n") != MANIFEST_HEADER:
                    return None
                word, inputs, *verdict = fh.readline().rstrip("\n").split(" ")
                if word != "inputs":
                    return None
                word, salt = fh.readline().rstrip("\n").split(" ")
                if word != "salt":
                    return None
                word, bundle, pages, graphs = fh.readline().rstrip("\n").split(" ")
                if word != "bundle":
                    return None
                summary = SiteSummary(bundle, int(pages), int(graphs), inputs, tuple(verdict))
                entries = {}
                for line in fh:
                    fp, digest, path = line.rstrip("\n").split(" ", 2)
                    entries[path] = CacheEntry(fp, digest)
        except (OSError, ValueError, UnicodeDecodeError):
            return None
        return cls(root, salt, summary, entries)

    @classmethod
    def load(cls, root: Path, salt_digest: str) -> PreviousSite | None:
        """The previous site at ``root`` if it was built with the same salt, else None."""
        previous = cls.read(root)
        return previous if previous is not None and previous.salt == salt_digest else None

    def carry(self, rel: str, digest: str, dest: Path) -> bool:
        """Hard-link the previous ``rel`` to ``dest`` if the manifest says it holds bytes
        of SHA-256 ``digest`` and it still does; False means: write them.

        For files that are not pages (copies, proofs, search data): the caller
        knows the bytes it would write, so only a link is worth making.  The old
        file is hashed in blocks (a payload copy can be large).
        """
        entry = self.entries.get(rel)
        if entry is None or entry.digest != digest:
            return False
        src = self.root / rel
        try:
            got = _hash_regular(src, keep=False)
            if got is None or got[0] != digest or got[1].st_nlink != 1:
                return False
            return _link_same(src, dest, got[1])
        except OSError:
            return False

    def reuse(self, rel: str, fp: str, dest: Path) -> bool:
        """Carry the previous ``rel`` over to ``dest`` if its fingerprint and bytes are
        what the manifest promises; False means: render it.

        Only a regular file is reused (no symlink is followed), and only the
        bytes that were hashed: the file is hard-linked (:meth:`carry`) when the
        link provably names the inode that was read and nothing else links to
        it, else copied.
        """
        entry = self.entries.get(rel)
        if entry is None or entry.fingerprint != fp:
            return False
        if self.carry(rel, entry.digest, dest):
            return True
        try:
            got = _hash_regular(self.root / rel, keep=True)
            if got is None or got[0] != entry.digest or got[2] is None:
                return False
            dest.write_bytes(got[2])
        except OSError:
            return False
        return True


#: Files up to this size are hashed from one read: ``hashlib.file_digest`` allocates
#: (and zeroes) a 256 KiB buffer per call, which cost more than hashing a 26 KB page.
_SMALL = 1 << 20


def sha256_file(fh: io.BufferedReader | io.FileIO, size: int | None = None) -> hashlib._Hash:
    """SHA-256 of the rest of the open file ``fh`` (small files in one read); ``size``:
    the file's size when the caller has it (no second ``fstat``)."""
    if (os.fstat(fh.fileno()).st_size if size is None else size) <= _SMALL:
        return hashlib.sha256(fh.read())
    return hashlib.file_digest(fh, "sha256")


def _hash_regular(src: Path, *, keep: bool) -> tuple[str, os.stat_result, bytes | None] | None:
    """SHA-256 (hex) and stat of ``src`` if it is a regular file (never through a
    symlink), and its bytes if ``keep`` (a large file not kept is hashed in blocks);
    None otherwise."""
    fd = os.open(src, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    with os.fdopen(fd, "rb", buffering=0) as fh:
        st = os.fstat(fh.fileno())
        if not stat.S_ISREG(st.st_mode):
            return None
        if not keep:
            return sha256_file(fh, st.st_size).hexdigest(), st, None
        data = fh.read()
    return hashlib.sha256(data).hexdigest(), st, data


def _link_same(src: Path, dest: Path, st: os.stat_result) -> bool:
    """Hard-link ``src`` to ``dest`` if ``src`` still names the inode ``st`` describes."""
    try:
        os.link(src, dest, follow_symlinks=False)
    except OSError:
        return False
    linked = os.lstat(dest)
    if (linked.st_ino, linked.st_dev) == (st.st_ino, st.st_dev):
        return True
    dest.unlink()
    return False


def manifest_text(salt_digest: str, summary: SiteSummary,
                  entries: dict[str, CacheEntry]) -> str:
    """Deterministic manifest: sorted by path, one ``fingerprint digest path`` line each."""
    return "".join(manifest_chunks(salt_digest, summary, (
        (path, e.fingerprint, e.digest) for path, e in sorted(entries.items()))))


def manifest_chunks(salt_digest: str, summary: SiteSummary,
                    rows: Iterable[tuple[str, str, str]]) -> Iterator[str]:
    """The lines of :func:`manifest_text` for ``rows`` of (path, fingerprint, digest),
    which the caller gives sorted by path.  The summary is checked here, before any
    line is written."""
    if any(not w or " " in w or "\n" in w for w in (summary.inputs, *summary.verdict)):
        raise ValueError(f"manifest words must be non-empty and unspaced: {summary}")
    head = [MANIFEST_HEADER, " ".join(("inputs", summary.inputs, *summary.verdict)),
            f"salt {salt_digest}", f"bundle {summary.bundle} {summary.pages} {summary.graphs}"]
    return itertools.chain((f"{line}\n" for line in head),
                           (f"{fp} {digest} {path}\n" for path, fp, digest in rows))
