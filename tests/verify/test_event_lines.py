"""EventLines: the seq -> line mapping answers exactly as a dict would."""

from __future__ import annotations

import random

import pytest

from bundler.verify.result import EventLines


def _both(pairs: list[tuple[int, int]]) -> tuple[EventLines, dict[int, int]]:
    lines, plain = EventLines(), {}
    for seq, line in pairs:
        lines[seq] = line
        plain[seq] = line
    return lines, plain


def _same(lines: EventLines, plain: dict[int, int]) -> None:
    assert len(lines) == len(plain)
    assert list(lines) == list(plain)
    assert dict(lines.items()) == plain
    for probe in (-1, 0, 1, 2, 5, 9, 10, 11, 10**18):
        assert (probe in lines) == (probe in plain)
        assert lines.get(probe) == plain.get(probe)
    assert "1" not in lines and None not in lines  # type: ignore[comparison-overlap]


def test_a_well_formed_log_needs_no_dict() -> None:
    lines, plain = _both([(s, s + 1) for s in range(10)])
    assert lines.dense
    _same(lines, plain)
    with pytest.raises(KeyError):
        lines[10]


def test_an_offset_log_stays_dense() -> None:
    lines, plain = _both([(s, s + 3) for s in range(10)])
    assert lines.dense and lines[0] == 3
    _same(lines, plain)


@pytest.mark.parametrize("pairs", [
    [(0, 1), (1, 2), (3, 4), (2, 5)],          # reorder
    [(0, 1), (1, 2), (1, 3), (2, 4)],          # repeated seq: the last line wins
    [(0, 1), (1, 3), (2, 4)],                  # a rejected line between
    [(5, 1), (6, 2)],                          # does not start at 0
    [],
])
def test_irregular_logs_answer_as_a_dict(pairs: list[tuple[int, int]]) -> None:
    lines, plain = _both(pairs)
    assert lines.dense == (not pairs)
    _same(lines, plain)


def test_random_logs_answer_as_a_dict() -> None:
    rng = random.Random(7)
    for _ in range(200):
        pairs, line = [], 1
        for seq in range(rng.randrange(12)):
            line += 1 if rng.random() < 0.9 else 2
            pairs.append((seq if rng.random() < 0.9 else rng.randrange(12), line))
        _same(*_both(pairs))

