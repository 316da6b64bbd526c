"""Every query does work linear in the bundle, measured without a clock.

Timing tests flake on a shared 2-core machine, so this counts Python function
calls (cProfile's totals are exact and deterministic for a deterministic
input) for each query on synthetic bundles of 2,000 and 8,000 events.  Four
times the events may cost at most ``RATIO`` times the calls (plus a small
constant for fixed costs); a quadratic loop would cost about 16 times.
near-duplicates is linear in the payload text it reads, which in these
synthetic bundles grows about 5 times (distinct texts get longer too).
Wall-clock figures for 10k and 100k events are in bench/bench_query.py.
"""

from __future__ import annotations

import cProfile
import pstats
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path

import pytest

from bundler.graph.index import BundleIndex
from bundler.query import QUERIES, open_index, run_query
from bundler.synth import generate
from bundler.verify import VerifyOptions

SMALL, LARGE = 2_000, 8_000
RATIO = 6.0
SLACK = 20_000


def _arg(idx: BundleIndex, name: str) -> str | None:
    if name == "claim-trace":
        return next(iter(idx.claims))
    if name == "introduced-by":
        return "0.5"
    return None


def _calls(idx: BundleIndex, name: str) -> int:
    prof = cProfile.Profile()
    prof.enable()
    run_query(idx, name, _arg(idx, name))
    prof.disable()
    return int(pstats.Stats(prof).total_calls)  # type: ignore[attr-defined]


@pytest.fixture(scope="module")
def indexes(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[int, BundleIndex]]:
    root = tmp_path_factory.mktemp("synth")
    with ExitStack() as stack:
        out: dict[int, BundleIndex] = {}
        for n in (SMALL, LARGE):
            path = generate(Path(root / f"b{n}"), events=n, seed=3)
            out[n] = open_index(path, VerifyOptions(), stack)[1]
        yield out


@pytest.mark.slow
@pytest.mark.parametrize("name", list(QUERIES))
def test_query_work_grows_linearly(indexes: dict[int, BundleIndex], name: str) -> None:
    small, large = _calls(indexes[SMALL], name), _calls(indexes[LARGE], name)
    assert large <= RATIO * small + SLACK, (name, small, large)


@pytest.mark.slow
def test_queries_find_rows_at_scale(indexes: dict[int, BundleIndex]) -> None:
    """The synthetic bundles exercise the queries: rows grow with the bundle."""
    for name in ("unsupported-claims", "archive-churn", "reused-in-manuscript",
                 "evaluator-disagreement", "near-duplicates"):
        small = len(run_query(indexes[SMALL], name).rows)
        large = len(run_query(indexes[LARGE], name).rows)
        assert 0 < small < large, (name, small, large)
