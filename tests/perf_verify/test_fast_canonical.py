"""The fast canonical check never disagrees with the strict path.

``fast_canonical_object`` may answer "undecided" (``None``) for any line; what
it must never do is accept a line the strict path rejects, or return another
object than the strict path would.  Every case below checks exactly that, and
a few check that it does accept what writers produce (else it is no faster).
"""

from __future__ import annotations

import contextlib
import json
import math
import random
import re
import struct
from pathlib import Path
from typing import Any

import pytest
import rfc8785
from hypothesis import given, settings
from hypothesis import strategies as st

from bundler.integrity.canonical import (
    CanonicalError,
    canonicalize,
    fast_canonical_object,
    parse_canonical,
    parse_strict,
    parse_vouched,
)
from bundler.synth import generate


def strict_verdict(data: bytes) -> tuple[str, Any]:
    """("ok", obj) when the strict path accepts ``data`` as a canonical object."""
    try:
        obj = parse_canonical(data)
    except CanonicalError as exc:
        return exc.kind, None
    return ("ok", obj) if isinstance(obj, dict) else ("not an object", None)


def agrees(data: bytes) -> bool:
    """True when the fast path accepted ``data`` (and it was right to)."""
    fast = fast_canonical_object(data)
    if fast is None:
        return False
    kind, obj = strict_verdict(data)
    assert kind == "ok", f"fast path accepted {data[:120]!r}, strict path says {kind}"
    assert fast == obj
    assert [type(v) for v in fast.values()] == [type(v) for v in obj.values()]
    assert list(fast) == list(obj)
    return True


@pytest.fixture(scope="module")
def synthetic_lines(tmp_path_factory: pytest.TempPathFactory) -> list[bytes]:
    path = generate(tmp_path_factory.mktemp("synth") / "b", events=3000, seed=7)
    return (path / "events.jsonl").read_bytes().splitlines()


def test_accepts_what_the_writer_writes(synthetic_lines: list[bytes]) -> None:
    accepted = sum(agrees(line) for line in synthetic_lines)
    # The synthetic log has no float with an exponent or an integral value, so
    # a line falls back only when a digest after "sha256:" starts with 16
    # decimal digits (it looks like a number token).
    looks_long = re.compile(rb"[:,\[]-?[0-9]{16}")
    assert accepted == sum(not looks_long.search(line) for line in synthetic_lines)
    assert accepted > 0.99 * len(synthetic_lines)


def _mutations(line: bytes) -> list[bytes]:
    """Non-canonical or hostile spellings of a valid line."""
    obj = json.loads(line)
    head = line[:-1]
    return [
        json.dumps(obj, sort_keys=True).encode(),                         # spaces
        json.dumps(obj, separators=(",", ":")).encode(),                  # key order
        json.dumps(obj, sort_keys=True, separators=(",", ":")).encode(),  # \u escapes
        line.replace(b'"seq":', b'"seq":1,"seq":', 1),                     # duplicate key
        line.replace(b'"id":', b'"id":"x","id":', 1),
        head + b',"x":1.0}', head + b',"x":-0.0}', head + b',"x":1e-7}', head + b',"x":1E2}',
        head + b',"x":1e-05}', head + b',"x":1e+16}', head + b',"x":0.00001}',
        head + b',"x":100000000000000000000.0}', head + b',"x":1e400}',
        head + b',"x":NaN}', head + b',"x":Infinity}', head + b',"x":-0}',
        head + b',"x":12345678901234567}', head + b',"x":-9007199254740993}',
        head + b',"x":[9007199254740992]}', head + b',"x":"\\u00e9"}',
        head + b',"x":"\\ud800"}', head + b',"x":"\\ud83d\\ude00"}',
        head + b',"\xf0\x9f\x98\x80":1,"\xef\xbc\xa1":2}', head + b',"x":"\xff"}',
        head + b',"x":"\xed\xa0\x80"}', head + b',"x":0.5e1}', head + b',"x":"\\/"}',
        head + b',"x":"\\u001F"}', head + b',"x":"\x01"}', head + b',"x":"\\t"}',
        head + b',"x":true,"x":true}', head + b',"y":{"b":1,"a":2}}',
        head + b',"y":{"a":1,"a":1}}', head + b',"y":[{"a":1,"a":1}]}',
        b"\xef\xbb\xbf" + line, b" " + line, line + b" ", line + b"\r", line[:20],
        b"[" + line + b"]", b'"' + line.replace(b'"', b"") + b'"', b"1", b"null", b"",
    ]


def test_never_accepts_a_hostile_spelling(synthetic_lines: list[bytes]) -> None:
    cases = 0
    for line in synthetic_lines[::25]:
        for data in _mutations(line):
            agrees(data)
            cases += 1
    assert cases > 5000


