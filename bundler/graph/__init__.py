"""Stage 3, graph: indexes and derived views computed from the verified log.

Nothing here reads files or renders; it turns the event list into the
relations every page and query needs (who produced what, what checked it,
which evidence paths support a claim).
"""

from bundler.graph.index import BundleIndex, ClaimStatus, build_index
from bundler.graph.paths import EvidenceGraph, GEdge, GNode, evidence_graph, lineage_graph

__all__ = [
    "BundleIndex",
    "ClaimStatus",
    "EvidenceGraph",
    "GEdge",
    "GNode",
    "build_index",
    "evidence_graph",
    "lineage_graph",
]
