"""The site builder: load -> verify -> graph -> render -> write.

Nothing is written until verification and the graph stage are done, and
the output is swapped in atomically, so a failed build never damages the
previous site.  Output is a pure function of the bundle and the options:
no timestamps, no absolute paths, sorted iteration everywhere.

Rendering streams: pages are planned as small tasks and rendered in chunks,
in forked workers while memory allows (:mod:`bundler.render.workers`).

Rebuilding into an existing site (:mod:`bundler.render.incremental`): when
the inputs (every bundle byte, the options, the code) are those of the last
build, the old site is carried over and verification is skipped; when
nothing the site is made from changed, every old file is carried over
without building a page; otherwise every page whose own inputs are unchanged
is reused (object pages on their recorded reads, without being made).
Whatever is carried over is re-hashed first, and the result is byte-identical
to a cold build.
"""

from __future__ import annotations

import dataclasses
import errno
import functools
import itertools
import os
import time
from collections.abc import Callable, Iterable
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path

from markupsafe import Markup

from bundler import __version__
from bundler.diagnostics import Severity
from bundler.errors import InvalidBundleError, OutputError
from bundler.gc_scopes import young_collections_only
from bundler.graph.index import build_index
from bundler.load.stamp import require_unchanged, tree_stamp
from bundler.output import SiteWriter
from bundler.output.cache import Encoder
from bundler.output.deps_file import DepsWriter, deps_path, forget_deps, read_deps
from bundler.output.manifest import (
    NO_INPUTS,
    PreviousSite,
    SiteSummary,
    forget_manifest,
    manifest_chunks,
    manifest_text,
    save_manifest,
)
from bundler.output.overlap import refuse_overlap
from bundler.output.text_store import TextStore
from bundler.render.chunks import (
    RenderJob,
    event_key_for,
)
from bundler.render.environment import make_environment
from bundler.render.incremental import (
    Inputs,
    build_inputs,
    build_salt,
    bundle_fingerprint,
    compiled_templates_dir,
    environment_digest,
    reuse_everything,
)
from bundler.render.ledger import PageLedger
from bundler.render.page_deps import PageDeps
from bundler.render.page_html import CSP, MIN_GRAPH_SCALE, RenderSetup, SiteInfo, size_svg
from bundler.render.pages.base import NAV, BuildContext
from bundler.render.pages.plan import PageTask, final_pages, plan_pages
from bundler.render.proofs import claim_proofs
from bundler.render.site_files import LOG_COPY, site_report_json, verified_reads, write_files
from bundler.render.urls import Linker, check_base_url, long_names, sharing_a_name
from bundler.render.workers import render_all
from bundler.reports import TRUST_TEXT
from bundler.verify import Verdict, VerificationReport, VerifyOptions, verify_bundle

__all__ = ["CSP", "MIN_GRAPH_SCALE", "BuildOptions", "BuildResult", "SiteInfo", "build_site",
           "site_report_json", "size_svg"]

Progress = Callable[[str, int, int], None]

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
    #: None when the inputs were unchanged and the previous verdict was reused
    report: VerificationReport | None
    verdict: Verdict
    pages: int
    files: int
    bytes: int
    graphs: int
    seconds: float
    reused: int = 0     # pages carried over from the previous site
    #: Ids made to share a page name, which got longer names (see ``urls.slug``).
    renamed: tuple[str, ...] = ()


def _progress(opts: BuildOptions, stage: str, done: int, total: int) -> None:
    if opts.progress is not None:
        opts.progress(stage, done, total)


#: OSErrors that say the machine ran out of something (disk, quota, descriptors,
#: memory) or cannot be written: the site could not be written, not a bug.
RESOURCE_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EMFILE, errno.ENFILE,
                             errno.ENOMEM, errno.EROFS})


def build_site(bundle_path: str | os.PathLike[str], opts: BuildOptions) -> BuildResult:
    """Build the site of ``bundle_path``; a failed build leaves the previous site as it was."""
    try:
        return _build_site(bundle_path, opts)
    except OSError as exc:
        if exc.errno not in RESOURCE_ERRNOS:
            raise
        where = f": {exc.filename}" if exc.filename else ""
        raise OutputError(f"{exc.strerror}{where} (a failed build keeps the previous site)"
                          ) from exc


