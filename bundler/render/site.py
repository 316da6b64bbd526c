"""The site builder: load -> verify -> graph -> render -> write.

Nothing is written until verification and the graph stage are done, and
the output is swapped in atomically, so a failed build never damages the
previous site.  Output is a pure function of the bundle and the options:
no timestamps, no absolute paths, sorted iteration everywhere.

Rendering streams: the pages are planned as small tasks
(:mod:`bundler.render.pages.plan`) and rendered in chunks by forked worker
processes (:mod:`bundler.render.chunks`), each chunk with one batched
Graphviz run, written straight to disk and dropped.  Peak memory is the
verified bundle plus a chunk per worker, whatever the number of pages, but
each worker ends up with its own copy of most of the bundle (reference counts
un-share the pages), so workers are only forked while the estimated tree fits
:data:`MEMORY_BUDGET` (:func:`render_workers`); above that, in this process.

Rebuilding into an existing site (:mod:`bundler.render.incremental`): when
nothing the site is made from changed, every old file is carried over after
checking its bytes, without building a page; otherwise every page whose own
inputs (and the code, templates, theme and Graphviz version) are unchanged is
reused the same way.  Either result is byte-identical to a cold build.
"""

from __future__ import annotations

import gc
import json
import math
import multiprocessing
import os
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path

from markupsafe import Markup

from bundler import __version__
from bundler.diagnostics import Severity
from bundler.errors import InvalidBundleError
from bundler.graph.index import build_index
from bundler.output import SiteWriter
from bundler.output.cache import (
    NOT_A_PAGE,
    CacheEntry,
    Encoder,
    PreviousSite,
    SiteSummary,
    manifest_text,
    save_manifest,
)
from bundler.render import chunks
from bundler.render.chunks import (
    CSP,
    MIN_GRAPH_SCALE,
    PageResult,
    RenderJob,
    SiteInfo,
    event_key_for,
    render_tasks,
    size_svg,
)
from bundler.render.environment import make_environment, theme_assets
from bundler.render.highlight import pygments_css
from bundler.render.incremental import build_salt, bundle_fingerprint, reuse_everything
from bundler.render.pages.artifacts import file_copy_path
from bundler.render.pages.base import NAV, BuildContext
from bundler.render.pages.integrity import bundle_copy_files
from bundler.render.pages.plan import PageTask, final_pages, plan_pages
from bundler.render.proofs import claim_proofs
from bundler.render.search import search_docs_js
from bundler.render.search_index import search_documents
from bundler.render.urls import Linker, slug
from bundler.reports import TRUST_TEXT, to_json_obj, to_sarif
from bundler.schema import schema_json
from bundler.verify import VerificationReport, VerifyOptions, verify_bundle
from bundler.verify.verifier import young_collections_only

__all__ = ["CSP", "MIN_GRAPH_SCALE", "BuildOptions", "BuildResult", "SiteInfo", "build_site",
           "site_report_json", "size_svg"]

Progress = Callable[[str, int, int], None]

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
MIN_CHUNK = 8


@dataclass(frozen=True)
class BuildOptions:
    output: Path
    trusted_keys: tuple[str, ...] = ()
    strict: bool = False
    theme: Path | None = None
    title: str | None = None
    base_url: str | None = None
    jobs: int = 1
    severity_overrides: dict[str, Severity] = field(default_factory=dict)
    progress: Progress | None = None
    #: Reuse unchanged pages of the site being replaced (output is identical either way).
    incremental: bool = True


@dataclass(frozen=True)
class BuildResult:
    output: Path
    report: VerificationReport
    pages: int
    files: int
    bytes: int
    graphs: int
    seconds: float
    reused: int = 0     # pages carried over from the previous site


def _progress(opts: BuildOptions, stage: str, done: int, total: int) -> None:
    if opts.progress is not None:
        opts.progress(stage, done, total)


