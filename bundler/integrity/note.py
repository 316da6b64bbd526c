"""C2SP signed notes (https://c2sp.org/signed-note) and checkpoints, Ed25519 only.

This is the format of Go's ``golang.org/x/mod/sumdb/note``, Sigstore Rekor v2
and the transparency-dev witnesses, so a bundle's checkpoints verify with their
tools and theirs with ours.  Texts are byte-exact: key strings and signature
lines use canonical standard base64 and are rejected otherwise, so there is a
single spelling of every key and signature.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

__all__ = [
    "ALG_ED25519",
    "Checkpoint",
    "KeyFormatError",
    "NoteFormatError",
    "NoteSignature",
    "NoteVerificationError",
    "SignerKey",
    "VerifierKey",
    "b64decode_strict",
    "b64encode",
    "generate_signer",
    "key_id",
    "open_checkpoint",
    "open_note",
    "parse_signer_key",
    "parse_verifier_key",
    "sign_note",
    "split_note",
    "verify_note_signature",
]

ALG_ED25519 = 0x01
SIG_PREFIX = "\u2014 "  # EM DASH, SPACE
MAX_SIGNATURES = 100  # the spec asks for at least 16; Go's note package allows 100
_DECIMAL = re.compile(r"0|[1-9][0-9]*", re.ASCII)  # use with fullmatch: no leading zeros
_CONTROL = re.compile(r"[\x00-\x09\x0b-\x1f]")  # every ASCII control except newline


class KeyFormatError(ValueError):
    """A verifier or signer key string is malformed."""


class NoteFormatError(ValueError):
    """A signed note or checkpoint body is malformed."""


class NoteVerificationError(ValueError):
    """No trusted key verified the note, or a trusted key's signature failed."""


def b64decode_strict(text: str, what: str, error: type[ValueError] = NoteFormatError) -> bytes:
    """Decode standard base64, accepting only its canonical spelling.

    ``b64decode(validate=True)`` still accepts non-zero padding bits, which
    would give one key or signature several texts; re-encoding catches that.
    """
    try:
        raw = base64.b64decode(text.encode("ascii"), validate=True)
    except (UnicodeEncodeError, binascii.Error) as exc:
        raise error(f"{what} is not valid base64: {exc}") from None
    if base64.b64encode(raw).decode("ascii") != text:
        raise error(f"{what} is not canonical base64")
    return raw


def b64encode(raw: bytes) -> str:
    """Standard base64 with padding, as text."""
    return base64.b64encode(raw).decode("ascii")


def _check_name(name: str, error: type[ValueError]) -> None:
    if not name:
        raise error("key name is empty")
    bad = [c for c in name if c == "+" or c.isspace() or c < " " or "\ud800" <= c <= "\udfff"]
    if bad:
        raise error(
            f"key name {name!r} contains {bad[0]!r}; names may not hold spaces, controls or '+'"
        )


def key_id(name: str, public_key: bytes) -> bytes:
    """The 4-byte key ID ``SHA-256(name || 0x0A || 0x01 || pubkey32)[:4]``."""
    material = name.encode("utf-8") + b"\n" + bytes([ALG_ED25519]) + public_key
    return hashlib.sha256(material).digest()[:4]


@dataclass(frozen=True)
class VerifierKey:
    """An Ed25519 verifier key with its note name and key ID."""

    name: str
    key_id: bytes
    public_key: bytes

    def __post_init__(self) -> None:
        _check_name(self.name, KeyFormatError)
        if len(self.key_id) != 4 or len(self.public_key) != 32:
            raise KeyFormatError("a verifier key needs a 4-byte key ID and a 32-byte public key")

    @classmethod
    def from_public_key(cls, name: str, public_key: bytes) -> VerifierKey:
        """Build a key with its computed (recommended) key ID."""
        return cls(name=name, key_id=key_id(name, public_key), public_key=public_key)

    def to_text(self) -> str:
        """``NAME+hex(keyid)+base64(0x01 || pub32)``, as Go's ``note.NewVerifier`` reads it."""
        key64 = b64encode(bytes([ALG_ED25519]) + self.public_key)
        return f"{self.name}+{self.key_id.hex()}+{key64}"


def parse_verifier_key(text: str) -> VerifierKey:
    """Parse ``NAME+KEYID+BASE64`` strictly (lowercase hex key ID, canonical base64)."""
    parts = text.split("+", 2)  # the base64 part may itself contain '+'
    if len(parts) != 3:
        raise KeyFormatError(f"verifier key {text!r} is not NAME+KEYID+KEY")
    name, hex_id, key64 = parts
    _check_name(name, KeyFormatError)
    if not re.fullmatch(r"[0-9a-f]{8}", hex_id):
        raise KeyFormatError(f"key ID {hex_id!r} is not 8 lowercase hex digits")
    raw = b64decode_strict(key64, "verifier key", KeyFormatError)
    if not raw or raw[0] != ALG_ED25519:
        alg = f"0x{raw[0]:02x}" if raw else "none"
        raise KeyFormatError(f"unsupported key algorithm {alg} (only 0x01 Ed25519)")
    if len(raw) != 33:
        raise KeyFormatError(f"Ed25519 public key is {len(raw) - 1} bytes, expected 32")
    public_key = raw[1:]
    computed = key_id(name, public_key)
    if computed.hex() != hex_id:
        raise KeyFormatError(
            f"key ID {hex_id} does not match the name and key (computed {computed.hex()})"
        )
    return VerifierKey(name=name, key_id=computed, public_key=public_key)


