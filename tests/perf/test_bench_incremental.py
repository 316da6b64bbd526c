"""The incremental benchmark's table: verdicts on wall time, CPU time shown beside it."""

from __future__ import annotations

from bench.bench_incremental import rows


def test_rows_judge_wall_time_and_show_cpu_time() -> None:
    wall = {"cold": [10.0, 12.0, 11.0], "same": [1.0, 3.0, 1.5], "grow": [4.0, 2.0, 3.0],
            "cold+": [10.0, 10.0, 10.0]}
    cpu = {"cold": [20.0] * 3, "same": [2.0] * 3, "grow": [8.0] * 3, "cold+": [20.0] * 3}
    same, grow, identical = rows(10_000, 3, wall, cpu, [])
    assert (same.value, same.ratio, same.ok) == ("1.5 s (CPU 2.0 s)", "14% (CPU 10%)", "yes")
    assert (grow.ratio, grow.ok) == ("30% (CPU 40%)", "yes")     # at the target: passes
    assert identical.ok == "yes"
    slow = rows(10_000, 3, {**wall, "grow": [3.1] * 3}, cpu, ["+1%: index.html"])
    assert slow[1].ok == "NO"
    assert slow[2].ok == "NO" and "index.html" in slow[2].value
