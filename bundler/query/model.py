"""The shapes every audit query returns: rows that say why they matched.

A query is an answer a reviewer can check, so every row carries, next to its
values, a sentence saying why it matched (``why``), the event seq numbers it
rests on (``seqs``) and the object ids involved (``refs``) so a site or a
tool can link each row back to the log.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from bundler.graph.index import BundleIndex

#: A JSON-able cell: scalars, or a list of scalars (ids, labels).
Value = Any

#: Lists inside one cell and the seq/ref tuples of one row are cut here, so a
#: row about a 10,000-member duplicate group stays readable and small.
MAX_LIST = 20
MAX_SEQS = 200


@dataclass(frozen=True)
class QueryRow:
    values: dict[str, Value]
    why: str
    seqs: tuple[int, ...] = ()
    refs: tuple[str, ...] = ()


@dataclass(frozen=True)
class QueryResult:
    """``scope`` and ``checked`` say what a check examined.  An empty answer reads as
    "all is well" only if something was looked at: a bundle that ships no transcript
    has no transcript mismatch because nothing could be compared, and a reader must be
    able to tell that from "every record matched"."""

    name: str
    columns: tuple[str, ...]
    rows: tuple[QueryRow, ...]
    #: One or two sentences on what was examined and what was not; "" where the
    #: query's description says it all.
    scope: str = ""
    #: How many things were examined, for the queries that count them (None: not
    #: counted).  0 with no rows means there was nothing to check.
    checked: int | None = None

    def __post_init__(self) -> None:
        for row in self.rows:
            if tuple(row.values) != self.columns:
                raise ValueError(f"query {self.name}: row columns {tuple(row.values)} "
                                 f"differ from {self.columns}")


@dataclass(frozen=True)
class QueryDef:
    name: str
    summary: str
    arg: str | None
    run: Callable[[BundleIndex, str | None], QueryResult]

    @property
    def arg_required(self) -> bool:
        return self.arg is not None and not self.arg.startswith("[")


def row(why: str, seqs: Iterable[int | None] = (), refs: Iterable[str | None] = (),
        **values: Value) -> QueryRow:
    """Build a row; seqs are sorted and de-duplicated, refs keep first-seen order."""
    s = sorted({x for x in seqs if x is not None})[:MAX_SEQS]
    r = tuple(dict.fromkeys(x for x in refs if x))[:MAX_SEQS]
    return QueryRow(values, why, tuple(s), r)


def capped(items: Iterable[str], limit: int = MAX_LIST) -> list[str]:
    """At most ``limit`` items, plus a final "… N more" marker when cut."""
    out: list[str] = []
    extra = 0
    for item in items:
        if len(out) < limit:
            out.append(item)
        else:
            extra += 1
    if extra:
        out.append(f"… {extra} more")
    return out


def plural(n: int, word: str, many: str | None = None) -> str:
    return f"{n} {word if n == 1 else (many or word + 's')}"


def counted(n: int, word: str, many: str | None = None) -> str:
    """``plural`` with thousands separators, for the scope sentences."""
    return f"{n:,} {word if n == 1 else (many or word + 's')}"