@dataclass(frozen=True)
class SignerKey:
    """An Ed25519 signing key (32-byte seed) with its note name; never printed."""

    name: str
    private_key: bytes = field(repr=False)

    def __post_init__(self) -> None:
        _check_name(self.name, KeyFormatError)
        if len(self.private_key) != 32:
            raise KeyFormatError("an Ed25519 signer key is a 32-byte seed")

    def _key(self) -> Ed25519PrivateKey:
        return Ed25519PrivateKey.from_private_bytes(self.private_key)

    def verifier(self) -> VerifierKey:
        return VerifierKey.from_public_key(self.name, self._key().public_key().public_bytes_raw())

    def to_text(self) -> str:
        """``PRIVATE+KEY+NAME+hex(keyid)+base64(0x01 || seed32)``, Go's signer key format."""
        kid = self.verifier().key_id.hex()
        return f"PRIVATE+KEY+{self.name}+{kid}+{b64encode(bytes([ALG_ED25519]) + self.private_key)}"

    def sign(self, message: bytes) -> bytes:
        return self._key().sign(message)


def parse_signer_key(text: str) -> SignerKey:
    """Parse a Go note private key string; the key ID must match the derived public key."""
    parts = text.split("+", 4)
    if len(parts) != 5 or parts[0] != "PRIVATE" or parts[1] != "KEY":
        raise KeyFormatError("signer key is not PRIVATE+KEY+NAME+KEYID+KEY")
    _, _, name, hex_id, key64 = parts
    _check_name(name, KeyFormatError)
    if not re.fullmatch(r"[0-9a-f]{8}", hex_id):
        raise KeyFormatError(f"key ID {hex_id!r} is not 8 lowercase hex digits")
    raw = b64decode_strict(key64, "signer key", KeyFormatError)
    if len(raw) != 33 or raw[0] != ALG_ED25519:
        raise KeyFormatError("signer key is not 0x01 followed by a 32-byte Ed25519 seed")
    signer = SignerKey(name=name, private_key=raw[1:])
    computed = signer.verifier().key_id.hex()
    if computed != hex_id:
        raise KeyFormatError(f"key ID {hex_id} does not match the key (computed {computed})")
    return signer


def generate_signer(name: str) -> SignerKey:
    """A fresh random signer; the seed comes from ``os.urandom``."""
    return SignerKey(name=name, private_key=os.urandom(32))


@dataclass(frozen=True)
class NoteSignature:
    """One signature line: key name, 4-byte key ID and the signature proper."""

    name: str
    key_id: bytes
    signature: bytes

    def to_line(self) -> str:
        return f"{SIG_PREFIX}{self.name} {b64encode(self.key_id + self.signature)}\n"


def _check_text(text: str, what: str) -> None:
    m = _CONTROL.search(text)
    if m:
        raise NoteFormatError(f"{what} contains control character {m.group()!r}")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise NoteFormatError(f"{what} is not valid Unicode (lone surrogate)") from None


def sign_note(body: str, signers: Sequence[SignerKey]) -> str:
    """Sign ``body`` (the note text, ending in newline) with every signer, in order."""
    if not body.endswith("\n"):
        raise NoteFormatError("note text must end with a newline")
    _check_text(body, "note text")
    if not signers:
        raise ValueError("a signed note needs at least one signer")
    message = body.encode("utf-8")
    lines = []
    for signer in signers:
        kid = signer.verifier().key_id
        lines.append(NoteSignature(signer.name, kid, signer.sign(message)).to_line())
    return body + "\n" + "".join(lines)


def split_note(text: str) -> tuple[str, list[NoteSignature]]:
    """Split a signed note into its text and signature lines, without verifying.

    The text is everything up to and including the newline before the *last*
    blank line (the text may itself contain blank lines).  Every signature
    line must be well formed; signatures of other algorithms are kept.
    """
    _check_text(text, "signed note")
    split = text.rfind("\n\n")
    if split < 0:
        raise NoteFormatError("no blank line separates the note text from its signatures")
    body, block = text[: split + 1], text[split + 2 :]
    if not block:
        raise NoteFormatError("signed note has no signature lines")
    if not block.endswith("\n"):
        raise NoteFormatError("the last signature line does not end with a newline")
    lines = block[:-1].split("\n")
    if len(lines) > MAX_SIGNATURES:
        raise NoteFormatError(f"signed note has {len(lines)} signatures (limit {MAX_SIGNATURES})")
    sigs = []
    for number, line in enumerate(lines, 1):
        if not line.startswith(SIG_PREFIX):
            raise NoteFormatError(f"signature line {number} does not start with '\u2014 '")
        name, sep, sig64 = line[len(SIG_PREFIX) :].partition(" ")
        if not sep:
            raise NoteFormatError(f"signature line {number} has no space before the signature")
        _check_name(name, NoteFormatError)
        raw = b64decode_strict(sig64, f"signature on line {number}")
        if len(raw) < 5:
            raise NoteFormatError(f"signature on line {number} is too short ({len(raw)} bytes)")
        sigs.append(NoteSignature(name=name, key_id=raw[:4], signature=raw[4:]))
    return body, sigs