def _build_site(bundle_path: str | os.PathLike[str], opts: BuildOptions) -> BuildResult:
    started = time.perf_counter()
    if opts.jobs < 1:
        raise ValueError(f"jobs must be at least 1, got {opts.jobs}")
    refuse_overlap(bundle_path, opts.output)
    check_base_url(opts.base_url)
    environment = environment_digest(opts.theme)
    inputs = None
    if opts.incremental:
        inputs = build_inputs(bundle_path, environment, trusted_keys=opts.trusted_keys,
                              severity_overrides=opts.severity_overrides, title=opts.title,
                              base_url=opts.base_url)
        if inputs is not None:
            result = _reuse_same_inputs(inputs, opts, started)
            if result is not None:
                return result
    stamp = inputs.stamp if inputs is not None else tree_stamp(bundle_path)
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
        salt = build_salt(site, environment, opts.base_url)
        with SiteWriter(opts.output) as out:
            # pages read the bundle again: commit only if it is still what was verified
            out.before_commit = functools.partial(require_unchanged, bundle_path, stamp)
            previous = None
            fingerprint = None
            if opts.incremental:
                fingerprint = bundle_fingerprint(report, salt, site_report_json(report))
                if out.previous is not None:
                    previous = PreviousSite.load(out.previous, salt)
                    out.carry_from = previous   # files of the same bytes are linked
            if previous is not None and previous.summary.bundle == fingerprint:
                # the same leaf hashes: the previous copy of the log is of these lines
                log = previous.entries.get(LOG_COPY)
                summary = _summary(previous.summary.bundle, previous.summary.pages,
                                   previous.summary.graphs, inputs, report,
                                   verified_reads(report.bundle, log.digest if log else None))
                carried = _carry_over(previous, out, opts, salt, summary, report,
                                      report.verdict(), started)
                if carried is not None:     # nothing changed: the previous site, verified
                    return carried
                out.reset()
            with young_collections_only():
                idx = build_index(report.bundle)
                ctx = BuildContext(report, idx, Linker(idx))
                ctx.proofs = claim_proofs(report.bundle, (c.seq for c in idx.claims.values()))
            _progress(opts, "graph", len(idx.by_id), len(idx.by_id))
            return _write(ctx, opts, out, site, salt, previous, fingerprint, inputs, started)
    raise AssertionError("unreachable")  # pragma: no cover (ExitStack does not swallow)


def _reuse_same_inputs(inputs: Inputs, opts: BuildOptions,
                       started: float) -> BuildResult | None:
    """The previous site, carried over whole, if it was built from exactly these
    inputs (and its files are still the bytes it wrote); None means: build."""
    previous = PreviousSite.read(opts.output.absolute())
    if previous is None or previous.summary.inputs != inputs.digest:
        return None
    verdict = Verdict.from_words(previous.summary.verdict)
    if verdict is None or (opts.strict and not verdict.ok(strict=True)):
        return None                 # the full build reports why, with every diagnostic
    with SiteWriter(opts.output) as out:
        if out.previous is not None:
            carried = _carry_over(previous, out, opts, previous.salt, previous.summary, None,
                                  verdict, started, still=inputs.unchanged)
            if carried is not None:
                return carried
        out.abort()
    return None


def _carry_over(previous: PreviousSite, out: SiteWriter, opts: BuildOptions, salt: str,
                summary: SiteSummary, report: VerificationReport | None, verdict: Verdict,
                started: float, still: Callable[[], bool] = lambda: True) -> BuildResult | None:
    """Commit every file of ``previous``, re-hashed, as the new site (and its manifest);
    None if one file differs from its record or ``still()`` turns false."""
    size = reuse_everything(previous, out, opts.jobs)
    if size is None or not still():
        return None
    out.record(size)
    files = len(out.written) + 1
    target = out.commit()
    save_manifest(target, manifest_text(salt, summary, previous.entries))
    return BuildResult(target, report, verdict, summary.pages, files, out.bytes_written,
                       summary.graphs, time.perf_counter() - started, summary.pages)


