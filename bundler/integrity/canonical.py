"""RFC 8785 (JCS) canonical JSON: produce it, parse strictly, and insist on it.

Every event line in a bundle is hashed as raw bytes, so two byte strings that
mean the same JSON must never both be accepted: the verifier re-canonicalises
what it parsed and rejects the line unless the bytes are identical.  That
closes the usual ambiguities:

- duplicate keys (``json.loads`` silently keeps the last one, so a line could
  show one value to a reviewer and another to a tool);
- ``NaN``/``Infinity`` (accepted by Python, not JSON);
- invalid UTF-8 (decoded leniently by many tools);
- whitespace, key order, number spelling (``1.0`` is ``1`` in JCS), escapes.

Canonicalisation itself is delegated to ``rfc8785`` (sigstore's package, which
passes every official vector); this module adds strict parsing, typed errors
and a fast equality check for the common case.  :func:`fast_canonical_object`
accepts a line with ``msgspec`` (a parse and a sorted re-encode in C) only when
that provably gives the same verdict as the strict path, which is what lets
``validate`` keep pace with the size of real logs.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from typing import Any, Literal, NoReturn, cast

import msgspec
import rfc8785

__all__ = [
    "MAX_SAFE_INTEGER",
    "CanonicalError",
    "CanonicalErrorKind",
    "canonicalize",
    "check_canonical",
    "fast_canonical_object",
    "parse_canonical",
    "parse_strict",
    "parse_vouched",
]

CanonicalErrorKind = Literal["utf8", "json", "duplicate_key", "not_canonical", "constant"]

#: JCS (via I-JSON) only allows integers that an IEEE 754 double holds exactly.
MAX_SAFE_INTEGER = 2**53 - 1
_LONG_DIGITS = re.compile(rb"[0-9]{16}")  # any |integer| > MAX_SAFE_INTEGER has 16+ digits


class CanonicalError(ValueError):
    """A line is not strict, canonical JSON.

    ``kind`` is a stable machine-readable reason (diagnostic codes map onto it);
    ``offset`` is the byte offset of the problem in the input, when known.
    """

    def __init__(
        self, message: str, *, kind: CanonicalErrorKind, offset: int | None = None
    ) -> None:
        super().__init__(message)
        self.message = message
        self.kind: CanonicalErrorKind = kind
        self.offset = offset


def canonicalize(obj: object) -> bytes:
    """Return the RFC 8785 canonical UTF-8 bytes of ``obj`` (no trailing newline).

    Values JCS cannot represent raise ``CanonicalError(kind="json")``:
    integers outside +/-(2**53 - 1) (JCS would silently round them), NaN and
    infinities, non-string keys, lone surrogates and non-JSON types.
    """
    try:
        out: bytes = rfc8785.dumps(cast(Any, obj))  # rfc8785 type-checks at runtime
    except rfc8785.IntegerDomainError as exc:
        raise CanonicalError(
            f"cannot canonicalize: {exc}; JCS allows integers up to +/-{MAX_SAFE_INTEGER} "
            "(store large numbers and timestamps as strings)",
            kind="json",
        ) from exc
    except rfc8785.CanonicalizationError as exc:
        raise CanonicalError(f"cannot canonicalize: {exc}", kind="json") from exc
    except RecursionError:
        raise CanonicalError("cannot canonicalize: nested too deeply", kind="json") from None
    if _LONG_DIGITS.search(out):
        _reject_unsafe_integral_floats(obj)
    return out


def _reject_unsafe_integral_floats(obj: object) -> None:
    """Refuse floats that JCS prints as integers beyond the safe range (e.g. ``1e20``).

    JCS writes ``1e20`` as ``100000000000000000000``, which Python's parser
    (and so our verifier) reads back as an integer that JCS refuses: such a
    line could be written but never verified.  Failing here keeps the writer
    and the verifier in agreement.
    """
    stack = [obj]
    while stack:
        value = stack.pop()
        if isinstance(value, float):
            if value.is_integer() and MAX_SAFE_INTEGER < abs(value) < 1e21:
                raise CanonicalError(
                    f"cannot canonicalize: float {value!r} would be written as the integer "
                    f"{math.trunc(value)}, beyond +/-{MAX_SAFE_INTEGER}; store it as a string",
                    kind="json",
                )
        elif isinstance(value, Mapping):
            stack.extend(value.values())
        elif isinstance(value, list | tuple):
            stack.extend(value)


def _reject_constant(name: str) -> NoReturn:
    raise CanonicalError(f"{name} is not valid JSON (RFC 8259 has no {name})", kind="constant")


def _no_duplicates(pairs: list[tuple[str, object]]) -> dict[str, object]:
    obj: dict[str, object] = {}
    for key, value in pairs:
        if key in obj:
            raise CanonicalError(f"duplicate key {key!r} in a JSON object", kind="duplicate_key")
        obj[key] = value
    return obj


def parse_strict(data: bytes) -> object:
    """Parse ``data`` as strict JSON: valid UTF-8, no duplicate keys, no NaN/Infinity.

    This does not require canonical form; use :func:`check_canonical` (or
    :func:`parse_canonical`) for that.  Error messages give line, column and
    byte offset so a reviewer can find the problem in the raw file.
    """
    try:
        text = data.decode("utf-8", errors="strict")
    except UnicodeDecodeError as exc:
        raise CanonicalError(
            f"invalid UTF-8 at byte {exc.start}: {exc.reason}", kind="utf8", offset=exc.start
        ) from None
    try:
        return json.loads(text, object_pairs_hook=_no_duplicates, parse_constant=_reject_constant)
    except json.JSONDecodeError as exc:
        offset = len(text[: exc.pos].encode("utf-8"))
        raise CanonicalError(
            f"invalid JSON: {exc.msg} at line {exc.lineno} column {exc.colno} (byte {offset})",
            kind="json",
            offset=offset,
        ) from None
    except RecursionError:
        # ``[[[[...`` a few thousand deep exhausts the C scanner's recursion budget.
        raise CanonicalError("invalid JSON: nested too deeply to parse", kind="json") from None


def _json_dumps_is_jcs(obj: object) -> bool:
    """True when ``json.dumps(sort_keys=True)`` provably yields the JCS bytes of ``obj``.

    The C encoder escapes strings exactly like JCS (same control-character set,
    lowercase ``\\uXXXX``, ``/`` and non-ASCII left alone) and writes ints and
    literals identically.  It differs only for floats (ES6 number formatting),
    integers outside the safe range (JCS refuses them) and key order when keys
    contain characters above U+FFFF (JCS sorts by UTF-16 code units).  Any of
    those sends us to the slow, authoritative path.
    """
    stack: list[object] = [obj]
    while stack:
        value = stack.pop()
        if isinstance(value, str) or value is None or value is True or value is False:
            continue
        if type(value) is int:
            if -MAX_SAFE_INTEGER <= value <= MAX_SAFE_INTEGER:
                continue
            return False
        if type(value) is dict:
            for key in value:
                if type(key) is not str or not key.isascii():
                    return False
            stack.extend(value.values())
        elif type(value) is list:
            stack.extend(value)
        else:
            return False
    return True


def _first_difference(a: bytes, b: bytes) -> int:
    for i, (x, y) in enumerate(zip(a, b, strict=False)):
        if x != y:
            return i
    return min(len(a), len(b))


def check_canonical(data: bytes, obj: object) -> None:
    """Raise ``CanonicalError(kind="not_canonical")`` unless ``data`` is the JCS form of ``obj``.

    ``obj`` is what :func:`parse_strict` returned for ``data``.  The common
    case (no floats, safe ints, ASCII keys) is checked with the C JSON encoder;
    anything else, and every failure, goes through ``rfc8785`` so the verdict
    always equals ``canonicalize(obj) == data``.
    """
    if _json_dumps_is_jcs(obj):
        try:
            fast = json.dumps(
                obj, ensure_ascii=False, sort_keys=True, separators=(",", ":"), allow_nan=False
            ).encode("utf-8")
        except (ValueError, UnicodeEncodeError, RecursionError):
            pass  # e.g. a lone surrogate: let canonicalize() produce the error
        else:
            if fast == data:
                return
    expected = canonicalize(obj)
    if expected == data:
        return
    at = _first_difference(expected, data)
    got = data[at : at + 16]
    want = expected[at : at + 16]
    raise CanonicalError(
        f"not RFC 8785 canonical JSON: first difference at byte {at} "
        f"(found {got!r}, canonical form has {want!r})",
        kind="not_canonical",
        offset=at,
    )


class _NotJcsFloat(ValueError):
    """A number spelling JCS would write otherwise: the line goes to the strict path."""


def _jcs_float(text: str) -> float:
    """The decoder's hook for every number with a fraction or an exponent, given as written.

    ``rfc8785`` writes a float as ``str(f)`` unless that has an exponent or ends in
    ``.0`` (``1e-05``, ``1.0``, ``-0.0``), so a spelling that is exactly ``repr`` of
    its value, without either, is the JCS spelling.  Anything else is left to the
    strict path, which decides (``0.00001`` is canonical, for one).
    """
    value = float(text)
    if "e" in text or text.endswith(".0") or repr(value) != text:
        raise _NotJcsFloat(text)
    return value


#: Parses a line for the fast path; also refuses lone surrogates and invalid UTF-8.
_DECODE = msgspec.json.Decoder(float_hook=_jcs_float).decode
#: Sorted keys, compact, raw UTF-8, and the JCS string escapes (the same escapes as
#: the C ``json`` encoder with ``ensure_ascii=False``).
_ENCODE = msgspec.json.Encoder(order="sorted").encode

# Found as substrings of the line translated to byte classes: a regular expression
# that starts with a character class scans several times slower.
_ASTRAL = re.compile(rb"[\xf0-\xff]")  # lead bytes of 4-byte UTF-8 (above U+FFFF)
_CLASSES = bytearray(b" " * 256)
_CLASSES[ord("0"): ord("9") + 1] = b"0" * 10
_CLASS_TABLE = bytes(_CLASSES)
_SIXTEEN_DIGITS = b"0" * 16
_LONG_NUMBER = re.compile(rb"[:,\[]-?[0-9]{16}")  # a number token of 16+ digits


def fast_canonical_object(data: bytes) -> dict[str, Any] | None:
    """Return the object ``data`` encodes when it is provably canonical; else ``None``.

    ``None`` means "undecided", never "invalid": the caller then runs
    :func:`parse_strict` and :func:`check_canonical`, which produce the
    verdict and the error message.  A line is accepted when

    1. ``msgspec`` parses it to a dict ``obj``, with every number that has a
       fraction or an exponent spelled as ``rfc8785`` writes it (:func:`_jcs_float`
       refuses the rest: ``1.0``, ``1e-05``, ``0.50``).  It refuses invalid UTF-8
       and lone surrogates, as JCS does;
    2. ``msgspec`` writes ``obj`` back (sorted keys, compact, raw UTF-8) to exactly
       ``data``.  A re-encoded dict has one member per key, so ``data`` holds no
       duplicate key, and its whitespace, escapes and number spellings are the
       encoder's, which are those of the C ``json`` encoder and of JCS for
       strings, integers, literals and the floats of step 1;
    3. nothing in it is where that encoder and JCS differ:

       - integers beyond 2**53 (JCS refuses them): no number token of 16+ digits;
       - key order, for characters above U+FFFF (JCS sorts UTF-16 code units,
         the encoder code points): no 4-byte UTF-8 sequence.

       A match (also a harmless one inside a string) sends the line to the
       strict path.

    The value is then what ``json.loads`` returns for ``data``: the same members,
    in the same order, of the same types.
    """
    obj = parse_vouched(data)
    if type(obj) is not dict or _ENCODE(obj) != data:
        return None
    if not data.isascii() and _ASTRAL.search(data):
        return None
    if _SIXTEEN_DIGITS in data.translate(_CLASS_TABLE) and _LONG_NUMBER.search(data):
        return None
    return obj


def parse_vouched(data: bytes) -> Any:
    """The value of a line :func:`fast_canonical_object` has accepted (perhaps in
    another process, for the same bytes): the very parse it makes, without the check.

    One function for both, so the object a vouched line gives is the object the
    check returns.  ``None`` for a line this parse cannot take (a vouch it should
    not have had): the caller then parses it strictly, as any other line.
    """
    try:
        return _DECODE(data)
    except (ValueError, RecursionError):
        return None


def parse_canonical(data: bytes) -> object:
    """Parse ``data`` strictly and require it to be canonical; return the value.

    This is the check the verifier applies to every event line (without its
    trailing newline).
    """
    obj = parse_strict(data)
    check_canonical(data, obj)
    return obj
