"""Rendering the planned pages, in forked worker processes when memory allows.

The pages are planned as small tasks (:mod:`bundler.render.pages.plan`) and
rendered in chunks (:mod:`bundler.render.chunks`), each chunk with one
batched Graphviz run, written straight to disk and dropped.  Peak memory is
the verified bundle plus a chunk per worker, whatever the number of pages,
but each worker ends up with its own copy of most of the bundle (reference
counts un-share the pages), so workers are only forked while the estimated
tree fits :data:`MEMORY_BUDGET` (:func:`render_workers`); above that, pages
are made in this process, with the same bytes, and two helper processes that hold
no copy of the bundle do the rest of the work beside it (graphs, their store,
payload viewers, the templates and the writing: see
:mod:`bundler.render.side_work`).
"""

from __future__ import annotations

import contextlib
import dataclasses
import gc
import math
import multiprocessing
import os
import tempfile
import threading
from collections import deque
from collections.abc import Callable, Iterator
from concurrent.futures import (
    Future,
    ProcessPoolExecutor,
    ThreadPoolExecutor,
)

from bundler import interrupts
from bundler.gc_scopes import collector_paused
from bundler.render import chunks
from bundler.render.chunks import (
    ChunkWork,
    PageResult,
    RenderJob,
    finish_rendered,
    finish_tasks,
    page_jobs,
    render_tasks,
    side_work,
    start_tasks,
)
from bundler.render.graph_helper import GraphHelpers, Pending
from bundler.render.graphviz import prepare_svgs
from bundler.render.pages.plan import PageTask
from bundler.render.side_work import EventKeys, SideResult, SideWork, do_side_work

#: Peak memory of the whole build (this process and its render workers) that
#: :func:`render_workers` plans for; ``REVIEW_BUNDLER_MEMORY_MIB`` overrides it.
MEMORY_BUDGET = 2 << 30
#: What a forked worker ends up holding privately, as a share of this process's
#: resident memory at the fork.  Workers un-share most of the inherited heap:
#: every page they touch holding an object whose reference count they change is
#: copied, and the site touches every event.  Measured at 1M events: 1.2 GiB per
#: worker against 1.6 GiB for this process.
WORKER_SHARE = 0.8

#: Pages per chunk: big enough that one ``dot`` start (~10 ms) per chunk is
#: noise, small enough that workers stay evenly loaded and memory bounded.
MAX_CHUNK = 128
#: Chunks whose graphs are with the graph helpers while this process renders (in-process
#: rendering): two, so a chunk heavy in graphs does not leave this process waiting.
LAYOUTS_IN_FLIGHT = 2
MIN_CHUNK = 8
#: Pages of the event log per chunk (each holds ``EVENTS_PER_PAGE`` rows).  A chunk
#: of the log is made here and rendered by a helper from a copy of its rows: at 1M
#: events chunks of 16 log pages took the tree to 1.96 GiB (helpers at 0.13-0.17 GiB).
MAX_EVENT_PAGES = 4


def _chunked(tasks: list[PageTask], jobs: int) -> list[list[PageTask]]:
    """Chunks of ``size`` pages, but at most :data:`MAX_EVENT_PAGES` pages of the log
    each: a chunk's pages are made before its graphs are laid out, and a log page holds
    hundreds of rows (at 1M events, chunks of 128 log pages held 0.25 GiB in flight)."""
    size = max(MIN_CHUNK, min(MAX_CHUNK, math.ceil(len(tasks) / (jobs * 16))))
    out: list[list[PageTask]] = []
    current: list[PageTask] = []
    log_pages = 0
    for task in tasks:
        heavy = task.kind == "events"
        if len(current) >= size or (heavy and log_pages >= MAX_EVENT_PAGES):
            out.append(current)
            current, log_pages = [], 0
        current.append(task)
        log_pages += heavy
    if current:
        out.append(current)
    return out


def _audit_counts(results: list[PageResult]) -> chunks.AuditCounts:
    counted = [r for r in results if "rows" in r.facts]
    return ([(r.facts["name"], r.path, r.facts["rows"]) for r in counted],
            frozenset(r.facts["name"] for r in counted if r.facts.get("idle")))


