"""A bundle file or folder the reader may not read stops with RB902, not a verdict.

An unreadable payload is not a missing one: calling the bundle invalid for it
would blame the bundle for the reader's permissions, and a traceback calling
it a bug in review-bundler is no better.  Every command that verifies exits 2
naming the path.

Permissions do not bind root, which CI runs as: the in-process tests make the
reads fail as a permission error would; the subprocess tests drop to the
``nobody`` user where the machine allows it (and say so when they skip).
"""

from __future__ import annotations

import builtins
import errno
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fixtures.builders import make_valid_bundle

from bundler import layout
from bundler.errors import InputError
from bundler.verify import VerifyOptions, verify_bundle

NOBODY = 65534


def _deny(monkeypatch: pytest.MonkeyPatch, target: Path) -> None:
    """Opening ``target`` fails as it does for a user without read permission."""
    real_open = builtins.open

    def guarded(file: Any, *args: Any, **kwargs: Any) -> Any:
        if isinstance(file, (str, os.PathLike)) and Path(file).absolute() == target.absolute():
            raise PermissionError(errno.EACCES, "Permission denied", os.fspath(file))
        return real_open(file, *args, **kwargs)
    monkeypatch.setattr(builtins, "open", guarded)


@pytest.mark.parametrize("which", ["events", "payload"])
def test_an_unreadable_file_is_an_input_error(which: str, tmp_path: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    ref = make_valid_bundle(tmp_path / "bundle")
    target = ref.path / layout.EVENTS if which == "events" else ref.payload_file("table")
    _deny(monkeypatch, target)
    with pytest.raises(InputError, match=f"cannot read .*{target.name}: Permission denied"):
        verify_bundle(ref.path, VerifyOptions(trusted_keys=(ref.verifier_key_text,)))


def _as_nobody() -> list[str] | None:
    """The command prefix that runs this interpreter as ``nobody``, if it can."""
    setpriv = shutil.which("setpriv")
    if os.geteuid() != 0 or setpriv is None:
        return None
    prefix = [setpriv, f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups"]
    try:
        ok = subprocess.run([*prefix, sys.executable, "-c", "import bundler"],
                            capture_output=True, timeout=60, check=False).returncode == 0
    except (OSError, subprocess.SubprocessError):
        ok = False
    return prefix if ok else None


@pytest.fixture
def shared_tmp() -> Iterator[Path]:
    """A folder ``nobody`` can reach (pytest's own are private to the user)."""
    path = Path(tempfile.mkdtemp(prefix="review-bundler-unreadable-"))
    path.chmod(0o755)
    yield path
    for p in path.rglob("*"):
        if p.is_dir() and not p.is_symlink():
            p.chmod(0o755)
    shutil.rmtree(path)


@pytest.mark.parametrize("which", ["events.jsonl", "payload", "payloads/sha256", "checkpoints"])
@pytest.mark.parametrize("command", ["validate", "build"])
def test_as_another_user(which: str, command: str, shared_tmp: Path) -> None:
    prefix = _as_nobody()
    if prefix is None:
        pytest.skip("needs root, setpriv and an interpreter the nobody user can run")
    tmp_path = shared_tmp
    ref = make_valid_bundle(tmp_path / "bundle")
    target = ref.payload_file("table") if which == "payload" else ref.path / which
    for p in tmp_path.rglob("*"):
        p.chmod(0o755 if p.is_dir() else 0o644)
    target.chmod(0o000)
    site = tmp_path / "out" / "site"
    site.parent.mkdir(mode=0o777)
    site.parent.chmod(0o777)
    args = [command, str(ref.path)] + (["-o", str(site)] if command == "build" else [])
    env = {**os.environ, "HOME": str(site.parent), "REVIEW_BUNDLER_CACHE_DIR": str(site.parent)}
    proc = subprocess.run([*prefix, sys.executable, "-m", "bundler", *args],
                          capture_output=True, text=True, timeout=300, check=False, env=env)
    assert proc.returncode == 2, proc.stderr
    assert f"error [RB902]: cannot read {target}: Permission denied" in proc.stderr
    assert "internal error" not in proc.stderr
    assert not site.exists()
