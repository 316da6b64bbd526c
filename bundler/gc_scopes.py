"""Scopes that change what Python's cyclic garbage collector does, restored on leaving.

The build keeps millions of objects that live to its end and hold no cycles (the kept
events, the index, memos), and some stages allocate in patterns the collector handles
badly: each full collection walks every tracked object it has not been told to skip,
and frees nothing there.  Stages that know this say so with one of these scopes; the
measurements that justify each use are at the call site.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def young_collections_only() -> Iterator[None]:
    """No automatic full collections of the cyclic GC inside the block.

    Kept events (and the index over them) grow by millions of objects that
    live to the end of the build and hold no cycles.  Every full collection
    walks all of them, and the collector runs one whenever the survivors grew
    by a quarter: at a million events that is a handful of walks over a heap of
    a gigabyte, with a cache miss per object.  Young collections still run, so
    the cycles a line leaves behind (exceptions, tracebacks) are still freed.
    """
    old = gc.get_threshold()
    gc.set_threshold(old[0], old[1], 1 << 30)
    try:
        yield
    finally:
        gc.set_threshold(*old)


@contextmanager
def collector_paused() -> Iterator[None]:
    """No automatic collection at all inside the block, for code that makes next to no
    cyclic garbage but many objects that live a while (long enough to be walked again
    and again).  Cycles made meanwhile are not lost: they stay in the youngest
    generation, and the first collection after the block frees them."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()
