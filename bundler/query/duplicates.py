"""near-duplicates: the population-collapse check.

Three levels, each with bounded work:

1. **identical**: individuals with the same payload digest.  Digests are
   commitments, so this works even for redacted or missing payloads.
2. **normalised**: different digests whose text is identical once comments
   (lines starting ``#``, ``//`` or ``--``) and all whitespace are removed.
   Only verified text payloads up to ``MAX_TEXT`` bytes are read, each digest
   once.
3. **similar**: Jaccard >= 0.9 over the sets of hashed token trigrams
   (shingles), measured exactly, but only for pairs that sort close together
   by their bottom-k sketch (sorted-neighbourhood blocking, two passes, a
   window of ``WINDOW``): O(n log n) work, and a near-duplicate pair can be
   missed, never invented.  Levels 1 and 2 are exact.

A group is reported only when its members span two or more lineages: versions
of one artifact (linked by ``supersedes``) are expected to look alike, so a
group inside one version chain is not collapse.  One row per group, earliest
member first; ``generations`` lists the members' ``attributes.generation``
values when they carry one.
"""

from __future__ import annotations

import hashlib
import heapq
import re
import zlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import partial
from itertools import repeat
from operator import add, and_, mul
from pathlib import Path

from bundler.graph.index import BundleIndex
from bundler.load.reopen import open_regular
from bundler.model.events import IndividualEvent
from bundler.query.model import QueryResult, QueryRow, capped, row
from bundler.query.values import is_json, media_base
from bundler.verify.result import PayloadState

MAX_TEXT = 64 * 1024
JACCARD = 0.9
WINDOW = 8
SHINGLE = 3
SKETCH = 32
PASSES = 2
COLUMNS = ("match", "count", "first", "generations", "producers", "content", "members")
_COMMENT = re.compile(r"^\s*(#|//|--).*$", re.M)
_TOKEN = re.compile(r"[A-Za-z_][A-Za-z0-9_]*|\d+(?:\.\d+)?|\S")


def _textual(media: str) -> bool:
    return media.startswith("text/") or is_json(media) or media.endswith(("+xml", "/xml")) \
        or media in ("application/x-ndjson", "application/javascript", "application/x-yaml")


class _Groups:
    """Union-find over digests."""

    def __init__(self) -> None:
        self.parent: dict[str, str] = {}

    def find(self, x: str) -> str:
        root = x
        while self.parent.get(root, root) != root:
            root = self.parent[root]
        while self.parent.get(x, x) != root:
            self.parent[x], x = root, self.parent[x]
        return root

    def union(self, a: str, b: str) -> None:
        ra, rb = self.find(a), self.find(b)
        if ra != rb:
            self.parent[max(ra, rb)] = min(ra, rb)


def _version_roots(idx: BundleIndex) -> dict[str, str]:
    """First version of each individual's ``supersedes`` chain: its lineage key."""
    roots: dict[str, str] = {}
    for ind in idx.individuals.values():     # log order: earlier versions come first
        prev = ind.supersedes
        roots[ind.id] = roots.get(prev, prev) if prev and prev in idx.individuals else ind.id
    return roots


def _generations(members: list[IndividualEvent]) -> list[int | float | str]:
    gens = {m.attributes.get("generation") for m in members}
    vals = [g for g in gens if isinstance(g, int | float | str) and not isinstance(g, bool)]
    return sorted(vals, key=lambda g: (isinstance(g, str), g))


@dataclass(frozen=True, slots=True)
class TextFeatures:
    """What levels 2 and 3 need of one text, a function of its bytes alone."""

    norm: str                   # SHA-256 (hex) of the text without comments and whitespace
    count: int                  # distinct shingles
    sketch: tuple[int, ...]     # the SKETCH smallest shingles, ascending


#: Features by payload digest; None for bytes that are no comparable text (not
#: UTF-8, or nothing left once comments and whitespace are removed).
Features = Mapping[str, TextFeatures | None]


def near_duplicates(idx: BundleIndex, arg: str | None) -> QueryResult:
    return near_duplicates_with(idx, {})[0]


