"""Evidence graphs look at a bounded number of edges, however wide the bundle is.

An input evaluated by every candidate of a search has one evaluation per
candidate.  Every claim citing it used to walk all of them to fill a graph of
40 nodes, so building the site grew with the square of the bundle.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from fixtures.builders import StepClock, make_signer, verify

from bundler.author import BundleWriter
from bundler.graph import paths
from bundler.graph.index import BundleIndex, build_index
from bundler.graph.paths import MAX_UPSTREAM, GEdge, evidence_graph, lineage_graph

WIDE = MAX_UPSTREAM + 50
RUN = {"run": "run-1", "stream": "agent-1"}


@pytest.fixture(scope="module")
def wide(tmp_path_factory: pytest.TempPathFactory) -> BundleIndex:
    """``bench``, evaluated ``WIDE`` times; ``claim-1`` cites it; ``claim-2`` cites
    ``small``, evaluated 3 times; ``child`` of an operator with ``WIDE`` parents."""
    path = tmp_path_factory.mktemp("wide") / "bundle"
    with BundleWriter.create(path, title="wide", signer=make_signer(), clock=StepClock(),
                             checkpoint_every=1000) as w:
        w.append("run", id="run-1", title="wide", objective="wide", **RUN)
        w.append("stream", id="agent-1", kind="agent", name="agent", run="run-1")
        for name, times in (("bench", WIDE), ("small", 3)):
            w.append("individual", id=name, kind="dataset", name=name, **RUN)
            for i in range(times):
                w.append("fitness", id=f"fit-{name}-{i}", target=name, metric="m",
                         score=float(i), evaluator={"name": "judge", "version": "1"}, **RUN)
        for i in range(WIDE):
            w.append("individual", id=f"cand-{i}", kind="program", name=f"c{i}", **RUN)
        w.append("operator", id="op-merge", op="crossover",
                 parents=[f"cand-{i}" for i in range(WIDE)], **RUN)
        w.append("individual", id="child", kind="program", name="child",
                 produced_by="op-merge", **RUN)
        w.append("claim", id="claim-1", name="wide", text="Wide.", evidence=["bench"], **RUN)
        w.append("claim", id="claim-2", name="narrow", text="Narrow.", evidence=["small"],
                 **RUN)
    report = verify(path, pin=make_signer().verifier().to_text())
    assert report.valid
    return build_index(report.bundle)


def _counting(monkeypatch: pytest.MonkeyPatch) -> dict[str, int]:
    """Count the upstream edges each node's walk takes."""
    taken: dict[str, int] = {}
    upstream = paths._upstream

    def counted(idx: BundleIndex, oid: str, depth: int = 0) -> Iterator[GEdge]:
        for e in upstream(idx, oid, depth):
            taken[oid] = taken.get(oid, 0) + 1
            yield e

    monkeypatch.setattr(paths, "_upstream", counted)
    return taken


def test_a_wide_node_is_walked_no_further_than_the_bound(
        wide: BundleIndex, monkeypatch: pytest.MonkeyPatch) -> None:
    taken = _counting(monkeypatch)
    g = evidence_graph(wide, "claim-1")
    assert taken["bench"] == MAX_UPSTREAM + 1   # the one past the bound says "truncated"
    assert g.truncated
    assert len(g.nodes) == 40                    # still as full as the graph gets
    checked = [e.dst for e in g.edges if e.relation == "checked_by"]
    assert checked == [f"fit-bench-{i}" for i in range(38)]   # the first, in log order


def test_a_narrow_graph_is_whole(wide: BundleIndex, monkeypatch: pytest.MonkeyPatch) -> None:
    taken = _counting(monkeypatch)
    g = evidence_graph(wide, "claim-2")
    assert not g.truncated
    assert taken["small"] == 3
    assert sorted(g.nodes) == ["claim-2", "fit-small-0", "fit-small-1", "fit-small-2", "small"]



def test_an_operator_with_many_parents_is_walked_no_further_than_the_bound(
        wide: BundleIndex, monkeypatch: pytest.MonkeyPatch) -> None:
    taken: dict[str, int] = {}
    ancestry = paths._ancestry

    def counted(ev: Any, oid: str) -> Iterator[GEdge]:
        for e in ancestry(ev, oid):
            taken[oid] = taken.get(oid, 0) + 1
            yield e

    monkeypatch.setattr(paths, "_ancestry", counted)
    g = lineage_graph(wide, "child")
    assert taken == {"child": 1, "op-merge": MAX_UPSTREAM + 1}   # candidates have no parents
    assert g.truncated and len(g.nodes) == 60
    assert [e.src for e in g.edges if e.dst == "op-merge"] == [f"cand-{i}" for i in range(58)]