def build_site(bundle_path: str | os.PathLike[str], opts: BuildOptions) -> BuildResult:
    started = time.perf_counter()
    if opts.jobs < 1:
        raise ValueError(f"jobs must be at least 1, got {opts.jobs}")
    with ExitStack() as stack:
        vopts = VerifyOptions(trusted_keys=opts.trusted_keys,
                              severity_overrides=dict(opts.severity_overrides),
                              progress=(lambda stage, n: _progress(opts, stage, n, 0)))
        report = verify_bundle(bundle_path, vopts, stack=stack)
        if opts.strict and not report.ok(strict=True):
            raise InvalidBundleError(
                f"{bundle_path} did not pass strict verification; no site was written",
                diagnostics=[d for d in report.diagnostics if d.severity >= Severity.WARNING])
        site = _site_info(report, opts)
        salt = build_salt(site, opts.theme, opts.base_url)
        with SiteWriter(opts.output) as out:
            previous = None
            fingerprint = None
            if opts.incremental:
                fingerprint = bundle_fingerprint(report, salt, site_report_json(report))
                if out.previous is not None:
                    previous = PreviousSite.load(out.previous, salt)
            if previous is not None and previous.summary.bundle == fingerprint:
                size = reuse_everything(previous, out, opts.jobs)
                if size is not None:        # nothing changed: the previous site, verified
                    out.record(size)
                    files = len(out.written) + 1
                    target = out.commit()
                    save_manifest(target, manifest_text(salt, previous.summary,
                                                        previous.entries))
                    return BuildResult(target, report, previous.summary.pages, files,
                                       out.bytes_written, previous.summary.graphs,
                                       time.perf_counter() - started, previous.summary.pages)
                out.reset()
            with young_collections_only():
                idx = build_index(report.bundle)
                ctx = BuildContext(report, idx, Linker(idx))
                ctx.proofs = claim_proofs(report.bundle, (c.seq for c in idx.claims.values()))
            _progress(opts, "graph", len(idx.by_id), len(idx.by_id))
            return _write(ctx, opts, out, site, salt, previous, fingerprint, started)
    raise AssertionError("unreachable")  # pragma: no cover (ExitStack does not swallow)


def _site_info(report: VerificationReport, opts: BuildOptions) -> SiteInfo:
    meta = report.bundle.metadata
    return SiteInfo(
        title=opts.title or (meta.title if meta else "Review bundle"),
        description_html=Markup(""),
        trust=report.trust.value, trust_label=TRUST_TEXT[report.trust],
        errors=report.count(Severity.ERROR), warnings=report.count(Severity.WARNING),
        generator=f"review-bundler {__version__}", nav=NAV)


def _write(ctx: BuildContext, opts: BuildOptions, out: SiteWriter, site: SiteInfo, salt: str,
           previous: PreviousSite | None, fingerprint: str | None,
           started: float) -> BuildResult:
    env = make_environment(opts.theme)
    env.auto_reload = False        # templates cannot change during a build: no stat per page
    event_key = event_key_for(ctx.bundle)
    encoder = Encoder(event_key) if fingerprint is not None and event_key is not None else None
    job = RenderJob(ctx=ctx, env=env, site=site, base_url=opts.base_url, out_root=out.tmp,
                    salt=salt, encoder=encoder,
                    previous=previous if encoder is not None else None)
    tasks = plan_pages(ctx)
    last = final_pages()
    for task in (*tasks, *last):
        out.reserve(task.path)
    for name in sorted(env.list_templates(filter_func=lambda n: n.endswith(".html"))):
        env.get_template(name)     # compile once, before the workers fork
    results: list[PageResult] = []
    total = len(tasks) + len(last)
    for result in _render_all(job, tasks, last, opts, lambda: _write_files(ctx, opts, out)):
        results.append(result)
        if len(results) % 200 == 0:
            _progress(opts, "pages", len(results), total)
    _progress(opts, "pages", len(results), total)
    pages = {r.path: r for r in results}
    for r in results:
        out.record(r.size)
    graphs = sum(r.graphs for r in results)
    entries = {}
    if fingerprint is not None:     # every file, so an unchanged rebuild can reuse them all
        entries = {rel: (CacheEntry(pages[rel].fingerprint or NOT_A_PAGE, pages[rel].digest)
                         if rel in pages else CacheEntry(NOT_A_PAGE, out.digest(rel)))
                   for rel in out.written}
    files, size = len(out.written) + 1, out.bytes_written
    target = out.commit()
    if fingerprint is not None:
        save_manifest(target, manifest_text(salt, SiteSummary(fingerprint, len(results), graphs),
                                            entries))
    return BuildResult(target, ctx.report, len(results), files, size, graphs,
                       time.perf_counter() - started, sum(1 for r in results if r.reused))


def _chunked(tasks: list[PageTask], jobs: int) -> list[list[PageTask]]:
    size = max(MIN_CHUNK, min(MAX_CHUNK, math.ceil(len(tasks) / (jobs * 16))))
    return [tasks[i:i + size] for i in range(0, len(tasks), size)]


