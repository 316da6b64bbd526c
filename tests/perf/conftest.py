"""Fixtures for the performance-behaviour tests: synthetic bundles and an isolated cache."""

from __future__ import annotations

import calendar
import hashlib
import json
import shutil
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from bundler.author import BundleWriter
from bundler.render.site import BuildOptions, BuildResult, build_site
from bundler.synth import START, SyntheticClock, generate, synthetic_signer
from bundler.synth.generator import Done, Synth
from bundler.synth.shapes import episode

SEED = 0


def key() -> str:
    return synthetic_signer(SEED).verifier().to_text()


def build(bundle: Path, out: Path, *, jobs: int = 1, incremental: bool = True) -> BuildResult:
    return build_site(bundle, BuildOptions(output=out, trusted_keys=(key(),), jobs=jobs,
                                           incremental=incremental))


def tree(root: Path) -> dict[str, str]:
    """relative path -> SHA-256 of every file."""
    return {p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file()}


def _last_time(bundle: Path) -> str:
    lines = (bundle / "events.jsonl").read_bytes().splitlines()
    return str(json.loads(lines[-1])["time"])


def reopen(src: Path, dst: Path) -> BundleWriter:
    """A copy of ``src`` at ``dst``, open for appending as a producer that kept going
    would write (same metadata and key, timestamps after the last event)."""
    shutil.copytree(src, dst)
    clock = SyntheticClock()
    last = calendar.timegm(time.strptime(_last_time(dst), "%Y-%m-%dT%H:%M:%SZ"))
    clock.offset = last - calendar.timegm(time.strptime(START, "%Y-%m-%dT%H:%M:%SZ")) + 2
    return BundleWriter.open(dst, signer=synthetic_signer(SEED), clock=clock)


def grow(src: Path, dst: Path, extra: int) -> Path:
    """A copy of ``src`` with ``extra`` more events appended at the end (new runs)."""
    writer = reopen(src, dst)
    synth = Synth(writer, seed=SEED + 1, events=writer.size + extra, payload_bytes="small",
                  clock=writer.clock)
    with writer:
        try:
            while True:
                synth.start_run()
                for _ in range(synth.rng.randint(2, 6)):
                    episode(synth)
        except Done:
            pass
    return dst


@pytest.fixture(autouse=True)
def _own_cache(tmp_path_factory: pytest.TempPathFactory,
               monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Page-cache manifests go to a temporary folder, never the user's cache."""
    monkeypatch.setenv("REVIEW_BUNDLER_CACHE_DIR", str(tmp_path_factory.mktemp("rb-cache")))
    yield


@pytest.fixture(scope="session")
def synth_3k(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return generate(tmp_path_factory.mktemp("synth") / "b3k", events=3000, seed=SEED)
