"""Declared resource limits.  Every one is documented in docs/format.md."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Limits:
    #: Longest accepted event line, in bytes (without the newline).  Lines
    #: are read in bounded chunks, so a longer line is rejected without
    #: being held in memory.
    max_line_bytes: int = 1 << 20
    #: Total bytes an archive (.zip/.tar.gz) may expand to.
    max_expanded_bytes: int = 4 << 30
    #: Number of entries an archive may contain.
    max_archive_entries: int = 2_000_000
    #: Largest compression ratio tolerated for a single zip member.
    max_compression_ratio: int = 1_000
    #: Largest side file (bundle.json, manifest.json, a checkpoint).
    max_side_file_bytes: int = 256 << 20


DEFAULT_LIMITS = Limits()