def verify_note_signature(body: str, sig: NoteSignature, key: VerifierKey) -> bool:
    """Whether ``sig`` is ``key``'s valid Ed25519 signature over ``body`` (UTF-8)."""
    if sig.name != key.name or sig.key_id != key.key_id or len(sig.signature) != 64:
        return False
    try:
        message = body.encode("utf-8")
        Ed25519PublicKey.from_public_bytes(key.public_key).verify(sig.signature, message)
    except (InvalidSignature, ValueError):
        return False
    return True


def open_note(text: str, keys: Sequence[VerifierKey]) -> tuple[str, list[VerifierKey]]:
    """Verify a signed note against trusted ``keys``; return its text and the keys that signed.

    C2SP rules: signatures from unknown keys are ignored; a signature from a
    known key (same name *and* ID) that fails rejects the whole note; at least
    one known key must have signed.
    """
    body, sigs = split_note(text)
    signed_by: list[VerifierKey] = []
    for sig in sigs:
        matches = {k for k in keys if k.name == sig.name and k.key_id == sig.key_id}
        if len(matches) > 1:
            raise NoteVerificationError(f"ambiguous key {sig.name}+{sig.key_id.hex()}")
        if not matches:
            continue
        key = matches.pop()
        if not verify_note_signature(body, sig, key):
            raise NoteVerificationError(f"invalid signature for key {key.name}+{key.key_id.hex()}")
        if key not in signed_by:
            signed_by.append(key)
    if not signed_by:
        names = ", ".join(f"{s.name}+{s.key_id.hex()}" for s in sigs)
        raise NoteVerificationError(f"note has no signature from a trusted key (signed by {names})")
    return body, signed_by


@dataclass(frozen=True)
class Checkpoint:
    """A C2SP tlog-checkpoint body: origin, tree size, root hash, extension lines."""

    origin: str
    size: int
    root: bytes
    extensions: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if not self.origin or "\n" in self.origin:
            raise NoteFormatError("checkpoint origin must be one non-empty line")
        if not 0 <= self.size < 2**64:
            raise NoteFormatError(f"checkpoint size {self.size} outside 0..2**64-1")
        if len(self.root) != 32:
            raise NoteFormatError(f"checkpoint root is {len(self.root)} bytes, expected 32")
        for ext in self.extensions:
            if not ext or "\n" in ext:
                raise NoteFormatError("checkpoint extension lines must be non-empty single lines")

    def body(self) -> str:
        """The note text: ``origin\\nSIZE\\nbase64(root)\\n`` plus extension lines."""
        lines = [self.origin, str(self.size), b64encode(self.root), *self.extensions]
        return "".join(line + "\n" for line in lines)

    @classmethod
    def parse(cls, body: str) -> Checkpoint:
        """Parse a checkpoint note text strictly (as :meth:`body` writes it)."""
        _check_text(body, "checkpoint")
        if not body.endswith("\n"):
            raise NoteFormatError("checkpoint text must end with a newline")
        lines = body[:-1].split("\n")
        if len(lines) < 3:
            raise NoteFormatError(f"checkpoint has {len(lines)} lines, needs origin, size, root")
        if any(not line for line in lines):
            raise NoteFormatError("checkpoint contains an empty line")
        origin, size_text, root64, *extensions = lines
        if not _DECIMAL.fullmatch(size_text):
            raise NoteFormatError(f"checkpoint size {size_text!r} is not a plain decimal")
        size = int(size_text)
        if size >= 2**64:
            raise NoteFormatError(f"checkpoint size {size_text} does not fit in 64 bits")
        root = b64decode_strict(root64, "checkpoint root hash")
        if len(root) != 32:
            raise NoteFormatError(f"checkpoint root hash is {len(root)} bytes, expected 32")
        return cls(origin=origin, size=size, root=root, extensions=tuple(extensions))


def open_checkpoint(text: str, keys: Sequence[VerifierKey]) -> tuple[Checkpoint, list[VerifierKey]]:
    """Verify a signed checkpoint note and parse its body; return it and the keys that signed."""
    body, signed_by = open_note(text, keys)
    return Checkpoint.parse(body), signed_by
