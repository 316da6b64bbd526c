"""Read the value a binding points at, and compare it with the value it recorded.

Field syntax (docs/format.md section 13, and the example generators):

* CSV/TSV payloads: ``#rows`` (data rows after the header) or
  ``<column>@<key_column>=<key_value>`` (split at the first ``@``, then the
  first ``=``; the one row whose key cell equals the key value as text);
* JSON payloads: a dotted path, all-digit segments index lists, ``""`` is the
  whole document;
* any text payload: ``re:<pattern>``, the first match (group 1 if any),
  evaluated by :mod:`bundler.query.regex_guard`;
* an event without a payload (a fitness record, say): a dotted path over the
  event's own fields, e.g. ``score``.

Anything else is a free-text locator and cannot be recomputed.  Parsed
payloads are cached per digest, so many bindings into one table parse it
once: the work is linear in bindings plus payload bytes.
"""

from __future__ import annotations

import csv
import io
import math
import re
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from typing import Any

from bundler.graph.index import BundleIndex
from bundler.load.json_members import Repeated, parse_json
from bundler.load.reopen import open_regular
from bundler.model.events import IndividualEvent
from bundler.query.regex_guard import RegexRunner
from bundler.verify.result import PayloadState

MAX_PAYLOAD = 32 * 1024 * 1024
MAX_KEY_COLUMNS = 32      # distinct key columns indexed per table
CSV_TYPES = {"text/csv": ",", "application/csv": ",", "text/tab-separated-values": "\t"}
REL_TOL = 1e-9
APPROX_TOL = 0.01

OK, NOT_FOUND, UNVERIFIABLE = "ok", "not-found", "unverifiable"


@dataclass(frozen=True)
class Resolved:
    """``status``: ok (``found`` holds the value), not-found, or unverifiable."""

    status: str
    found: Any = None
    detail: str = ""


def media_base(media_type: str) -> str:
    return media_type.split(";", 1)[0].strip().lower()


def is_json(media: str) -> bool:
    return media in ("application/json", "text/json") or media.endswith("+json")


@dataclass
class _Table:
    header: list[str]
    rows: list[list[str]]
    keys: dict[str, dict[str, list[int]]] = field(default_factory=dict)
    columns: dict[str, int] = field(default_factory=dict)

    def __post_init__(self) -> None:
        for i, name in enumerate(self.header):
            self.columns.setdefault(name, i)

    def key_index(self, column: int, name: str) -> dict[str, list[int]] | None:
        """Rows by key cell; ``None`` past MAX_KEY_COLUMNS indexes (bounded work)."""
        idx = self.keys.get(name)
        if idx is None:
            if len(self.keys) >= MAX_KEY_COLUMNS:
                return None
            idx = {}
            for i, r in enumerate(self.rows):
                if column < len(r):
                    idx.setdefault(r[column], []).append(i)
            self.keys[name] = idx
        return idx


