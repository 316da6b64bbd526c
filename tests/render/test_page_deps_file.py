"""The page records file: round trip, and anything unreadable means no records."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from bundler.output.deps_file import (
    DepsRecord,
    DepsWriter,
    decode_read,
    deps_path,
    encode_read,
    parse_record,
    read_deps,
)


@pytest.fixture(autouse=True)
def _cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("REVIEW_BUNDLER_CACHE_DIR", str(tmp_path / "cache"))


REC = DepsRecord("claims/c-1.html", "claim", "c\u20001\ud800", "f" * 64, 2, "d" * 64,
                 tuple(map(encode_read, [("by_id", "c\u20001\ud800"), ("leaf", 7),
                                         ("ref", "x")])))


@pytest.mark.parametrize("read", [
    ("by_id", "c\u20001\ud800"), ("by_id", ""), ("by_id", "7"), ("leaf", 7), ("leaf", -1),
    ("leaf", 0), ("ref", "a\x00b\x01c"), ("ref", "\x01"), ("status", "\x00"),
])
def test_reads_encode_to_strings_and_back(read: tuple[str, str | int]) -> None:
    text = encode_read(read)
    assert decode_read(text) == read
    assert type(decode_read(text)[1]) is type(read[1])     # type: ignore[index]


def test_a_string_key_never_reads_as_an_integer_key() -> None:
    assert encode_read(("leaf", 7)) != encode_read(("leaf", "7"))
    with pytest.raises(TypeError):
        encode_read(("leaf", 7.0))


@pytest.mark.parametrize("text", ["by_id", "", "leaf\x017.5", "leaf\x01", "leaf\x01x",
                                  "leaf\x01\u0663", "leaf\x01--1"])
def test_other_strings_are_no_reads(text: str) -> None:
    assert decode_read(text) is None


def _written(site: Path, salt: str = "s") -> None:
    w = DepsWriter(site, salt)
    w.write(REC)
    w.commit()


def _records(site: Path, salt: str = "s") -> dict[str, DepsRecord | None]:
    return {path: parse_record(line) for path, line in read_deps(site, salt).items()}


def test_records_round_trip_with_any_id(tmp_path: Path) -> None:
    site = tmp_path / "site"
    _written(site)
    assert _records(site) == {REC.path: REC}
    assert list(deps_path(site).parent.glob("*.tmp")) == []


def test_a_kept_line_is_written_again_as_it_is(tmp_path: Path) -> None:
    site = tmp_path / "site"
    _written(site)
    line = read_deps(site, "s")[REC.path]
    w = DepsWriter(site, "s")
    w.write_line(line)
    w.commit()
    assert read_deps(site, "s") == {REC.path: line}


def test_another_salt_or_a_damaged_file_gives_no_records(tmp_path: Path) -> None:
    site = tmp_path / "site"
    _written(site)
    assert read_deps(site, "other") == {}
    path = deps_path(site)
    good = path.read_text()
    for bad in ("", "not json\n" + good.partition("\n")[2], good + "no tab here\n"):
        path.write_text(bad)
        assert read_deps(site, "s") == {}, bad
    assert read_deps(tmp_path / "never-built", "s") == {}


@pytest.mark.parametrize("damage", [
    lambda t: t.replace('"leaf\\u00017"', "7"),
    lambda t: t.replace('"leaf\\u00017"', "null"),
    lambda t: t.replace('"leaf\\u00017"', '["leaf", 7]'),
    lambda t: t.replace('"claim"', "1"),
    lambda t: t[:-5],
    lambda t: t.replace("claims/c-1.html\t", "claims/other.html\t"),
])
def test_a_damaged_line_is_no_record(tmp_path: Path, damage: Any) -> None:
    site = tmp_path / "site"
    _written(site)
    path = deps_path(site)
    head, _, line = path.read_text().partition("\n")
    path.write_text(head + "\n" + damage(line))
    assert list(_records(site).values()) == [None]


def test_an_unfinished_writer_keeps_the_previous_records(tmp_path: Path) -> None:
    site = tmp_path / "site"
    _written(site)
    w = DepsWriter(site, "s")
    w.write(DepsRecord("other.html", "events", "3", "e" * 64, 0, "d" * 64, ()))
    w.close()                     # the build failed: nothing is committed
    assert _records(site) == {REC.path: REC}
    assert json.loads(deps_path(site).read_text().splitlines()[0])[1] == "s"


def test_a_writer_with_nothing_recorded_drops_the_old_records(tmp_path: Path) -> None:
    site = tmp_path / "site"
    _written(site)
    DepsWriter(site, "s").commit()
    assert not deps_path(site).exists()


def test_an_oversized_record_is_not_read(tmp_path: Path,
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    site = tmp_path / "site"
    _written(site)
    from bundler.output import deps_file
    monkeypatch.setattr(deps_file, "MAX_DEPS_BYTES", deps_path(site).stat().st_size - 1)
    assert read_deps(site, "s") == {}


def test_records_that_would_not_be_read_are_not_written(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    site = tmp_path / "site"
    _written(site)
    from bundler.output import deps_file
    monkeypatch.setattr(deps_file, "MAX_DEPS_BYTES", 300)
    w = DepsWriter(site, "s")
    for i in range(5):
        w.write(DepsRecord(f"p{i}.html", "events", str(i), "e" * 64, 0, "d" * 64, ()))
    w.commit()
    assert not deps_path(site).exists()
    assert list(deps_path(site).parent.glob("*.tmp")) == []
