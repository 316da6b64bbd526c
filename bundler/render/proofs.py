"""Per-claim inclusion proofs in C2SP ``tlog-proof@v1`` text.

Each proof carries the event's exact bytes in its ``extra`` line, so it is
self-contained: with the signer's key, a reviewer can check the claim's
event against the signed checkpoint without the rest of the site.

A claim is proved against the *first* good checkpoint that covers it, not
the newest: that proof is a receipt that never changes as the log grows (so
appending events leaves every old claim page byte-identical and reusable),
and nothing is lost, because the build recomputes every checkpoint's root
from the log, so each later checkpoint is known to extend the first one.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Iterable

from bundler import layout
from bundler.errors import InputError
from bundler.integrity.merkle import MerkleTree, leaf_hash
from bundler.integrity.proof import TlogProof
from bundler.load.reopen import reopen
from bundler.verify.result import CheckpointCheck, LoadedBundle


def checkpoint_finder(checkpoints: list[CheckpointCheck],
                      ) -> Callable[[int], CheckpointCheck | None]:
    """``find(seq)``: the smallest checkpoint with a matching root and a good signature
    that covers ``seq`` (None if none does).

    The good checkpoints are sorted once, then each claim bisects.  Testing every
    checkpoint for every claim grew with both: a 1M-event log has 1,000 checkpoints and
    ten times the claims of 100k, so it cost 58 times as much (9 s of the 1M build).
    The sort is stable, so among checkpoints of one size the first in the bundle wins."""
    good = sorted((c for c in checkpoints if c.root_matches and c.any_ok),
                  key=lambda c: c.size)
    sizes = [c.size for c in good]

    def find(seq: int) -> CheckpointCheck | None:
        i = bisect.bisect_right(sizes, seq)
        return good[i] if i < len(good) else None
    return find


def _read_lines(bundle: LoadedBundle, line_numbers: set[int]) -> dict[int, bytes]:
    """The lines of the log the proofs carry, each checked against the leaf hash the
    verifier computed for it.  The bundle's stamp catches a log rewritten during the
    build only as finely as the file system's clock; a proof page must not show a line
    other than the one proved, so these bytes are held to the hash, not to the clock."""
    out: dict[int, bytes] = {}
    if not line_numbers:
        return out
    last = max(line_numbers)
    path = bundle.root / layout.EVENTS
    with reopen(path) as fh:
        for no, raw in enumerate(fh, start=1):
            if no in line_numbers:
                line = raw.rstrip(b"\n")
                if leaf_hash(line) != bundle.leaf_hash(no - 1):
                    raise InputError(f"{path} changed during the build: line {no} is not "
                                     "the line verified")
                out[no] = line
            if no >= last:
                break
    return out


def claim_proofs(bundle: LoadedBundle, seqs: Iterable[int]) -> dict[int, str]:
    wanted = {s for s in seqs if s in bundle.event_lines}
    if not wanted or not bundle.checkpoints:
        return {}
    tree = MerkleTree(bundle.leaves())
    lines = _read_lines(bundle, {bundle.event_lines[s] for s in wanted})
    proofs: dict[int, str] = {}
    covering = checkpoint_finder(bundle.checkpoints)
    for seq in sorted(wanted):
        cp = covering(seq)
        data = lines.get(bundle.event_lines[seq])
        if cp is None or data is None:
            continue
        index = bundle.event_lines[seq] - 1   # leaf index = line position
        hashes = tuple(tree.inclusion_proof(index, cp.size))
        proofs[seq] = TlogProof(index=index, hashes=hashes, checkpoint_note=cp.note,
                                extra=data).to_text()
    return proofs
