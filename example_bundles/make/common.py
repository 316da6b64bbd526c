"""Shared plumbing for the example generators: demo key, fixed clock, fresh folder.

Determinism rules for every generator:
* timestamps come from :class:`FixedClock`, never from the wall clock;
* random numbers come from ``random.Random(<fixed seed>)``;
* no dict/set iteration order leaks into bytes without sorting;
* plots are written by hand-built SVG or PNG code (no matplotlib metadata);
* payload sources (scripts, libraries, tests) live as data files under
  ``sources/<bundle>/`` and are read as bytes, never re-encoded.
"""

from __future__ import annotations

import csv
import io
import shutil
from collections.abc import Iterable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from bundler.author import BundleWriter
from bundler.integrity.note import SignerKey, parse_signer_key

HERE = Path(__file__).resolve().parent
EXAMPLES = HERE.parent
DEMO_KEY_FILE = EXAMPLES / "DEMO-KEY-NOT-SECRET.key"
DEMO_PUB_FILE = EXAMPLES / "demo-key.pub"
SOURCES = HERE / "sources"


def demo_signer() -> SignerKey:
    """The committed, deliberately public demo key.  Never use it for real bundles."""
    return parse_signer_key(DEMO_KEY_FILE.read_text(encoding="utf-8").strip())


def demo_verifier_text() -> str:
    lines = DEMO_PUB_FILE.read_text(encoding="utf-8").splitlines()
    return next(ln for ln in lines if ln and not ln.startswith("#"))


class FixedClock:
    """Deterministic RFC 3339 times: start, then +step seconds per call.

    ``advance()`` jumps ahead (e.g. for an instrument result arriving days
    later) without breaking monotonic order.
    """

    def __init__(self, start: str, step_seconds: float = 7.0) -> None:
        self.now = datetime.fromisoformat(start.replace("Z", "+00:00")).astimezone(UTC)
        self.step = timedelta(seconds=step_seconds)

    def __call__(self) -> str:
        self.now += self.step
        return self.now.strftime("%Y-%m-%dT%H:%M:%SZ")

    def advance(self, **delta: float) -> None:
        self.now += timedelta(**delta)


def fresh_writer(name: str, *, title: str, description: str, start: str,
                 checkpoint_every: int = 50, out_dir: Path | None = None,
                 step_seconds: float = 7.0) -> tuple[BundleWriter, FixedClock]:
    """Delete and recreate ``example_bundles/<name>`` and return a writer on it."""
    target = (out_dir or EXAMPLES) / name
    if target.exists():
        shutil.rmtree(target)
    clock = FixedClock(start, step_seconds)
    writer = BundleWriter.create(
        target, title=title, description=description, signer=demo_signer(),
        origin=f"example.invalid/review-bundler/{name}", created=start,
        checkpoint_every=checkpoint_every, clock=clock, generator="review-bundler examples")
    return writer, clock


def csv_bytes(header: list[str], rows: Iterable[Iterable[Any]]) -> bytes:
    """A CSV payload: ``\\n`` line ends on every platform, cells as ``csv`` writes them."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(header)
    w.writerows(rows)
    return buf.getvalue().encode()


def source_bytes(bundle: str, name: str) -> bytes:
    """The exact bytes of ``sources/<bundle>/<name>.txt``.

    Those files are payloads (the code an agent wrote or ran), not modules of
    this project: the ``.txt`` suffix keeps ruff, mypy and pytest off them,
    since changing a byte to please a linter would change a committed bundle.
    """
    return (SOURCES / bundle / f"{name}.txt").read_bytes()


def source_text(bundle: str, name: str) -> str:
    return source_bytes(bundle, name).decode("utf-8")
