"""Checkpoints: parse the signed notes, check signatures, then roots.

Signatures are checked against two key sets kept apart on purpose: keys the
reviewer pinned, and keys the bundle declares about itself.  A bundle that
only carries its own keys proves integrity, not authorship (DESIGN-NOTES §2).
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass

from bundler import layout
from bundler.diagnostics import DiagnosticSink, Location
from bundler.integrity.note import (
    Checkpoint,
    KeyFormatError,
    NoteFormatError,
    VerifierKey,
    parse_verifier_key,
    split_note,
    verify_note_signature,
)
from bundler.load.source import BundleSource
from bundler.verify.result import CheckpointCheck, SignatureCheck

CHECKPOINT_NAME = re.compile(r"^checkpoints/(\d{10})\.note$")


@dataclass(frozen=True)
class KeyRing:
    pinned: tuple[VerifierKey, ...]
    declared: tuple[VerifierKey, ...]

    def lookup(self, name: str, key_id: bytes) -> tuple[VerifierKey | None, bool, bool]:
        """Return (key, pinned?, declared?) for a signature line's name and key id."""
        pin = next((k for k in self.pinned if k.name == name and k.key_id == key_id), None)
        dec = next((k for k in self.declared if k.name == name and k.key_id == key_id), None)
        return pin or dec, pin is not None, dec is not None


def declared_keys(texts: list[str], sink: DiagnosticSink) -> tuple[VerifierKey, ...]:
    keys = []
    for text in texts:
        try:
            keys.append(parse_verifier_key(text))
        except KeyFormatError as exc:
            sink.emit("RB311", f"bundle.json declares a malformed key: {exc}",
                      Location(path=layout.METADATA))
    return tuple(keys)


@dataclass
class ParsedCheckpoint:
    path: str
    checkpoint: Checkpoint
    note: str
    signatures: tuple[SignatureCheck, ...]


def read_checkpoints(src: BundleSource, ring: KeyRing, origin: str | None,
                     sink: DiagnosticSink, max_bytes: int,
                     seen: dict[str, str] | None = None) -> list[ParsedCheckpoint]:
    """The checkpoints that parse, with their signatures checked.  ``seen`` gets the hex
    SHA-256 of each file read, by path: what a copy of it is later held to."""
    out: list[ParsedCheckpoint] = []
    for rel in src.files(under=layout.CHECKPOINTS):
        loc = Location(path=rel)
        m = CHECKPOINT_NAME.match(rel)
        p = src.path(rel)
        if m is None or p is None:
            sink.emit("RB411", f"unexpected file {rel!r} in checkpoints/", loc)
            continue
        if p.stat().st_size > max_bytes:
            sink.emit("RB304", f"checkpoint file is larger than {max_bytes} bytes", loc)
            continue
        try:
            data = p.read_bytes()
            if seen is not None:
                seen[rel] = hashlib.sha256(data).hexdigest()
            text = data.decode("utf-8")
            body, sigs = split_note(text)
            cp = Checkpoint.parse(body)
        except (UnicodeDecodeError, NoteFormatError, ValueError) as exc:
            sink.emit("RB304", f"malformed checkpoint: {exc}", loc)
            continue
        if int(m.group(1)) != cp.size:
            sink.emit("RB304", f"file name says size {int(m.group(1))} but the checkpoint says "
                      f"{cp.size}", loc)
        if origin is not None and cp.origin != origin:
            sink.emit("RB310", f"origin {cp.origin!r} is not this bundle's origin {origin!r}", loc)
        checks = []
        unknown = []
        for sig in sigs:
            key, pinned, declared = ring.lookup(sig.name, sig.key_id)
            valid = key is not None and verify_note_signature(body, sig, key)
            checks.append(SignatureCheck(sig.name, sig.key_id.hex(), valid, pinned, declared))
            if key is None:
                unknown.append(sig)
            elif not valid:
                sink.emit("RB302", f"signature by {sig.name}+{sig.key_id.hex()} does not verify",
                          loc)
        # C2SP signed notes: signatures by unknown keys are ignored (a witness may
        # cosign).  They only matter when no known key signed the checkpoint at all.
        if not any(c.valid for c in checks):
            for sig in unknown:
                sink.emit("RB309", f"signature by {sig.name}+{sig.key_id.hex()}, a key that is "
                          "neither pinned nor declared", loc)
        if ring.pinned and not any(c.valid and c.pinned for c in checks):
            signers = ", ".join(f"{c.key_name}+{c.key_id}" for c in checks if c.valid) or "none"
            sink.emit("RB308", f"no valid signature by a pinned key (valid signers: {signers})",
                      loc)
        out.append(ParsedCheckpoint(rel, cp, text, tuple(checks)))
    return out


def settle_checkpoints(parsed: list[ParsedCheckpoint], roots: dict[int, bytes], n_events: int,
                       ring: KeyRing, sink: DiagnosticSink) -> list[CheckpointCheck]:
    """Compare each checkpoint with the roots computed from the log."""
    out = []
    for pc in parsed:
        cp = pc.checkpoint
        loc = Location(path=pc.path)
        computed = roots.get(cp.size)
        if cp.size > n_events:
            sink.emit("RB303", f"checkpoint covers {cp.size} events but the log holds "
                      f"{n_events}: events were removed after it was signed", loc)
        elif computed is not None and computed != cp.root:
            sink.emit("RB301", f"checkpoint root {cp.root.hex()} != computed {computed.hex()} "
                      f"over the first {cp.size} events", loc)
        out.append(CheckpointCheck(pc.path, cp.origin, cp.size, cp.root.hex(), pc.note,
                                   computed == cp.root, pc.signatures))
    if n_events and not out:
        sink.emit("RB306", "the log has no signed checkpoint", Location(path=layout.CHECKPOINTS))
    elif out:
        last = max(c.size for c in out)
        if last < n_events:
            sink.emit("RB305", f"{n_events - last} event(s) after the last checkpoint "
                      f"(size {last}) are not covered by a signature",
                      Location(path=layout.EVENTS, seq=last))
        if not ring.pinned and all(c.any_ok for c in out):
            sink.emit("RB307", "every checkpoint verifies, but only with keys the bundle declares "
                      "itself; pin the signer's key with --trust-key to prove authorship",
                      Location(path=layout.METADATA))
    return out
