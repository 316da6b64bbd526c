"""Scale in bounded memory: the 1M-event generator and the 100k-event site build.

Both run as CLI children under an address-space cap (RLIMIT_AS, set in
``preexec_fn``), so growing past the cap is a MemoryError in the child and a
failed test, not a slow machine.  RLIMIT_AS counts virtual memory, which is
larger than resident memory (interpreter mappings, thread stacks, allocator
arenas), so each cap leaves room above the measured peak; it is inherited by
the build's ``dot`` children, each of which is small and gets its own cap.

Not timed: benchmarks live in ``bench/`` (``python -m bench.run_all``).
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
from pathlib import Path

import pytest

from bundler.synth import generate, synthetic_signer

MiB = 1 << 20
GiB = 1 << 30


def _cap(limit: int) -> None:
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))


def _run_capped(argv: list[str], limit: int, timeout: float) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "bundler", *argv], capture_output=True,
                          text=True, timeout=timeout, preexec_fn=lambda: _cap(limit))


@pytest.mark.slow
def test_one_million_events_generate_under_256_mib(tmp_path: Path) -> None:
    """1M events through ``review-bundler generate`` under a 256 MiB cap.

    Measured: generating 1M events peaks at 164 MiB of address space (VmPeak;
    150 MiB resident) when called as a library, against 76 MiB at 100k; the
    growth is the writer's set of ids, the one O(events) structure it must
    keep.  A generator that kept the event models would need gigabytes.
    About 90 s on an idle 2-core machine (tests/synth has the 100k variant).
    """
    out = tmp_path / "m"
    proc = _run_capped(["generate", str(out), "--events", "1000000"], 256 * MiB, timeout=900)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.splitlines() == [str(out), synthetic_signer(0).verifier().to_text()]
    lines = 0
    last = b""
    with open(out / "events.jsonl", "rb") as fh:
        for last in fh:  # noqa: B007 - the loop keeps the last line
            lines += 1
    assert lines == 1_000_000
    assert json.loads(last)["seq"] == 999_999


@pytest.fixture(scope="module")
def bundle_100k(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("perf") / "b100k"
    generate(path, events=100_000)
    return path


def _claim_ids(bundle: Path) -> set[str]:
    ids = set()
    with open(bundle / "events.jsonl", "rb") as fh:
        for line in fh:
            if b'"type":"claim"' in line:
                ev = json.loads(line)
                if ev["type"] == "claim":
                    ids.add(ev["id"])
    return ids


BUILD_CAP = 1 * GiB


@pytest.mark.slow
def test_100k_event_site_builds_under_1_gib(bundle_100k: Path, tmp_path: Path) -> None:
    """``review-bundler build`` of 100k events under a 1 GiB address-space cap.

    The target is under 2 GB resident at 1M events; a build whose memory does
    not grow with the log fits 100k in far less.  Measured on the streamed
    build (b72db59): VmPeak 410 MiB, VmHWM 229 MiB for an in-process build, so
    1 GiB leaves room for allocator and thread-stack reservations, while the
    build before it, which held every page and graph at once (3.7 GB RSS),
    fails.  About 2 minutes on an idle 2-core machine.
    """
    from bundler.render.pages.base import listing_path, n_pages
    from bundler.render.urls import claim_href

    site = tmp_path / "site"
    key = synthetic_signer(0).verifier().to_text()
    proc = _run_capped(["build", str(bundle_100k), "-o", str(site), "--trust-key", key, "-q"],
                       BUILD_CAP, timeout=1800)
    assert "Traceback" not in proc.stderr
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.strip() == (site / "index.html").as_uri()
    claims = _claim_ids(bundle_100k)
    assert len(claims) > 2_000
    pages = {p.relative_to(site).as_posix() for p in (site / "claims").glob("*.html")}
    listing = {listing_path("claims/index.html", k) for k in range(n_pages(len(claims)))}
    assert len(listing) > 1         # the claims listing is paginated at this size
    assert pages == {claim_href(c) for c in claims} | listing
    assert os.path.getsize(site / "search" / "docs.js") > 0
