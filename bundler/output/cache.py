"""Incremental rebuilds: fingerprints of page inputs and a per-site cache manifest.

A page is a pure function of its template, its context and its graphs (plus
the code, the templates, the theme and Graphviz, which go into a build-wide
*salt*).  :func:`fingerprint` hashes those inputs; the manifest maps each
output path to the fingerprint it was rendered from and the SHA-256 of the
bytes written.  A rebuild that computes the same fingerprint may reuse the
previous file, but only after re-hashing it: a file edited since (or a stale
or hand-made manifest) is never carried over, so a rebuild is byte-identical
to a cold build.

The manifest lives in the user's cache folder, keyed by the site's absolute
path, not in the site: the site must stay a pure function of the bundle and
the options, and the salt changes with every edit of the code.

Events are fingerprinted by their leaf hash, which commits to every byte of
the line they were parsed from; that makes hashing an events page cheap.
Values of a type the encoder does not know raise :class:`Uncacheable`, and
the page is then simply rendered: caching can cost time, never correctness.
"""

from __future__ import annotations

import dataclasses
import enum
import hashlib
import os
import stat
from collections.abc import Callable, Iterable
from pathlib import Path, PurePath
from typing import Any

from markupsafe import Markup
from pydantic import BaseModel

MANIFEST_HEADER = "review-bundler page cache v2"
#: Fingerprint of a file that is not a page (a copy, an asset, a report): it is
#: only reused when the whole bundle is unchanged.
NOT_A_PAGE = "-"
#: Manifests kept in the cache folder (least recently written go first).
MAX_MANIFESTS = 64

EventKey = Callable[[Any], "bytes | None"]


class Uncacheable(TypeError):
    """A value whose rendering we cannot prove to depend only on its fingerprint."""


class Deferred:
    """A context value computed only when the page is really rendered.

    ``key`` names everything ``make()`` depends on and is what gets
    fingerprinted; a cache hit therefore never pays for ``make`` (a payload
    viewer, say, which reads and highlights a file).
    """

    __slots__ = ("key", "make")

    def __init__(self, key: Any, make: Callable[[], Any]) -> None:
        self.key = key
        self.make = make


_FIELDS: dict[type, tuple[str, ...]] = {}


def _field_names(cls: type) -> tuple[str, ...]:
    names = _FIELDS.get(cls)
    if names is None:
        names = _FIELDS[cls] = tuple(f.name for f in dataclasses.fields(cls))
    return names


_FROZEN: dict[type, bool] = {}
#: Encodings of frozen dataclass instances kept per encoder (then it starts over).
MEMO_SIZE = 20_000


def _frozen(cls: type) -> bool:
    frozen = _FROZEN.get(cls)
    if frozen is None:
        params = getattr(cls, "__dataclass_params__", None)
        frozen = _FROZEN[cls] = bool(params is not None and params.frozen)
    return frozen


class Encoder:
    """An injective text encoding of page inputs (type-tagged, length-prefixed).

    A frozen dataclass whose fields are all strings, numbers or None (a link,
    say, of which one builder-wide cache hands the same instance to many
    pages) is encoded once: the memo holds the instance itself, so its id
    cannot be reused by another object while the entry exists.
    """

    def __init__(self, event_key: EventKey | None) -> None:
        self.event_key = event_key
        self._memo: dict[int, tuple[object, str]] = {}

    def encode(self, obj: Any) -> str:
        parts: list[str] = []
        self._enc(obj, parts)
        return "".join(parts)

    def _enc(self, obj: Any, out: list[str]) -> None:
        """Append the encoding of ``obj`` to ``out``.

        Strings and ``None`` inside containers are encoded inline rather than by
        a recursive call: they are most of the leaves, and the call was most of
        the cost.  The encoding is the same either way
        (``tests/perf/test_cache_encoder.py`` checks it against the plain one).
        """
        t = type(obj)
        if t is str:
            out.append(f"s{len(obj)}:{obj}")
        elif obj is None:
            out.append("n")
        elif t is int or t is bool or t is float:
            out.append(f"{t.__name__[0]}{obj!r};")
        elif t is list or t is tuple:
            out.append("[" if t is list else "(")
            enc = self._enc
            for item in obj:
                if type(item) is str:
                    out.append(f"s{len(item)}:{item}")
                elif item is None:
                    out.append("n")
                else:
                    enc(item, out)
            out.append("]")
        elif t is dict:
            out.append("{")
            enc = self._enc
            for key, value in obj.items():
                if type(key) is str:
                    out.append(f"s{len(key)}:{key}")
                else:
                    enc(key, out)
                if type(value) is str:
                    out.append(f"s{len(value)}:{value}")
                elif value is None:
                    out.append("n")
                else:
                    enc(value, out)
            out.append("}")
        elif t is Markup:
            out.append(f"m{len(obj)}:{obj}")
        else:
            self._other(obj, t, out)

    def _other(self, obj: Any, t: type, out: list[str]) -> None:
        if isinstance(obj, enum.Enum):
            out.append(f"E{t.__qualname__}.")
            self._enc(obj.value, out)
        elif isinstance(obj, Deferred):
            out.append("d")
            self._enc(obj.key, out)
        elif isinstance(obj, BaseModel):
            self._model(obj, out)
        elif dataclasses.is_dataclass(obj) and not isinstance(obj, type):
            self._dataclass(obj, t, out)
        elif isinstance(obj, (str, int, float)):   # subclasses (not enums): by value and type
            out.append(f"x{t.__qualname__}:")
            self._enc(_plain(obj), out)
        elif isinstance(obj, PurePath):
            self._enc(obj.as_posix(), out)
        elif isinstance(obj, frozenset):
            out.append("<")
            for item in sorted(obj, key=repr):
                self._enc(item, out)
            out.append(">")
        else:
            raise Uncacheable(f"cannot fingerprint a {t.__module__}.{t.__qualname__}")

    def _dataclass(self, obj: Any, t: type, out: list[str]) -> None:
        memo = self._memo.get(id(obj))
        if memo is not None and memo[0] is obj:
            out.append(memo[1])
            return
        start = len(out)
        atoms = True
        out.append(f"D{t.__module__}.{t.__qualname__}(")
        for name in _field_names(t):
            value = getattr(obj, name)
            vt = type(value)
            if vt is str:
                out.append(f"s{len(value)}:{value}")
            elif value is None:
                out.append("n")
            else:
                atoms = atoms and (vt is int or vt is bool or vt is float)
                self._enc(value, out)
        out.append(")")
        if atoms and _frozen(t):
            if len(self._memo) >= MEMO_SIZE:
                self._memo.clear()
            self._memo[id(obj)] = (obj, "".join(out[start:]))

    def _model(self, obj: BaseModel, out: list[str]) -> None:
        key = self.event_key(obj) if self.event_key is not None else None
        if key is not None:
            out.append(f"e{type(obj).__qualname__}:{key.hex()}")
        else:
            text = obj.model_dump_json()
            out.append(f"M{type(obj).__qualname__}{len(text)}:")
            out.append(text)