def render_all(job: RenderJob, tasks: list[PageTask], last: list[PageTask],
               jobs: int, meanwhile: Callable[[], None]) -> Iterator[PageResult]:
    """Results of ``tasks`` and ``last``; ``meanwhile`` runs in this process
    while the workers render.

    Each audit query is a chunk of its own, queued first: they are the longest
    single tasks, and as soon as their row counts are back the ``last`` pages
    (which show them) join the queue, so those render beside the bulk instead
    of after it.  Results come in no particular order (nothing depends on it).
    """
    # The bundle and index live to the end and hold no garbage: frozen, the cyclic
    # GC stops rescanning them (a full pass over a million events at every
    # collection of the oldest generation), and forked workers keep their pages shared.
    # No full collection first: it freed 35 objects at 100k events and took 2 s at 1M
    # (what little it would free is freed after the pages, when the heap is unfrozen).
    gc.freeze()
    try:
        requested = jobs
        jobs = render_workers(jobs, resident_bytes(), memory_budget())
        audit = [[t] for t in tasks if t.kind == "audit"]
        parts = _chunked([t for t in tasks if t.kind != "audit"], jobs)
        # Workers must inherit the verified bundle: without fork (Windows), render here.
        if jobs <= 1 or "fork" not in multiprocessing.get_all_start_methods():
            meanwhile()
            overlap = requested > 1     # -j 1 asks for one thing at a time
            # audits first, then the rest in the same pipeline (no drain in between)
            audit_paths = {t.path for part in audit for t in part}
            counted: list[PageResult] = []
            for result in _render_pipelined(job, audit + parts, overlap):
                if result.path in audit_paths:
                    counted.append(result)
                yield result
            job.ctx.audit_pages, job.ctx.audit_idle = _audit_counts(counted)
            yield from render_tasks(job, last)
        else:
            yield from _render_forked(job, jobs, audit, parts, last, meanwhile)
    finally:
        gc.unfreeze()


def _render_forked(job: RenderJob, jobs: int, audit: list[list[PageTask]],
                   parts: list[list[PageTask]], last: list[PageTask],
                   meanwhile: Callable[[], None]) -> Iterator[PageResult]:
    chunks.JOB = job
    pool = ProcessPoolExecutor(max_workers=jobs,
                               mp_context=multiprocessing.get_context("fork"),
                               initializer=interrupts.quiet_while_idle)
    helper: threading.Thread | None = None
    failures: list[BaseException] = []
    try:
        window = 2 * jobs              # chunks in flight: bounds queued results too
        audits = [_submit(pool, part, None) for part in audit]
        queue = [_submit(pool, part, None) for part in parts[:window]]
        todo = parts[window:]
        # this process's own writing (copies, search data) runs in a thread, so the
        # queue keeps being refilled while it copies
        helper = threading.Thread(target=_capture, args=(meanwhile, failures),
                                  name="review-bundler-files")
        helper.start()
        final: Future[list[PageResult]] | None = None
        for future in queue:
            if final is None and all(a.done() for a in audits):
                final = _submit_last(pool, job, audits, last)
            yield from future.result()
            if todo:
                queue.append(_submit(pool, todo.pop(0), None))
        if final is None:
            final = _submit_last(pool, job, audits, last)
        for future in audits:
            yield from future.result()
        yield from final.result()
        helper.join()
        if failures:
            raise failures[0]
    finally:
        if helper is not None:
            helper.join()
        pool.shutdown(wait=True, cancel_futures=True)   # a failure stops the rest at once
        chunks.JOB = None


