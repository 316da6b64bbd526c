"""Incremental rebuilds: fingerprints of page inputs.

A page is a pure function of its template, its context and its graphs (plus
the code, the templates, the theme and Graphviz, which go into a build-wide
*salt*).  :func:`fingerprint` hashes those inputs; the site's manifest
(:mod:`bundler.output.manifest`) maps each output path to the fingerprint it
was rendered from and the SHA-256 of the bytes written.  A rebuild that
computes the same fingerprint may reuse the previous file, but only after
re-hashing it: a file edited since (or a stale or hand-made manifest) is never
carried over, so a rebuild is byte-identical to a cold build.

Events are fingerprinted by their leaf hash, which commits to every byte of
the line they were parsed from; that makes hashing an events page cheap.
Values of a type the encoder does not know raise :class:`Uncacheable`, and
the page is then simply rendered: caching can cost time, never correctness.
"""

from __future__ import annotations

import dataclasses
import enum
import hashlib
from collections.abc import Callable, Iterable
from pathlib import Path, PurePath
from typing import Any

from markupsafe import Markup
from pydantic import BaseModel

EventKey = Callable[[Any], "bytes | None"]


class Uncacheable(TypeError):
    """A value whose rendering we cannot prove to depend only on its fingerprint."""


class Deferred:
    """A context value computed only when the page is really rendered.

    ``key`` names everything ``make()`` depends on and is what gets
    fingerprinted; a cache hit therefore never pays for ``make`` (a payload
    viewer, say, which reads and highlights a file).  ``job``, when given, is
    the same computation as plain data that another process can run (see
    :mod:`bundler.render.viewer_jobs`); it is never fingerprinted.
    """

    __slots__ = ("job", "key", "make")

    def __init__(self, key: Any, make: Callable[[], Any], job: Any = None) -> None:
        self.key = key
        self.make = make
        self.job = job


_FIELDS: dict[type, tuple[str, ...]] = {}


def _field_names(cls: type) -> tuple[str, ...]:
    names = _FIELDS.get(cls)
    if names is None:
        names = _FIELDS[cls] = tuple(f.name for f in dataclasses.fields(cls))
    return names


_FROZEN: dict[type, bool] = {}
#: Types that :meth:`Encoder._other` found to be dataclasses (not enums) and models:
#: pages hold tens of thousands of links and events, and its chain of tests was a
#: third of the cost of encoding them.
_DATACLASSES: set[type] = set()
_MODELS: set[type] = set()
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
        elif t in _DATACLASSES:     # known from an earlier _other(): skip its tests
            self._dataclass(obj, t, out)
        elif t in _MODELS:
            self._model(obj, out)
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
            _MODELS.add(t)
            self._model(obj, out)
        elif dataclasses.is_dataclass(obj) and not isinstance(obj, type):
            _DATACLASSES.add(t)
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
