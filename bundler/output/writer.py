"""Atomic, collision-checked site output.

Everything is written into a sibling temporary folder and swapped in with
two renames at the end, so a failed or interrupted build leaves the previous
site untouched.  Like pelican's writer, it refuses to write one path twice:
two pages mapping to one file is a bug that would otherwise lose a page.

Pages are written by worker processes straight into the temporary folder;
the builder *reserves* every page path here first, so collisions are found
before any rendering starts, and records the sizes the workers report.

The previous site is not deleted inline: after the swap it is renamed aside
and removed by a detached ``rm -rf`` (a hundred thousand files take seconds
that the build does not need to wait for).  Leftovers of an interrupted
removal are cleared by the next build.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import time
from collections.abc import Callable
from pathlib import Path, PurePosixPath
from types import TracebackType

from bundler import interrupts
from bundler.errors import OutputError
from bundler.load.reopen import reopen
from bundler.load.stamp import require_digest
from bundler.output.manifest import PreviousSite, sha256_file

#: Written into every site we build; we only ever replace folders carrying it.
SITE_MARKER = ".review-bundler-site"
#: Read size for copying a bundle file (a log can be hundreds of MB).
COPY_BUFFER = 1 << 20


#: Temporary folder -> target of every writer of this process not yet committed or
#: aborted, so code handed only the folder pages go to can find the site's caches.
_BUILDING: dict[Path, Path] = {}


def target_of(tmp: Path) -> Path | None:
    """The site a writer of this process is building in ``tmp``, if any."""
    return _BUILDING.get(tmp)


class SiteWriter:
    def __init__(self, target: str | os.PathLike[str]) -> None:
        self.target = Path(target).absolute()
        self.tmp = self.target.parent / f".{self.target.name}.building-{os.getpid()}"
        try:
            self.is_ours = self._start()
        except OSError as exc:     # a path the user gave that cannot hold a site: no bug
            where = exc.filename or self.target
            what = (f"{where} is not a folder" if isinstance(exc, FileExistsError)
                    else f"{where}: {exc.strerror or exc}")
            raise OutputError(f"cannot write the site at {self.target}: {what}") from exc
        _BUILDING[self.tmp] = self.target
        self.written: set[str] = set()
        self.bytes_written = 0
        #: The previous site's files, to link instead of writing the same bytes again
        #: (set by a rebuild that trusts the previous manifest to describe them).
        self.carry_from: PreviousSite | None = None
        #: Called once everything is written, before the swap: raising there keeps the
        #: previous site (the builder checks that the bundle did not change meanwhile).
        self.before_commit: Callable[[], None] | None = None
        self._digests: dict[str, str] = {}
        self._dirs: set[str] = set()
        self._done = False
        for stale in self.target.parent.glob(f".{self.target.name}.previous-*"):
            _remove_later(stale)

    def _start(self) -> bool:
        """Check the target and make the temporary folder; True if the target is a site
        this tool built (and may be replaced)."""
        if self.target.exists() and not self.target.is_dir():
            raise OutputError(f"{self.target} exists and is not a folder")
        ours = (self.target / SITE_MARKER).is_file()
        if self.target.is_dir() and not ours and any(self.target.iterdir()):
            raise OutputError(f"{self.target} is a non-empty folder that was not built by "
                              "review-bundler; refusing to replace it")
        self.target.parent.mkdir(parents=True, exist_ok=True)
        if self.tmp.exists():
            shutil.rmtree(self.tmp)
        self.tmp.mkdir()
        return ours

    def reset(self) -> None:
        """Start over with an empty temporary folder (nothing is committed yet)."""
        shutil.rmtree(self.tmp)
        self.tmp.mkdir()
        self.written.clear()
        self._digests.clear()
        self._dirs.clear()
        self.bytes_written = 0

    def digest(self, rel: str) -> str:
        """SHA-256 of a file written so far."""
        known = self._digests.get(rel)
        if known is not None:
            return known
        with open(self.tmp / rel, "rb") as fh:
            return sha256_file(fh).hexdigest()

    @property
    def previous(self) -> Path | None:
        """The site being replaced (ours, so safe to reuse pages from), if any."""
        return self.target if self.is_ours else None

    def reserve(self, rel: str) -> Path:
        """Claim ``rel`` for one output (refusing unsafe paths and a second claim);
        its folder exists afterwards."""
        parts = PurePosixPath(rel).parts
        if not parts or rel.startswith("/") or any(p in ("..", ".", "") for p in parts):
            raise OutputError(f"refusing to write unsafe output path {rel!r}")
        if rel in self.written:
            raise OutputError(f"two outputs map to {rel!r}")
        self.written.add(rel)
        folder = rel.rpartition("/")[0]
        if folder and folder not in self._dirs:
            (self.tmp / folder).mkdir(parents=True, exist_ok=True)
            self._dirs.add(folder)
        return self.tmp / rel

    def record(self, nbytes: int) -> None:
        """Count bytes a worker wrote into a reserved path."""
        self.bytes_written += nbytes

    def write_text(self, rel: str, text: str) -> None:
        self.write_bytes(rel, text.encode("utf-8"))

    def write_bytes(self, rel: str, data: bytes) -> None:
        dst = self.reserve(rel)
        if self.carry_from is not None:
            digest = hashlib.sha256(data).hexdigest()
            self._digests[rel] = digest
            if self.carry_from.carry(rel, digest, dst):
                self.bytes_written += len(data)
                return
        dst.write_bytes(data)
        self.bytes_written += len(data)

    def copy_file(self, rel: str, src: Path, *, from_bundle: bool = False,
                  expect: str | None = None) -> None:
        """Copy ``src`` to ``rel``, or carry the old site's equal file over.
        ``from_bundle``: ``src`` is a file of the (untrusted) bundle, found to be a regular
        file reached through no link when the site's list of files was made; one swapped
        for a link or a pipe since is refused (:func:`reopen`).
        ``expect``: the hex SHA-256 the bytes were verified to have.  The copy is hashed
        anyway (the site's manifest needs it), so holding it to that costs nothing and
        catches a rewrite the bundle's stamp cannot see (a coarse file-system clock)."""
        dst = self.reserve(rel)
        with reopen(src) if from_bundle else open(src, "rb") as fh:
            if self.carry_from is not None:
                digest = sha256_file(fh).hexdigest()
                require_digest(src, digest, expect)
                if self.carry_from.carry(rel, digest, dst):
                    self._digests[rel] = digest
                    self.bytes_written += dst.stat().st_size
                    return
                fh.seek(0)
            h = hashlib.sha256()        # while copying: the site's manifest needs it
            with open(dst, "wb") as out:
                while chunk := fh.read(COPY_BUFFER):
                    h.update(chunk)
                    out.write(chunk)
                self.bytes_written += out.tell()
            require_digest(src, h.hexdigest(), expect)
            self._digests[rel] = h.hexdigest()

    def exists(self, rel: str) -> bool:
        return rel in self.written

    def path(self, rel: str) -> Path:
        """Where the file written as ``rel`` is, until the commit moves it."""
        if rel not in self.written:
            raise KeyError(rel)
        return self.tmp / rel

    def commit(self) -> Path:
        """Swap the new site in: old -> backup, new -> target; the backup goes away
        in the background."""
        self.write_text(SITE_MARKER, "This folder is generated by review-bundler; a rebuild "
                        "replaces it entirely.\n")
        if self.before_commit is not None:
            self.before_commit()
        # a Ctrl-C that came (its exception lost or not) stops the build here, the
        # previous site untouched; one from here on is too late: the swap completes
        interrupts.point_of_no_return()
        backup = self.target.parent / (f".{self.target.name}.previous-{os.getpid()}-"
                                       f"{time.monotonic_ns()}")
        try:
            if self.target.exists():
                os.replace(self.target, backup)
            os.replace(self.tmp, self.target)
        except OSError as exc:
            if backup.exists() and not self.target.exists():
                os.replace(backup, self.target)
            raise OutputError(f"could not replace {self.target}: {exc}") from exc
        if backup.exists():
            _remove_later(backup)
        self._done = True
        _BUILDING.pop(self.tmp, None)
        return self.target

    def abort(self) -> None:
        if not self._done:
            shutil.rmtree(self.tmp, ignore_errors=True)
            self._done = True
        _BUILDING.pop(self.tmp, None)

    def __enter__(self) -> SiteWriter:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        if exc_type is not None:
            self.abort()


#: Removals still running (kept referenced so they are reaped, not warned about).
_REMOVALS: list[subprocess.Popen[bytes]] = []


def _remove_later(path: Path) -> None:
    """Delete a folder we own without waiting for it (inline when ``rm`` is missing)."""
    _REMOVALS[:] = [p for p in _REMOVALS if p.poll() is None]
    rm = shutil.which("rm")
    if rm is not None:
        try:
            _REMOVALS.append(subprocess.Popen(
                [rm, "-rf", "--", str(path)], stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True))
            return
        except OSError:
            pass
    shutil.rmtree(path, ignore_errors=True)