class FieldReader:
    """Resolves binding fields against one bundle; caches parsed payloads."""

    def __init__(self, idx: BundleIndex, regex: RegexRunner) -> None:
        self.idx = idx
        self.regex = regex
        self._text: dict[str, str | Resolved] = {}
        self._csv: dict[str, _Table | Resolved] = {}
        self._json: dict[str, Any] = {}

    # ------------------------------------------------------------ payloads
    def _payload_text(self, ind: IndividualEvent) -> str | Resolved:
        """:func:`payload_text`, read once per digest."""
        assert ind.payload is not None
        digest = ind.payload.digest
        cached = self._text.get(digest)
        if cached is None:
            cached = self._text[digest] = payload_text(self.idx, ind)
        return cached

    def _table(self, ind: IndividualEvent, delimiter: str) -> _Table | Resolved:
        assert ind.payload is not None
        digest = ind.payload.digest
        cached = self._csv.get(digest)
        if cached is not None:
            return cached
        text = self._payload_text(ind)
        result: _Table | Resolved
        if isinstance(text, Resolved):
            result = text
        else:
            try:
                rows = [r for r in csv.reader(io.StringIO(text), delimiter=delimiter) if r]
            except csv.Error as exc:
                rows = []
                result = Resolved(NOT_FOUND, None, f"payload is not valid CSV: {exc}")
            else:
                result = _Table(rows[0], rows[1:]) if rows else Resolved(
                    NOT_FOUND, None, "the CSV payload is empty")
        self._csv[digest] = result
        return result

    def _document(self, ind: IndividualEvent) -> Any:
        assert ind.payload is not None
        digest = ind.payload.digest
        if digest in self._json:
            return self._json[digest]
        text = self._payload_text(ind)
        result: Any
        if isinstance(text, Resolved):
            result = text
        else:
            try:
                result = _Doc(parse_json(text)[0])
            except (ValueError, RecursionError) as exc:
                result = Resolved(NOT_FOUND, None, f"payload is not valid JSON: {exc}")
        self._json[digest] = result
        return result

    # -------------------------------------------------------------- fields
    def resolve(self, evidence: str, fld: str) -> Resolved:
        ev = self.idx.get(evidence)
        if ev is None:
            if evidence.startswith("ext:"):
                return Resolved(UNVERIFIABLE, None, "external evidence, outside the bundle")
            return Resolved(NOT_FOUND, None, f"{evidence} is not an event in the log")
        if isinstance(ev, IndividualEvent) and ev.payload is not None:
            return self._from_payload(ev, fld)
        found = _path(ev.model_dump(mode="json"), fld)
        if found.status == OK or not isinstance(ev, IndividualEvent):
            if found.status != OK:
                return Resolved(NOT_FOUND, None, f"{ev.type} {evidence} has no field {fld!r}")
            return found
        return Resolved(UNVERIFIABLE, None, f"{evidence} has no payload to read {fld!r} from")

    def _from_payload(self, ind: IndividualEvent, fld: str) -> Resolved:
        assert ind.payload is not None
        media = media_base(ind.payload.media_type)
        if fld.startswith("re:"):
            text = self._payload_text(ind)
            if isinstance(text, Resolved):
                return text
            m = self.regex.search(ind.payload.digest, text, fld[3:])
            if m.status == "ok":
                return Resolved(OK, m.value)
            if m.status == "none":
                return Resolved(NOT_FOUND, None, m.detail or "the pattern does not match")
            return Resolved(UNVERIFIABLE, None, f"regex not evaluated: {m.detail}")
        if media in CSV_TYPES:
            table = self._table(ind, CSV_TYPES[media])
            return table if isinstance(table, Resolved) else _cell(table, fld)
        if is_json(media):
            doc = self._document(ind)
            return doc if isinstance(doc, Resolved) else _path(doc.value, fld)
        return Resolved(UNVERIFIABLE, None,
                        f"{media} has no field syntax; {fld!r} is a free-text locator")


def payload_text(idx: BundleIndex, ind: IndividualEvent) -> str | Resolved:
    """The text (UTF-8) of a verified payload, or why it cannot be read."""
    st = idx.payload_status(ind)
    if st is None or st.state is not PayloadState.VERIFIED or st.path is None:
        state = st.state.value if st else "missing"
        why = f"payload {state}, cannot recompute"
        if st is not None and st.state is PayloadState.REDACTED:
            why = f"payload redacted ({st.reason}; authority: {st.authority}), cannot recompute"
        elif st is not None and st.state is PayloadState.LEAKED:
            why = "payload was redacted but its bytes were shipped (leaked); not read"
        return Resolved(UNVERIFIABLE, None, why)
    if st.size > MAX_PAYLOAD:
        return Resolved(UNVERIFIABLE, None,
                        f"payload larger than {MAX_PAYLOAD:,} bytes, not recomputed")
    try:
        with open_regular(idx.bundle.root / st.path) as fh:
            return fh.read().decode("utf-8-sig")
    except OSError as exc:
        return Resolved(UNVERIFIABLE, None, f"payload unreadable: {exc.strerror}")
    except UnicodeDecodeError:
        return Resolved(UNVERIFIABLE, None, "payload is not UTF-8 text")


@dataclass(frozen=True)
class _Doc:
    value: Any


def _cell(table: _Table, fld: str) -> Resolved:
    if fld == "#rows":
        return Resolved(OK, len(table.rows))
    col, at, rest = fld.partition("@")
    key_col, eq, key = rest.partition("=")
    if not at or not eq:
        return Resolved(UNVERIFIABLE, None,
                        f"{fld!r} is not CSV field syntax (#rows or column@key=value)")
    for name in (col, key_col):
        if name not in table.columns:
            return Resolved(NOT_FOUND, None, f"the CSV has no column {name!r}")
    ci, ki = table.columns[col], table.columns[key_col]
    index = table.key_index(ki, key_col)
    if index is None:
        return Resolved(UNVERIFIABLE, None, f"more than {MAX_KEY_COLUMNS} key columns of "
                        "one table are bound; the rest are not recomputed")
    hits = index.get(key, [])
    if not hits:
        return Resolved(NOT_FOUND, None, f"no row has {key_col} = {key!r}")
    if len(hits) > 1:
        return Resolved(NOT_FOUND, None, f"{len(hits)} rows have {key_col} = {key!r}")
    r = table.rows[hits[0]]
    if ci >= len(r):
        return Resolved(NOT_FOUND, None, f"row {key_col} = {key!r} has no {col!r} cell")
    return Resolved(OK, r[ci])