def near_duplicates_with(idx: BundleIndex, known: Features
                         ) -> tuple[QueryResult, dict[str, TextFeatures | None]]:
    """The query, taking the features of texts from ``known`` where present; also
    returns the features of every text it considered (what to keep for next time)."""
    by_digest: dict[str, list[IndividualEvent]] = {}
    for ind in idx.individuals.values():
        if ind.payload is not None:
            by_digest.setdefault(ind.payload.digest, []).append(ind)
    groups: list[tuple[str, list[IndividualEvent], str]] = []
    roots = _version_roots(idx)
    for digest, members in by_digest.items():
        if len(members) > 1:
            groups.append(("identical", members, digest))
    norm, texts, used = _read_texts(idx, by_digest, known)
    uf = _Groups()
    by_norm: dict[str, str] = {}
    for digest, h in norm.items():
        other = by_norm.setdefault(h, digest)
        if other != digest:
            uf.union(other, digest)
    norm_groups: dict[str, list[str]] = {}
    for digest in norm:
        norm_groups.setdefault(uf.find(digest), []).append(digest)
    for digests in norm_groups.values():
        if len(digests) > 1:
            members = sorted((m for d in digests for m in by_digest[d]), key=lambda m: m.seq)
            groups.append(("normalised", members, f"{len(digests)} digests"))
    sim = _similar(texts, {d: uf.find(d) for d in norm})
    for digests, low in sim:
        members = sorted((m for d in digests for m in by_digest[d]), key=lambda m: m.seq)
        groups.append((f"similar (Jaccard >= {low:.2f})", members, f"{len(digests)} digests"))
    groups = [g for g in groups if len({roots[m.id] for m in g[1]}) > 1]
    groups.sort(key=lambda g: (min(m.seq for m in g[1]), g[0]))
    rows: list[QueryRow] = []
    for match, members, content in groups:
        members.sort(key=lambda m: m.seq)
        producers = sorted({m.produced_by or "(none)" for m in members})
        gens = _generations(members)
        first = members[0]
        gen_text = f" across generations {', '.join(map(str, gens))}" if gens else ""
        shared = "one payload" if match == "identical" else "near-identical content"
        why = (f"{len(members)} individuals share {shared} ({match}){gen_text}, from "
               f"{len(producers)} producing operator(s); the first is {first.id} at seq "
               f"{first.seq}.")
        rows.append(row(why, [m.seq for m in members], [m.id for m in members],
                        match=match, count=len(members), first=first.id, generations=gens,
                        producers=len(producers), content=content,
                        members=capped(m.id for m in members)))
    return QueryResult("near-duplicates", COLUMNS, tuple(rows)), used


class _Text:
    """One text's features, and its shingles, loaded the first time an exact
    measure needs them (with kept features, the text may not have been read)."""

    __slots__ = ("_load", "_shingles", "count", "sketch", "sketch_set")

    def __init__(self, features: TextFeatures, load: Callable[[], frozenset[int]]) -> None:
        self.count = features.count
        self.sketch = features.sketch
        self.sketch_set = frozenset(self.sketch)
        self._shingles: frozenset[int] | None = None
        self._load = load

    @property
    def shingles(self) -> frozenset[int]:
        if self._shingles is None:
            self._shingles = self._load()
        return self._shingles

    def estimate(self, other: _Text) -> float:
        """Bottom-k estimate of the Jaccard index (exact for small sets)."""
        union = sorted(self.sketch_set | other.sketch_set)[:SKETCH]   # at most 2 x SKETCH
        both = sum(1 for x in union if x in self.sketch_set and x in other.sketch_set)
        return both / len(union) if union else 0.0

    def jaccard(self, other: _Text) -> float:
        a, b = self.shingles, other.shingles
        return len(a & b) / len(a | b) if a or b else 0.0


def _read_texts(idx: BundleIndex, by_digest: dict[str, list[IndividualEvent]],
                known: Features) -> tuple[dict[str, str], dict[str, _Text],
                                          dict[str, TextFeatures | None]]:
    """Normalised-text hash and text per readable small text digest, and the
    features of each (from ``known`` when there)."""
    norm: dict[str, str] = {}
    texts: dict[str, _Text] = {}
    used: dict[str, TextFeatures | None] = {}
    tokens = _Tokens()
    for digest in by_digest:
        st = idx.bundle.payloads.get(digest)
        if st is None or st.state is not PayloadState.VERIFIED or st.path is None \
                or st.size > MAX_TEXT or not _textual(media_base(st.media_type)):
            continue
        if digest in known:
            features = known[digest]
        else:
            try:
                with open_regular(idx.bundle.root / st.path) as fh:
                    data = fh.read()
            except OSError:
                continue            # not kept: the next build tries again
            features, _ = _analyse(data, tokens)
        used[digest] = features
        if features is None:
            continue
        norm[digest] = features.norm
        # shingles are dropped: only the few texts an exact measure needs load
        # them again (all of them would be 1.5 million ints held at 100k events)
        texts[digest] = _Text(features, partial(_reload, idx.bundle.root, st.path, tokens))
    return norm, texts, used


