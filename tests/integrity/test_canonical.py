"""RFC 8785 canonical lines: official JCS vectors plus the strictness rules of DESIGN-NOTES 2."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, reject
from hypothesis import strategies as st

from bundler.integrity.canonical import (
    MAX_SAFE_INTEGER,
    CanonicalError,
    canonicalize,
    check_canonical,
    parse_canonical,
    parse_strict,
)

JCS_FILES = ["arrays", "french", "structures", "unicode", "values", "weird"]


def test_every_jcs_vector(vectors_dir: Path, subtests: pytest.Subtests) -> None:
    inputs = sorted((vectors_dir / "jcs" / "input").glob("*.json"))
    assert [p.stem for p in inputs] == JCS_FILES  # nothing silently missing
    for path in inputs:
        with subtests.test(msg=path.name):
            expected = (vectors_dir / "jcs" / "output" / path.name).read_bytes()
            outhex = (vectors_dir / "jcs" / "outhex" / f"{path.stem}.txt").read_text()
            out = canonicalize(parse_strict(path.read_bytes()))
            assert out == expected
            assert out == bytes.fromhex(outhex)
            # The canonical output parses strictly and passes the canonical check...
            obj = parse_strict(expected)
            check_canonical(expected, obj)
            assert parse_canonical(expected) == obj
            # ...while the pretty-printed input (same value) does not.
            with pytest.raises(CanonicalError) as err:
                check_canonical(path.read_bytes(), obj)
            assert err.value.kind == "not_canonical"


@pytest.mark.parametrize(
    ("data", "offset"),
    [
        (b'{"a": 1}', 5),  # space after the colon
        (b' {"a":1}', 0),  # leading space
        (b'{"a":1} ', 7),  # trailing space
        (b'{"b":1,"a":2}', 2),  # keys out of order
        (b'{"a":1.0}', 6),  # 1.0 is 1 in JCS
        (b'{"a":1e2}', 6),  # 100
        (b'{"a":-0}', 5),  # -0 is 0
        (b'{"a":"\\u0041"}', 6),  # needless escape
        (b'{"a":"\\/"}', 6),  # '/' is never escaped
        (b'{"a":"\\u00e9"}', 6),  # non-ASCII is written raw
        (b'{"a":"\\u001F"}', 11),  # uppercase hex escape
        (b'{"a":1}\n', 7),  # the newline belongs to the file, not the line
    ],
)
def test_non_canonical_variants_rejected(data: bytes, offset: int) -> None:
    obj = parse_strict(data)
    with pytest.raises(CanonicalError) as err:
        check_canonical(data, obj)
    assert err.value.kind == "not_canonical"
    assert err.value.offset == offset
    assert f"byte {offset}" in str(err.value)


def test_key_order_is_utf16_not_codepoint() -> None:
    # U+1F600 is D83D DE00 in UTF-16 and so sorts before U+FB33; Python's sort disagrees.
    obj = {"\U0001f600": 1, "\ufb33": 2}
    data = canonicalize(obj)
    assert data == '{"\U0001f600":1,"\ufb33":2}'.encode()
    check_canonical(data, parse_strict(data))
    python_order = json.dumps(obj, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    with pytest.raises(CanonicalError):
        check_canonical(python_order.encode(), obj)


@pytest.mark.parametrize(
    "data",
    [
        b'{"a":1,"a":2}',
        b'{"x":{"a":1,"b":{"a":1,"a":1}}}',
        b'[{"ok":1},[{"a":1,"b":2,"a":1}]]',
        b'{"a":1,"\\u0061":2}',  # the same key spelled with an escape
    ],
)
def test_duplicate_keys_rejected_at_any_depth(data: bytes) -> None:
    with pytest.raises(CanonicalError) as err:
        parse_strict(data)
    assert err.value.kind == "duplicate_key"
    assert "'a'" in str(err.value)


@pytest.mark.parametrize(
    "data",
    [b"\xff", b'{"a":"\xc3"}', b'"\xed\xa0\x80"', b'"\xc0\xaf"', b'{"\xe2\x82":1}'],
)
def test_invalid_utf8_rejected(data: bytes) -> None:
    with pytest.raises(CanonicalError) as err:
        parse_strict(data)
    assert err.value.kind == "utf8"
    assert err.value.offset is not None
    assert f"byte {err.value.offset}" in str(err.value)


@pytest.mark.parametrize("data", [b"NaN", b'{"a":Infinity}', b"[-Infinity]"])
def test_nan_and_infinity_rejected(data: bytes) -> None:
    with pytest.raises(CanonicalError) as err:
        parse_strict(data)
    assert err.value.kind == "constant"


@pytest.mark.parametrize(
    ("data", "where"),
    [
        (b'{"a":1,}', "line 1 column 8"),
        (b'{"a":\n tru}', "line 2 column 2"),
        (b"", "line 1 column 1"),
        (b"\xef\xbb\xbf{}", "byte 0"),  # a UTF-8 BOM is not JSON
        (b"{} {}", "line 1 column 4"),
        (b'"tab\there"', "line 1 column 5"),  # raw control characters in strings
    ],
)
def test_syntax_errors_give_a_position(data: bytes, where: str) -> None:
    with pytest.raises(CanonicalError) as err:
        parse_strict(data)
    assert err.value.kind == "json"
    assert where in str(err.value)


def test_json_error_offset_is_in_bytes() -> None:
    with pytest.raises(CanonicalError) as err:
        parse_strict('{"é€":1,}'.encode())
    assert err.value.offset == len('{"é€":1,'.encode())


@pytest.mark.parametrize("value", [MAX_SAFE_INTEGER + 1, -MAX_SAFE_INTEGER - 1, 10**30])
def test_integers_beyond_2_53_rejected(value: int) -> None:
    with pytest.raises(CanonicalError) as err:
        canonicalize({"t": value})
    assert err.value.kind == "json"
    assert str(value) in str(err.value)
    # A line carrying one parses (it is valid JSON) but can never pass the check.
    data = f'{{"t":{value}}}'.encode()
    with pytest.raises(CanonicalError) as err:
        parse_canonical(data)
    assert err.value.kind == "json"


def test_safe_integer_bounds_accepted() -> None:
    for value in (MAX_SAFE_INTEGER, -MAX_SAFE_INTEGER):
        data = canonicalize(value)
        assert data == str(value).encode()
        assert parse_canonical(data) == value


@pytest.mark.parametrize(
    "obj", [float("nan"), float("inf"), {1: "int key"}, b"bytes", "lone \ud800 surrogate", {1.5}]
)
def test_unrepresentable_values(obj: object) -> None:
    with pytest.raises(CanonicalError) as err:
        canonicalize(obj)
    assert err.value.kind == "json"


def test_lone_surrogate_escape_parses_but_is_never_canonical() -> None:
    data = b'{"a":"\\ud800"}'
    obj = parse_strict(data)
    with pytest.raises(CanonicalError) as err:
        check_canonical(data, obj)
    assert err.value.kind == "json"


def test_huge_float_rejected() -> None:
    # 1e400 parses to inf in Python without passing through parse_constant.
    with pytest.raises(CanonicalError) as err:
        parse_canonical(b"[1e400]")
    assert err.value.kind == "json"


@pytest.mark.parametrize("value", [2.0**53, -(2.0**53), 1e20, 123456789012345680000.0])
def test_unsafe_integral_floats_rejected(value: float) -> None:
    """JCS would print these as long integers that no verifier could read back."""
    with pytest.raises(CanonicalError) as err:
        canonicalize({"x": [value]})
    assert err.value.kind == "json"
    # A float that prints with an exponent, or a long digit string, is fine.
    assert canonicalize([1e21, 2.0**53 - 1, "12345678901234567890"]) == (
        b'[1e+21,9007199254740991,"12345678901234567890"]'
    )


def test_numbers_use_es6_formatting() -> None:
    assert canonicalize([1.0, 0.5, 1e21, 1e-7, 333333333.33333329]) == (
        b"[1,0.5,1e+21,1e-7,333333333.3333333]"
    )
    check_canonical(b"[1e+21]", parse_strict(b"[1e+21]"))


_json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-MAX_SAFE_INTEGER, MAX_SAFE_INTEGER)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=6), children, max_size=4)
    ),
    max_leaves=20,
)


@given(_json_values)
def test_fast_path_agrees_with_rfc8785(value: object) -> None:
    """check_canonical's C-encoder shortcut must never disagree with rfc8785."""
    try:
        data = canonicalize(value)
    except CanonicalError:
        reject()  # integral floats beyond 2**53; covered by test_unsafe_integral_floats
    obj = parse_strict(data)
    check_canonical(data, obj)
    assert canonicalize(obj) == data
    spaced = json.dumps(obj, ensure_ascii=False, sort_keys=True).encode()
    if spaced != data:
        with pytest.raises(CanonicalError):
            check_canonical(spaced, obj)
