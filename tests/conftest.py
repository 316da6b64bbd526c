"""Shared pytest fixtures."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

_TESTS_DIR = Path(__file__).resolve().parent


def _find_shared_dir() -> Path | None:
    """``$REVIEW_BUNDLER_SHARED``, else the nearest ``<ancestor>/../shared`` above ``tests/``."""
    env = os.environ.get("REVIEW_BUNDLER_SHARED")
    if env:
        return Path(env)
    for folder in (_TESTS_DIR, *_TESTS_DIR.parents):
        candidate = folder.parent / "shared"
        if candidate.is_dir():
            return candidate
    return None


@pytest.fixture(scope="session")
def vectors_dir() -> Path:
    """The public test vectors (``shared/vectors``); their absence is a failure, not a skip.

    CI checks out ``shared/`` beside the clone; silently skipping would let the
    integrity code ship untested against the standards it claims to follow.
    """
    shared = _find_shared_dir()
    vectors = shared / "vectors" if shared is not None else None
    if vectors is None or not (vectors / "SOURCES.md").is_file():
        where = (
            f"REVIEW_BUNDLER_SHARED={os.environ['REVIEW_BUNDLER_SHARED']!r} has no "
            "vectors/SOURCES.md"
            if os.environ.get("REVIEW_BUNDLER_SHARED")
            else f"no <ancestor>/../shared/vectors/SOURCES.md above {_TESTS_DIR}"
        )
        pytest.fail(
            f"public test vectors not found: {where}. Check out shared/ beside the clone "
            "or set REVIEW_BUNDLER_SHARED to the shared/ folder.",
            pytrace=False,
        )
    return vectors


@pytest.fixture(scope="session")
def transcripts_dir(vectors_dir: Path) -> Path:
    """The real agent sessions (``shared/fixtures/transcripts``), beside the vectors;
    missing, they fail the tests that read them, as the vectors do."""
    transcripts = vectors_dir.parent / "fixtures" / "transcripts"
    if not (transcripts / "SOURCES.txt").is_file():
        pytest.fail(f"real agent sessions not found: no {transcripts}/SOURCES.txt",
                    pytrace=False)
    return transcripts


@pytest.fixture(scope="session", autouse=True)
def _private_build_cache(tmp_path_factory: pytest.TempPathFactory) -> None:
    """Builds in tests (and the CLI processes they start) record their page caches in a
    temporary folder, never in the user's ``~/.cache``.  Tests that need a cache of their
    own still set ``REVIEW_BUNDLER_CACHE_DIR`` themselves."""
    if "REVIEW_BUNDLER_CACHE_DIR" not in os.environ:
        os.environ["REVIEW_BUNDLER_CACHE_DIR"] = str(tmp_path_factory.mktemp("build-cache"))
