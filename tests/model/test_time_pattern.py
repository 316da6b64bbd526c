"""The time pattern that pydantic-core checks is exactly parse_time's rule.

Events are validated without a Python time validator: the ``time`` field is a
pattern with every field in range.  These tests run that pattern through
pydantic (its Rust regex engine, the one validation uses) against
:func:`parse_time` on every month and day number of years around each leap-year
rule, every hour, minute and second number, and the offsets and fractions at
their edges.
"""

from __future__ import annotations

import random

import pytest
from pydantic import TypeAdapter, ValidationError

from bundler.model.events import RFC3339_PATTERN, TIME_MESSAGE, Timestamp, parse_time
from bundler.verify.schema import check_event

_PATTERN = TypeAdapter(Timestamp)


def _pattern_accepts(text: str) -> bool:
    try:
        _PATTERN.validate_python(text, strict=True)
    except ValidationError:
        return False
    return True


def _parse_accepts(text: str) -> bool:
    try:
        parse_time(text)
    except ValueError:
        return False
    return True


def _years() -> list[int]:
    edges = [0, 1, 4, 100, 400, 1600, 1900, 2000, 2024, 2100, 2400, 9996, 9999]
    years = {y + d for y in edges for d in range(-4, 5) if 0 <= y + d <= 9999}
    return sorted(years | set(random.Random(1).sample(range(10_000), 150)))


def test_dates_agree() -> None:
    checked = 0
    for year in _years():
        for month in range(0, 14):
            for day in range(0, 33):
                text = f"{year:04d}-{month:02d}-{day:02d}T00:00:00Z"
                assert _pattern_accepts(text) == _parse_accepts(text), text
                checked += 1
    assert checked > 100_000


def test_times_zones_and_fractions_agree() -> None:
    for hour in range(0, 26):
        for minute in (0, 9, 59, 60):
            for second in (0, 59, 60, 61):
                for zone in ("Z", "+00:00", "-23:59", "+24:00", "+23:60", "+5:30", "z", ""):
                    for frac in ("", ".1", ".123456789", ".1234567890", ".", ",5"):
                        text = f"2024-02-29T{hour:02d}:{minute:02d}:{second:02d}{frac}{zone}"
                        assert _pattern_accepts(text) == _parse_accepts(text), text


@pytest.mark.parametrize("text", [
    "2026-01-01T00:00:00Z\n", "\n2026-01-01T00:00:00Z", " 2026-01-01T00:00:00Z",
    "2026-01-01t00:00:00Z", "2026-01-01 00:00:00Z", "20260101T000000Z", "2026-01-01",
    "2026-01-01T00:00Z", "+2026-01-01T00:00:00Z", "2026-01-01T00:00:00.Z",
    "\u0662\u0660\u0662\u0666-01-01T00:00:00Z", "2026-01-01T00:00:00+0100", "",
])
def test_near_misses_are_refused_by_both(text: str) -> None:
    assert not _pattern_accepts(text)
    assert not _parse_accepts(text)


def test_a_bad_time_is_named_in_words() -> None:
    event = {"seq": 0, "prev": "0" * 64, "type": "run", "id": "run-1", "run": "run-1",
             "stream": "s", "time": "2026-02-30T00:00:00Z", "title": "t"}
    assert check_event(event) == ("RB201", f"run event: time: {TIME_MESSAGE}")
    assert RFC3339_PATTERN not in check_event(event)[1]
    assert not isinstance(check_event(dict(event, time="2024-02-29T23:59:59Z")), tuple)
