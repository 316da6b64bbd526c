"""Site build time per page against MkDocs 1.6 + Material, same page count, same run.

The baseline is what a team would otherwise do: export the bundle to
Markdown and build it with Material for MkDocs.  The export (untimed) writes
exactly as many pages as ``review-bundler build`` wrote for the bundle, per
section, with the same content where MkDocs can take it:

* one page per claim: its Markdown text, the bindings and evidence tables,
  and the first inline SVG of *our* claim page (layout is free for MkDocs);
* one page per artifact: a fact table, links to its producer and parents,
  and the payload in a fenced block highlighted by Pygments, like ours;
* one page per workflow node, event tables of 500 rows, and section indexes.

MkDocs runs with the ``search`` and ``offline`` plugins (search data that
works from file://, as ours does), ``theme.font: false`` (no network), and a
fixed five-entry nav (ours has ten entries): an auto-generated nav of every
page would be rendered into every page and make MkDocs quadratic.  Both builds are child
processes timed by wall clock, so start-up is in both figures.  Graph layout
and verification are in ours only, so the comparison favours MkDocs.

    .venv/bin/python -m bench.bench_mkdocs [--events 10000] [--runs 3]
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import statistics
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.bench_build import (
    Build,
    Row,
    cold_builds,
    log,
    median_build,
    render_rows,
    run_measured,
    verdict,
)
from bench.common import CACHE, PYTHON, bundle, compile_sources
from bundler.render.urls import EVENTS_PER_PAGE, slug

MIN_SPEEDUP = 10.0
SECTIONS = ("claims", "artifacts", "workflow", "events")
_SVG = re.compile(r"<svg\b.*?</svg>", re.S)
_LANG = {"text/x-python": "python", "application/json": "json", "text/csv": "text",
         "text/plain": "text", "text/markdown": "markdown"}
MAX_PAYLOAD_CHARS = 64 * 1024


def page_counts(site: Path) -> Counter[str]:
    """HTML pages of a built site per top-level section ("" for the root pages)."""
    counts: Counter[str] = Counter()
    for p in site.rglob("*.html"):
        rel = p.relative_to(site).parts
        if rel[0] in ("bundle", "files"):       # copies of payloads, not pages
            continue
        counts[rel[0] if len(rel) > 1 else ""] += 1
    return counts


def _cell(value: Any) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return text.replace("|", "\\|").replace("\n", " ")


def _table(headers: list[str], rows: list[list[Any]]) -> str:
    lines = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    lines += ["| " + " | ".join(_cell(c) for c in r) + " |" for r in rows]
    return "\n".join(lines) + "\n"


@dataclass
class Export:
    """The Markdown project being written, and the pages each object got."""

    docs: Path
    bundle: Path
    site: Path
    pages: int = 0

    def write(self, rel: str, text: str) -> None:
        path = self.docs / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        self.pages += 1

    def svg(self, claim_id: str) -> str:
        try:
            html = (self.site / "claims" / f"{slug(claim_id)}.html").read_text(encoding="utf-8")
        except OSError:
            return ""
        m = _SVG.search(html)
        return m.group(0) if m else ""

    def payload(self, ref: dict[str, Any]) -> str:
        lang = _LANG.get(str(ref.get("media_type")))
        algo, _, hexd = str(ref.get("digest", "")).partition(":")
        if lang is None or not hexd:
            return ""
        try:
            raw = (self.bundle / "payloads" / algo / hexd).read_bytes()[:MAX_PAYLOAD_CHARS]
        except OSError:
            return ""
        return f"```{lang}\n{raw.decode('utf-8', 'replace')}\n```\n"


def _events(path: Path) -> Iterator[dict[str, Any]]:
    with open(path / "events.jsonl", "rb") as fh:
        for line in fh:
            yield json.loads(line)


def _link(oid: str, pages: dict[str, str], here: str) -> str:
    target = pages.get(oid)
    if target is None:
        return f"`{oid}`"
    up = "../" * here.count("/")
    return f"[{oid}]({up}{target})"


def export(bundle_path: Path, site: Path, docs: Path) -> int:
    """Write the Markdown project; returns its page count (equal to the site's)."""
    want = page_counts(site)
    shutil.rmtree(docs, ignore_errors=True)
    ex = Export(docs, bundle_path, site)
    by_type: dict[str, list[dict[str, Any]]] = {"claim": [], "individual": [],
                                                "workflow_node": []}
    all_events: list[dict[str, Any]] = []
    for ev in _events(bundle_path):
        all_events.append(ev)
        if ev["type"] in by_type:
            by_type[ev["type"]].append(ev)
    claims = by_type["claim"][: max(0, want["claims"] - 1)]
    arts = by_type["individual"][: max(0, want["artifacts"] - 1)]
    wfs = by_type["workflow_node"][: max(0, want["workflow"] - 1)]
    pages = {c["id"]: f"claims/{slug(c['id'])}.md" for c in claims}
    pages.update({a["id"]: f"artifacts/{slug(a['id'])}.md" for a in arts})
    pages.update({w["id"]: f"workflow/{slug(w['id'])}.md" for w in wfs})
    for c in claims:
        here = pages[c["id"]]
        binds = [[_link(b["evidence"], pages, here), b["field"], b["value"],
                  b.get("comparison", ""), b.get("stance", "supports")]
                 for b in c.get("bindings", [])]
        ev_rows = [[_link(e, pages, here)] for e in c.get("evidence", [])]
        ex.write(here, f"# {c['name']}\n\n{c['text']}\n\n## Bindings\n\n"
                 + _table(["evidence", "field", "value", "comparison", "stance"], binds)
                 + "\n## Evidence\n\n" + _table(["evidence"], ev_rows)
                 + f"\n## Evidence graph\n\n<div class=\"graph\">\n{ex.svg(c['id'])}\n</div>\n")
    for a in arts:
        here = pages[a["id"]]
        p = a.get("payload") or {}
        facts = [["kind", a["kind"]], ["version", a.get("version", 1)],
                 ["status", a.get("status", "")], ["digest", p.get("digest", "")],
                 ["size", p.get("size", "")], ["media type", p.get("media_type", "")],
                 ["file name", p.get("name", "")],
                 ["produced by", _link(a["produced_by"], pages, here)
                  if a.get("produced_by") else "-"]]
        trace = "".join(f"- {_link(t, pages, here)}\n" for t in a.get("trace", []))
        ex.write(here, f"# {a['name']} ({a['id']})\n\n" + _table(["field", "value"], facts)
                 + f"\n## Payload\n\n{ex.payload(p)}\n## Trace\n\n{trace or '-'}\n")
    for w in wfs:
        here = pages[w["id"]]
        members = [[_link(m, pages, here)] for m in w.get("members", [])]
        ex.write(here, f"# {w['label']}\n\nPhase: **{w['phase']}**\n\n"
                 + _table(["member"], members))
    for section, items in (("claims", claims), ("artifacts", arts), ("workflow", wfs)):
        rows = [[_link(i["id"], pages, f"{section}/index.md"), i.get("name", i.get("label")),
                 i["time"]] for i in items]
        ex.write(f"{section}/index.md", f"# {section.title()}\n\n"
                 + _table(["id", "name", "time"], rows))
    chunks = [all_events[i:i + EVENTS_PER_PAGE]
              for i in range(0, len(all_events), EVENTS_PER_PAGE)]
    event_pages = max(1, want["events"] - 1)
    for n, chunk in enumerate(chunks[:event_pages]):
        ex.write(f"events/page-{n + 1:04d}.md", f"# Events, page {n + 1}\n\n" + _table(
            ["seq", "time", "type", "id", "run", "stream"],
            [[e["seq"], e["time"], e["type"], _link(e["id"], pages, "events/x.md"), e["run"],
              e["stream"]] for e in chunk]))
    ex.write("events/index.md", "# Events\n\n" + "".join(
        f"- [Page {n + 1}](page-{n + 1:04d}.md)\n" for n in range(min(len(chunks),
                                                                    event_pages))))
    # The root and audit pages: tables over the whole log, until the counts match.
    total = sum(want.values())
    n = 0
    ex.write("index.md", f"# Overview\n\n{len(all_events):,} events.\n\n" + "".join(
        f"- [{s.title()}]({s}/index.md)\n" for s in SECTIONS))
    while ex.pages < total:
        some = all_events[n * 200:(n + 1) * 200] or all_events[:200]
        ex.write(f"audit/table-{n:03d}.md", f"# Audit table {n}\n\n" + _table(
            ["seq", "type", "id", "time"], [[e["seq"], e["type"], e["id"], e["time"]]
                                            for e in some]))
        n += 1
    return ex.pages


CONFIG = """\
site_name: MkDocs baseline for {name}
docs_dir: docs
site_dir: site
use_directory_urls: false
theme:
  name: material
  font: false
plugins:
  - search
  - offline
markdown_extensions:
  - tables
  - attr_list
  - toc:
      permalink: true
  - pymdownx.highlight
  - pymdownx.superfences
nav:
  - Overview: index.md
  - Claims: claims/index.md
  - Artifacts: artifacts/index.md
  - Workflow: workflow/index.md
  - Events: events/index.md
not_in_nav: |
  *.md
validation:
  omitted_files: ignore
  absolute_links: ignore
  unrecognized_links: ignore
"""


def mkdocs_build(project: Path, pages: int) -> tuple[float, float]:
    """One MkDocs build of the exported project: (wall s, CPU s)."""
    shutil.rmtree(project / "site", ignore_errors=True)
    m = run_measured([PYTHON, "-m", "mkdocs", "build", "-q", "-f", str(project / "mkdocs.yml")])
    if m.rc != 0:
        raise SystemExit(f"mkdocs build exited {m.rc}: {m.stderr[-1000:]}")
    built = sum(1 for p in (project / "site").rglob("*.html") if p.name != "404.html")
    if built != pages:
        raise SystemExit(f"mkdocs wrote {built} pages for {pages} Markdown files")
    return m.wall, m.cpu


def compare(bundle_path: Path, events: int, runs: int) -> tuple[list[Row], Build]:
    """Cold builds of ours and MkDocs in alternation; the rows and our median build.

    The export needs our first build (page counts and claim SVGs), so the
    order is ours, export (untimed), MkDocs, ours, MkDocs, ...
    """
    project = CACHE / "mkdocs" / bundle_path.name
    ours: list[Build] = []
    mk: list[tuple[float, float]] = []
    pages = 0
    for i in range(runs):
        ours.append(cold_builds(bundle_path, events, 1))
        if i == 0:
            project.mkdir(parents=True, exist_ok=True)
            (project / "mkdocs.yml").write_text(CONFIG.format(name=bundle_path.name),
                                                encoding="utf-8")
            pages = export(bundle_path, ours[0].site, project / "docs")
            if pages != ours[0].pages:
                raise SystemExit(f"exported {pages} Markdown pages for a site of "
                                 f"{ours[0].pages}")
            log(f"mkdocs: {pages:,} pages exported to {project}")
        mk.append(mkdocs_build(project, pages))
        log(f"  mkdocs run {i + 1}/{runs}: {mk[-1][0]:.1f} s wall, {mk[-1][1]:.1f} s CPU")
    b = median_build(ours)
    mk_wall = statistics.median(w for w, _ in mk)
    mk_cpu = statistics.median(c for _, c in mk)
    mk_ms = 1000 * mk_wall / pages
    ratio = mk_ms / b.ms_per_page
    rows = [Row(f"site build vs MkDocs+Material: {pages:,} pages ({events // 1000:,}k events), "
                f"wall, median of {runs}",
                f"{b.ms_per_page:.2f} ms/page ({b.wall:.1f} s)",
                f"{mk_ms:.2f} ms/page ({mk_wall:.1f} s)", f"{ratio:.1f}x faster",
                f">= {MIN_SPEEDUP:.0f}x", verdict(ratio >= MIN_SPEEDUP)),
            Row("site build vs MkDocs+Material: CPU incl. child processes",
                f"{b.cpu:.1f} s", f"{mk_cpu:.1f} s", f"{mk_cpu / b.cpu:.1f}x")]
    return rows, b


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.bench_mkdocs", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--events", type=int, default=10_000, help="bundle size (default 10k)")
    ap.add_argument("--runs", type=int, default=3, help="builds of each side (median)")
    args = ap.parse_args(argv)
    compile_sources()
    rows, _ = compare(bundle(args.events, log=log), args.events, args.runs)
    print(render_rows(rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
