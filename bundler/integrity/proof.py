"""C2SP ``tlog-proof@v1`` (https://c2sp.org/tlog-proof): one self-contained claim proof.

Layout, one item per line (U+000A)::

    c2sp.org/tlog-proof@v1
    extra BASE64            optional; here: the event's canonical bytes
    index N                 decimal, no leading zeros
    BASE64                  zero or more inclusion proof hashes, leaf's sibling first
    (empty line)
    ORIGIN                  the signed checkpoint note, verbatim
    SIZE
    BASE64(root)

    — NAME BASE64(keyid || signature)

The spec calls ``extra`` unauthenticated.  In a review bundle it carries the
event bytes, whose leaf hash the inclusion proof then authenticates, so the
proof can be checked offline with nothing but the reviewer's pinned keys.
Parsing is strict: exactly one text per proof, so ``to_text(parse(t)) == t``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from bundler.integrity.merkle import HASH_SIZE, ProofError, leaf_hash, verify_inclusion
from bundler.integrity.note import (
    Checkpoint,
    NoteFormatError,
    NoteVerificationError,
    VerifierKey,
    b64decode_strict,
    b64encode,
    open_checkpoint,
    split_note,
)

__all__ = [
    "HEADER",
    "CheckpointSignatureError",
    "ProofFormatError",
    "TlogProof",
    "verify_tlog_proof",
]

HEADER = "c2sp.org/tlog-proof@v1"
MAX_PROOF_HASHES = 64  # a tree of at most 2**64 leaves has paths of at most 64 hashes
_DECIMAL = re.compile(r"0|[1-9][0-9]*", re.ASCII)


class ProofFormatError(ValueError):
    """A tlog-proof text is malformed."""


class CheckpointSignatureError(ProofError):
    """The proof's checkpoint is not signed by any trusted key (or a trusted signature fails)."""


@dataclass(frozen=True)
class TlogProof:
    """A parsed ``tlog-proof@v1``: leaf index, inclusion hashes, signed checkpoint, extra."""

    index: int
    hashes: tuple[bytes, ...]
    checkpoint_note: str
    extra: bytes | None = None

    def to_text(self) -> str:
        """Serialise exactly as the spec (and transparency-dev's Go code) writes it."""
        lines = [HEADER]
        if self.extra is not None:
            lines.append(f"extra {b64encode(self.extra)}")
        lines.append(f"index {self.index}")
        lines.extend(b64encode(h) for h in self.hashes)
        return "\n".join(lines) + "\n\n" + self.checkpoint_note

    def checkpoint(self) -> Checkpoint:
        """The checkpoint body, parsed but *not* signature-checked."""
        body, _ = split_note(self.checkpoint_note)
        return Checkpoint.parse(body)

    @classmethod
    def parse(cls, text: str) -> TlogProof:
        """Parse strictly; the checkpoint must be a well-formed signed checkpoint note."""
        head, sep, note = text.partition("\n")
        if head != HEADER:
            raise ProofFormatError(f"first line is {head[:40]!r}, expected {HEADER!r}")
        if not sep:
            raise ProofFormatError("proof ends after the header line")
        line, _, rest = note.partition("\n")
        extra: bytes | None = None
        if line.startswith("extra "):
            extra = _b64(line[len("extra ") :], "extra data")
            line, _, rest = rest.partition("\n")
        if not line.startswith("index "):
            raise ProofFormatError(f"expected 'index N', found {line[:40]!r}")
        index_text = line[len("index ") :]
        if not _DECIMAL.fullmatch(index_text) or int(index_text) >= 2**64:
            raise ProofFormatError(f"index {index_text!r} is not a decimal below 2**64")
        hashes: list[bytes] = []
        while True:
            line, sep, rest = rest.partition("\n")
            if not sep:
                raise ProofFormatError("no empty line between the proof hashes and the checkpoint")
            if not line:
                break
            if len(hashes) == MAX_PROOF_HASHES:
                raise ProofFormatError(f"more than {MAX_PROOF_HASHES} proof hashes")
            digest = _b64(line, f"proof hash {len(hashes)}")
            if len(digest) != HASH_SIZE:
                raise ProofFormatError(f"proof hash {len(hashes)} is {len(digest)} bytes")
            hashes.append(digest)
        try:
            body, _ = split_note(rest)
            Checkpoint.parse(body)
        except NoteFormatError as exc:
            raise ProofFormatError(f"checkpoint: {exc}") from exc
        return cls(index=int(index_text), hashes=tuple(hashes), checkpoint_note=rest, extra=extra)


def _b64(text: str, what: str) -> bytes:
    try:
        return b64decode_strict(text, what)
    except NoteFormatError as exc:
        raise ProofFormatError(str(exc)) from None


def verify_tlog_proof(
    proof: TlogProof,
    leaf_data: bytes | None,
    keys: Sequence[VerifierKey],
    *,
    origin: str | None = None,
) -> Checkpoint:
    """Verify ``proof`` for ``leaf_data`` (default: its ``extra``); return the checkpoint.

    Steps, failing closed:

    1. the checkpoint note carries a valid signature from one of ``keys``
       (C2SP rules: unknown keys ignored, a failing known key rejects);
    2. if ``origin`` is given, the checkpoint is from that log;
    3. when both ``leaf_data`` and ``extra`` are present they are equal (a
       mismatch means the proof was built for some other event);
    4. ``SHA-256(0x00 || leaf_data)`` is at ``index`` in the checkpointed tree.

    Raises :class:`CheckpointSignatureError` (a :class:`ProofError`) for step 1,
    ``ProofError`` for 2-4, and ``NoteFormatError`` for a malformed checkpoint.
    """
    try:
        checkpoint, _signed_by = open_checkpoint(proof.checkpoint_note, keys)
    except NoteVerificationError as exc:
        raise CheckpointSignatureError(f"checkpoint not trusted: {exc}") from exc
    if origin is not None and checkpoint.origin != origin:
        raise ProofError(f"checkpoint origin is {checkpoint.origin!r}, expected {origin!r}")
    if leaf_data is None:
        if proof.extra is None:
            raise ProofError("no leaf data given and the proof has no extra line")
        leaf_data = proof.extra
    elif proof.extra is not None and proof.extra != leaf_data:
        raise ProofError("the proof's extra data differs from the leaf data being verified")
    verify_inclusion(
        proof.index, checkpoint.size, leaf_hash(leaf_data), proof.hashes, checkpoint.root
    )
    return checkpoint
