"""Compact in-memory storage for verified events.

A validated pydantic event costs about 2.3 KB of memory, most of it not
data: a private ``__dict__`` with its own key table, a ``fields_set`` set
(~700 bytes), fresh copies of strings that repeat on every line (``type``,
``run``, ``stream``, media types, ...), and empty lists and dicts.  At a
million events that alone is over 2 GB.

:class:`Compactor` rebuilds each event so that it shares what can be shared:

* the instance dict is rebuilt attribute by attribute, which gives CPython's
  key-sharing ("split") dict: one key table per class, values only per event;
* ``__pydantic_fields_set__`` is one shared set per (class, fields) shape;
* low-cardinality strings are interned in a bounded table (a hostile bundle
  with a million distinct ``run`` values just stops being interned);
* empty lists and dicts are one shared object each.

Events are frozen models and nothing mutates them after verification, so the
sharing is invisible: equality, ``model_dump`` and attribute access are
unchanged.  The result is about 0.7 KB per event.
"""

from __future__ import annotations

from typing import Any, TypeVar

from pydantic import BaseModel

M = TypeVar("M", bound=BaseModel)

#: Field names whose string values repeat across events (per model, any depth).
INTERNED_FIELDS = frozenset({
    "type", "run", "stream", "kind", "media_type", "record_kind", "op", "custom_type",
    "outcome", "relation", "provenance", "inferred_by", "archive", "action", "phase",
    "node_type", "category", "agent", "tool", "metric", "format", "transcript", "status",
    "claim_status", "stance", "comparison", "command", "issuer",
})
#: Evaluator name/version repeat too, but ``name`` of an individual does not.
_NESTED_INTERNED = frozenset({"name", "version"})
MAX_INTERNED = 1 << 16

_EMPTY_LIST: list[Any] = []
_EMPTY_DICT: dict[str, Any] = {}


class Compactor:
    """Rebuilds models into their compact form; one instance per loaded bundle."""

    def __init__(self, max_interned: int = MAX_INTERNED) -> None:
        self._strings: dict[str, str] = {}
        self._max = max_interned
        self._field_sets: dict[tuple[type[BaseModel], frozenset[str]], set[str]] = {}

    def _intern(self, value: str) -> str:
        got = self._strings.get(value)
        if got is not None:
            return got
        if len(self._strings) < self._max:
            self._strings[value] = value
        return value

    def __call__(self, model: M, nested: bool = False) -> M:
        cls = type(model)
        new = cls.__new__(cls)
        put = object.__setattr__
        interned = _NESTED_INTERNED if nested else ()
        for key, value in model.__dict__.items():
            kind = type(value)
            if kind is str:
                if key in INTERNED_FIELDS or key in interned:
                    value = self._intern(value)
            elif kind is list:
                if not value:
                    value = _EMPTY_LIST
                elif isinstance(value[0], BaseModel):
                    value = [self(v, True) if isinstance(v, BaseModel) else v for v in value]
            elif kind is dict:
                if not value:
                    value = _EMPTY_DICT
            elif isinstance(value, BaseModel):
                value = self(value, True)
            put(new, key, value)
        fields = model.__pydantic_fields_set__
        shape = (cls, frozenset(fields))
        shared = self._field_sets.get(shape)
        if shared is None:
            shared = self._field_sets[shape] = set(fields)
        put(new, "__pydantic_fields_set__", shared)
        put(new, "__pydantic_extra__", model.__pydantic_extra__)
        put(new, "__pydantic_private__", model.__pydantic_private__)
        return new
