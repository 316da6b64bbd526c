"""The site builder: load -> verify -> graph -> render -> write.

Nothing is written until verification and the graph stage are done, and
the output is swapped in atomically, so a failed build never damages the
previous site.  Output is a pure function of the bundle and the options:
no timestamps, no absolute paths, sorted iteration everywhere.
"""

from __future__ import annotations

import dataclasses
import importlib
import json
import os
import re
import time
from collections.abc import Callable
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from markupsafe import Markup

from bundler import __version__
from bundler.diagnostics import Severity
from bundler.errors import InvalidBundleError
from bundler.graph.index import build_index
from bundler.output import SiteWriter
from bundler.render.environment import make_environment, theme_assets
from bundler.render.graphviz import MAX_NODES, GraphSpec, render_svgs
from bundler.render.highlight import pygments_css
from bundler.render.pages.artifacts import artifact_pages, file_copy_path
from bundler.render.pages.base import NAV, BuildContext, Page
from bundler.render.pages.claims import claim_pages
from bundler.render.pages.events import event_pages
from bundler.render.pages.integrity import (
    bundle_copy_files,
    downloads_page,
    integrity_page,
    overview_page,
)
from bundler.render.pages.lineage import lineage_page, steering_page
from bundler.render.pages.workflow import workflow_pages
from bundler.render.proofs import claim_proofs
from bundler.render.search import search_docs_js
from bundler.render.search_index import search_documents
from bundler.render.urls import Linker, slug
from bundler.reports import TRUST_TEXT, to_json_obj, to_sarif
from bundler.schema import schema_json
from bundler.verify import VerificationReport, VerifyOptions, verify_bundle

CSP = ("default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; "
       "img-src 'self' data:; frame-src 'self'; base-uri 'none'; form-action 'none'")

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


@dataclass(frozen=True)
class BuildResult:
    output: Path
    report: VerificationReport
    pages: int
    files: int
    bytes: int
    graphs: int
    seconds: float


@dataclass(frozen=True)
class SiteInfo:
    title: str
    description_html: Markup
    trust: str
    trust_label: str
    errors: int
    warnings: int
    generator: str
    nav: tuple[tuple[str, str, str], ...]


def _progress(opts: BuildOptions, stage: str, done: int, total: int) -> None:
    if opts.progress is not None:
        opts.progress(stage, done, total)


def build_site(bundle_path: str | os.PathLike[str], opts: BuildOptions) -> BuildResult:
    started = time.perf_counter()
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
        pages = _collect_pages(ctx)
        specs, owners = _graph_specs(pages)
        _progress(opts, "layout", 0, len(specs))
        svgs = render_svgs(specs, jobs=opts.jobs)
        _progress(opts, "layout", len(specs), len(specs))
        return _write(ctx, opts, pages, svgs, owners, started)


def _collect_pages(ctx: BuildContext) -> list[Page]:
    audit: list[Page] = []
    try:
        audit_mod = importlib.import_module("bundler.render.pages.audit")
    except ModuleNotFoundError:
        pass
    else:
        audit = audit_mod.audit_pages(ctx)     # fills ctx.audit_pages for the overview
    pages = [overview_page(ctx)]
    pages += claim_pages(ctx)
    pages += artifact_pages(ctx)
    pages += workflow_pages(ctx)
    pages += [lineage_page(ctx), steering_page(ctx)]
    pages += audit
    pages += event_pages(ctx)
    pages += [integrity_page(ctx)]
    return pages


_NAME = re.compile(r"[^A-Za-z0-9_-]+")
_VIEWBOX = re.compile(r'^(<svg [^>]*?)viewBox="[-0-9.]+ [-0-9.]+ ([0-9.]+) ([0-9.]+)"')
#: Graphs are shown at their natural size when they fit, shrunk to the page
#: width when they do not, but never below this fraction of natural size
#: (text stays readable; the figure scrolls instead).
MIN_GRAPH_SCALE = 0.6


def size_svg(svg: str) -> str:
    """Give an inline graph its natural width (from the viewBox, in pt) as CSS.

    Graphviz's width/height attributes are dropped by the sanitiser, so
    without this every graph would stretch to the container: tiny graphs
    with huge text, wide graphs with unreadable text.
    """
    m = _VIEWBOX.match(svg)
    if m is None:
        return svg
    width_px = float(m.group(2)) * 4 / 3
    style = (f'style="width:{width_px:.0f}px;max-width:100%;'
             f'min-width:{min(width_px, width_px * MIN_GRAPH_SCALE):.0f}px" ')
    return svg[:len(m.group(1))] + style + svg[len(m.group(1)):]