class _Tokens:
    """CRC-32 of each distinct token, computed once per query."""

    def __init__(self) -> None:
        self.hashes: dict[str, int] = {}

    def shingles(self, text: str) -> frozenset[int]:
        toks = _TOKEN.findall(text)
        hashes = self.hashes
        for tok in set(toks).difference(hashes):
            hashes[tok] = zlib.crc32(tok.encode("utf-8"))
        return _shingles(list(map(hashes.__getitem__, toks)))


def _analyse(data: bytes, tokens: _Tokens) -> tuple[TextFeatures | None, frozenset[int] | None]:
    """The features and shingles of one payload's bytes; None for no comparable text."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return None, None
    stripped = _COMMENT.sub("", text)
    squashed = "".join(stripped.split())
    if not squashed:
        return None, None
    shingles = tokens.shingles(stripped)
    features = TextFeatures(hashlib.sha256(squashed.encode("utf-8")).hexdigest(),
                            len(shingles), tuple(heapq.nsmallest(SKETCH, shingles)))
    return features, shingles


def _reload(root: Path, rel: str, tokens: _Tokens) -> frozenset[int]:
    """The shingles of a text known by its features: read now.  A file that cannot
    be read any more measures as empty (no pair is made from it)."""
    try:
        with open_regular(root / rel) as fh:
            _, shingles = _analyse(fh.read(), tokens)
    except OSError:
        return frozenset()
    return shingles or frozenset()


def _shingles(h: list[int]) -> frozenset[int]:
    """Hashed token trigrams (w-shingling): order-aware, so two tables that share
    their column of x values but not their y values do not look alike."""
    if len(h) < SHINGLE:
        return frozenset(h)
    # _mix over every trigram, as maps of C functions (a texts has thousands)
    mixed = map(add, map(add, map(mul, h, repeat(_K1)), map(mul, h[1:], repeat(_K2))), h[2:])
    return frozenset(map(and_, mixed, repeat(_MASK)))


_K1, _K2, _MASK = 0x9E3779B1, 0x85EBCA77, 0xFFFFFFFFFFFF


def _mix(a: int, b: int, c: int) -> int:
    """The hash of one token trigram (what :func:`_shingles` computes for each)."""
    return (a * _K1 + b * _K2 + c) & _MASK


def _similar(texts: dict[str, _Text], norm_group: dict[str, str]
             ) -> list[tuple[list[str], float]]:
    """Groups of digests with shingle Jaccard >= JACCARD (bounded comparisons).

    Texts are sorted by their bottom-k sketch (and again by the sketch without its
    first hash), and each is compared with its WINDOW successors: similar texts
    share most of their smallest hashes, so they sort close together.  A pair is
    estimated from the sketches first and measured exactly only when close."""
    reps: dict[str, str] = {}
    for d in sorted(texts):
        reps.setdefault(norm_group[d], d)   # one representative per normalised group
    pool = list(reps.values())
    uf = _Groups()
    low: dict[tuple[str, str], float] = {}
    for skip in range(PASSES):
        order = sorted(pool, key=lambda d: (texts[d].sketch[skip:], d))
        for i, a in enumerate(order):
            ta = texts[a]
            for c in order[i + 1:i + 1 + WINDOW]:
                tc = texts[c]
                na, nc = ta.count, tc.count
                if min(na, nc) < JACCARD * max(na, nc) or (a, c) in low or (c, a) in low:
                    continue
                if ta.estimate(tc) < JACCARD - 0.1:
                    continue
                j = ta.jaccard(tc)
                if j >= JACCARD:
                    uf.union(a, c)
                    low[(min(a, c), max(a, c))] = j
    by_norm: dict[str, list[str]] = {}
    for d in sorted(texts):
        by_norm.setdefault(norm_group[d], []).append(d)
    weakest: dict[str, float] = {}
    for (a, _), j in low.items():
        r = uf.find(a)
        weakest[r] = min(j, weakest.get(r, 1.0))
    members: dict[str, list[str]] = {}
    for d in pool:
        members.setdefault(uf.find(d), []).append(d)
    out: list[tuple[list[str], float]] = []
    for root, group in members.items():
        if len(group) > 1:
            expanded = sorted(x for g in group for x in by_norm[norm_group[g]])
            out.append((expanded, weakest.get(root, JACCARD)))
    return out
