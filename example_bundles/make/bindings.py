"""Binding fields: how a claim points at the exact value it quotes, and how that is checked.

Every ``EvidenceBinding`` in the example bundles is machine-checkable, so a
generator may not record a claim until the value it binds has been read back
from the payload bytes (:meth:`example_bundles.make.recording.Recorder.claim`
does that).  ``evidence`` names an individual; its payload's media type
decides how ``field`` is read.  Media-type parameters (``; charset=utf-8``)
are ignored.

* ``text/csv`` (comma-separated, first line is the header):

  - ``#rows`` is the number of data rows after the header (an int);
  - ``<column>@<key_column>=<key_value>`` is the cell in ``column`` of the one
    row whose ``key_column`` cell equals ``key_value`` as text, e.g.
    ``CO_mean@hour=19`` or ``gain_pp@seed=75``.  Split at the first ``@``,
    then at the first ``=``.

* ``application/json``: a dotted path of object keys, e.g. ``date_range.first``
  or ``metrics.accuracy_gain_pp`` (an all-digit segment indexes a list).
* ``text/plain`` (or any text): ``re:<regex>``, the first match in the text;
  its group 1 if the pattern has a group, else the whole match.  Example:
  ``re:(\\d+) passed``.
* An event without a payload (a fitness record, say): a dotted path into the
  event's own JSON object, e.g. ``score``.  The review side reads these
  (:mod:`bundler.query.values`); :func:`resolve_field` only reads payloads.

Comparison (``equals``), :func:`value_matches`: a string value must equal the
resolved text exactly; a number value must equal the resolved text parsed as
a float (CSV cells and regex captures are text); JSON numbers compare as
numbers, so ``6`` equals ``6.0`` (RFC 8785 writes ``6.0`` as ``6``, so the
type of an integral number does not survive a round trip through the log).
Booleans are never numbers.  ``value`` is what the claim *asserts*: where it
differs from the payload (``unsupported-gain``'s 4.2 against a logged 1.5)
that is the finding, recorded without going through this check.
"""

from __future__ import annotations

import csv
import io
import json
import re
from typing import Any

Scalar = str | int | float | bool | None


def resolve_field(data: bytes, media_type: str, field: str) -> Scalar:
    """Return the value ``field`` designates in ``data`` (see the module docstring)."""
    text = data.decode("utf-8")
    media_type = media_type.split(";")[0].strip().lower()
    if field.startswith("re:"):
        match = re.search(field[3:], text, re.MULTILINE)
        if match is None:
            raise LookupError(f"{field!r} does not match")
        return match.group(1) if match.re.groups else match.group(0)
    if media_type == "text/csv":
        rows = list(csv.reader(io.StringIO(text, newline="")))
        header, body = rows[0], rows[1:]
        if field == "#rows":
            return len(body)
        column, _, key = field.partition("@")
        key_column, _, key_value = key.partition("=")
        ki, ci = header.index(key_column), header.index(column)
        hits = [r for r in body if r[ki] == key_value]
        if len(hits) != 1:
            raise LookupError(f"{field!r} selects {len(hits)} rows")
        return hits[0][ci]
    if media_type == "application/json":
        node: Any = json.loads(text)
        for part in field.split("."):
            node = node[int(part)] if isinstance(node, list) else node[part]
        if isinstance(node, dict | list):
            raise LookupError(f"{field!r} is not a scalar")
        return node  # type: ignore[no-any-return]
    raise LookupError(f"no field syntax for media type {media_type!r}")


def _is_number(x: Scalar) -> bool:
    return isinstance(x, int | float) and not isinstance(x, bool)


def value_matches(value: Scalar, resolved: Scalar) -> bool:
    """Whether the asserted ``value`` equals what :func:`resolve_field` read."""
    if isinstance(resolved, str) and _is_number(value):
        try:
            return float(resolved) == value
        except ValueError:
            return False
    if _is_number(value) and _is_number(resolved):
        return value == resolved
    return type(value) is type(resolved) and value == resolved