def _plain(obj: str | int | float) -> str | int | float:
    for base in (str, int, float):
        if isinstance(obj, base):
            return base(obj)
    raise AssertionError("unreachable")


def digest_text(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def fingerprint(encoder: Encoder, salt: str, obj: Any) -> str:
    """Hex SHA-256 of ``salt`` and the encoding of ``obj``; raises :class:`Uncacheable`."""
    return digest_text(salt + "\x00" + encoder.encode(obj))


def tree_digest(roots: Iterable[Path], pattern: str = "*") -> str:
    """A digest of every file matching ``pattern`` under ``roots`` (path and bytes).

    Goes into the salt for the code, templates and theme: any edit to them
    invalidates every cached page, which is the only safe answer.
    """
    h = hashlib.sha256()
    for root in roots:
        if not root.is_dir():
            continue
        files = sorted(p for p in root.rglob(pattern)
                       if p.is_file() and "__pycache__" not in p.parts)
        for p in files:
            rel = p.relative_to(root).as_posix()
            h.update(f"{len(rel)}:{rel}".encode("utf-8", "surrogateescape"))
            h.update(hashlib.sha256(p.read_bytes()).digest())
    return h.hexdigest()


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


def save_manifest(site: Path, text: str) -> None:
    """Best effort (an unwritable cache only costs the next build its reuse)."""
    path = manifest_path(site)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, path)
        kept = sorted(path.parent.glob("*.manifest"), key=lambda p: p.stat().st_mtime,
                      reverse=True)
        for old in kept[MAX_MANIFESTS:]:
            old.unlink(missing_ok=True)
    except OSError:
        pass


@dataclasses.dataclass(frozen=True)
class SiteSummary:
    """What a build of the whole site produced: its bundle fingerprint and counts."""

    bundle: str        # fingerprint of everything the site is made from
    pages: int
    graphs: int


class PreviousSite:
    """The reusable part of an existing site: its folder and its manifest entries."""

    def __init__(self, root: Path, summary: SiteSummary, entries: dict[str, CacheEntry]) -> None:
        self.root = root
        self.summary = summary
        self.entries = entries

    @classmethod
    def load(cls, root: Path, salt_digest: str) -> PreviousSite | None:
        """The previous site at ``root`` if it was built with the same salt, else None."""
        try:
            with open(manifest_path(root), encoding="utf-8") as fh:
                if fh.readline().rstrip("\n") != MANIFEST_HEADER:
                    return None
                if fh.readline().rstrip("\n") != f"salt {salt_digest}":
                    return None
                word, bundle, pages, graphs = fh.readline().rstrip("\n").split(" ")
                if word != "bundle":
                    return None
                summary = SiteSummary(bundle, int(pages), int(graphs))
                entries = {}
                for line in fh:
                    fp, digest, path = line.rstrip("\n").split(" ", 2)
                    entries[path] = CacheEntry(fp, digest)
        except (OSError, ValueError, UnicodeDecodeError):
            return None
        return cls(root, summary, entries)

    def reuse(self, rel: str, fp: str, dest: Path) -> bool:
        """Carry the previous ``rel`` over to ``dest`` if its fingerprint and bytes are
        what the manifest promises; False means: render it.

        Only a regular file is reused (no symlink is followed), and only the
        bytes that were hashed: the file is hard-linked when the link provably
        names the inode that was read and nothing else links to it, else copied.
        """
        entry = self.entries.get(rel)
        if entry is None or entry.fingerprint != fp:
            return False
        src = self.root / rel
        try:
            fd = os.open(src, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
            with os.fdopen(fd, "rb") as fh:
                st = os.fstat(fh.fileno())
                if not stat.S_ISREG(st.st_mode):
                    return False
                data = fh.read()
            if hashlib.sha256(data).hexdigest() != entry.digest:
                return False
            if st.st_nlink == 1 and _link_same(src, dest, st):
                return True
            dest.write_bytes(data)
        except OSError:
            return False
        return True


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
    lines = [MANIFEST_HEADER, f"salt {salt_digest}",
             f"bundle {summary.bundle} {summary.pages} {summary.graphs}"]
    lines += [f"{e.fingerprint} {e.digest} {path}" for path, e in sorted(entries.items())]
    return "\n".join(lines) + "\n"
