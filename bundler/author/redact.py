"""Redact a payload in an existing bundle (``review-bundler redact``)."""

from __future__ import annotations

import os

from bundler.author.writer import BundleWriter
from bundler.errors import WriterError
from bundler.integrity.note import SignerKey
from bundler.model.events import EventBase


def redact_payload(bundle: str | os.PathLike[str], digest: str, *, reason: str, authority: str,
                   signer: SignerKey, stream: str = "redaction-cli") -> EventBase:
    """Append a redaction record (declaring ``stream`` if needed), delete the bytes,
    update the manifest and sign a new checkpoint."""
    writer = BundleWriter.open(bundle, signer=signer)
    try:
        run = writer.first_run
        if run is None:
            raise WriterError("the bundle has no run to attach the redaction to")
        if stream not in writer.known_ids:
            writer.append("stream", id=stream, run=run, kind="human",
                          name="redaction (review-bundler redact)")
        return writer.redact(digest, reason=reason, authority=authority, run=run, stream=stream)
    finally:
        writer.close()