@pytest.mark.parametrize("data", [
    b'{"a":1.0}', b'{"a":-0.0}', b'{"a":1e-05}', b'{"a":1e+16}', b'{"a":12345678901234567}',
    b'{"a":[-9007199254740993]}', b'{"\xf0\x9f\x98\x80":1,"\xef\xbc\xa1":2}',
    b'{"a":1,"a":1}', b'{"b":1,"a":1}', b'{"a":"\\u00e9"}', b'{"a": 1}',
])
def test_undecided_on_each_difference_from_jcs(data: bytes) -> None:
    assert fast_canonical_object(data) is None


@pytest.mark.parametrize(("data", "value"), [
    (b'{"a":0.5}', 0.5), (b'{"a":-0.0001}', -0.0001), (b'{"a":9999999999999998.5}', None),
    (b'{"a":9007199254740991}', None), (b'{"a":123456789012345}', 123456789012345),
    (b'{"a":"sha256:a234567890123456789012345678901234567890123456789012345678901234"}',
     "sha256:a234567890123456789012345678901234567890123456789012345678901234"),
    # ':' then 16 digits looks like a number token even inside a string: left to the strict path
    (b'{"a":"sha256:1234567890123456789012345678901234567890123456789012345678901234"}', None),
    (b'{"a":"\xef\xbc\xa1\xe2\x80\xa8"}', "\uff21\u2028"), (b'{"a":"\\"\\\\\\n\\u001f"}',
                                                            '"\\\n\x1f'),
])
def test_accepts_safe_values(data: bytes, value: object) -> None:
    if value is None:  # a 16-digit number (or what looks like one): left to the strict path
        assert fast_canonical_object(data) is None
    else:
        assert agrees(data)
        assert fast_canonical_object(data) == {"a": value}


def test_jcs_vectors(vectors_dir: Path) -> None:
    for path in sorted((vectors_dir / "jcs" / "output").glob("*.json")):
        expected = path.read_bytes()
        agrees(expected)
        agrees(b'{"v":' + expected + b"}")
        assert fast_canonical_object((vectors_dir / "jcs" / "input" / path.name).read_bytes()) \
            is None


def test_random_floats() -> None:
    """Accepted float lines are exactly those rfc8785 writes as repr() does."""
    rng = random.Random(0)
    accepted = 0
    for i in range(40_000):
        if i % 2:
            value = struct.unpack("<d", rng.randbytes(8))[0]
        else:
            value = round(rng.uniform(-1e6, 1e6), rng.randint(0, 12)) * 10.0 ** rng.randint(-8, 8)
        if not math.isfinite(value):
            continue
        for data in (b'{"v":' + repr(value).encode() + b"}", b'{"v":[' + repr(value).encode()
                     + b"]}"):
            accepted += agrees(data)
        try:
            canon = rfc8785.dumps({"v": value})
        except rfc8785.CanonicalizationError:
            continue
        agrees(canon)
    assert accepted > 20_000


_json = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**60), 2**60)
    | st.floats(allow_nan=False, allow_infinity=False) | st.text(),
    lambda kids: st.lists(kids, max_size=4) | st.dictionaries(st.text(max_size=4), kids,
                                                              max_size=4),
    max_leaves=12,
)


@settings(max_examples=400, deadline=None)
@given(st.dictionaries(st.text(max_size=6), _json, max_size=5))
def test_any_object_any_spelling(obj: dict[str, Any]) -> None:
    try:
        canon = canonicalize(obj)
    except CanonicalError:
        canon = None
    spellings = [json.dumps(obj, ensure_ascii=False, sort_keys=True, separators=(",", ":")),
                 json.dumps(obj, sort_keys=True, separators=(",", ":")),
                 json.dumps(obj, ensure_ascii=False, separators=(",", ":"))]
    for text in spellings:
        with contextlib.suppress(UnicodeEncodeError):  # lone surrogates: not UTF-8 at all
            agrees(text.encode("utf-8"))
    if canon is not None:
        agrees(canon)


def test_deep_nesting_is_a_json_error_not_a_crash() -> None:
    data = b'{"a":' + b"[" * 100_000 + b"]" * 100_000 + b"}"
    assert fast_canonical_object(data) is None
    with pytest.raises(CanonicalError) as err:
        parse_strict(data)
    assert err.value.kind == "json"
    assert str(err.value) == "invalid JSON: nested too deeply to parse"


@pytest.mark.parametrize("data", [
    b'{"x":1e-7}', b'{"x":1.0}', b'{"x":0.50}', b'{"x":"\xff"}', b'{"x":"\\ud800"}', b"{",
    b'{"x":NaN}', b'{"a":' + b"[" * 5000 + b"]" * 5000 + b"}",
])
def test_parse_vouched_gives_none_for_what_it_cannot_take(data: bytes) -> None:
    """A vouch for a line the fast path would not accept (a checker that vouched for
    the bytes of a canonical line it should have left undecided, say ``1e-7``) costs
    speed, not a crash: the caller parses the line strictly."""
    assert parse_vouched(data) is None
    assert fast_canonical_object(data) is None


def test_parse_vouched_is_the_fast_paths_parse(synthetic_lines: list[bytes]) -> None:
    for line in synthetic_lines[::10]:
        fast = fast_canonical_object(line)
        if fast is not None:
            assert parse_vouched(line) == fast == json.loads(line)
