"""File names inside a bundle folder (one place, so writer and loader agree)."""

from __future__ import annotations

METADATA = "bundle.json"
EVENTS = "events.jsonl"
MANIFEST = "manifest.json"
PAYLOADS = "payloads"
CHECKPOINTS = "checkpoints"
ZERO_HASH = "0" * 64


def payload_path(digest: str) -> str:
    """Content-addressed location of a payload: ``payloads/sha256/<hex>``."""
    algo, _, hexdigest = digest.partition(":")
    return f"{PAYLOADS}/{algo}/{hexdigest}"


def salt_path(digest: str) -> str:
    return payload_path(digest) + ".salt"


def checkpoint_path(size: int) -> str:
    return f"{CHECKPOINTS}/{size:010d}.note"
