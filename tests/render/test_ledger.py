"""The page ledger: counts, and manifest rows in path order, one string per page."""

from __future__ import annotations

import random

import pytest

from bundler.output.manifest import NOT_A_PAGE
from bundler.render.chunks import PageResult
from bundler.render.ledger import PageLedger

# Paths whose order a separator above "/" or "-" would get wrong.
PATHS = ["a", "a/b.html", "a-b.html", "a.html", "a0", "ab", "claims/x.html",
         "claims/x-1.html", "claims/x/y.html", "events/index.html", "index.html", "z"]


def result(path: str, fp: str = "f" * 64, size: int = 10, graphs: int = 1,
           reused: bool = False) -> PageResult:
    return PageResult(path, fp, path.encode().hex()[:64].ljust(64, "0"), size, graphs, reused, {})


def test_rows_come_sorted_by_path_with_their_fingerprints_and_digests() -> None:
    ledger = PageLedger(keep_rows=True)
    shuffled = PATHS[:]
    random.Random(4).shuffle(shuffled)
    for i, path in enumerate(shuffled):
        if i % 3:
            ledger.add(result(path, fp=f"{i:064x}"))
        else:
            ledger.add_file(path, path.encode().hex()[:64].ljust(64, "0"))
    rows = list(ledger.rows())
    assert [p for p, _, _ in rows] == sorted(PATHS)
    for path, fp, digest in rows:
        assert digest == path.encode().hex()[:64].ljust(64, "0")
        i = shuffled.index(path)
        assert fp == (f"{i:064x}" if i % 3 else NOT_A_PAGE)


def test_counts_add_up_and_a_page_without_fingerprint_is_not_a_page() -> None:
    ledger = PageLedger(keep_rows=True)
    ledger.add(result("a.html", size=5, graphs=2, reused=True))
    ledger.add(result("b.html", fp="", size=7, graphs=0))
    ledger.add_file("assets/x.css", "0" * 64)         # a file is not a page: not counted
    assert (ledger.pages, ledger.bytes, ledger.graphs, ledger.reused) == (2, 12, 2, 1)
    rows = {p: fp for p, fp, _ in ledger.rows()}
    assert rows == {"a.html": "f" * 64, "b.html": NOT_A_PAGE, "assets/x.css": NOT_A_PAGE}


def test_without_rows_only_counts_are_kept() -> None:
    ledger = PageLedger(keep_rows=False)
    ledger.add(result("a.html"))
    ledger.add_file("b.css", "0" * 64)
    assert ledger.pages == 1
    assert list(ledger.rows()) == []


def test_a_path_with_nul_is_refused() -> None:
    with pytest.raises(ValueError, match="NUL"):
        PageLedger(keep_rows=True).add(result("a\x00b.html"))