def _render_pipelined(job: RenderJob, parts: list[list[PageTask]],
                      overlap: bool) -> Iterator[PageResult]:
    """Make the pages of ``parts`` in this process; with ``overlap``, the rest of the
    work on the next :data:`LAYOUTS_IN_FLIGHT` chunks (graphs, their store, payload
    viewers, the templates and the writing) is done by helper processes
    (:mod:`bundler.render.graph_helper`) while this process makes the pages of the
    chunks after them.

    A helper receives only a chunk's DOT sources, captions and viewer jobs, and the
    context of each page to render (:func:`~bundler.render.chunks.page_jobs`), and sends
    back the digest and size of each page it wrote, so it holds no copy of the bundle
    (this path is taken when the bundle is too big to copy).  At a million events the
    templates were a quarter of this process's time, and this process is what the build
    waits for; pickling a page's context costs about a tenth of rendering it.  Every
    Python object of the build stays with this process's main thread, and the output is
    the same (with threads instead of helpers, the pages render here).
    """
    if not overlap or len(parts) < 2:
        for part in parts:
            yield from render_tasks(job, part)
        return
    pool = _graph_helpers()
    # Helper processes render the pages too (sent their contexts); threads would only
    # contend for this process's GIL, so with threads the pages render here.
    remote = job.setup if isinstance(pool, GraphHelpers) else None
    leaves = None
    try:
        if remote is not None and (leaves := remote_fingerprints(job)) is not None:
            remote = dataclasses.replace(remote, events=leaves.keys)
            job.fingerprint_later = True
        # When helpers render the pages, this process only makes them: that leaves next
        # to no cyclic garbage (the templates, which do, run in the helpers), but what it
        # allocates lives for a chunk or two, long enough to be promoted, and the memos
        # grow until full collections walk them again and again.  Over a 100k-event
        # build made this way the collector cost 4.1 s of this process's 24.6 s and
        # freed 1,212 objects; at 1M events, 112 s of 282 s (258 full collections).
        with collector_paused() if remote is not None else contextlib.nullcontext():
            waiting: deque[tuple[ChunkWork, Pending | Future[SideResult]]] = deque()
            # Pages rendered here are written by a helper, with the side work it is sent
            # next; each answer says its writes are done (or raises their error).
            writes: list[tuple[str, bytes]] = []

            def finish(done: ChunkWork, answer: SideResult) -> list[PageResult]:
                if remote is not None:
                    return finish_rendered(done, answer.rendered)
                return finish_tasks(job, done, answer, writes)

            for part in parts:
                work = start_tasks(job, part)
                side = side_work(job, work)
                if remote is not None:
                    side.pages, side.setup = page_jobs(job, work), remote
                else:
                    side.writes, writes = writes, []
                waiting.append((work, _submit_side(pool, side)))
                if len(waiting) > LAYOUTS_IN_FLIGHT:
                    done, answer = waiting.popleft()
                    yield from finish(done, answer.result())
            while waiting:
                done, answer = waiting.popleft()
                yield from finish(done, answer.result())
            if writes:
                _submit_side(pool, SideWork(prepare_svgs([]), writes=writes)).result()
    except BaseException:       # a failure, Ctrl-C, or the consumer stopping early
        pool.abort()
        raise
    finally:
        job.fingerprint_later = False
        if leaves is not None:
            leaves.close()
    pool.close()


class _LeafFile:
    """The bundle's leaf hashes in a temporary file, for :class:`EventKeys`."""

    def __init__(self, job: RenderJob, leaves: bytes | bytearray) -> None:
        fd, self.path = tempfile.mkstemp(prefix="review-bundler-leaves-")
        try:
            with os.fdopen(fd, "wb") as fh:
                fh.write(leaves)
        except BaseException:
            self.close()
            raise
        self.keys = EventKeys(self.path, len(leaves), job.ctx.bundle.event_lines, job.salt)

    def close(self) -> None:
        with contextlib.suppress(OSError):
            os.unlink(self.path)


def remote_fingerprints(job: RenderJob) -> _LeafFile | None:
    """Whether the helpers that render pages fingerprint them too, and with what.

    At a million events fingerprints were a fifth of this process's time, which is
    what the build waits for, and a helper has the context of each page it renders
    anyway (unpickled, equal to the one made here), so it encodes that instead.  It
    only pays for a cold build: a rebuild needs each fingerprint here, before
    deciding to render.  Events are keyed by their leaf hash, which the helpers read
    from a file (32 MB at a million events, not copied into each); a log whose seq
    numbers are not one line each (an invalid bundle) is fingerprinted here.
    """
    bundle = job.ctx.bundle
    lines = bundle.event_lines
    if job.encoder is None or job.previous is not None or not lines.dense or \
            (len(lines) and lines[0] < 1) or not hasattr(os, "pread"):
        return None
    return _LeafFile(job, bundle.leaf_hashes)


