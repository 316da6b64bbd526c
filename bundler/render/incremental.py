"""What a rebuild may reuse: the build's inputs, the bundle fingerprint, single pages.

Three levels, each checked against the bytes of the previous site (see
:mod:`bundler.output.manifest`):

* **Same inputs.**  :func:`build_inputs` digests every byte a build reads:
  every file of the bundle, the options, the code, templates, theme,
  libraries and Graphviz.  The same inputs give the same report and the same
  site, so when the digest matches the previous build's, verification is
  skipped: the previous verdict is reported and every file of the previous
  site is carried over.  An unchanged bundle then costs one read of its files
  and one of the old site.
* **Same bundle fingerprint.**  The fingerprint covers everything the site is
  made from after verification: the salt (environment and site-wide options),
  the bytes of every bundle file the site reads or ships, the payload states
  and the validation report.  When it matches, every old file is carried over
  without building a single page context.
* **Per page.**  Otherwise object pages whose recorded index reads give the
  same values are carried over without being made
  (:mod:`bundler.render.page_deps`); every other page is fingerprinted from
  its own inputs (:mod:`bundler.render.chunks`) and reused when those are
  unchanged.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import importlib.metadata
import os
import platform
import shutil
import stat
import subprocess
import time
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from bundler import __version__, layout
from bundler.diagnostics import Severity
from bundler.load.reopen import open_regular
from bundler.load.stamp import tree_entries, tree_stamp
from bundler.output import SiteWriter
from bundler.output.cache import Encoder, digest_text, tree_digest
from bundler.output.manifest import PreviousSite, cache_dir, sha256_file
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


#: A folder of compiled templates of another version of the code is removed once it has
#: not been used for this long.  Removing it at once broke builds: two versions of
#: review-bundler building at the same time (two virtualenvs, an A/B benchmark) each
#: deleted the other's folder while its render processes compiled into it.
STALE_TEMPLATES_SECONDS = 24 * 3600


def compiled_templates_dir() -> Path:
    """Where this code keeps its compiled templates: one folder per version of the code
    (which fixes the environment's options).  Using it marks it as used; the folders of
    other versions go once unused for :data:`STALE_TEMPLATES_SECONDS`."""
    root = cache_dir() / "templates"
    current = root / _code_digest()[:32]
    with contextlib.suppress(OSError):
        os.utime(current)               # missing: make_environment creates it
    cutoff = time.time() - STALE_TEMPLATES_SECONDS
    with contextlib.suppress(OSError):
        for other in root.iterdir():
            with contextlib.suppress(OSError):
                if other != current and other.is_dir() and other.stat().st_mtime < cutoff:
                    shutil.rmtree(other, ignore_errors=True)
    return current


def environment_digest(theme: Path | None) -> str:
    """Everything a build depends on besides the bundle and the options: the code,
    templates, theme, libraries and Graphviz.  Any change rebuilds every page."""
    libs = []
    for dist in _LIBRARIES:
        try:
            libs.append(f"{dist}={importlib.metadata.version(dist)}")
        except importlib.metadata.PackageNotFoundError:
            libs.append(f"{dist}=?")
    parts = [__version__, platform.python_version(), *libs, _dot_version(),
             _code_digest(), tree_digest([TEMPLATES_DIR, *theme_dirs(theme)]), CSP]
    return digest_text("\x00".join(parts))


def build_salt(site: SiteInfo, environment: str, base_url: str | None) -> str:
    """What every page depends on besides its own inputs; any change rebuilds all."""
    return digest_text("\x00".join([
        environment,
        Encoder(None).encode((site.title, str(site.description_html), site.trust,
                              site.trust_label, site.errors, site.warnings, site.generator,
                              site.nav)),
        base_url or ""]))


@dataclass(frozen=True)
class Inputs:
    """Every byte a build reads, digested before it reads them.

    ``digest`` covers the environment, the options and the content of every
    file of the bundle; ``stamp`` (:func:`tree_stamp`) covers only their
    metadata, so it is cheap to take again after the build: if it moved, the
    bundle changed while it was being read, and the digest is not recorded
    (:meth:`unchanged`).  ``files`` keeps each file's SHA-256, so that the
    digest is also recorded only if it describes the bytes verification read
    (:meth:`agrees`): the stamp cannot see a rewrite within one tick of a coarse
    file-system clock, and a next build of the same digest skips verification.
    """

    bundle: Path
    digest: str
    stamp: str
    files: dict[str, bytes] = field(default_factory=dict, repr=False, compare=False)

    def unchanged(self) -> bool:
        return tree_stamp(self.bundle) == self.stamp

    def agrees(self, verified: Mapping[str, str]) -> bool:
        """Every file verification hashed (bundle-relative path -> hex SHA-256 of the
        bytes it read) had those bytes when this digest was taken.  An archive is
        digested whole, as the bundle itself (path ``""``), and verified from a private
        copy of it, whose hash verification records under the same path."""
        if "" in self.files:
            return verified.get("") == self.files[""].hex()
        return all(self.files.get(rel) == bytes.fromhex(hexdigest)
                   for rel, hexdigest in verified.items())


def build_inputs(bundle_path: str | os.PathLike[str], environment: str, *,
                 trusted_keys: tuple[str, ...], severity_overrides: dict[str, Severity],
                 title: str | None, base_url: str | None) -> Inputs | None:
    """The :class:`Inputs` of a build, or None when they cannot be pinned down (a
    symlink or special file in the bundle, an unreadable file): such a build never
    skips verification."""
    path = Path(bundle_path).absolute()
    stamp = tree_stamp(path)        # first: a file written while it is read moves it
    files: dict[str, bytes] = {}
    content = _scan(path, files)
    if content is None:
        return None
    options = Encoder(None).encode((
        "inputs v1", environment, str(path), list(trusted_keys),
        sorted((code, int(level)) for code, level in severity_overrides.items()),
        title, base_url))
    return Inputs(path, digest_text(f"{options}\x00{content}"), stamp, files)


def _scan(root: Path, files: dict[str, bytes]) -> str | None:
    """The content digest of the file or folder tree at ``root``; ``files`` gets the
    SHA-256 of each regular file, by bundle-relative path.

    Names are hashed with their kind and place, so no two trees share a digest;
    anything but regular files and folders below ``root`` makes the tree
    unpinnable (None), as does any entry that cannot be read.  ``root`` itself may
    be reached through a symlink.
    """
    data = hashlib.sha256()
    try:
        for name, path, st in tree_entries(root):
            if isinstance(st, OSError):
                return None
            if stat.S_ISREG(st.st_mode):
                data.update(b"f%d:%s\x00" % (len(name), name))
                with open_regular(path) as fh:
                    files[os.fsdecode(name)] = own = sha256_file(fh).digest()
                data.update(own)
            elif stat.S_ISDIR(st.st_mode):
                data.update(b"d%d:%s\x00" % (len(name), name))
            else:
                return None
    except OSError:             # a file gone, or swapped for a link, while it was read
        return None
    return data.hexdigest()


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
                h.update(sha256_file(fh).digest())
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
