"""The MkDocs plugin builds review sites into site_dir, and a strict failure stops mkdocs."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def _project(tmp: Path, bundle: str, strict: bool) -> Path:
    shutil.copytree(REPO / "example_bundles" / bundle, tmp / "bundle")
    shutil.copy(REPO / "example_bundles" / "demo-key.pub", tmp / "demo-key.pub")
    (tmp / "docs").mkdir()
    (tmp / "docs" / "index.md").write_text("# Paper\n\nSee the review.\n", encoding="utf-8")
    (tmp / "mkdocs.yml").write_text(
        "site_name: Paper\ntheme:\n  name: material\n  font: false\nplugins:\n  - search\n"
        "  - review-bundler:\n      bundles:\n        - bundle: bundle\n"
        "          dest: reviews/run\n          trust_keys: [demo-key.pub]\n"
        f"          strict: {'true' if strict else 'false'}\n", encoding="utf-8")
    return tmp


def _mkdocs(project: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "mkdocs", "build", "-q"], cwd=project,
                          capture_output=True, text=True, timeout=300,
                          env={"NO_MKDOCS_2_WARNING": "1", "PATH": "/usr/bin:/bin"})


def test_plugin_builds_the_review_site_inside_site_dir(tmp_path: Path) -> None:
    project = _project(tmp_path, "unsupported-gain", strict=True)
    proc = _mkdocs(project)
    assert proc.returncode == 0, proc.stderr
    review = project / "site" / "reviews" / "run"
    assert (review / "index.html").is_file()
    assert (review / "bundle" / "events.jsonl").read_bytes() == (
        REPO / "example_bundles" / "unsupported-gain" / "events.jsonl").read_bytes()
    assert "VALID, signed by a pinned key" in (review / "index.html").read_text("utf-8")
    assert (project / "site" / "index.html").is_file()   # MkDocs' own page is still there


def test_strict_failure_fails_the_mkdocs_build(tmp_path: Path) -> None:
    project = _project(tmp_path, "multi-agent-paper", strict=True)   # one RB503 warning
    proc = _mkdocs(project)
    assert proc.returncode != 0
    assert "review-bundler" in proc.stderr and "strict" in proc.stderr
    assert "Traceback" not in proc.stderr
