"""Which shipped artifact is the transcript a trace record cites.

A tracer records the transcript as it found it, often a path on the agent's
machine (Claude Code's hook gives ``/home/dev/.claude/projects/-home-dev-app/
3f1c….jsonl``), while the bundle's author ships the file under a name of their
own (``transcripts/3f1c….jsonl``).  Matching names exactly left such a record
with no transcript: no link to its row, nothing for ``transcript-mismatch`` to
compare, and the audit saying the bundle does not ship a file it ships.

So a cited name ties to an artifact named (or whose payload is named):

1. exactly as cited (the last such artifact in the log: a session saved again
   as it grew); else
2. as the same path read from its end: both split at ``/`` and ``\\``, empty
   and ``.`` parts dropped, the artifact whose name shares the most trailing
   parts with the cited name, at least the file name, when one artifact alone
   does.  Two shipped files that end alike (``a/session.jsonl`` and
   ``b/session.jsonl`` for a record citing ``/x/session.jsonl``) tie to neither:
   comparing a record with the wrong session would report differences that are
   not there.  ``transcript-mismatch`` says so (``alike``), rather than calling
   the file not shipped.

The second rule compares at most the last ``MAX_PARTS`` parts of two names and
at most ``MAX_COMPARISONS`` pairs of names in a bundle (past them, names tie only
exactly), so a hostile log cannot make it quadratic.  It costs nothing when every
cited name is shipped as cited, and about 0.2 s for 500k shipped names when not.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence

_SEPARATORS = re.compile(r"[/\\]")


def path_parts(name: str) -> tuple[str, ...]:
    """``name`` as path parts, ``/`` and ``\\`` both separators, empty and ``.`` dropped."""
    return tuple(p for p in _SEPARATORS.split(name) if p and p != ".")


#: Trailing parts compared at most: two artifacts sharing more are as alike as any two.
MAX_PARTS = 32
#: Name comparisons at most in one bundle; past them, names tie only exactly.  A hostile
#: log of 100k records citing ``/d<i>/s.jsonl`` and 100k files named ``e<j>/s.jsonl``
#: would otherwise cost 10^10 comparisons.
MAX_COMPARISONS = 1_000_000


def _shared_tail(a: tuple[str, ...], b: tuple[str, ...]) -> int:
    n = 0
    for x, y in zip(reversed(a[-MAX_PARTS:]), reversed(b[-MAX_PARTS:]), strict=False):
        if x != y:
            break
        n += 1
    return n


def _file_name(name: str) -> str:
    """The last part of ``name`` as :func:`path_parts` has it, without splitting the
    whole name in the common case (it runs once per artifact of the bundle)."""
    tail = name[max(name.rfind("/"), name.rfind("\\")) + 1:]
    if tail and tail != ".":
        return tail
    parts = path_parts(name)
    return parts[-1] if parts else ""


def transcript_ties(cited: Sequence[str], shipped: Mapping[str, str],
                    alike: dict[str, int] | None = None) -> dict[str, str]:
    """Cited transcript name -> the artifact that ships it, for each name that ties to
    one (see the module's docstring), in the order of the names.

    ``shipped``: every artifact name and payload file name -> the last artifact with
    a payload so named.  ``alike``, if given, gets each cited name that several
    artifacts end like equally -> how many, so the audit can say why it compared
    nothing for it rather than call the file not shipped.
    """
    ties: dict[str, str] = {}
    loose: list[tuple[str, tuple[str, ...]]] = []
    for name in cited:
        if name in shipped:
            ties[name] = shipped[name]
        elif parts := path_parts(name):
            loose.append((name, parts))
    if not loose:
        return ties
    wanted = {parts[-1] for _, parts in loose}
    by_file: dict[str, list[tuple[tuple[str, ...], str]]] = {}
    for name, art in shipped.items():
        if (file := _file_name(name)) in wanted:
            by_file.setdefault(file, []).append((path_parts(name), art))
    budget = MAX_COMPARISONS
    for name, parts in loose:
        candidates = by_file.get(parts[-1], [])
        if len(candidates) > budget:
            continue
        budget -= len(candidates)
        best, arts = 0, set()
        for candidate, art in candidates:
            shared = _shared_tail(parts, candidate)
            if shared > best:
                best, arts = shared, {art}
            elif shared == best:
                arts.add(art)
        if len(arts) == 1:
            ties[name] = arts.pop()
        elif arts and alike is not None:
            alike[name] = len(arts)
    return {name: ties[name] for name in cited if name in ties}


def names_by_artifact(ties: Mapping[str, str],
                      own_names: Mapping[str, tuple[str, ...]]) -> dict[str, tuple[str, ...]]:
    """Artifact id -> the cited names tied to it: its own names first, in the order
    given (``own_names``: the payload's file name, then the artifact's), then the others
    in sorted order."""
    out: dict[str, list[str]] = {}
    for name in sorted(ties):
        out.setdefault(ties[name], []).append(name)
    return {art: tuple(sorted(names, key=_own_first(own_names.get(art, ()))))
            for art, names in out.items()}


def _own_first(own: tuple[str, ...]) -> Callable[[str], tuple[int, str]]:
    def key(name: str) -> tuple[int, str]:
        return (own.index(name) if name in own else len(own), name)
    return key
