"""The per-site record of what each object page read (beside the cache manifest).

One line per page: its path, a tab, then in JSON the path again, the task
that made it, its fingerprint,
its graph count, and the index reads it was made from with one digest over
their values (:mod:`bundler.render.page_deps`).  Each read is one string
(:func:`encode_read`), so a line parses into plain strings and the reads
serve as memo keys as they come: a rebuild checks about 80k of them at 10k
events.  Like the manifest it lives
in the user's cache folder, never in the site, and is only a hint: a page it
calls unchanged is still carried over only if the manifest lists the same
fingerprint and the file still hashes to the digest written.

The file is written while pages come back from the workers (memory stays
flat at a million events) into a temporary file, and renamed into place
only after the build's manifest is saved.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
from pathlib import Path
from typing import IO

from bundler.graph.tracking import Read
from bundler.output.manifest import manifest_path

DEPS_HEADER = "review-bundler page deps v3"
#: A larger record is not kept (about 45k pages): holding it would cost more memory
#: than a million-event build can spare, and fingerprints still find unchanged pages.
MAX_DEPS_BYTES = 64 << 20


@dataclasses.dataclass(frozen=True, slots=True)
class DepsRecord:
    path: str
    kind: str
    key: str
    fingerprint: str
    graphs: int
    digest: str                 # over the values of ``reads``, in order
    reads: tuple[str, ...]      # encoded (:func:`encode_read`), sorted


def encode_read(read: Read) -> str:
    """One read as a string: its namespace (never holding a control character), then
    NUL and a string key, or SOH and an integer key."""
    ns, key = read
    if type(key) is str:
        return f"{ns}\x00{key}"
    if type(key) is int:
        return f"{ns}\x01{key}"
    raise TypeError(f"a read's key is a string or an integer, not {type(key).__name__}")


def decode_read(text: str) -> Read | None:
    """The read :func:`encode_read` made ``text`` from; None for any other text."""
    nul, soh = text.find("\x00"), text.find("\x01")
    if nul >= 0 and (soh < 0 or nul < soh):
        return text[:nul], text[nul + 1:]
    if soh >= 0:
        digits = text[soh + 1:]
        if digits.isascii() and (digits.isdigit() or (digits[:1] == "-" and digits[1:].isdigit())):
            return text[:soh], int(digits)
    return None


def deps_path(site: Path) -> Path:
    return manifest_path(site).with_suffix(".deps")


def read_deps(site: Path, salt: str) -> dict[str, str]:
    """The record lines of the site at ``site`` built with ``salt``, by page path;
    {} if the file cannot be read.

    Lines are ``path TAB json`` and only split here: each is parsed by
    :func:`parse_record` when its page comes up, in the worker that renders
    it, instead of all of them up front in the builder.
    """
    lines: dict[str, str] = {}
    try:
        path = deps_path(site)
        if path.stat().st_size > MAX_DEPS_BYTES:
            return {}
        with open(path, encoding="utf-8") as fh:
            if json.loads(fh.readline()) != [DEPS_HEADER, salt]:
                return {}
            for line in fh:
                page, tab, _ = line.partition("\t")
                if not tab:
                    return {}
                lines[page] = line.rstrip("\n")
    except (OSError, ValueError, UnicodeDecodeError):
        return {}
    return lines


def parse_record(line: str) -> DepsRecord | None:
    """The record on one line of :func:`read_deps`, or None if it is not one."""
    page, _, text = line.partition("\t")
    try:
        obj = json.loads(text)
    except ValueError:
        return None
    if not isinstance(obj, list) or len(obj) != 7:
        return None
    path, kind, key, fp, graphs, digest, reads = obj
    if path != page or not all(isinstance(x, str) for x in (kind, key, fp, digest)) or \
            type(graphs) is not int or not isinstance(reads, list) or \
            not all(type(r) is str for r in reads):
        return None
    return DepsRecord(page, kind, key, fp, graphs, digest, tuple(reads))


class DepsWriter:
    """Streams records into a temporary file; :meth:`commit` puts it in place.

    Best effort, like the manifest: a cache folder that cannot be written
    only costs the next build its shortcut.
    """

    def __init__(self, site: Path, salt: str) -> None:
        self.target = deps_path(site)
        self.tmp = self.target.with_name(f"{self.target.name}.{os.getpid()}.tmp")
        self.salt = salt
        self.fh: IO[str] | None = None
        self.failed = False
        self.size = 0

    def _open(self) -> IO[str] | None:
        """Opened at the first record, after render workers were forked (a forked
        child must not inherit a buffer it could flush into the file)."""
        if self.fh is None and not self.failed:
            try:
                self.target.parent.mkdir(parents=True, exist_ok=True)
                self.fh = open(self.tmp, "w", encoding="utf-8")  # noqa: SIM115 (see close)
                self.fh.write(json.dumps([DEPS_HEADER, self.salt]) + "\n")
            except OSError:
                self.close()
        return self.fh

    @property
    def full(self) -> bool:
        """Past :data:`MAX_DEPS_BYTES`: nothing more will be kept, so recording more
        pages is wasted (at a million events, after about 45k of 167k pages)."""
        return self.size > MAX_DEPS_BYTES

    def write(self, rec: DepsRecord) -> None:
        self.write_line(rec.path + "\t" + json.dumps([
            rec.path, rec.kind, rec.key, rec.fingerprint, rec.graphs, rec.digest,
            list(rec.reads)]))

    def write_line(self, line: str) -> None:
        """One record line: made by :meth:`write`, or kept from the previous build as
        :func:`read_deps` returned it."""
        if self._open() is None:
            return
        assert self.fh is not None
        self.size += len(line) + 1
        if self.size > MAX_DEPS_BYTES:      # it would not be read: no disk spent on it
            self.close()
            return
        try:
            self.fh.write(line + "\n")
        except OSError:
            self.close()

    def commit(self) -> None:
        """Replace the site's record with this one (call after the manifest is saved)."""
        if self.fh is None:         # nothing recorded, or writing failed
            forget_deps(self.target)
            return
        try:
            self.fh.close()
            self.fh = None
            os.replace(self.tmp, self.target)
        except OSError:
            self.close()

    def close(self) -> None:
        """Drop the temporary file (a failed build keeps the previous record)."""
        self.failed = True
        if self.fh is not None:
            with contextlib.suppress(OSError):
                self.fh.close()
            self.fh = None
        with contextlib.suppress(OSError):
            self.tmp.unlink(missing_ok=True)


def forget_deps(path: Path) -> None:
    with contextlib.suppress(OSError):
        path.unlink(missing_ok=True)
