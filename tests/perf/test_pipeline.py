"""The streamed build: pagination, bounded graphs, parallel determinism, failures."""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from bundler.errors import BundlerError, DependencyError, OutputError
from bundler.graph.index import build_index
from bundler.output.cache import Encoder
from bundler.output.manifest import forget_manifest, manifest_path
from bundler.render import chunks, graph_helper, graphviz, search_index, workers
from bundler.render import site as site_mod
from bundler.render.pages import artifacts, base, lineage, plan, workflow
from bundler.render.pages.base import BuildContext
from bundler.render.side_work import SideWork, do_side_work
from bundler.render.urls import Linker
from bundler.verify import VerifyOptions, verify_bundle

from .conftest import build, key, tree

NEXT = re.compile(r'<a href="([^"]+)" rel="next">')


@pytest.fixture()
def small_pages(monkeypatch: pytest.MonkeyPatch) -> None:
    """Listings of 40 rows (7 workflow nodes), so a 3k-event bundle paginates."""
    monkeypatch.setattr(base, "PER_PAGE", 40)
    monkeypatch.setattr(workflow, "PHASES_PER_PAGE", 7)
    monkeypatch.setattr(plan, "PHASES_PER_PAGE", 7)
    monkeypatch.setattr(lineage, "ARCHIVES_PER_PAGE", 2)
    monkeypatch.setattr(plan, "ARCHIVES_PER_PAGE", 2)


@pytest.fixture(scope="module")
def ctx(synth_3k: Path) -> BuildContext:
    report = verify_bundle(synth_3k, VerifyOptions())
    idx = build_index(report.bundle)
    return BuildContext(report, idx, Linker(idx))


def _walk(site: Path, first: str) -> list[str]:
    """Follow rel=next links from ``first``; the listing pages in order."""
    pages, current = [first], site / first
    while (m := NEXT.search(current.read_text(encoding="utf-8"))) is not None:
        current = current.parent / m.group(1)
        pages.append(current.relative_to(site).as_posix())
    return pages