def _audit_counts(results: list[PageResult]) -> list[tuple[str, str, int]]:
    return [(r.facts["name"], r.path, r.facts["rows"]) for r in results if "rows" in r.facts]


def _render_all(job: RenderJob, tasks: list[PageTask], last: list[PageTask],
                opts: BuildOptions, meanwhile: Callable[[], None]) -> Iterator[PageResult]:
    """Results of ``tasks`` and ``last``; ``meanwhile`` runs in this process
    while the workers render.

    Each audit query is a chunk of its own, queued first: they are the longest
    single tasks, and as soon as their row counts are back the ``last`` pages
    (which show them) join the queue, so those render beside the bulk instead
    of after it.  Results come in no particular order (nothing depends on it).
    """
    jobs = render_workers(opts.jobs, resident_bytes(), memory_budget())
    audit = [[t] for t in tasks if t.kind == "audit"]
    parts = _chunked([t for t in tasks if t.kind != "audit"], jobs)
    # Workers must inherit the verified bundle: without fork (Windows), render here.
    # The bundle and index live to the end and hold no garbage: frozen, the cyclic
    # GC stops rescanning them (a full pass over a million events at every
    # collection of the oldest generation), and forked workers keep their pages shared.
    gc.collect()
    gc.freeze()
    try:
        if jobs <= 1 or "fork" not in multiprocessing.get_all_start_methods():
            meanwhile()
            done = [r for part in audit for r in render_tasks(job, part)]
            job.ctx.audit_pages = _audit_counts(done)
            yield from done
            for part in parts:
                yield from render_tasks(job, part)
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
                               mp_context=multiprocessing.get_context("fork"))
    helper: threading.Thread | None = None
    failures: list[BaseException] = []
    try:
        window = 2 * jobs              # chunks in flight: bounds queued results too
        audits = [pool.submit(chunks.run_chunk, part, None) for part in audit]
        queue: list[Future[list[PageResult]]] = [
            pool.submit(chunks.run_chunk, part, None) for part in parts[:window]]
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
                queue.append(pool.submit(chunks.run_chunk, todo.pop(0), None))
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
    job.ctx.audit_pages = counts
    return pool.submit(chunks.run_chunk, last, counts)


def _capture(fn: Callable[[], None], failures: list[BaseException]) -> None:
    try:
        fn()
    except BaseException as exc:  # re-raised in the caller's thread
        failures.append(exc)


def _write_files(ctx: BuildContext, opts: BuildOptions, out: SiteWriter) -> None:
    """Everything that is not a rendered page: assets, copies, proofs, search, reports."""
    for rel, src in theme_assets(opts.theme):
        out.copy_file(f"assets/{rel}", src)
    if not out.exists("assets/pygments.css"):
        out.write_text("assets/pygments.css", pygments_css())
    out.write_text("search/docs.js", search_docs_js(search_documents(ctx)))
    for site_path, rel in bundle_copy_files(ctx):
        out.copy_file(site_path, ctx.bundle.root / rel)
    for digest, st in sorted(ctx.bundle.payloads.items()):
        extra = file_copy_path(digest, st.media_type)
        if extra and st.state.value == "verified" and st.path:
            out.copy_file(extra, ctx.bundle.root / st.path)
    events = ctx.bundle.events
    first: dict[int, int] = {}      # seq -> first position, only for a log out of order
    for seq, proof in sorted(ctx.proofs.items()):
        if seq < len(events) and events[seq].seq == seq:
            pos = seq               # a valid chain: position == seq
        else:
            if not first:
                for i, e in enumerate(events):
                    first.setdefault(e.seq, i)
            pos = first[seq]
        claim = ctx.idx.by_id.get(events[pos].id)
        if claim is not None:
            out.write_text(f"proofs/{slug(claim.id)}.tlog-proof", proof)
    out.write_text("report/validation.json", site_report_json(ctx.report))
    out.write_text("report/validation.sarif", to_sarif(ctx.report))
    out.write_text("schema/review-bundle.schema.json", schema_json())


def site_report_json(report: VerificationReport) -> str:
    """The validation report as shipped in the site, naming the bundle by file name only.

    The CLI report says where the bundle was; a site must not depend on the
    build machine's paths (nor on the working directory of the build).
    """
    obj = to_json_obj(report)
    obj["bundle"] = Path(str(obj["bundle"])).name
    return json.dumps(obj, indent=2, sort_keys=True, ensure_ascii=False) + "\n"