def _summary(fingerprint: str, pages: int, graphs: int, inputs: Inputs | None,
             report: VerificationReport, reads: dict[str, str]) -> SiteSummary:
    """The manifest summary; the inputs digest only if the bundle did not move under
    the build (then the next build of the same inputs may skip verification): its
    stamp did not move, and every file verification read had, when the digest was
    taken, the bytes verification read (``reads``: :func:`verified_reads`)."""
    pinned = inputs is not None and inputs.unchanged() and inputs.agrees(reads)
    return SiteSummary(fingerprint, pages, graphs,
                       inputs.digest if pinned and inputs is not None else NO_INPUTS,
                       report.verdict().words())


def _site_info(report: VerificationReport, opts: BuildOptions) -> SiteInfo:
    meta = report.bundle.metadata
    return SiteInfo(
        title=opts.title or (meta.title if meta else "Review bundle"),
        description_html=Markup(""),
        trust=report.trust.value, trust_label=TRUST_TEXT[report.trust],
        errors=report.count(Severity.ERROR), warnings=report.count(Severity.WARNING),
        generator=f"review-bundler {__version__}", nav=NAV)


class _SharedName(Exception):
    """Two planned pages have one path: ids made to share a name (see :func:`_write`)."""


def _write(ctx: BuildContext, opts: BuildOptions, out: SiteWriter, site: SiteInfo, salt: str,
           previous: PreviousSite | None, fingerprint: str | None, inputs: Inputs | None,
           started: float) -> BuildResult:
    """Write every page, under the names :func:`bundler.render.urls.slug` gives.

    When ids were made to share a name, theirs get longer ones and the pages are
    planned again.  Which names are long then depends on the whole bundle, while
    a rebuild reuses a page on what it read: so such a build reuses nothing and
    records nothing for the next one (a cold build, byte for byte)."""
    try:
        return _write_pages(ctx, opts, out, site, salt, previous, fingerprint, inputs, started,
                            final=False)
    except _SharedName:
        pass
    ctx.texts = None
    shared = sharing_a_name(itertools.chain(ctx.idx.by_id, ctx.idx.archives))
    with long_names(shared):
        result = _write_pages(ctx, opts, out, site, salt, None, None, inputs, started,
                              final=True)
    return dataclasses.replace(result, renamed=tuple(sorted(shared)))


def _write_pages(ctx: BuildContext, opts: BuildOptions, out: SiteWriter, site: SiteInfo,
                 salt: str, previous: PreviousSite | None, fingerprint: str | None,
                 inputs: Inputs | None, started: float, *, final: bool) -> BuildResult:
    # Before the pages and after them, the build process only adds objects that live
    # to the end and hold no cycles, over a heap of every kept event: an automatic full
    # collection there walks all of it and frees nothing (the one in _finish, after
    # render_all has unfrozen the heap: 0.41 s at 100k events, 5.3 s at 1M).  While
    # pages render, the heap is frozen, so collections scan only what is new, and the
    # render workers, which do make cyclic garbage, collect it as usual.
    with young_collections_only():
        job, tasks, last = _prepare(ctx, opts, out, site, salt, previous, fingerprint,
                                    final=final)
    deps = job.deps
    ledger = PageLedger(keep_rows=fingerprint is not None)
    total = len(tasks) + len(last)
    records = DepsWriter(out.target, salt) if deps is not None else None
    try:
        for result in render_all(job, tasks, last, opts.jobs,
                                 lambda: write_files(ctx, opts.theme, out)):
            if result.deps is not None and records is not None:
                records.write(result.deps)      # streamed: results stay small
                result = dataclasses.replace(result, deps=None)
                if records.full and deps is not None:
                    deps.wanted = False
            elif result.deps_kept and records is not None:
                assert deps is not None             # records exist only with deps
                records.write_line(deps.previous[result.path])
            ledger.add(result)
            if ledger.pages % 200 == 0:
                _progress(opts, "pages", ledger.pages, total)
        _progress(opts, "pages", ledger.pages, total)
        with young_collections_only():
            pages = {t.path for t in (*tasks, *last)}
            return _finish(ctx, out, ledger, pages, salt, fingerprint, inputs, records,
                           started)
    finally:
        if records is not None:
            records.close()


