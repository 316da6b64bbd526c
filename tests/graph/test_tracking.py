"""Read recording for dependency records (bundler.graph.tracking)."""

from __future__ import annotations

from bundler.graph.tracking import (
    EVERYTHING,
    TrackedDict,
    TrackedList,
    note,
    paused,
    query,
    recording,
)


def test_lookups_are_reads_only_while_recording() -> None:
    d: TrackedDict[str, int] = TrackedDict("cited_by", {"a": 1})
    assert d["a"] == 1 and d.get("b") is None and "a" in d
    with recording() as reads:
        assert d["a"] == 1
        assert d.get("b", 7) == 7
        assert "c" not in d
    assert reads == {("cited_by", "a"), ("cited_by", "b"), ("cited_by", "c")}
    with recording() as later:
        pass
    assert later == set()


def test_whole_collection_access_reads_everything() -> None:
    d: TrackedDict[str, int] = TrackedDict("claims", {"a": 1})
    for use in (list, len, lambda x: list(x.values()), lambda x: list(x.items()),
                lambda x: list(x.keys()), bool):
        with recording() as reads:
            use(d)
        assert reads == {EVERYTHING}, use
    items: TrackedList[int] = TrackedList([1, 2])
    for use_list in (list, len, lambda x: x[0], bool, lambda x: list(reversed(x))):
        with recording() as reads:
            use_list(items)
        assert reads == {EVERYTHING}, use_list


def test_a_query_is_one_read_whether_memoised_or_not() -> None:
    d: TrackedDict[str, int] = TrackedDict("fitness_by_target", {"c": 3})
    memo: dict[str, int] = {}

    def status(key: str) -> int:
        return query("status", key, lambda: memo.setdefault(key, d.get(key, 0)))

    with recording() as first:
        assert status("c") == 3
    with recording() as second:
        assert status("c") == 3
    assert first == second == {("status", "c")}


def test_paused_and_nested_recordings_keep_reads_apart() -> None:
    with recording() as outer:
        note("leaf", 1)
        with paused():
            note("leaf", 2)
        with recording() as inner:
            note("leaf", 3)
        note("leaf", 4)
    assert outer == {("leaf", 1), ("leaf", 4)}
    assert inner == {("leaf", 3)}
    note("leaf", 5)      # not recording: nothing happens
