"""The site builder: load -> verify -> graph -> render -> write.

Nothing is written until verification and the graph stage are done, and
the output is swapped in atomically, so a failed build never damages the
previous site.  Output is a pure function of the bundle and the options:
no timestamps, no absolute paths, sorted iteration everywhere.

Rendering streams: the pages are planned as small tasks
(:mod:`bundler.render.pages.plan`) and rendered in chunks by forked worker
processes (:mod:`bundler.render.chunks`), each chunk with one batched
Graphviz run, written straight to disk and dropped.  Peak memory is the
verified bundle plus a chunk per worker, whatever the number of pages.

Rebuilding into an existing site reuses every page whose inputs (and the
code, templates, theme and Graphviz version) are unchanged, after checking
the old file's bytes; the result is byte-identical to a cold build.
"""

from __future__ import annotations

import functools
import gc
import importlib.metadata
import json
import math
import multiprocessing
import os
import platform
import shutil
import subprocess
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
    CacheEntry,
    Encoder,
    PreviousSite,
    digest_text,
    manifest_text,
    save_manifest,
    tree_digest,
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
from bundler.render.environment import (
    PACKAGE_DIR,
    TEMPLATES_DIR,
    make_environment,
    theme_assets,
    theme_dirs,
)
from bundler.render.highlight import pygments_css
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

__all__ = ["CSP", "MIN_GRAPH_SCALE", "BuildOptions", "BuildResult", "SiteInfo", "build_site",
           "site_report_json", "size_svg"]

Progress = Callable[[str, int, int], None]

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
        idx = build_index(report.bundle)
        ctx = BuildContext(report, idx, Linker(idx))
        ctx.proofs = claim_proofs(report.bundle, (c.seq for c in idx.claims.values()))
        _progress(opts, "graph", len(idx.by_id), len(idx.by_id))
        with SiteWriter(opts.output) as out:
            return _write(ctx, opts, out, started)
    raise AssertionError("unreachable")  # pragma: no cover (ExitStack does not swallow)


def _site_info(ctx: BuildContext, opts: BuildOptions) -> SiteInfo:
    meta = ctx.bundle.metadata
    report = ctx.report
    return SiteInfo(
        title=opts.title or (meta.title if meta else "Review bundle"),
        description_html=Markup(""),
        trust=report.trust.value, trust_label=TRUST_TEXT[report.trust],
        errors=report.count(Severity.ERROR), warnings=report.count(Severity.WARNING),
        generator=f"review-bundler {__version__}", nav=NAV)


def _dot_version() -> str:
    exe = shutil.which("dot")
    if exe is None:
        return "none"
    try:
        proc = subprocess.run([exe, "-V"], capture_output=True, timeout=30, check=False)
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    return (proc.stdout + proc.stderr).decode("utf-8", "replace").strip()


@functools.cache
def _code_digest() -> str:
    """The Python code of this process, digested once: what runs is what was imported
    at start, whatever is edited on disk while a long-lived process builds sites."""
    return tree_digest([PACKAGE_DIR], "*.py")


def _salt(site: SiteInfo, opts: BuildOptions, encoder: Encoder) -> str:
    """What every page depends on besides its own inputs; any change rebuilds all."""
    libs = []
    for dist in ("jinja2", "markupsafe", "pygments", "markdown-it-py", "pydantic"):
        try:
            libs.append(f"{dist}={importlib.metadata.version(dist)}")
        except importlib.metadata.PackageNotFoundError:
            libs.append(f"{dist}=?")
    parts = [__version__, platform.python_version(), *libs, _dot_version(),
             _code_digest(), tree_digest([TEMPLATES_DIR, *theme_dirs(opts.theme)]),
             encoder.encode((site.title, str(site.description_html), site.trust,
                             site.trust_label, site.errors, site.warnings, site.generator,
                             site.nav)),
             CSP, opts.base_url or ""]
    return digest_text("\x00".join(parts))


def _write(ctx: BuildContext, opts: BuildOptions, out: SiteWriter,
           started: float) -> BuildResult:
    env = make_environment(opts.theme)
    env.auto_reload = False        # templates cannot change during a build: no stat per page
    site = _site_info(ctx, opts)
    event_key = event_key_for(ctx.bundle)
    encoder = Encoder(event_key) if opts.incremental and event_key is not None else None
    salt = _salt(site, opts, Encoder(None))
    previous = None
    if encoder is not None and out.previous is not None:
        previous = PreviousSite.load(out.previous, salt)
    job = RenderJob(ctx=ctx, env=env, site=site, base_url=opts.base_url, out_root=out.tmp,
                    salt=salt, encoder=encoder, previous=previous)
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
    entries = {}
    for r in results:
        out.record(r.size)
        if r.fingerprint:
            entries[r.path] = CacheEntry(r.fingerprint, r.digest)
    files, size = len(out.written) + 1, out.bytes_written
    target = out.commit()
    if encoder is not None:
        save_manifest(target, manifest_text(salt, entries))
    return BuildResult(target, ctx.report, len(results), files, size,
                       sum(r.graphs for r in results), time.perf_counter() - started,
                       sum(1 for r in results if r.reused))


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
    audit = [[t] for t in tasks if t.kind == "audit"]
    parts = _chunked([t for t in tasks if t.kind != "audit"], opts.jobs)
    # Workers must inherit the verified bundle: without fork (Windows), render here.
    if opts.jobs == 1 or "fork" not in multiprocessing.get_all_start_methods():
        meanwhile()
        done = [r for part in audit for r in render_tasks(job, part)]
        job.ctx.audit_pages = _audit_counts(done)
        yield from done
        for part in parts:
            yield from render_tasks(job, part)
        yield from render_tasks(job, last)
        return
    chunks.JOB = job
    gc.collect()
    gc.freeze()     # workers share the bundle copy-on-write; keep their GC off its pages
    pool = ProcessPoolExecutor(max_workers=opts.jobs,
                               mp_context=multiprocessing.get_context("fork"))
    helper: threading.Thread | None = None
    failures: list[BaseException] = []
    try:
        window = 2 * opts.jobs              # chunks in flight: bounds queued results too
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
        gc.unfreeze()
        chunks.JOB = None


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