def _prepare(ctx: BuildContext, opts: BuildOptions, out: SiteWriter, site: SiteInfo, salt: str,
             previous: PreviousSite | None, fingerprint: str | None, *, final: bool,
             ) -> tuple[RenderJob, list[PageTask], list[PageTask]]:
    """The render job and the pages to make (reserved in ``out``), templates compiled."""
    compiled = compiled_templates_dir()
    env = make_environment(opts.theme, compiled)
    env.auto_reload = False        # templates cannot change during a build: no stat per page
    event_key = event_key_for(ctx.bundle)
    encoder = Encoder(event_key) if fingerprint is not None and event_key is not None else None
    previous = previous if encoder is not None else None
    deps = None
    if encoder is not None:
        deps = PageDeps(ctx, encoder, read_deps(out.target, salt) if previous else {})
        ctx.texts = TextStore(out.target, salt, readable=previous is not None)
    job = RenderJob(ctx=ctx, env=env, site=site, base_url=opts.base_url, out_root=out.tmp,
                    salt=salt, encoder=encoder, previous=previous, deps=deps,
                    setup=RenderSetup(opts.theme, compiled, site,
                                      opts.base_url))
    tasks = plan_pages(ctx)
    last = final_pages()
    _reserve(out, (*tasks, *last), final=final)
    for name in sorted(env.list_templates(filter_func=lambda n: n.endswith(".html"))):
        env.get_template(name)     # compile once, before the workers fork
    return job, tasks, last


def _reserve(out: SiteWriter, tasks: Iterable[PageTask], *, final: bool) -> None:
    """Claim every page's path, once none is planned twice.  Two pages share a path
    only when their ids were made to share a name (``urls.slug``): :class:`_SharedName`
    so that they get longer ones, or, if they already have (``final``), a stop naming
    both ids (ids that share 96 bits of hash: the site cannot show both)."""
    owner: dict[str, PageTask] = {}
    for task in tasks:
        first = owner.setdefault(task.path, task)
        if first is task:
            continue
        if not final:
            raise _SharedName(task.path)
        raise OutputError(f"the {first.kind} pages of {first.key!r} and {task.key!r} are "
                          f"both named {task.path!r}: ids that differ only in characters "
                          "a file name drops and share 96 bits of the hash in it; the site "
                          "cannot show both")
    for path in owner:
        out.reserve(path)


def _finish(ctx: BuildContext, out: SiteWriter, ledger: PageLedger, pages: set[str],
            salt: str, fingerprint: str | None, inputs: Inputs | None,
            records: DepsWriter | None, started: float) -> BuildResult:
    """Commit the site, then its manifest and page records (the next build's hints).
    ``pages``: the paths of ``ledger``'s pages; every other file written is not a page."""
    out.record(ledger.bytes)
    if fingerprint is not None:     # every file, so an unchanged rebuild can reuse them all
        for rel in sorted(out.written - pages):
            ledger.add_file(rel, out.digest(rel))
    files, size = len(out.written) + 1, out.bytes_written
    reads = verified_reads(ctx.bundle, out.digest(LOG_COPY) if out.exists(LOG_COPY) else None
                           ) if fingerprint is not None else {}
    target = out.commit()
    if fingerprint is not None:
        save_manifest(target, manifest_chunks(
            salt, _summary(fingerprint, ledger.pages, ledger.graphs, inputs, ctx.report,
                           reads),
            ledger.rows()))
        if records is not None:
            records.commit()
    else:
        forget_manifest(target)
        forget_deps(deps_path(target))
    return BuildResult(target, ctx.report, ctx.report.verdict(), ledger.pages, files, size,
                       ledger.graphs, time.perf_counter() - started, ledger.reused)
