"""The page-input encoder: its fast paths give exactly the plain recursive encoding."""

from __future__ import annotations

import dataclasses
import enum
import random
from pathlib import PurePosixPath
from typing import Any

from markupsafe import Markup

from bundler.output.cache import Deferred, Encoder, Uncacheable, _field_names, _plain


class Colour(enum.Enum):
    RED = "red"
    ONE = 1


class Name(str):
    pass


@dataclasses.dataclass(frozen=True)
class Point:
    x: Any
    label: str | None = None


@dataclasses.dataclass(frozen=True)
class Link:
    href: str | None
    n: int = 0


@dataclasses.dataclass
class Mutable:
    href: str


LINKS = [Link("a"), Link(None, 3), Link("a", 1)]


def reference(obj: Any) -> str:
    """The encoding as first written: one recursive call per value."""
    out: list[str] = []

    def enc(o: Any) -> None:
        t = type(o)
        if t is str:
            out.extend((f"s{len(o)}:", o))
        elif o is None:
            out.append("n")
        elif t is int or t is bool or t is float:
            out.append(f"{t.__name__[0]}{o!r};")
        elif t is list or t is tuple:
            out.append("[" if t is list else "(")
            for item in o:
                enc(item)
            out.append("]")
        elif t is dict:
            out.append("{")
            for k, v in o.items():
                enc(k)
                enc(v)
            out.append("}")
        elif t is Markup:
            out.extend((f"m{len(o)}:", str(o)))
        elif isinstance(o, enum.Enum):
            out.append(f"E{t.__qualname__}.")
            enc(o.value)
        elif isinstance(o, Deferred):
            out.append("d")
            enc(o.key)
        elif dataclasses.is_dataclass(o) and not isinstance(o, type):
            out.append(f"D{t.__module__}.{t.__qualname__}(")
            for name in _field_names(t):
                enc(getattr(o, name))
            out.append(")")
        elif isinstance(o, (str, int, float)):
            out.append(f"x{t.__qualname__}:")
            enc(_plain(o))
        elif isinstance(o, PurePosixPath):
            enc(o.as_posix())
        elif isinstance(o, frozenset):
            out.append("<")
            for item in sorted(o, key=repr):
                enc(item)
            out.append(">")
        else:
            raise Uncacheable(t.__name__)

    enc(obj)
    return "".join(out)


def _atom(rng: random.Random) -> Any:
    return rng.choice([
        None, True, False, 0, 1, -7, 1.5, float("inf"), "", "a", "é\x00<b>", "s3:x",
        Markup(""), Markup("<b>x</b>"), Name("a"), Colour.RED, Colour.ONE,
        PurePosixPath("a/b.html"), frozenset({"x", "y"}), *LINKS, Link("a"),
    ])


def _value(rng: random.Random, depth: int) -> Any:
    if depth == 0 or rng.random() < 0.3:
        return _atom(rng)
    kind = rng.randrange(5)
    items = [_value(rng, depth - 1) for _ in range(rng.randrange(5))]
    if kind == 0:
        return items
    if kind == 1:
        return tuple(items)
    if kind == 2:
        keys = [rng.choice(["k", "", 1, None, Markup("k"), "s1:k"]) for _ in items]
        return dict(zip(keys, items, strict=True))
    if kind == 3:
        return Point(items, rng.choice([None, "l", Markup("l")]))
    return Deferred(items, lambda: None)


def test_fast_paths_encode_exactly_as_the_reference() -> None:
    rng = random.Random(7)
    enc = Encoder(None)
    for _ in range(3000):
        value = _value(rng, 4)
        assert enc.encode(value) == reference(value)


def test_a_mutable_dataclass_is_encoded_afresh_each_time() -> None:
    enc = Encoder(None)
    value = Mutable("a")
    first = enc.encode([value, Link("x")])
    value.href = "b"
    assert enc.encode([value, Link("x")]) != first
    assert enc.encode([value, Link("x")]) == reference([value, Link("x")])


def test_markup_and_str_stay_apart_inside_containers() -> None:
    enc = Encoder(None)
    for wrap in (lambda v: [v], lambda v: (v,), lambda v: {"k": v}, lambda v: {v: 1},
                 lambda v: Point(v)):
        assert enc.encode(wrap("<b>")) != enc.encode(wrap(Markup("<b>")))
        assert enc.encode(wrap("a")) != enc.encode(wrap(Name("a")))
        assert enc.encode(wrap(None)) != enc.encode(wrap("n"))
