"""Which parts of the index a page read: the dependency record of incremental rebuilds.

A page of one object (a claim, an artifact, a workflow phase) is a pure
function of the index entries it looks up.  While such a page is made, every
lookup in the index's mappings is noted as a *read*, a ``(namespace, key)``
pair such as ``("cited_by", "art-17")``.  The builder stores the reads with a
digest of the value each one returned.  A later build of a grown log looks
the same keys up again: if every value is unchanged, so is the page, and it
is carried over without being made at all (:mod:`bundler.render.page_deps`).

Soundness rests on three rules, each enforced here rather than at call sites:

* a lookup by key notes the key (``d[k]``, ``d.get(k)``, ``k in d``);
* anything that sees a whole collection (iteration, ``len``, ``values()``,
  the lists of the index) notes :data:`EVERYTHING`, and such a page is never
  carried over on its reads;
* a memoised query notes its own name and key (:func:`query`) and runs with
  recording off, so a cache hit, which reads nothing, still leaves the same
  record as the miss that filled the cache.

Recording costs one global test per lookup while no page is being recorded.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar, overload

K = TypeVar("K")
V = TypeVar("V")
T = TypeVar("T")
D = TypeVar("D")

Read = tuple[str, Hashable]
#: A read of a whole collection: the page depends on everything.
EVERYTHING: Read = ("*", "*")

_reads: set[Read] | None = None


def note(ns: str, key: Hashable) -> None:
    """Record a read of ``key`` in namespace ``ns`` (no-op unless recording)."""
    if _reads is not None:
        _reads.add((ns, key))


@contextmanager
def recording() -> Iterator[set[Read]]:
    """Record every read made inside the block into the set it yields."""
    global _reads
    outer, _reads = _reads, set()
    try:
        yield _reads
    finally:
        _reads = outer


@contextmanager
def paused() -> Iterator[None]:
    """No recording inside the block (a memoised query, or computing a digest)."""
    global _reads
    outer, _reads = _reads, None
    try:
        yield
    finally:
        _reads = outer


def query(ns: str, key: Hashable, compute: Callable[[], T]) -> T:
    """``compute()`` as one read ``(ns, key)``: its own reads are not recorded.

    ``compute`` must be a function of ``key`` and the index alone, so that the
    value a later build computes for the same read says whether it changed.
    """
    global _reads
    outer = _reads
    if outer is None:
        return compute()
    outer.add((ns, key))
    _reads = None
    try:
        return compute()
    finally:
        _reads = outer


def _whole() -> None:
    """Note a read of a whole collection (iteration, length, all values)."""
    if _reads is not None:
        _reads.add(EVERYTHING)


class TrackedDict(dict[K, V]):
    """A dict whose reads are noted under its namespace while a page is recorded."""

    __slots__ = ("ns",)

    def __init__(self, ns: str, *args: Any) -> None:
        super().__init__(*args)
        self.ns = ns

    def __getitem__(self, key: K) -> V:
        if _reads is not None:
            _reads.add((self.ns, key))
        return dict.__getitem__(self, key)

    @overload
    def get(self, key: K, default: None = None, /) -> V | None: ...
    @overload
    def get(self, key: K, default: V, /) -> V: ...
    @overload
    def get(self, key: K, default: D, /) -> V | D: ...

    def get(self, key: K, default: Any = None, /) -> Any:
        if _reads is not None:
            _reads.add((self.ns, key))
        return dict.get(self, key, default)

    def __contains__(self, key: object) -> bool:
        if _reads is not None:
            _reads.add((self.ns, key))
        return dict.__contains__(self, key)

    def __iter__(self) -> Iterator[K]:
        _whole()
        return dict.__iter__(self)

    def __len__(self) -> int:
        _whole()
        return dict.__len__(self)

    def keys(self) -> Any:
        _whole()
        return dict.keys(self)

    def values(self) -> Any:
        _whole()
        return dict.values(self)

    def items(self) -> Any:
        _whole()
        return dict.items(self)


class TrackedList(list[T]):
    """A list of the index: any use of it is a read of everything."""

    __slots__ = ()

    def __iter__(self) -> Iterator[T]:
        _whole()
        return list.__iter__(self)

    def __len__(self) -> int:
        _whole()
        return list.__len__(self)

    def __getitem__(self, index: Any) -> Any:
        _whole()
        return list.__getitem__(self, index)

    def __reversed__(self) -> Iterator[T]:
        _whole()
        return list.__reversed__(self)

    def __bool__(self) -> bool:
        _whole()
        return list.__len__(self) > 0
