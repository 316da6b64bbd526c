"""Expand a bundle archive into a private folder without trusting it.

Every entry is checked before it is written (no absolute paths, no ``..``, no
links or devices, no path given twice), and the size limits are enforced while
streaming, so a zip bomb is stopped by bytes actually written, not by the sizes
the archive claims.

An archive is first copied, and the copy hashed and expanded: the SHA-256 then
names exactly the bytes the bundle was read from.  The rebuild cache digests
the archive file before the build; hashing the original again, or expanding
it in place, would leave a window in which it could be rewritten and put back
unseen by a coarse file-system clock (see :mod:`bundler.load.stamp`).
"""

from __future__ import annotations

import hashlib
import os
import stat
import tarfile
import zipfile
import zlib
from pathlib import Path, PurePosixPath
from typing import BinaryIO

from bundler.diagnostics import DiagnosticSink, Location
from bundler.errors import InputError
from bundler.load.limits import Limits
from bundler.load.paths import is_safe_relpath
from bundler.load.reopen import open_regular

ARCHIVE_SUFFIXES = (".zip", ".tar.gz", ".tgz", ".tar")
#: What reading a damaged archive raises besides the modules' own errors: the
#: decompressors' (a corrupt deflate stream is ``zlib.error``, not an ``OSError``),
#: ``NotImplementedError`` for a compression method zipfile lacks and
#: ``RuntimeError`` for an encrypted member.  All of them say the archive is broken.
ARCHIVE_ERRORS: tuple[type[BaseException], ...] = (
    zipfile.BadZipFile, tarfile.TarError, OSError, EOFError, ValueError, zlib.error,
    NotImplementedError, RuntimeError)
try:  # a Python built without liblzma has no lzma module (tarfile then refuses .tar.xz)
    import lzma
except ImportError:  # pragma: no cover
    pass
else:
    ARCHIVE_ERRORS += (lzma.LZMAError,)


def expand_archive(p: Path, work: Path, sink: DiagnosticSink,
                   limits: Limits) -> tuple[Path, str]:
    """Expand the archive ``p`` below the private folder ``work``: the bundle's root
    there, and the SHA-256 (hex) of the bytes expanded.  Raises ``InputError``, after
    its diagnostics, for an archive that cannot be expanded safely at all."""
    copy, tmp = work / "archive", work / "bundle"
    tmp.mkdir()
    sha256 = _private_copy(p, copy, sink, limits)
    expand = _expand_zip if p.name.lower().endswith(".zip") else _expand_tar
    if not expand(copy, tmp, sink, limits, p.name):
        raise InputError(f"refusing to expand unsafe archive {p}", diagnostics=list(sink))
    copy.unlink()
    return _single_top_folder(tmp), sha256


def _private_copy(p: Path, copy: Path, sink: DiagnosticSink, limits: Limits) -> str:
    """Copy the archive at ``p`` to ``copy`` and return the SHA-256 (hex) of the bytes
    copied: what is expanded is then what was hashed, whatever happens to ``p``
    meanwhile.  An archive that is no regular file (a pipe, a device) or cannot be
    read is RB117; one the build may not read raises ``PermissionError`` for the
    caller to report.  An archive too large to expand within the limits is RB104
    before it is read."""
    try:
        # resolved first: the archive may be given through a link, open_regular
        # follows none (and opens a pipe without waiting for a writer)
        with open_regular(p.resolve()) as src:
            if (size := os.fstat(src.fileno()).st_size) > max_archive_bytes(limits):
                sink.emit("RB104", f"the archive is {size} bytes, more than any archive "
                          f"that expands within the limits ({max_archive_bytes(limits)})",
                          Location(path=p.name))
                raise InputError(f"refusing to expand unsafe archive {p}",
                                 diagnostics=list(sink))
            return _copy_hashed(src, copy)
    except PermissionError:
        raise
    except OSError as exc:
        sink.emit("RB117", f"cannot be read: {exc.strerror or exc}", Location(path=p.name))
        raise InputError(f"cannot read archive {p}", diagnostics=list(sink)) from exc


def _copy_hashed(src: BinaryIO, copy: Path) -> str:
    """Write the rest of ``src`` to ``copy``, hashing it on the way (one read)."""
    digest = hashlib.sha256()
    with open(copy, "wb") as out:
        while chunk := src.read(1 << 20):
            digest.update(chunk)
            out.write(chunk)
    return digest.hexdigest()


#: Bytes of headers and padding an archive may spend on one entry, beyond its content:
#: a tar header and its padding are 1 KiB at most, a long name another header and its
#: blocks; a zip entry's two headers hold its name twice.
ENTRY_OVERHEAD = 2048


def max_archive_bytes(limits: Limits) -> int:
    """The largest archive file that could expand within ``limits``: its content, plus
    :data:`ENTRY_OVERHEAD` for each entry it may hold.  A larger file is refused
    before it is copied (a 50 GB file named ``.zip`` would otherwise fill the disk
    first)."""
    return limits.max_expanded_bytes + limits.max_archive_entries * ENTRY_OVERHEAD


def _single_top_folder(tmp: Path) -> Path:
    """Archives may hold the bundle at their root or inside one top folder."""
    entries = list(tmp.iterdir())
    if len(entries) == 1 and entries[0].is_dir() and not (tmp / "bundle.json").exists():
        return entries[0]
    return tmp


class _Budget:
    def __init__(self, limits: Limits) -> None:
        self.limits = limits
        self.written = 0

    def copy(self, src: object, dst: Path) -> bool:
        """Stream ``src`` into ``dst``; False once the expansion limit is crossed."""
        read = src.read  # type: ignore[attr-defined]
        with open(dst, "wb") as out:
            while chunk := read(1 << 20):
                self.written += len(chunk)
                if self.written > self.limits.max_expanded_bytes:
                    return False
                out.write(chunk)
        return True


