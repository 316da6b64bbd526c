"""What a rebuild may reuse: the build-wide salt, the bundle fingerprint, whole-site reuse.

Two levels, both checked against the bytes of the previous site (see
:mod:`bundler.output.cache`):

* **Whole site.**  The bundle fingerprint covers everything a site is made
  from: the salt (code, templates, theme, libraries, Graphviz, site-wide
  options), the bytes of every bundle file the site reads or ships, the
  payload states and the validation report.  When it matches the previous
  build's, every file of the previous site is carried over without building
  a single page context: an unchanged bundle costs its verification plus
  one read of the old site.
* **Per page.**  Otherwise each page is fingerprinted from its own inputs
  (:mod:`bundler.render.chunks`) and reused when those are unchanged.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.metadata
import platform
import shutil
import subprocess
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from bundler import __version__, layout
from bundler.output import SiteWriter
from bundler.output.cache import Encoder, PreviousSite, digest_text, tree_digest
from bundler.render.chunks import CSP, SiteInfo
from bundler.render.environment import PACKAGE_DIR, TEMPLATES_DIR, theme_dirs
from bundler.verify import VerificationReport

_LIBRARIES = ("jinja2", "markupsafe", "pygments", "markdown-it-py", "pydantic")


def _dot_version() -> str:
    exe = shutil.which("dot")
    if exe is None:
        return "none"
    try:
        proc = subprocess.run([exe, "-V"], capture_output=True, timeout=30, check=False)
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    return (proc.stdout + proc.stderr).decode("utf-8", "replace").strip()


@functools.cache
def _code_digest() -> str:
    """The Python code of this process, digested once: what runs is what was imported
    at start, whatever is edited on disk while a long-lived process builds sites."""
    return tree_digest([PACKAGE_DIR], "*.py")


def build_salt(site: SiteInfo, theme: Path | None, base_url: str | None) -> str:
    """What every page depends on besides its own inputs; any change rebuilds all."""
    libs = []
    for dist in _LIBRARIES:
        try:
            libs.append(f"{dist}={importlib.metadata.version(dist)}")
        except importlib.metadata.PackageNotFoundError:
            libs.append(f"{dist}=?")
    parts = [__version__, platform.python_version(), *libs, _dot_version(),
             _code_digest(), tree_digest([TEMPLATES_DIR, *theme_dirs(theme)]),
             Encoder(None).encode((site.title, str(site.description_html), site.trust,
                                   site.trust_label, site.errors, site.warnings,
                                   site.generator, site.nav)),
             CSP, base_url or ""]
    return digest_text("\x00".join(parts))


def bundle_fingerprint(report: VerificationReport, salt: str, report_json: str) -> str:
    """Everything the site is a function of, hashed (no page context is built).

    Bundle files are hashed whole, so a byte the verifier tolerates (a crash
    tail, say) still counts; payload bytes are covered by their verified
    digests and states.
    """
    bundle = report.bundle
    h = hashlib.sha256(f"{salt}\x00{len(report_json)}:{report_json}".encode("utf-8",
                                                                           "surrogatepass"))
    h.update(bytes(bundle.leaf_hashes))
    files = [layout.METADATA, layout.EVENTS, layout.MANIFEST,
             *(c.path for c in bundle.checkpoints)]
    for rel in files:
        h.update(f"\x00{len(rel)}:{rel}".encode("utf-8", "surrogateescape"))
        try:
            with open(bundle.root / rel, "rb") as fh:
                h.update(hashlib.file_digest(fh, "sha256").digest())
        except OSError:
            h.update(b"absent")
    states = [(d, st.state.value, st.size, st.media_type, st.path, st.redaction_seq,
               st.reason, st.authority) for d, st in sorted(bundle.payloads.items())]
    h.update(Encoder(None).encode((states, list(bundle.checkpoints))).encode(
        "utf-8", "surrogatepass"))
    return h.hexdigest()


def reuse_everything(previous: PreviousSite, out: SiteWriter, jobs: int) -> int | None:
    """Carry every file of ``previous`` over into ``out``; the bytes, or None as soon as
    one file is missing or differs (the caller then builds normally)."""
    todo = [(rel, entry.fingerprint, out.reserve(rel))
            for rel, entry in sorted(previous.entries.items())]
    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:   # reads and hashes in C
        done = list(pool.map(lambda t: previous.reuse(*t), todo))
    if not all(done):
        return None
    return sum(dest.stat().st_size for _, _, dest in todo)
