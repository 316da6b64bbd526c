"""The files of a site that are not rendered pages: assets, copies of the bundle,
proofs, search data, reports.

They are written while the pages render (:func:`~bundler.render.workers.render_all`
calls :func:`write_files` in this process).  Every copy of a bundle file is held to
what verification read from it, so a rewrite the bundle's stamp cannot see (a coarse
file-system clock) stops the build rather than shipping bytes never verified.
"""

from __future__ import annotations

import json
from pathlib import Path

from bundler import layout
from bundler.errors import InputError
from bundler.output import SiteWriter
from bundler.render.environment import theme_assets
from bundler.render.highlight import pygments_css
from bundler.render.pages.artifacts import file_copy_path
from bundler.render.pages.base import BuildContext
from bundler.render.pages.integrity import bundle_copy_files
from bundler.render.search import search_docs_js
from bundler.render.search_index import search_documents
from bundler.render.urls import slug
from bundler.reports import to_json_obj, to_sarif
from bundler.schema import SCHEMA_PATH
from bundler.verify import VerificationReport
from bundler.verify.result import LoadedBundle

#: Where the site keeps its copy of the log.
LOG_COPY = f"bundle/{layout.EVENTS}"


def write_files(ctx: BuildContext, theme: Path | None, out: SiteWriter) -> None:
    """Everything that is not a rendered page: assets, copies, proofs, search, reports."""
    for rel, src in theme_assets(theme):
        out.copy_file(f"assets/{rel}", src)
    if not out.exists("assets/pygments.css"):
        out.write_text("assets/pygments.css", pygments_css())
    out.write_text("search/docs.js", search_docs_js(search_documents(ctx)))
    # Every copy of a bundle file is held to what verification read from it (the
    # bundle's stamp alone is only as fine as the file system's clock).
    verified = _verified_files(ctx.bundle)
    for site_path, rel in bundle_copy_files(ctx):
        out.copy_file(site_path, ctx.bundle.root / rel, from_bundle=True,
                      expect=verified.get(rel))
        if rel == layout.EVENTS:
            with open(out.path(site_path), "rb") as fh:
                if not ctx.bundle.is_log_verified(fh):
                    raise InputError(f"{ctx.bundle.root / rel} changed during the build: "
                                     "its lines are no longer the lines verified")
    for digest, st in sorted(ctx.bundle.payloads.items()):
        extra = file_copy_path(digest, st.media_type)
        if extra and st.state.value == "verified" and st.path:
            out.copy_file(extra, ctx.bundle.root / st.path, from_bundle=True,
                          expect=st.file_sha256)
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
    # the committed file (a test keeps it equal to what the models generate): copied,
    # or linked from the previous site, instead of generated in every build
    out.copy_file("schema/review-bundle.schema.json", SCHEMA_PATH)


def site_report_json(report: VerificationReport) -> str:
    """The validation report as shipped in the site, naming the bundle by file name only.

    The CLI report says where the bundle was; a site must not depend on the
    build machine's paths (nor on the working directory of the build).
    """
    obj = to_json_obj(report)
    obj["bundle"] = Path(str(obj["bundle"])).name
    return json.dumps(obj, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def _verified_files(bundle: LoadedBundle) -> dict[str, str]:
    """Bundle-relative path -> hex SHA-256 of the bytes verification read, for each
    file it read whole: the verified payloads and the side files."""
    out = {st.path: st.file_sha256 for st in bundle.payloads.values()
           if st.path and st.file_sha256}       # set for verified payloads only
    out.update(bundle.file_sha256)
    return out


def verified_reads(bundle: LoadedBundle, log_copy: str | None) -> dict[str, str]:
    """:func:`_verified_files`, and ``log_copy``, the SHA-256 of the site's copy of the
    log (held line by line to the chain, so the hash of the lines verified): what the
    rebuild cache's content digest must agree with before it is recorded."""
    found = _verified_files(bundle)
    if log_copy is not None:
        found[layout.EVENTS] = log_copy
    return found