class _Placer:
    """Where each archive entry goes, refusing entries that are unsafe or ambiguous.

    A path given twice (or a file where another entry needs a folder) is refused
    rather than resolved: unpacking tools disagree on which entry wins, so the
    bundle a reviewer unpacks by hand could differ from the one verified here.
    The archive's own root (``./``, as ``tar -C bundle .`` writes it) is allowed.
    """

    def __init__(self, tmp: Path, sink: DiagnosticSink, archive: str) -> None:
        self.tmp, self.sink, self.archive = tmp, sink, archive
        self._seen: dict[str, bool] = {}   # normalised path -> is a folder

    def place(self, name: str, is_dir: bool) -> Path | None:
        """The target of entry ``name``; the archive root for a ``./`` folder entry;
        ``None``, after a diagnostic, for an entry that must not be written."""
        where = Location(path=f"{self.archive}!{name}")
        clean = name[:-1] if name.endswith("/") else name
        if is_dir and clean and not clean.startswith("/") and \
                set(clean.split("/")) <= {"", "."}:
            return self.tmp
        if not is_safe_relpath(clean):
            self.sink.emit("RB102", f"archive entry {name!r} has an absolute path or '..'",
                           where)
            return None
        parts = PurePosixPath(clean).parts
        seen = self._seen
        for i in range(1, len(parts) + 1):
            path = "/".join(parts[:i])
            folder = is_dir or i < len(parts)
            was = seen.get(path)
            if was is None:
                seen[path] = folder
            elif not (was and folder):
                other = "a file" if not was else "a folder"
                self.sink.emit("RB118", f"archive entry {name!r} conflicts with an earlier "
                               f"entry: {path!r} is already {other}", where)
                return None
        return self.tmp.joinpath(*parts)


def _expand_zip(p: Path, tmp: Path, sink: DiagnosticSink, limits: Limits, shown: str) -> bool:
    """Expand the zip file ``p`` (named ``shown`` in diagnostics) into ``tmp``."""
    try:
        zf = zipfile.ZipFile(p)
    except ARCHIVE_ERRORS as exc:
        sink.emit("RB117", f"{shown}: {exc}", Location(path=shown))
        return False
    budget, ok, placer = _Budget(limits), True, _Placer(tmp, sink, shown)
    with zf:
        infos = zf.infolist()
        if len(infos) > limits.max_archive_entries:
            sink.emit("RB104", f"{len(infos)} entries exceed the limit of "
                      f"{limits.max_archive_entries}", Location(path=shown))
            return False
        declared = sum(i.file_size for i in infos)
        if declared > limits.max_expanded_bytes:
            sink.emit("RB104", f"declared expanded size {declared} bytes exceeds the limit of "
                      f"{limits.max_expanded_bytes}", Location(path=shown))
            return False
        try:
            for info in infos:
                target = placer.place(info.filename, info.is_dir())
                mode = info.external_attr >> 16
                if target is None:
                    ok = False
                    continue
                if stat.S_ISLNK(mode):
                    sink.emit("RB103", f"archive entry {info.filename!r} is a symlink",
                              Location(path=f"{shown}!{info.filename}"))
                    ok = False
                    continue
                if info.is_dir():
                    target.mkdir(parents=True, exist_ok=True)
                    continue
                if info.compress_size and info.file_size / info.compress_size > \
                        limits.max_compression_ratio:
                    sink.emit("RB104", f"{info.filename!r} expands {info.file_size} bytes from "
                              f"{info.compress_size} (ratio above {limits.max_compression_ratio})",
                              Location(path=f"{shown}!{info.filename}"))
                    return False
                target.parent.mkdir(parents=True, exist_ok=True)
                with zf.open(info) as member:
                    if not budget.copy(member, target):
                        sink.emit("RB104", f"archive expands past {limits.max_expanded_bytes} "
                                  "bytes", Location(path=shown))
                        return False
        except ARCHIVE_ERRORS as exc:
            sink.emit("RB117", f"{info.filename}: {exc}", Location(path=shown))
            return False
    return ok


def _expand_tar(p: Path, tmp: Path, sink: DiagnosticSink, limits: Limits, shown: str) -> bool:
    """Expand the tar file ``p`` (named ``shown`` in diagnostics) into ``tmp``."""
    budget, ok, count = _Budget(limits), True, 0
    placer = _Placer(tmp, sink, shown)
    try:
        with tarfile.open(p, "r:*") as tf:
            for member in tf:
                count += 1
                if count > limits.max_archive_entries:
                    sink.emit("RB104", f"more than {limits.max_archive_entries} entries",
                              Location(path=shown))
                    return False
                target = placer.place(member.name, member.isdir())
                if target is None:
                    ok = False
                    continue
                if member.issym() or member.islnk():
                    sink.emit("RB103", f"archive entry {member.name!r} is a link to "
                              f"{member.linkname!r}", Location(path=f"{shown}!{member.name}"))
                    ok = False
                    continue
                if member.isdir():
                    target.mkdir(parents=True, exist_ok=True)
                    continue
                if not member.isfile():
                    sink.emit("RB103", f"archive entry {member.name!r} is not a regular file",
                              Location(path=f"{shown}!{member.name}"))
                    ok = False
                    continue
                target.parent.mkdir(parents=True, exist_ok=True)
                fh = tf.extractfile(member)
                if fh is None or not budget.copy(fh, target):
                    sink.emit("RB104", f"archive expands past {limits.max_expanded_bytes} bytes",
                              Location(path=shown))
                    return False
    except ARCHIVE_ERRORS as exc:
        sink.emit("RB117", f"{shown}: {exc}", Location(path=shown))
        return False
    return ok
