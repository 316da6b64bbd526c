"""The append-only bundle writer.

It owns every integrity detail so that producers cannot get them wrong:
``seq``/``prev`` assignment, canonical lines, content-addressed payloads,
the manifest, periodic signed checkpoints and correct redaction.

Crash behaviour: each event line is written whole and flushed before the
next one starts, payload files are written (atomically) before the event
that commits to them, and the manifest is rewritten atomically at every
checkpoint.  A bundle abandoned mid-run therefore verifies up to its last
complete line, and everything up to its last checkpoint is signed.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import secrets
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from pathlib import Path
from types import TracebackType
from typing import Any, BinaryIO

from pydantic import ValidationError

from bundler import layout
from bundler.errors import WriterError
from bundler.integrity.canonical import CanonicalError, canonicalize, parse_strict
from bundler.integrity.merkle import MerkleAccumulator, leaf_hash
from bundler.integrity.note import Checkpoint, SignerKey, sign_note
from bundler.model.events import (
    EVENT_MODELS,
    FORMAT_VERSION,
    EventBase,
    PayloadRef,
    error_message,
)
from bundler.model.metadata import BundleMetadata, Manifest, ManifestEntry

Clock = Callable[[], str]


def sha256_digest(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


def utc_now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _atomic_write(path: Path, data: bytes, *, sync: bool = True) -> None:
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "wb") as fh:
        fh.write(data)
        if sync:
            fh.flush()
            os.fsync(fh.fileno())
    os.replace(tmp, path)


class BundleWriter:
    """Append events to a bundle folder.

    Use :meth:`create` for a new bundle and :meth:`open` to append to an
    existing one (for example to redact a payload after the fact).
    """

    def __init__(self, root: Path, metadata: BundleMetadata, signer: SignerKey, *,
                 checkpoint_every: int, clock: Clock | None,
                 state: tuple[int, str, MerkleAccumulator, dict[str, ManifestEntry], set[str]]
                 | None = None, first_run: str | None = None) -> None:
        self.root = root
        self.metadata = metadata
        self.signer = signer
        self.checkpoint_every = checkpoint_every
        self.clock: Clock = clock or utc_now
        if state is None:
            self._seq, self._prev, self._tree = 0, layout.ZERO_HASH, MerkleAccumulator()
            self._manifest: dict[str, ManifestEntry] = {}
            self._ids: set[str] = set()
        else:
            self._seq, self._prev, self._tree, self._manifest, self._ids = state
        self._events: BinaryIO | None = open(root / layout.EVENTS, "ab")  # noqa: SIM115
        self._last_checkpoint = self._seq if state is not None else 0
        self._manifest_dirty = False
        self._fragments: dict[str, str] = {}
        self._first_run: str | None = first_run

    # ------------------------------------------------------------------ setup
    @classmethod
    def create(cls, path: str | os.PathLike[str], *, title: str, signer: SignerKey,
               description: str = "", origin: str | None = None, created: str | None = None,
               checkpoint_every: int = 100, clock: Clock | None = None,
               generator: str = "review-bundler") -> BundleWriter:
        root = Path(path)
        if root.exists() and any(root.iterdir()):
            raise WriterError(f"{root} exists and is not empty; refusing to overwrite a bundle")
        if checkpoint_every < 1:
            raise WriterError("checkpoint_every must be at least 1")
        (root / layout.PAYLOADS / "sha256").mkdir(parents=True, exist_ok=True)
        (root / layout.CHECKPOINTS).mkdir(exist_ok=True)
        meta = BundleMetadata(
            format="review-bundle/1",
            title=title, description=description, created=created or (clock or utc_now)(),
            origin=origin or f"review-bundler/{secrets.token_hex(8)}",
            keys=[signer.verifier().to_text()], checkpoint_interval=checkpoint_every,
            generator=generator,
        )
        _atomic_write(root / layout.METADATA, _json_file(meta.model_dump(mode="json")))
        (root / layout.EVENTS).touch()
        writer = cls(root, meta, signer, checkpoint_every=checkpoint_every, clock=clock)
        writer._write_manifest()
        return writer

    @classmethod
    def open(cls, path: str | os.PathLike[str], *, signer: SignerKey,
             clock: Clock | None = None) -> BundleWriter:
        """Reopen a closed bundle for appending.

        The existing log is re-read and its chain recomputed; this trusts the
        local file (run ``validate`` first if it came from elsewhere).
        """
        root = Path(path)
        try:
            meta = BundleMetadata.model_validate_json((root / layout.METADATA).read_bytes())
            manifest = Manifest.model_validate_json((root / layout.MANIFEST).read_bytes())
        except (OSError, ValidationError) as exc:
            raise WriterError(f"cannot reopen {root}: {exc}") from exc
        if signer.verifier().to_text() not in meta.keys:
            raise WriterError("the signer key is not one of the bundle's declared keys")
        tree, prev, seq, ids = MerkleAccumulator(), layout.ZERO_HASH, 0, set()
        first_run: str | None = None
        with open(root / layout.EVENTS, "rb") as fh:
            for raw in fh:
                if not raw.endswith(b"\n"):
                    raise WriterError("the event log ends in a partial line; repair it first")
                line = raw[:-1]
                try:
                    obj = parse_strict(line)
                except CanonicalError as exc:
                    raise WriterError(f"the event log is not valid at line {seq + 1}: {exc}; "
                                      "run validate") from exc
                if not isinstance(obj, dict) or obj.get("seq") != seq or obj.get("prev") != prev:
                    raise WriterError(f"the event log is not a valid chain at line {seq + 1}")
                ids.add(str(obj.get("id")))
                if first_run is None and obj.get("type") == "run":
                    first_run = str(obj.get("id"))
                h = leaf_hash(line)
                tree.append(h)
                prev, seq = h.hex(), seq + 1
        entries = {e.digest: e for e in manifest.payloads}
        return cls(root, meta, signer, checkpoint_every=meta.checkpoint_interval or 100,
                   clock=clock, state=(seq, prev, tree, entries, ids), first_run=first_run)

    # ---------------------------------------------------------------- payloads
    def put_payload(self, data: bytes, media_type: str, name: str | None = None, *,
                    salt: bytes | None = None) -> PayloadRef:
        """Store bytes under their digest and return the commitment for an event.

        With ``salt`` (16 bytes) the commitment is SHA-256(salt || bytes), so a
        guessable payload cannot be confirmed once bytes and salt are deleted.
        """
        self._check_open()
        if salt is not None and len(salt) != 16:
            raise WriterError("a payload salt must be exactly 16 bytes")
        digest = sha256_digest((salt or b"") + data)
        rel = layout.payload_path(digest)
        existing = self._manifest.get(digest)
        if existing is not None and existing.state == "redacted":
            raise WriterError(f"{digest} was redacted; its bytes cannot be stored again")
        if existing is None:
            target = self.root / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            # Not fsynced one by one: the checkpoint that first covers the
            # committing event syncs the log, and a payload lost to a power cut
            # before that shows up as "missing" in the unsigned tail, never as
            # a silent gap in the signed range.
            _atomic_write(target, data, sync=False)
            if salt is not None:
                _atomic_write(self.root / layout.salt_path(digest), salt, sync=False)
            self._manifest[digest] = ManifestEntry(
                digest=digest, size=len(data), media_type=media_type, path=rel,
                salted=salt is not None)
            self._fragments.pop(digest, None)
            self._manifest_dirty = True
        return PayloadRef(digest=digest, size=len(data), media_type=media_type, name=name,
                          salted=salt is not None)

    # ------------------------------------------------------------------ events
    def append(self, type: str, **fields: Any) -> EventBase:
        """Validate, canonicalise and append one event; returns the model."""
        self._check_open()
        model = EVENT_MODELS.get(type)
        if model is None:
            raise WriterError(f"unknown event type {type!r}")
        body: dict[str, Any] = {k: v for k, v in fields.items() if v is not None}
        body.update(seq=self._seq, prev=self._prev, type=type)
        body.setdefault("time", self.clock())
        if type == "run":
            body.setdefault("run", body.get("id"))
        if type == "stream":
            body.setdefault("stream", body.get("id"))
        try:
            event = model.model_validate(body)
        except ValidationError as exc:
            problems = "; ".join(f"{'.'.join(map(str, e['loc'])) or 'event'}: "
                                 f"{error_message(e)} (got {e['input']!r:.80})"
                                 for e in exc.errors())
            raise WriterError(f"invalid {type} event {body.get('id')!r}: {problems}") from exc
        if event.id in self._ids:
            raise WriterError(f"duplicate object id {event.id!r}")
        try:  # the schema takes any int; JCS only those a double holds exactly
            line = canonicalize(event.model_dump(mode="json", exclude_defaults=True,
                                                 exclude={"type"}) | {"type": type})
        except CanonicalError as exc:
            raise WriterError(f"invalid {type} event {event.id!r}: {exc}") from exc
        if type == "run" and self._first_run is None:
            self._first_run = event.id
        return self._write_line(line, event)

    def _write_line(self, line: bytes, event: EventBase) -> EventBase:
        assert self._events is not None
        self._events.write(line + b"\n")
        self._events.flush()
        h = leaf_hash(line)
        self._tree.append(h)
        self._ids.add(event.id)
        self._prev, self._seq = h.hex(), self._seq + 1
        if self._seq - self._last_checkpoint >= self.checkpoint_every:
            self.checkpoint()
        return event

    def redact(self, digest: str, *, reason: str, authority: str, run: str, stream: str,
               id: str | None = None, time: str | None = None) -> EventBase:
        """Append the redaction record, then delete the bytes (and salt).

        The event comes first: a crash between the two steps leaves a
        *leaked* payload, which the verifier reports loudly, rather than a
        silently *missing* one.
        """
        entry = self._manifest.get(digest)
        if entry is None:
            raise WriterError(f"no payload {digest} in this bundle")
        if entry.state == "redacted":
            raise WriterError(f"{digest} is already redacted")
        event = self.append("redaction", id=id or f"redaction:{digest[7:23]}", target=digest,
                            reason=reason, authority=authority, run=run, stream=stream, time=time)
        for rel in (entry.path, layout.salt_path(digest)):
            with contextlib.suppress(FileNotFoundError):
                (self.root / rel).unlink()
        self._manifest[digest] = entry.model_copy(update={"state": "redacted"})
        self._fragments.pop(digest, None)
        self._write_manifest()
        return event

    # ------------------------------------------------------------- checkpoints
    def checkpoint(self) -> str:
        """Sign the current tree head; also flushes the manifest to disk."""
        self._check_open()
        assert self._events is not None
        self._events.flush()
        os.fsync(self._events.fileno())
        if self._manifest_dirty:
            self._write_manifest()
        cp = Checkpoint(origin=self.metadata.origin, size=self._tree.size, root=self._tree.root())
        note = sign_note(cp.body(), [self.signer])
        _atomic_write(self.root / layout.checkpoint_path(cp.size), note.encode("utf-8"))
        self._last_checkpoint = self._seq
        return note

    def close(self) -> None:
        if self._events is None:
            return
        if self._seq != self._last_checkpoint or self._seq == 0:
            self.checkpoint()
        elif self._manifest_dirty:
            self._write_manifest()
        self._events.close()
        self._events = None

    @property
    def known_ids(self) -> frozenset[str]:
        return frozenset(self._ids)

    @property
    def first_run(self) -> str | None:
        return self._first_run

    @property
    def size(self) -> int:
        return self._seq

    @property
    def head(self) -> str:
        return self._prev

    def __enter__(self) -> BundleWriter:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()

    # ----------------------------------------------------------------- helpers
    def _check_open(self) -> None:
        if self._events is None:
            raise WriterError("the bundle writer is closed")

    def _write_manifest(self) -> None:
        """Rewrite manifest.json from cached per-entry JSON fragments.

        Byte-identical to ``_json_file(Manifest(...).model_dump())`` (a test
        checks it) but O(changed entries) in encoding work: the manifest is
        rewritten at every checkpoint, and re-encoding every entry each time
        made bundle writing quadratic in the number of payloads.
        """
        frags = []
        for digest in sorted(self._manifest):
            frag = self._fragments.get(digest)
            if frag is None:
                entry = self._manifest[digest].model_dump(mode="json")
                frag = "\n".join("    " + line for line in json.dumps(
                    entry, indent=2, sort_keys=True, ensure_ascii=False).splitlines())
                self._fragments[digest] = frag
            frags.append(frag)
        body = ",\n".join(frags)
        payloads = f"[\n{body}\n  ]" if frags else "[]"
        text = f'{{\n  "format": "review-bundle-manifest/1",\n  "payloads": {payloads}\n}}\n'
        _atomic_write(self.root / layout.MANIFEST, text.encode("utf-8"))
        self._manifest_dirty = False


def _json_file(obj: Mapping[str, Any]) -> bytes:
    """Side files are pretty-printed (humans read them) but key-sorted (deterministic)."""
    return (json.dumps(obj, indent=2, sort_keys=True, ensure_ascii=False) + "\n").encode("utf-8")


__all__ = ["FORMAT_VERSION", "BundleWriter", "sha256_digest"]
