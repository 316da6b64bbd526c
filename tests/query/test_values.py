"""Value comparison rules, and the guard around bundle-supplied regular expressions."""

from __future__ import annotations

import time

import pytest

from bundler.query.regex_guard import RegexRunner, refusal
from bundler.query.values import decimals, numbers_equal, parse_comparison, values_equal


@pytest.mark.parametrize(("recorded", "found", "equal"), [
    (1.3, "1.2999999", True),        # rounds to the recorded precision
    (4.2, 1.5, False),
    (4.2, "4.24", True),             # 4.24 rounds to 4.2
    (4.2, "4.26", False),
    (0.000218, "0.000218", True),
    (70, 70.4, True),                # an integer quotes to whole units
    (70, 70.6, False),
    (6, 6.0, True),
    (13, "13", True),
    ("PASSED", "PASSED", True),
    ("PASSED", " PASSED ", True),
    ("PASSED", "FAILED", False),
    ("3.5", 3.5, True),
    (True, True, True),
    (True, "true", True),
    (True, 1, False),
    (False, "False", True),
    (None, None, True),
    (1, True, False),
    (1.5, "n/a", False),
    ("x", {"x": 1}, False),
])
def test_values_equal(recorded: object, found: object, equal: bool) -> None:
    assert values_equal(recorded, found) is equal


def test_approx_and_decimals() -> None:
    assert decimals(4.2) == 1 and decimals(0.000218) == 6 and decimals(70) == 0
    assert decimals(1e-7) == 7 and decimals(1e20) == 0
    assert not numbers_equal(2.34, 2.355)
    assert numbers_equal(2.34, 2.355, approx=True)
    assert not numbers_equal(2.34, 2.5, approx=True)
    assert numbers_equal(float("inf"), float("inf")) and not numbers_equal(1.0, float("nan"))


@pytest.mark.parametrize(("text", "found", "holds"), [
    (">= threshold 0.9", 0.95, True), (">= threshold 0.9", 0.85, False),
    ("<= 0.05", "0.04", True), ("< 0.05", 0.05, False), ("≥ 2", 2, True),
    ("equals", 1, None), ("equals (one row per seed)", 1, None),
    ("explained_fraction 0.24 < 0.6", 0.24, None), ("<= 0.05", "n/a", None),
])
def test_parse_comparison(text: str, found: object, holds: bool | None) -> None:
    assert parse_comparison(text).holds(found) is holds


def test_approx_comparison_is_recognised() -> None:
    assert parse_comparison("approx. 5%").approx and parse_comparison("~ 3").approx
    assert not parse_comparison("equals").approx


@pytest.mark.parametrize(("pattern", "why"), [
    (r"(a+)+$", "nested repeats"),
    (r"(?:x*y*)*", "nested repeats"),
    (r"(a)\1", "backreferences"),
    (r"(?P<n>a)(?(n)b|c)", "backreferences"),
    (r"(unclosed", "invalid regular expression"),
    ("a" * 1001, "longer than 1000"),
])
def test_dangerous_or_broken_patterns_are_refused(pattern: str, why: str) -> None:
    assert why in (refusal(pattern) or "")


@pytest.mark.parametrize("pattern", [r"(\d+) passed", r"^\+\+\+ b/(\S+generic\.py)$",
                                     r"=+ (\d+) passed in", r"a{2,3}(b|c)+", r"(?:ab)+"])
def test_ordinary_patterns_run(pattern: str) -> None:
    assert refusal(pattern) is None


def test_runner_answers_and_reuses_its_worker() -> None:
    with RegexRunner() as r:
        assert r.search("t1", "collected 13 items", r"collected (\d+) items").value == "13"
        worker = r.proc
        assert r.search("t1", "ignored: the text is cached", r"(\d+) items").value == "13"
        assert r.proc is worker
        assert r.search("t2", "no digits here", r"(\d+)").status == "none"
        assert r.search("t2", "", r"(x)?y").status == "none"     # group 1 did not take part
        assert r.search("t3", "abc", r"b").value == "b"          # no group: whole match
        assert r.search("t3", "abc", r"(?<=a)(?=b)[").status in ("refused", "error")
    assert r.proc is None


def test_runner_kills_a_slow_search_and_recovers() -> None:
    text = "a" * 200_000
    with RegexRunner(timeout=0.3, budget=0.5) as r:
        started = time.perf_counter()
        slow = r.search("big", text, r".*.*Z")
        assert slow.status == "timeout"
        assert time.perf_counter() - started < 5
        assert r.search("small", "x 1", r"(\d)").value == "1"     # a fresh worker
        assert r.search("big", text, r".*.*Z").status == "timeout"
        assert r.search("small", "x 1", r"(\d)").detail == "earlier patterns used up the " \
            "time budget"
