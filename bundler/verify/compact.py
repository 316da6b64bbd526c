"""Compact in-memory storage for verified events.

A validated pydantic event costs about 2.3 KB of memory, most of it not
data: a private ``__dict__`` with its own key table, a ``fields_set`` set
(~700 bytes), fresh copies of strings that repeat on every line (``type``,
``run``, ``stream``, media types, ...), and empty lists and dicts.  At a
million events that alone is over 2 GB.

:class:`Compactor` rebuilds each event so that it shares what can be shared:

* the instance dict is rebuilt attribute by attribute, which gives CPython's
  key-sharing ("split") dict: one key table per class, values only per event;
* ``__pydantic_fields_set__`` is one shared set per (class, fields) shape (up to
  :data:`MAX_SHAPES` per class);
* low-cardinality strings are interned in a bounded table (a hostile bundle
  with a million distinct ``run`` values just stops being interned);
* empty lists and dicts are one shared object each;
* a reference to an event already kept (``parents``, ``target``, ``evidence``,
  ``trace``, ...) becomes that event's own ``id`` string, not an equal copy.
  References point backwards (invariant 1), so the event is already known.  At 100k
  events this drops 94 of the 443 bytes of strings per event, and a 1M build's peak
  went from 1.84 to 1.75 GiB (process tree; the build process from 1.51 to 1.42 GiB).
  The id map lives only as long as the compactor, which verification drops when it
  ends.

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
#: Shared field sets kept per class; a model of any further shape keeps its own.
MAX_SHAPES = 32
#: Fields (at any depth) whose strings name another event: every field
#: :func:`bundler.verify.invariants.references` reads except the interned run and stream
#: (tests/verify/test_compact.py checks that each reference ends up shared).
REFERENCE_FIELDS = frozenset({
    "supersedes", "produced_by", "trace", "evidence", "derived_from", "parents", "steering",
    "target", "operator", "member", "records", "individual", "members", "source",
})

_EMPTY_LIST: list[Any] = []
_EMPTY_DICT: dict[str, Any] = {}

# What to do with a field's string(s), by field name: one dict lookup per field.
_REF, _INTERN = 1, 2
_TOP_ACTIONS = {**dict.fromkeys(INTERNED_FIELDS, _INTERN), **dict.fromkeys(REFERENCE_FIELDS, _REF)}
_NESTED_ACTIONS = {**_TOP_ACTIONS, **dict.fromkeys(_NESTED_INTERNED, _INTERN)}


class Compactor:
    """Rebuilds models into their compact form; one instance per loaded bundle."""

    def __init__(self, max_interned: int = MAX_INTERNED) -> None:
        self._strings: dict[str, str] = {}
        self._max = max_interned
        self._field_sets: dict[type[BaseModel], list[set[str]]] = {}
        #: id -> the same string, as held by the first kept event with that id
        self._ids: dict[str, str] = {}

    def event(self, model: M) -> M:
        """A top-level event: compacted, and its id known to the events after it."""
        new = self(model)
        # the id as the original holds it (the same object): reading ``new.__dict__``
        # would turn the new object's inline values into a dict of its own
        oid = model.__dict__.get("id")
        if type(oid) is str:
            self._ids.setdefault(oid, oid)
        return new

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
        actions = _NESTED_ACTIONS if nested else _TOP_ACTIONS
        ids = self._ids
        for key, value in model.__dict__.items():
            kind = type(value)
            if kind is str:
                act = actions.get(key)
                if act is _REF:
                    value = ids.get(value, value)
                elif act is _INTERN:
                    value = self._intern(value)
            elif kind is list:
                if not value:
                    value = _EMPTY_LIST
                elif actions.get(key) is _REF:
                    value = [ids.get(v, v) if type(v) is str else v for v in value]
                elif isinstance(value[0], BaseModel):
                    value = [self(v, True) if isinstance(v, BaseModel) else v for v in value]
            elif kind is dict:
                if not value:
                    value = _EMPTY_DICT
            elif isinstance(value, BaseModel):
                value = self(value, True)
            put(new, key, value)
        fields = model.__pydantic_fields_set__
        for shared in self._field_sets.get(cls, ()):
            if shared == fields:
                break
        else:
            shared = self._new_shape(cls, fields)
        put(new, "__pydantic_fields_set__", shared)
        put(new, "__pydantic_extra__", model.__pydantic_extra__)
        put(new, "__pydantic_private__", model.__pydantic_private__)
        return new

    def _new_shape(self, cls: type[BaseModel], fields: set[str]) -> set[str]:
        """A class has a few shapes of set fields, so comparing with each known one is
        cheaper than building a frozenset key for every model."""
        shapes = self._field_sets.setdefault(cls, [])
        if len(shapes) >= MAX_SHAPES:
            return fields
        shapes.append(set(fields))
        return shapes[-1]