def _path(doc: Any, fld: str) -> Resolved:
    node = doc
    if fld == "":
        return Resolved(OK, node)
    for part in fld.split("."):
        if isinstance(node, Repeated):     # an object that repeats a key (a list of pairs)
            hits = [v for k, v in node if k == part]
            if len(hits) != 1:
                return Resolved(NOT_FOUND, None, f"{fld!r}: no key {part!r}" if not hits else
                                f"{fld!r}: key {part!r} appears {len(hits)} times in one "
                                "object, and readers differ on which value it has")
            node = hits[0]
        elif isinstance(node, list):
            if not part.isdigit() or int(part) >= len(node):
                return Resolved(NOT_FOUND, None, f"{fld!r}: no list element {part!r}")
            node = node[int(part)]
        elif isinstance(node, dict):
            if part not in node:
                return Resolved(NOT_FOUND, None, f"{fld!r}: no key {part!r}")
            node = node[part]
        else:
            return Resolved(NOT_FOUND, None, f"{fld!r}: {part!r} is below a scalar")
    return Resolved(OK, node)


# ----------------------------------------------------------------- comparison
def _number(x: Any) -> float | None:
    if isinstance(x, bool) or x is None:
        return None
    if isinstance(x, int | float):
        return float(x)
    if isinstance(x, str):
        try:
            return float(x.strip())
        except ValueError:
            return None
    return None


def decimals(x: float | int) -> int:
    """Decimal places of a recorded number as written (``4.2`` -> 1, ``70`` -> 0)."""
    if isinstance(x, int):
        return 0
    try:
        exp = Decimal(repr(x)).as_tuple().exponent
    except InvalidOperation:
        return 0
    return max(0, -exp) if isinstance(exp, int) else 0


def numbers_equal(recorded: float | int, found: float, *, approx: bool = False) -> bool:
    """Equal within 1e-9 relative, or when ``found`` rounds to ``recorded`` at the
    recorded precision (recorded 1.3 equals 1.2999999; 4.2 does not equal 1.5);
    ``approx`` also accepts 1 % relative difference."""
    r = float(recorded)
    if not (math.isfinite(r) and math.isfinite(found)):
        return r == found
    diff = abs(r - found)
    if diff <= REL_TOL * max(1.0, abs(r), abs(found)):
        return True
    if diff <= 0.5 * 10.0 ** -decimals(recorded) * (1 + REL_TOL):
        return True
    return approx and diff <= APPROX_TOL * max(abs(r), abs(found))


def values_equal(recorded: Any, found: Any, *, approx: bool = False) -> bool:
    if recorded is None:
        return found is None or (isinstance(found, str) and found.strip() in ("", "null"))
    if isinstance(recorded, bool):
        if isinstance(found, bool):
            return found is recorded
        return isinstance(found, str) and found.strip().lower() == str(recorded).lower()
    if isinstance(recorded, int | float):
        f = _number(found)
        return f is not None and numbers_equal(recorded, f, approx=approx)
    if isinstance(recorded, str):
        if isinstance(found, str):
            return found == recorded or found.strip() == recorded.strip()
        r = _number(recorded)
        f = _number(found)
        if r is not None and f is not None:
            return numbers_equal(float(recorded), f, approx=approx)
        return isinstance(found, bool) and recorded.strip().lower() == str(found).lower()
    return False


_OPS = {">=": lambda a, b: a >= b, "≥": lambda a, b: a >= b, "<=": lambda a, b: a <= b,
        "≤": lambda a, b: a <= b, ">": lambda a, b: a > b, "<": lambda a, b: a < b}
_COMPARISON = re.compile(r"^\s*(>=|<=|≥|≤|>|<)\s*(?:threshold\s+)?"
                         r"([-+]?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?)\s*$")
_APPROX = ("approx", "~", "≈", "about", "roughly")


@dataclass(frozen=True)
class Comparison:
    """What a binding's ``comparison`` lets us check mechanically."""

    approx: bool = False
    op: str | None = None
    bound: float | None = None

    def holds(self, found: Any) -> bool | None:
        """Does ``found`` satisfy the threshold?  ``None`` when there is none to test."""
        if self.op is None or self.bound is None:
            return None
        f = _number(found)
        return None if f is None else bool(_OPS[self.op](f, self.bound))


def parse_comparison(text: str) -> Comparison:
    """``>= 0.9`` / ``<= threshold 0.05`` / ``approx ...``; anything else is free
    text describing the comparison and only equality of the value is checked."""
    m = _COMPARISON.match(text)
    if m:
        return Comparison(op=m.group(1), bound=float(m.group(2)))
    if text.strip().lower().startswith(_APPROX):
        return Comparison(approx=True)
    return Comparison()