def test_listings_paginate_and_parallel_output_is_identical(
        synth_3k: Path, tmp_path: Path, small_pages: None, ctx: BuildContext) -> None:
    one = build(synth_3k, tmp_path / "one", jobs=1, incremental=False)
    two = build(synth_3k, tmp_path / "two", jobs=2, incremental=False)
    assert tree(tmp_path / "one") == tree(tmp_path / "two")
    assert one.pages == two.pages
    site = tmp_path / "two"
    n_arts = len(artifacts.artifacts(ctx))
    listing = _walk(site, "artifacts/index.html")
    assert len(listing) == -(-n_arts // 40) > 2
    assert listing[1] == "artifacts/index-2.html"
    rows = [re.findall(r'<tr><td><a href="([^"]+)"', (site / p).read_text(encoding="utf-8"))
            for p in listing]
    assert all(len(r) == 40 for r in rows[:-1]) and 0 < len(rows[-1]) <= 40
    linked = [h for r in rows for h in r]
    assert len(linked) == len(set(linked)) == n_arts       # each artifact exactly once
    archive_pages = _walk(site, "lineage.html")
    assert len(archive_pages) == -(-len(ctx.idx.archives) // 2) > 1
    shown = [re.findall(r"<h3>([^<]+)</h3>", (site / p).read_text(encoding="utf-8"))
             for p in archive_pages]
    assert [n for names in shown for n in names] == sorted(ctx.idx.archives)
    assert "Lineage of selected individuals" not in (site / archive_pages[1]).read_text(
        encoding="utf-8")
    for first, count in (("claims/index.html", len(ctx.idx.claims)),
                         ("workflow/index.html", -(-len(ctx.idx.workflow_nodes) // 7) * 40),
                         ("downloads.html", len(ctx.bundle.payloads))):
        assert len(_walk(site, first)) == -(-count // 40), first
    page2 = (site / "claims" / "index-2.html").read_text(encoding="utf-8")
    n_claims = len(ctx.idx.claims)
    assert f"page 2 of {-(-n_claims // 40)} (41–{min(80, n_claims)} of {n_claims})" in page2
    assert '<a href="index.html" rel="prev">' in page2
    # the workflow-level graph is on the first workflow page only
    assert 'class="rb-graph"' in (site / "workflow" / "index.html").read_text(encoding="utf-8")
    assert 'class="rb-graph"' not in (site / "workflow" / "index-2.html").read_text(
        encoding="utf-8")


def _models(value: Any) -> int:
    if isinstance(value, BaseModel):
        return 1
    if isinstance(value, dict):
        return sum(_models(v) for v in value.values())
    if isinstance(value, (list, tuple)):
        return sum(_models(v) for v in value)
    return 0


def test_event_log_pages_send_no_event_models(ctx: BuildContext) -> None:
    """A log page's context is sent to the helper that renders it (a bundle too big to
    fork for), and unpickling its 500 events was most of that: rows carry the few
    fields shown instead (and the leaf hash, so the fingerprint still covers each
    event's every byte)."""
    tasks = [t for t in plan.plan_pages(ctx) if t.kind == "events"]
    assert len(tasks) >= 2
    for task in tasks:
        page = plan.make_page(ctx, task)
        rows = page.context["rows"]
        assert rows and _models(page.context) == 0
        first = ctx.bundle.events[rows[0]["ev"]["seq"]]
        assert rows[0]["ev"] == {"seq": first.seq, "type": first.type, "time": first.time,
                                 "stream": first.stream, "id": first.id}
        assert rows[0]["leaf"] == ctx.bundle.leaf_hash(first.seq).hex()


def test_workflow_graph_collapses_to_phases_above_the_limit(
        ctx: BuildContext, monkeypatch: pytest.MonkeyPatch) -> None:
    full = workflow.workflow_level_graph(ctx)
    assert len(full.nodes) == len(ctx.idx.workflow_nodes) > 5
    monkeypatch.setattr(workflow, "MAX_WORKFLOW_GRAPH_NODES", 5)
    phases = workflow.workflow_level_graph(ctx)
    counts: dict[str, int] = {}
    for wf in ctx.idx.workflow_nodes.values():
        counts[wf.phase] = counts.get(wf.phase, 0) + 1
    assert {n.label for n in phases.nodes.values()} == {
        f"{p}: {n:,} workflow nodes" for p, n in counts.items()}
    assert phases.truncated
    assert all(e.src != e.dst and e.src in phases.nodes and e.dst in phases.nodes
               for e in phases.edges)


def test_big_bundles_draw_lineage_only_for_evidence_and_archive_members(
        ctx: BuildContext, monkeypatch: pytest.MonkeyPatch) -> None:
    arts = artifacts.artifacts(ctx)
    with_graph = {a.id for a in arts if artifacts.artifact_page(ctx, a.id).graphs}
    monkeypatch.setattr(artifacts, "LINEAGE_GRAPH_ARTIFACTS", 10)
    selective = {a.id for a in arts if artifacts.artifact_page(ctx, a.id).graphs}
    wanted = {a.id for a in arts
              if a.id in ctx.idx.cited_by or a.id in ctx.idx.archive_memberships}
    assert selective == with_graph & wanted
    assert 0 < len(selective) < len(with_graph)


@pytest.mark.parametrize("jobs", [1, 2])
def test_a_failing_page_fails_the_build_and_leaves_nothing(
        synth_3k: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, jobs: int) -> None:
    real = plan.MAKERS["claim"]
    victim = sorted(build_index(verify_bundle(synth_3k, VerifyOptions()).bundle).claims)[3]

    def broken(c: BuildContext, key: str) -> base.Page:
        if key == victim:
            raise BundlerError(f"cannot render {key}")
        return real(c, key)

    monkeypatch.setitem(plan.MAKERS, "claim", broken)
    with pytest.raises(BundlerError, match=f"cannot render {victim}"):
        build(synth_3k, tmp_path / "site", jobs=jobs)
    assert list(tmp_path.iterdir()) == []


def test_a_failing_copy_fails_the_build_and_keeps_the_old_site(
        synth_3k: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    out = tmp_path / "site"
    build(synth_3k, out, jobs=2)
    before = tree(out)

    def fail(*_args: object) -> None:
        raise OutputError("disk full")

    monkeypatch.setattr(site_mod, "write_files", fail)
    with pytest.raises(OutputError, match="disk full"):
        build(synth_3k, out, jobs=2, incremental=False)   # unchanged: would copy nothing
    assert tree(out) == before
    assert sorted(p.name for p in tmp_path.iterdir() if ".building-" in p.name) == []


def _failing_dot(tmp_path: Path, from_call: int, real: str) -> tuple[Path, Path]:
    """A ``dot`` that fails from its ``from_call``-th run on (the real one before) and
    logs each run to a file: the graph helpers are separate processes, so a patched
    function would not reach them, but an executable on PATH does."""
    calls = tmp_path / "dot-calls"
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(parents=True)
    script = bin_dir / "dot"
    script.write_text(
        "#!/bin/sh\n"
        f'echo run >> "{calls}"\n'
        f'if [ "$(wc -l < "{calls}")" -ge {from_call} ]; then\n'
        '  cat > /dev/null; echo "dot crashed" >&2; exit 3\n'
        "fi\n"
        f'exec "{real}" "$@"\n')
    script.chmod(0o755)
    return bin_dir, calls


@pytest.mark.parametrize("where", ["page", "graphviz"])
def test_a_failure_in_pipelined_in_process_rendering_keeps_the_old_site(
        synth_3k: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, where: str) -> None:
    """Over the memory budget pages render in this process with Graphviz and the
    sanitiser in helper processes: a failure on either side stops the build (no hang),
    and the old site stays."""
    out = tmp_path / "site"
    build(synth_3k, out, jobs=2)
    before = tree(out)
    monkeypatch.setenv("REVIEW_BUNDLER_MEMORY_MIB", "1")
    calls = [0]

    def on_call(n: int, error: BundlerError, real: Callable[..., Any]) -> Callable[..., Any]:
        def wrapper(*args: Any) -> Any:
            calls[0] += 1
            if calls[0] == n:
                raise error
            return real(*args)
        return wrapper

    if where == "graphviz":     # runs in a helper process
        real = shutil.which("dot")
        assert real is not None
        bin_dir, runs = _failing_dot(tmp_path, 3, real)
        monkeypatch.setenv("PATH", f"{bin_dir}:{os.environ['PATH']}")
        with pytest.raises(DependencyError, match="dot crashed"):
            build(synth_3k, out, jobs=2, incremental=False)
        # stopped at the failure: after two good runs, each chunk already handed to a
        # helper failed and was retried graph by graph, failing at its first graph
        failed = len(runs.read_text().splitlines())
        assert 4 <= failed <= 2 + 2 * (workers.LAYOUTS_IN_FLIGHT + 1)
        runs.unlink()
        monkeypatch.setenv("PATH", f"{_failing_dot(tmp_path / 'ok', 10**6, real)[0]}:"
                           f"{os.environ['PATH']}")
        build(synth_3k, tmp_path / "whole", jobs=2, incremental=False)
        assert len((tmp_path / "ok" / "dot-calls").read_text().splitlines()) > 2 * failed
    else:                       # runs in this process, while the helpers lay out graphs
        monkeypatch.setattr(workers, "start_tasks",
                            on_call(4, BundlerError("page broke"), workers.start_tasks))
        with pytest.raises(BundlerError, match="page broke"):
            build(synth_3k, out, jobs=2, incremental=False)
        assert calls == [4]          # stopped at the failure: nothing more was started
    assert tree(out) == before
    assert sorted(p.name for p in tmp_path.iterdir() if ".building-" in p.name) == []


def test_search_data_is_capped_keeping_evidence_and_archive_members(
        ctx: BuildContext, monkeypatch: pytest.MonkeyPatch) -> None:
    full = [d for d in search_index.search_documents(ctx) if d.kind == "artifact"]
    assert len(full) == len(artifacts.artifacts(ctx))
    wanted = [a.id for a in artifacts.artifacts(ctx)
              if a.id in ctx.idx.cited_by or a.id in ctx.idx.archive_memberships]
    monkeypatch.setattr(search_index, "MAX_ARTIFACT_DOCS", len(wanted) + 5)
    capped_docs = [d.id for d in search_index.search_documents(ctx) if d.kind == "artifact"]
    assert len(capped_docs) == len(wanted) + 5
    assert set(wanted) <= set(capped_docs)
    order = [d.id for d in full]
    assert capped_docs == sorted(capped_docs, key=order.index)   # log order kept


def test_render_workers_fit_the_memory_budget() -> None:
    gib = 1 << 30
    assert workers.render_workers(2, gib // 4, 2 * gib) == 2        # 100k: fits
    assert workers.render_workers(8, gib // 4, 2 * gib) == 8
    assert workers.render_workers(8, gib // 2, 2 * gib) == 3        # fewer workers
    assert workers.render_workers(2, gib + gib // 2, 2 * gib) == 1  # 1M: in-process
    assert workers.render_workers(2, 3 * gib, 2 * gib) == 1         # already over
    assert workers.render_workers(2, None, 2 * gib) == 2            # unknown: as asked
    assert workers.render_workers(1, 0, 0) == 1


def test_memory_budget_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("REVIEW_BUNDLER_MEMORY_MIB", raising=False)
    assert workers.memory_budget() == workers.MEMORY_BUDGET == 2 << 30
    monkeypatch.setenv("REVIEW_BUNDLER_MEMORY_MIB", "512")
    assert workers.memory_budget() == 512 << 20
    monkeypatch.setenv("REVIEW_BUNDLER_MEMORY_MIB", "lots")
    assert workers.memory_budget() == workers.MEMORY_BUDGET
    resident = workers.resident_bytes()
    assert resident is None or 10 << 20 < resident < 8 << 30


def test_over_the_memory_budget_pages_render_in_process_and_identically(
        synth_3k: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    build(synth_3k, tmp_path / "forked", jobs=2, incremental=False)

    def no_pool(*args: object, **kwargs: object) -> None:
        raise AssertionError("forked render workers over the memory budget")

    monkeypatch.setenv("REVIEW_BUNDLER_MEMORY_MIB", "1")
    monkeypatch.setattr(workers, "ProcessPoolExecutor", no_pool)
    python_threads: set[str] = set()
    pools: list[str] = []
    viewers: list[int] = []
    real_start, real_finish, real_submit = workers.start_tasks, workers.finish_rendered, \
        workers._submit_side
    real_render = chunks.render_page
    rendered_here: list[str] = []
    rendered_there: list[int] = []

    def start(job: chunks.RenderJob, tasks: list[plan.PageTask]) -> chunks.ChunkWork:
        python_threads.add(threading.current_thread().name)
        return real_start(job, tasks)

    def finish(work: chunks.ChunkWork,
               rendered: list[tuple[str, int, str | None]]) -> list[chunks.PageResult]:
        python_threads.add(threading.current_thread().name)
        rendered_there.append(len(rendered))
        return real_finish(work, rendered)

    def render_page(job: chunks.RenderJob, page: Any, *args: Any) -> str:
        rendered_here.append(page.path)
        return real_render(job, page, *args)

    def submit(pool: Any, work: SideWork) -> Any:
        if not work.empty:
            pools.append(type(pool).__name__)
        viewers.append(len(work.viewers))
        return real_submit(pool, work)

    monkeypatch.setattr(workers, "start_tasks", start)
    monkeypatch.setattr(workers, "finish_rendered", finish)
    monkeypatch.setattr(chunks, "render_page", render_page)
    monkeypatch.setattr(workers, "_submit_side", submit)
    build(synth_3k, tmp_path / "here", jobs=2, incremental=False)
    assert tree(tmp_path / "here") == tree(tmp_path / "forked")
    # Graphviz, the sanitiser, the payload viewers and the templates run in helper
    # processes, overlapping this process's Python work, which never leaves the main
    # thread (nothing needs a lock); only the pages that show the audit counts, made
    # once every other page is, render here
    assert python_threads == {"MainThread"}
    assert sorted(rendered_here) == sorted(t.path for t in plan.final_pages())
    pages = sum(1 for _ in (tmp_path / "here").rglob("*.html"))
    assert sum(rendered_there) + len(rendered_here) == pages
    assert pools and set(pools) == {"GraphHelpers"}
    shown = [p.read_text(encoding="utf-8")
             for p in (tmp_path / "here" / "artifacts").glob("*.html")]
    assert sum(viewers) == sum(1 for t in shown
                               if 'class="viewer viewer-' in t and "viewer-unavailable" not in t)
    assert sum(viewers) > 0


def _cache_files(site: Path) -> dict[str, str]:
    """The page cache a build kept for ``site``: manifest and page records (text), and the
    names in its graph store."""
    manifest = manifest_path(site)
    stem = manifest.with_suffix("")
    return {"manifest": manifest.read_text(encoding="utf-8"),
            "deps": stem.with_suffix(".deps").read_text(encoding="utf-8"),
            "graphs": " ".join(sorted(p.name for p in stem.with_suffix(".graphs").iterdir()))}


def test_helpers_fingerprint_the_pages_they_render_as_this_process_would(
        synth_3k: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A cold build over the memory budget leaves the page fingerprints (manifest, page
    records, graph store) to the helpers that render the pages; the next build compares
    them with its own, so they must be the ones this process computes, bit for bit."""
    monkeypatch.setenv("REVIEW_BUNDLER_MEMORY_MIB", "1")
    site = tmp_path / "site"
    real_remote, real_finish = workers.remote_fingerprints, workers.finish_rendered
    monkeypatch.setattr(workers, "remote_fingerprints", lambda job: None)
    build(synth_3k, site, jobs=2)
    here = _cache_files(site)
    pages_here = tree(site)
    shutil.rmtree(site)
    forget_manifest(site)
    leaf_files: list[str] = []
    from_helpers: list[str] = []

    def remote(job: chunks.RenderJob) -> Any:
        made = real_remote(job)
        assert made is not None, "a cold build of a valid bundle fingerprints in helpers"
        leaf_files.append(made.path)
        return made

    def finish(work: chunks.ChunkWork,
               rendered: list[tuple[str, int, str | None]]) -> list[chunks.PageResult]:
        from_helpers.extend(fp for _, _, fp in rendered if fp is not None)
        return real_finish(work, rendered)

    monkeypatch.setattr(workers, "remote_fingerprints", remote)
    monkeypatch.setattr(workers, "finish_rendered", finish)
    build(synth_3k, site, jobs=2)
    assert tree(site) == pages_here
    assert _cache_files(site) == here
    pages = sum(1 for _ in site.rglob("*.html"))
    assert len(from_helpers) == pages - len(plan.final_pages())
    assert all(len(fp) == 64 for fp in from_helpers)
    assert leaf_files and not any(os.path.exists(f) for f in leaf_files)   # removed
    # a rebuild (the site known) fingerprints here, before deciding what to render
    from_helpers.clear()
    build(synth_3k, site, jobs=2)
    assert tree(site) == pages_here and from_helpers == []


def test_helpers_fingerprint_only_cold_builds_of_dense_logs(
        synth_3k: Path, tmp_path: Path) -> None:
    report = verify_bundle(synth_3k, VerifyOptions(trusted_keys=(key(),)))
    ctx = BuildContext(report=report, idx=build_index(report.bundle), linker=Linker({}))

    def job(**kw: Any) -> chunks.RenderJob:
        return chunks.RenderJob(ctx=ctx, env=None, site=None, base_url=None,  # type: ignore[arg-type]
                                out_root=tmp_path, salt="s", **kw)

    assert workers.remote_fingerprints(job(encoder=None, previous=None)) is None
    made = workers.remote_fingerprints(job(encoder=Encoder(None), previous=None))
    assert made is not None
    try:
        data = Path(made.path).read_bytes()
        assert data == bytes(report.bundle.leaf_hashes) and made.keys.size == len(data)
        # the helper's key for an event is the build's
        ev = report.bundle.events[1234]
        helper_key = made.keys.encoder().event_key
        assert helper_key is not None
        assert helper_key(ev) == chunks.event_key_for(report.bundle)(ev)  # type: ignore[misc]
        assert helper_key("not an event") is None
    finally:
        made.close()
    assert not Path(made.path).exists()
    previous = object()
    assert workers.remote_fingerprints(job(encoder=Encoder(None),
                                           previous=previous)) is None  # type: ignore[arg-type]
    report.bundle.event_lines[10**9] = 5        # a log whose lines are no longer dense
    assert workers.remote_fingerprints(job(encoder=Encoder(None), previous=None)) is None


def test_graph_helpers_import_no_bundle_code_and_survive_an_unguarded_main(
        tmp_path: Path) -> None:
    """A helper is a fresh interpreter that imports the Graphviz module alone, and
    starting one never runs the caller's ``__main__`` again (``multiprocessing``'s
    spawn would: a library user's script without the ``__main__`` guard would run
    twice and fail)."""
    probe = ("import sys, bundler.render.graph_helper; "
             "print(sorted(m for m in sys.modules if m.startswith(('pydantic', 'jinja2', "
             "'bundler.graph', 'bundler.verify', 'bundler.model'))))")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                          check=True)
    assert done.stdout.strip() == "[]"
    script = tmp_path / "unguarded.py"
    script.write_text(
        "import sys\n"
        "from bundler.render import graphviz, graph_helper, side_work\n"
        "from bundler.render.dot import GraphSpec\n"
        "from bundler.graph.paths import GNode\n"
        "print('main ran', flush=True)\n"
        "spec = GraphSpec('g', 'T', 'D', [GNode('a', 'claim', 'A')], [], lambda _: None)\n"
        "helpers = graph_helper.GraphHelpers(2)\n"
        "work = side_work.SideWork(graphviz.prepare_svgs([spec]))\n"
        "svg = helpers.submit(work).result().svgs['g']\n"
        "helpers.close()\n"
        "print(svg.startswith('<svg'), len(svg) > 100)\n")
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                          check=True, cwd=tmp_path)
    assert done.stdout.split("\n") == ["main ran", "True True", ""]


def _one_graph() -> SideWork:
    spec = graphviz.GraphSpec("g", "T", "D", [], [], lambda _: None)
    return SideWork(graphviz.prepare_svgs([spec], dot="dot"))


def test_a_graph_helper_that_dies_is_a_clear_error() -> None:
    helpers = graph_helper.GraphHelpers(1)
    try:
        assert set(helpers.submit(_one_graph()).result().svgs) == {"g"}    # it works ...
        helpers._helpers[0].proc.kill()                                 # ... then dies
        with pytest.raises(BundlerError, match=r"helper process of the build \(graphs, "
                           r"payload viewers, page writes\) died .* previous site is kept"):
            helpers.submit(_one_graph()).result()
    finally:
        helpers.close()


def test_helpers_that_cannot_start_leave_the_layout_to_this_process(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """An interpreter that cannot run the helper module (embedded, frozen): the batches
    are laid out here instead, with the same result, rather than failing the build."""
    expected = do_side_work(_one_graph())
    monkeypatch.setattr(sys, "executable", shutil.which("false") or "/bin/false")
    helpers = graph_helper.GraphHelpers(2)
    try:
        assert [helpers.submit(_one_graph()).result() for _ in range(3)] == [expected] * 3
        assert all(h.unusable for h in helpers._helpers)
    finally:
        helpers.close()
    monkeypatch.setattr(sys, "frozen", True, raising=False)
    with pytest.raises(OSError):
        graph_helper.GraphHelpers(2)
    assert isinstance(workers._graph_helpers(), workers._LocalLayout)


def test_in_process_rendering_runs_with_the_bundle_frozen(
        synth_3k: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import gc

    frozen: list[int] = []
    real = chunks.render_tasks

    def spy(job: chunks.RenderJob, tasks: list[plan.PageTask]) -> list[chunks.PageResult]:
        frozen.append(gc.get_freeze_count())
        return real(job, tasks)

    monkeypatch.setattr(workers, "render_tasks", spy)
    build(synth_3k, tmp_path / "site", jobs=1, incremental=False)
    assert frozen and min(frozen) > 10_000
    assert gc.get_freeze_count() == 0


def test_ctrl_c_during_in_process_rendering_is_one_clean_message(
        synth_3k: Path, tmp_path: Path) -> None:
    """Ctrl-C reaches the terminal's process group: the build says "interrupted" once,
    exits 130, leaves no helper behind and no traceback (the helpers, in a session of
    their own, are not interrupted half-way through starting).

    The build is stopped (SIGSTOP) before the signal is sent, and interrupted only if
    its site is not in place yet; a build that got that far (this test's process can be
    held up on a loaded machine) is run again.  A build that ignored Ctrl-C would exit 0
    every time and fail below."""
    for _attempt in range(3):
        outcome = _interrupt_while_rendering(synth_3k, tmp_path / "site")
        if outcome is not None:
            break
        shutil.rmtree(tmp_path / "site")
    assert outcome is not None, "the build finished before each of three Ctrl-Cs"
    returncode, stderr, started = outcome
    assert returncode == 130, stderr
    assert stderr == "review-bundler: interrupted"
    assert not (tmp_path / "site").exists()
    for pid in started:
        assert not Path(f"/proc/{pid}").exists() or \
            (Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z")


def _interrupt_while_rendering(bundle: Path, out: Path) -> tuple[int, str, list[int]] | None:
    """(exit status, stderr, helper pids) of a build sent SIGINT once both graph
    helpers run; None if the build had already finished when it was sent."""
    env = dict(os.environ, REVIEW_BUNDLER_MEMORY_MIB="1")
    proc = subprocess.Popen([sys.executable, "-m", "bundler", "build", str(bundle), "-o",
                             str(out), "-q", "--no-cache"], env=env, start_new_session=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)

    def helpers() -> list[int]:
        found = []
        for entry in Path("/proc").iterdir():
            try:
                cmd = (entry / "cmdline").read_bytes()
                stat = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if b"bundler.render.graph_helper" in cmd and int(stat[1]) == proc.pid:
                found.append(int(entry.name))
        return found

    deadline = time.monotonic() + 60
    # both helpers: they start one after the other, and a poll can fall between them
    while len(helpers()) < workers.LAYOUTS_IN_FLIGHT and proc.poll() is None and \
            time.monotonic() < deadline:
        time.sleep(0.02)
    started = helpers()
    assert len(started) == workers.LAYOUTS_IN_FLIGHT
    # Freeze the build before deciding: this process can be held up (two cores, three
    # busy processes) until the build has published its site and is closing the helpers.
    # Stopped, the build is where it is; a site not yet in place means Ctrl-C now lands
    # before the build is done, however long the signal takes to be sent.
    os.kill(proc.pid, signal.SIGSTOP)
    try:
        stop_by = time.monotonic() + 10
        while _state(proc.pid) not in ("T", "Z", "") and time.monotonic() < stop_by:
            time.sleep(0.005)
        published = out.exists()
        if not published:
            os.killpg(proc.pid, signal.SIGINT)
    finally:
        os.kill(proc.pid, signal.SIGCONT)
    _, stderr = proc.communicate(timeout=60)
    if published:
        return None
    return proc.returncode, stderr.decode().strip(), started


def _state(pid: int) -> str:
    """The process's state letter from /proc ("" once it is gone)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return ""


def test_graph_helpers_never_import_from_the_working_directory(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A build often runs inside the bundle's folder, and a bundle can ship any file:
    a ``bundler`` package there must not be what a helper imports."""
    marker = tmp_path / "imported"
    fake = tmp_path / "work" / "bundler"
    fake.mkdir(parents=True)
    (fake / "__init__.py").write_text(f"open({str(marker)!r}, 'w').close()\n")
    (fake / "render").mkdir()
    (fake / "render" / "__init__.py").write_text("")
    (fake / "render" / "graph_helper.py").write_text(
        f"open({str(marker)!r}, 'w').close()\nraise SystemExit(3)\n")
    monkeypatch.chdir(fake.parent)
    monkeypatch.setenv("PYTHONPATH", str(fake.parent))
    helpers = graph_helper.GraphHelpers(1)
    try:
        assert set(helpers.submit(_one_graph()).result().svgs) == {"g"}
        assert not helpers._helpers[0].unusable          # laid out by the helper
    finally:
        helpers.close()
    assert not marker.exists()


def test_chunks_hold_few_pages_of_the_event_log() -> None:
    """A log page holds hundreds of rows, made before its chunk's graphs are laid out:
    chunks of 128 of them held 0.25 GiB in flight at 1M events."""
    tasks = ([plan.PageTask("claim", str(i), f"c{i}.html") for i in range(300)]
             + [plan.PageTask("events", str(i), f"e{i}.html") for i in range(100)]
             + [plan.PageTask("integrity", "", "integrity.html")])
    parts = workers._chunked(tasks, 1)
    assert [t for part in parts for t in part] == tasks          # order kept, nothing lost
    assert max(len(p) for p in parts) == 26                      # ceil(401 / 16)
    assert max(sum(t.kind == "events" for t in p) for p in parts) == workers.MAX_EVENT_PAGES


def test_no_records_are_made_once_the_record_file_is_full(
        synth_3k: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Pages rendered in this process stop being recorded when the record file will not
    be kept, and the site is the same as one built with every page recorded."""
    from bundler.output import deps_file
    from bundler.render import page_deps
    monkeypatch.setenv("REVIEW_BUNDLER_MEMORY_MIB", "1")    # render in this process
    made: list[str] = []
    real = page_deps.PageDeps.record

    def spy(self: page_deps.PageDeps, task: plan.PageTask, *args: Any) -> Any:
        made.append(task.path)
        return real(self, task, *args)

    monkeypatch.setattr(page_deps.PageDeps, "record", spy)
    build(synth_3k, tmp_path / "all", jobs=2, incremental=True)
    everything = len(made)
    assert everything > 100 and deps_file.deps_path(tmp_path / "all").is_file()
    made.clear()
    monkeypatch.setattr(deps_file, "MAX_DEPS_BYTES", 20_000)
    build(synth_3k, tmp_path / "capped", jobs=2, incremental=True)
    assert 0 < len(made) < everything // 4
    assert not deps_file.deps_path(tmp_path / "capped").exists()
    assert tree(tmp_path / "capped") == tree(tmp_path / "all")