def _graph_specs(pages: list[Page]) -> tuple[list[GraphSpec], dict[str, tuple[int, str]]]:
    """Give every graph a build-unique name; remember which page and slot it fills."""
    specs: list[GraphSpec] = []
    owners: dict[str, tuple[int, str]] = {}
    for i, page in enumerate(pages):
        for spec in page.graphs:
            name = _NAME.sub("-", page.path.removesuffix(".html")) + "--" + spec.name
            specs.append(_capped(dataclasses.replace(spec, name=name)))
            owners[name] = (i, spec.name)
    return specs, owners


def _capped(spec: GraphSpec) -> GraphSpec:
    """Last line of defence: page producers bound their graphs, but a graph over
    Graphviz's practical limit is cut (root kept) rather than failing the build."""
    if len(spec.nodes) <= MAX_NODES:
        return spec
    keep = [n for n in spec.nodes if n.id == spec.root]
    keep += [n for n in spec.nodes if n.id != spec.root][: MAX_NODES - len(keep)]
    ids = {n.id for n in keep}
    edges = [e for e in spec.edges if e.src in ids and e.dst in ids]
    return dataclasses.replace(spec, nodes=keep, edges=edges,
                               description=spec.description + f" (cut to {MAX_NODES} nodes)")


def _site_info(ctx: BuildContext, opts: BuildOptions) -> SiteInfo:
    meta = ctx.bundle.metadata
    report = ctx.report
    return SiteInfo(
        title=opts.title or (meta.title if meta else "Review bundle"),
        description_html=Markup(""),
        trust=report.trust.value, trust_label=TRUST_TEXT[report.trust],
        errors=report.count(Severity.ERROR), warnings=report.count(Severity.WARNING),
        generator=f"review-bundler {__version__}", nav=NAV)


def _write(ctx: BuildContext, opts: BuildOptions, pages: list[Page], svgs: dict[str, str],
           owners: dict[str, tuple[int, str]], started: float) -> BuildResult:
    env = make_environment(opts.theme)
    site = _site_info(ctx, opts)
    per_page: dict[int, dict[str, Markup]] = {}
    for name, svg in svgs.items():
        i, slot = owners[name]
        # our own SVG, sanitised by render.graphviz
        per_page.setdefault(i, {})[slot] = Markup(size_svg(svg))
    copies = bundle_copy_files(ctx)
    copied = {d: f"bundle/payloads/{d.replace(':', '/')}"
              for d, st in ctx.bundle.payloads.items() if st.state.value == "verified" and st.path}
    pages.append(downloads_page(ctx, copied))
    with SiteWriter(opts.output) as out:
        for rel, src in theme_assets(opts.theme):
            out.copy_file(f"assets/{rel}", src)
        if not out.exists("assets/pygments.css"):
            out.write_text("assets/pygments.css", pygments_css())
        for n, page in enumerate(pages):
            out.write_text(page.path, _render(env, page, site, per_page.get(n, {}), opts))
            if n % 200 == 0:
                _progress(opts, "pages", n, len(pages))
        out.write_text("search/docs.js", search_docs_js(search_documents(ctx)))
        for site_path, rel in copies:
            out.copy_file(site_path, ctx.bundle.root / rel)
        for digest, st in sorted(ctx.bundle.payloads.items()):
            extra = file_copy_path(digest, st.media_type)
            if extra and st.state.value == "verified" and st.path:
                out.copy_file(extra, ctx.bundle.root / st.path)
        for seq, proof in sorted(ctx.proofs.items()):
            claim = ctx.idx.by_id.get(ctx.bundle.events[_event_pos(ctx, seq)].id)
            if claim is not None:
                out.write_text(f"proofs/{slug(claim.id)}.tlog-proof", proof)
        out.write_text("report/validation.json", site_report_json(ctx.report))
        out.write_text("report/validation.sarif", to_sarif(ctx.report))
        out.write_text("schema/review-bundle.schema.json", schema_json())
        files, size = len(out.written) + 1, out.bytes_written
        target = out.commit()
    return BuildResult(target, ctx.report, len(pages), files, size, len(svgs),
                       time.perf_counter() - started)


def site_report_json(report: VerificationReport) -> str:
    """The validation report as shipped in the site, naming the bundle by file name only.

    The CLI report says where the bundle was; a site must not depend on the
    build machine's paths (nor on the working directory of the build).
    """
    obj = to_json_obj(report)
    obj["bundle"] = Path(str(obj["bundle"])).name
    return json.dumps(obj, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def _event_pos(ctx: BuildContext, seq: int) -> int:
    """Events are kept in log order; with a valid chain position == seq."""
    events = ctx.bundle.events
    if seq < len(events) and events[seq].seq == seq:
        return seq
    return next(i for i, e in enumerate(events) if e.seq == seq)


def _render(env: Any, page: Page, site: SiteInfo, svg: dict[str, Markup],
            opts: BuildOptions) -> str:
    template = env.get_template(page.template)
    return str(template.render(
        page=page, site=site, root=page.root, csp=CSP, svg=svg,
        canonical=(opts.base_url.rstrip("/") + "/" + page.path) if opts.base_url else None,
        **page.context,
    ))
