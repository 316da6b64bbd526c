"""Every named bad-input fixture gives its exact diagnostics, never a traceback.

Each fixture runs twice: through the library (exact error set, or the typed
exception for a container that cannot be opened) and through the CLI in a
subprocess (exit code, machine-readable output, no "Traceback" anywhere).
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import textwrap
import tracemalloc
from pathlib import Path

import pytest
from fixtures.bad import (
    BAD_FIXTURES,
    BOMB_BYTES,
    BY_NAME,
    HUGE_LINE_BYTES,
    SMALL_LIMITS,
    BadFixture,
)
from fixtures.builders import error_codes, make_signer, verify, warning_codes, where

from bundler.diagnostics import Severity
from bundler.errors import InputError
from bundler.verify import PayloadState, VerifyOptions, verify_bundle

CLI = [sys.executable, "-m", "bundler"]


def _library_codes(fx: BadFixture, path: Path) -> tuple[set[str], set[str]]:
    opts = VerifyOptions(limits=fx.limits)
    if fx.raises:
        with pytest.raises(InputError) as info:
            verify_bundle(path, opts)
        diags = info.value.diagnostics
        return ({d.code for d in diags if d.severity is Severity.ERROR},
                {d.code for d in diags if d.severity is Severity.WARNING})
    report = verify_bundle(path, opts)
    assert report.valid == (not fx.errors)
    return error_codes(report), warning_codes(report)


@pytest.mark.parametrize("fx", BAD_FIXTURES, ids=lambda f: f.name)
def test_library_reports_exact_codes(fx: BadFixture, tmp_path: Path) -> None:
    path = fx.build(tmp_path)
    errors, warnings = _library_codes(fx, path)
    assert errors == fx.errors
    assert fx.warnings <= warnings


@pytest.mark.parametrize("fx", [f for f in BAD_FIXTURES if f.cli], ids=lambda f: f.name)
def test_cli_exit_code_and_no_traceback(fx: BadFixture, tmp_path: Path) -> None:
    path = fx.build(tmp_path)
    proc = subprocess.run([*CLI, "validate", str(path), "--format", "json"],
                          capture_output=True, text=True, timeout=120)
    assert "Traceback" not in proc.stdout + proc.stderr
    assert proc.returncode == fx.exit_code, proc.stderr
    if fx.raises:
        assert proc.stdout == ""
        assert proc.stderr.startswith("review-bundler: error [RB902]")
        for code in fx.errors:
            assert f"  {code} " in proc.stderr
    else:
        doc = json.loads(proc.stdout)
        assert doc["valid"] == (not fx.errors)
        assert {d["code"] for d in doc["diagnostics"] if d["severity"] == "error"} == fx.errors


# ------------------------------------------------------------ specific checks
def test_malformed_json_is_located(tmp_path: Path) -> None:
    report = verify(BY_NAME["malformed_json"].build(tmp_path))
    assert where(report, "RB112") == [("events.jsonl", 14, None)]


def test_truncated_last_line_is_ignored_not_hashed(tmp_path: Path) -> None:
    report = verify(BY_NAME["truncated_last_line"].build(tmp_path))
    assert len(report.bundle.leaf_hashes) // 32 == 13  # the partial line is not an event
    assert report.signed_prefix == 13
    assert "RB305" not in warning_codes(report)


def test_non_canonical_line_still_hashed_as_written(tmp_path: Path) -> None:
    report = verify(BY_NAME["non_canonical"].build(tmp_path))
    assert where(report, "RB116") == [("events.jsonl", 14, None)]  # found before parsing seq
    assert [e.seq for e in report.bundle.events][-1] == 13  # parsed, checked, kept


def test_missing_metadata_pinned_leaves_only_rb105(tmp_path: Path) -> None:
    path = BY_NAME["missing_metadata"].build(tmp_path)
    report = verify(path, pin=make_signer().verifier().to_text())
    assert error_codes(report) == {"RB105"}


def test_symlinked_payload_folder_is_not_followed(tmp_path: Path) -> None:
    report = verify(BY_NAME["symlinked_payload_folder"].build(tmp_path))
    states = sorted(p.state for p in report.bundle.payloads.values())
    # The bytes outside the bundle are right, but they must never be read.
    assert states == [PayloadState.MISSING, PayloadState.MISSING, PayloadState.REDACTED]


def test_zip_bomb_declared_size_is_checked_before_expanding(tmp_path: Path) -> None:
    path = BY_NAME["zip_bomb_declared"].build(tmp_path)
    with pytest.raises(InputError) as info:
        verify_bundle(path, VerifyOptions(limits=SMALL_LIMITS))
    [diag] = info.value.diagnostics
    assert diag.message.startswith("declared expanded size ")
    assert f"exceeds the limit of {SMALL_LIMITS.max_expanded_bytes}" in diag.message


def test_zip_bomb_ratio_with_default_limits(tmp_path: Path) -> None:
    with pytest.raises(InputError) as info:
        verify_bundle(BY_NAME["zip_bomb_ratio"].build(tmp_path))
    [diag] = info.value.diagnostics
    assert f"expands {BOMB_BYTES} bytes from" in diag.message


def test_tar_bomb_stopped_by_bytes_actually_expanded(tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    path = BY_NAME["tar_bomb"].build(tmp_path)
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    with pytest.raises(InputError) as info:
        verify_bundle(path, VerifyOptions(limits=SMALL_LIMITS))
    [diag] = info.value.diagnostics
    assert diag.message == f"archive expands past {SMALL_LIMITS.max_expanded_bytes} bytes"
    assert list(scratch.iterdir()) == []  # the partial expansion was removed


def test_tar_bomb_within_generous_limits_expands(tmp_path: Path) -> None:
    """Control: the same archive passes the container step when the limit allows it."""
    path = BY_NAME["tar_bomb"].build(tmp_path)
    from bundler.load.limits import Limits

    report = verify_bundle(path, VerifyOptions(limits=Limits(max_expanded_bytes=64 << 20)))
    assert error_codes(report) == set()
    assert warning_codes(report) == {"RB307", "RB411"}  # the filler is an unlisted file


def test_huge_line_library_memory_stays_bounded(tmp_path: Path) -> None:
    path = BY_NAME["huge_line"].build(tmp_path)
    assert (path / "events.jsonl").stat().st_size > HUGE_LINE_BYTES
    tracemalloc.start()
    try:
        report = verify(path)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert error_codes(report) == {"RB113"}
    assert where(report, "RB113") == [("events.jsonl", 14, None)]
    assert peak < 8 * 1024 * 1024, f"peak traced memory {peak} bytes"


_RSS_PROBE = textwrap.dedent("""
    import resource, sys
    from bundler.cli import main
    from bundler.verify import verify_bundle  # import everything before the baseline
    import bundler.reports
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    code = main(["validate", sys.argv[1], "--format", "json"])
    after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(before, after, code, file=sys.stderr)
""")


def test_huge_line_cli_peak_rss_stays_bounded(tmp_path: Path) -> None:
    path = BY_NAME["huge_line"].build(tmp_path)
    proc = subprocess.run([sys.executable, "-c", _RSS_PROBE, str(path)], capture_output=True,
                          text=True, timeout=120)
    before_kb, after_kb, code = map(int, proc.stderr.split())
    assert code == 1
    assert "RB113" in {d["code"] for d in json.loads(proc.stdout)["diagnostics"]}
    # ru_maxrss is in KiB on Linux: the 100 MB line may add at most a few MiB.
    assert after_kb - before_kb < 16 * 1024, (before_kb, after_kb)
