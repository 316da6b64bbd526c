"""Shared page types and helpers for the page producers."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from bundler.graph.index import BundleIndex, ClaimStatus
from bundler.graph.paths import EvidenceGraph
from bundler.model.events import ClaimEvent
from bundler.output.cache import Deferred
from bundler.render.graphviz import GraphSpec
from bundler.render.urls import Linker, RelativeLinker
from bundler.verify.result import LoadedBundle, VerificationReport

__all__ = ["NAV", "STATUS_TEXT", "BuildContext", "Deferred", "Page", "Ref", "graph_spec"]

NAV: tuple[tuple[str, str, str], ...] = (
    ("overview", "Overview", "index.html"),
    ("claims", "Claims", "claims/index.html"),
    ("artifacts", "Artifacts", "artifacts/index.html"),
    ("workflow", "Workflow", "workflow/index.html"),
    ("lineage", "Lineage", "lineage.html"),
    ("steering", "Steering", "steering.html"),
    ("audit", "Audit", "audit/index.html"),
    ("events", "Events", "events/index.html"),
    ("integrity", "Integrity", "integrity.html"),
    ("downloads", "Downloads", "downloads.html"),
)


@dataclass
class Page:
    path: str
    template: str
    title: str
    key: str
    context: dict[str, Any] = field(default_factory=dict)
    graphs: list[GraphSpec] = field(default_factory=list)
    breadcrumbs: list[tuple[str, str | None]] = field(default_factory=list)
    #: Facts for the builder that are not page content (e.g. an audit query's row
    #: count for the overview); never rendered, never fingerprinted.
    facts: dict[str, Any] = field(default_factory=dict)

    @property
    def root(self) -> str:
        return "../" * self.path.count("/")


@dataclass(frozen=True)
class Ref:
    """A link to an object as templates show it."""

    id: str
    label: str
    kind: str
    href: str | None
    state: str = ""


@dataclass
class BuildContext:
    report: VerificationReport
    idx: BundleIndex
    linker: Linker
    proofs: dict[int, str] = field(default_factory=dict)   # seq -> tlog-proof text
    audit_pages: list[tuple[str, str, int]] = field(default_factory=list)  # (name, href, rows)

    @property
    def bundle(self) -> LoadedBundle:
        return self.report.bundle

    def rel(self, page_path: str) -> RelativeLinker:
        return self.linker.relative("../" * page_path.count("/"))

    def ref(self, oid: str, page_path: str) -> Ref:
        ev = self.idx.get(oid)
        h = self.linker.href(oid)
        state = ""
        if isinstance(ev, ClaimEvent):
            state = self.idx.claim_status(ev).value
        return Ref(oid, self.idx.label(oid), ev.type if ev else "missing",
                   None if h is None else "../" * page_path.count("/") + h, state)

    def refs(self, oids: Sequence[str], page_path: str) -> list[Ref]:
        return [self.ref(o, page_path) for o in oids]


def graph_spec(ctx: BuildContext, g: EvidenceGraph, *, name: str, title: str, description: str,
               page_path: str, rankdir: str = "RL",
               clusters: dict[str, list[str]] | None = None) -> GraphSpec:
    return GraphSpec(name=name, title=title, description=description,
                     nodes=list(g.nodes.values()), edges=list(g.edges), href=ctx.rel(page_path),
                     root=g.root, rankdir=rankdir, clusters=clusters or {})


STATUS_TEXT = {
    ClaimStatus.CONTRADICTED: "Contradicted by a verifier",
    ClaimStatus.UNSUPPORTED: "Unsupported",
    ClaimStatus.NEEDS_HUMAN_REVIEW: "Needs human review",
    ClaimStatus.UNVERIFIED: "Unverified: no verification record",
    ClaimStatus.RETRACTED: "Retracted",
    ClaimStatus.SUPPORTED: "Supported",
}