def _graph_helpers() -> GraphHelpers | _LocalLayout:
    """:data:`LAYOUTS_IN_FLIGHT` helper processes; threads (which overlap little more
    than ``dot`` itself) where no process can be started."""
    try:
        return GraphHelpers(LAYOUTS_IN_FLIGHT)
    except OSError:
        return _LocalLayout()


class _LocalLayout:
    """:class:`GraphHelpers`' interface, doing the side work in threads of this process."""

    def __init__(self) -> None:
        self._threads = ThreadPoolExecutor(max_workers=LAYOUTS_IN_FLIGHT,
                                           thread_name_prefix="review-bundler-dot")

    def submit(self, work: SideWork) -> Future[SideResult]:
        return self._threads.submit(do_side_work, work)

    def close(self) -> None:
        self._threads.shutdown(wait=True, cancel_futures=True)

    abort = close


def _submit_side(pool: GraphHelpers | _LocalLayout,
                 work: SideWork) -> Pending | Future[SideResult]:
    if work.empty:      # no viewer, and every graph of the chunk came from the store
        done: Future[SideResult] = Future()
        done.set_result(SideResult({}, []))
        return done
    return pool.submit(work)


def render_workers(jobs: int, resident: int | None, budget: int) -> int:
    """How many worker processes to render with, given ``resident`` bytes now.

    Each forked worker is expected to grow to :data:`WORKER_SHARE` of this
    process's memory, so the tree peaks near ``resident * (1 + n * share)``.
    The most workers (up to ``jobs``) that fit in ``budget`` are used; when not
    even two fit, pages render in this process (1): one worker would only add
    its copy and gain nothing.  Rendering in-process gives up the second core:
    at 100k events (``REVIEW_BUNDLER_MEMORY_MIB=1``, interleaved runs) it took
    1.3-2.1x the wall time and 1.1-1.2x the CPU time (117-129 s against
    97-115 s); at 1M events it keeps the tree at 1.66 GiB, where two workers
    reached 5.07 GiB.
    ``resident`` None (unknown) keeps ``jobs``.
    """
    if resident is None or jobs <= 1:
        return jobs
    fits = int((budget - resident) / (WORKER_SHARE * resident)) if budget > resident else 0
    n = min(jobs, fits)
    return n if n >= 2 else 1


def resident_bytes() -> int | None:
    """This process's resident memory (Linux ``/proc``; None elsewhere)."""
    try:
        with open("/proc/self/statm", "rb") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return None


def memory_budget() -> int:
    """:data:`MEMORY_BUDGET`, or ``REVIEW_BUNDLER_MEMORY_MIB`` MiB when set to a number."""
    text = os.environ.get("REVIEW_BUNDLER_MEMORY_MIB", "").strip()
    return int(text) << 20 if text.isdigit() else MEMORY_BUDGET


def _submit_last(pool: ProcessPoolExecutor, job: RenderJob,
                 audits: list[Future[list[PageResult]]],
                 last: list[PageTask]) -> Future[list[PageResult]]:
    """Queue the pages that show the audit counts (waits for the audit queries)."""
    counts = _audit_counts([r for a in audits for r in a.result()])
    job.ctx.audit_pages, job.ctx.audit_idle = counts
    return _submit(pool, last, counts)


def _submit(pool: ProcessPoolExecutor, part: list[PageTask],
            counts: chunks.AuditCounts | None) -> Future[list[PageResult]]:
    """``pool.submit``, which forks the workers when it first runs (or, in another
    Python, whenever it starts one): a Ctrl-C is held back until each has its handler
    (:func:`~bundler.interrupts.held_for_fork`)."""
    with interrupts.held_for_fork():
        return pool.submit(chunks.run_chunk, part, counts)


def _capture(fn: Callable[[], None], failures: list[BaseException]) -> None:
    try:
        fn()
    except BaseException as exc:  # re-raised in the caller's thread
        failures.append(exc)
