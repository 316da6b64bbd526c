"""Verify a bundle and index it for querying, keeping payload bytes reachable."""

from __future__ import annotations

import os
from contextlib import ExitStack

from bundler.graph.index import BundleIndex, build_index
from bundler.verify import VerificationReport, VerifyOptions, verify_bundle


def open_index(path: str | os.PathLike[str], options: VerifyOptions | None,
               stack: ExitStack) -> tuple[VerificationReport, BundleIndex]:
    """Queries answer from whatever verified; an invalid bundle is the caller's to flag.

    ``stack`` keeps an expanded ``.zip``/``.tar.gz`` alive while payloads are read."""
    opts = options or VerifyOptions()
    if not opts.keep_events:
        raise ValueError("queries need the events: keep_events must be true")
    report = verify_bundle(path, opts, stack=stack)
    return report, build_index(report.bundle)
