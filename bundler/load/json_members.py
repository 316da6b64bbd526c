"""JSON payloads parsed with every member kept: a repeated key is not resolved away.

Payloads are data the log commits to, not log lines, so a repeated key in one
is not refused (as RB115 refuses it in an event); but whichever value a
reader keeps, the last (Python, JavaScript, jq) or the first (some others),
hides the other.  The viewers show both, marked, and a binding whose path
goes through a repeated key is not resolved to either (``bundler.query.values``).
"""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

__all__ = ["Repeated", "parse_json"]


class Repeated(list[tuple[str, Any]]):
    """An object in which a key appears more than once: every member, in order
    (a ``dict`` would keep one value of the key)."""

    def repeated_keys(self) -> set[str]:
        return {k for k, n in Counter(k for k, _ in self).items() if n > 1}


def parse_json(text: str) -> tuple[Any, bool]:
    """``json.loads``, but an object with a repeated key is a :class:`Repeated`; and
    whether there was one."""
    found = False

    def members(pairs: list[tuple[str, Any]]) -> dict[str, Any] | Repeated:
        nonlocal found
        obj = dict(pairs)
        if len(obj) == len(pairs):
            return obj
        found = True
        return Repeated(pairs)

    return json.loads(text, object_pairs_hook=members), found
