"""No byte from outside the bundle reaches the site, whatever its side files point at.

A bundle's ``events.jsonl``, ``manifest.json`` or ``bundle.json`` can be a link
to any file of the machine that builds it (``~/.ssh/id_ed25519``).  The verifier
reports the link (RB103) and reads nothing through it; the site used to ship its
"copy of the bundle" by opening those three names anyway, which followed the link
and published the file.  The fuzzing that found it deleted ``events.jsonl``: the
build then failed with an internal error (RB900) instead of a site.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from fixtures.bad import BY_NAME, OUTSIDE_SECRET
from site_helpers import build

from bundler import layout

#: fixture -> the side file it breaks (a link out, a folder, or absent)
BROKEN_SIDE_FILE = {
    "symlinked_event_log": layout.EVENTS,
    "symlinked_manifest": layout.MANIFEST,
    "symlinked_metadata": layout.METADATA,
    "symlink_loop": layout.METADATA,
    "event_log_folder": layout.EVENTS,
    "missing_event_log": layout.EVENTS,
    "missing_manifest": layout.MANIFEST,
}


def _files(site: Path) -> dict[str, bytes]:
    return {p.relative_to(site).as_posix(): p.read_bytes()
            for p in sorted(site.rglob("*")) if p.is_file()}


@pytest.mark.parametrize("name", sorted(BROKEN_SIDE_FILE))
def test_a_broken_side_file_is_listed_not_shipped(name: str, tmp_path: Path) -> None:
    rel = BROKEN_SIDE_FILE[name]
    result = build(BY_NAME[name].build(tmp_path), tmp_path / "site")
    assert not result.report.valid
    files = _files(result.output)
    leaks = [path for path, data in files.items() if OUTSIDE_SECRET.strip() in data]
    assert leaks == []
    assert f"bundle/{rel}" not in files
    shipped = {layout.EVENTS, layout.MANIFEST, layout.METADATA} - {rel}
    assert {f"bundle/{r}" for r in shipped} <= set(files)  # the rest is still there
    downloads = files["downloads.html"].decode("utf-8")
    assert f"<code>{rel}</code>" in downloads and "<strong>not included</strong>" in downloads
    assert f'href="bundle/{rel}"' not in downloads
    for other in shipped:
        assert f'href="bundle/{other}"' in downloads


def test_a_link_leaving_the_bundle_is_not_followed(tmp_path: Path) -> None:
    """A link beside the side files (to /etc/passwd) is reported and never read."""
    result = build(BY_NAME["symlink_leaving_bundle"].build(tmp_path), tmp_path / "site")
    assert "RB103" in {d.code for d in result.report.diagnostics}
    files = _files(result.output)
    assert [p for p, data in files.items() if b"root:" in data and b":/bin/" in data] == []
    assert "bundle/notes.txt" not in files
