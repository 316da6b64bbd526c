"""Open a bundle folder or archive without trusting it.

Archives are expanded into a private temporary folder after every entry has
been checked (no absolute paths, no ``..``, no links or devices, declared
size limits enforced while streaming, so a zip bomb is stopped by bytes
actually written, not by the sizes the archive claims).

An archive is first copied, and the copy hashed and expanded: the SHA-256 then
names exactly the bytes the bundle was read from.  The rebuild cache digests
the archive file before the build; hashing the original again, or expanding
it in place, would leave a window in which it could be rewritten and put back
unseen by a coarse file-system clock (see :mod:`bundler.load.stamp`).
"""

from __future__ import annotations

import hashlib
import os
import shutil
import stat
import tarfile
import tempfile
import zipfile
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from bundler.diagnostics import DiagnosticSink, Location
from bundler.errors import InputError
from bundler.load.limits import DEFAULT_LIMITS, Limits

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


@dataclass
class BundleSource:
    """A readable bundle folder (the original, or an expanded archive)."""

    root: Path
    origin: Path
    archive: str | None = None
    #: hex SHA-256 of the archive's bytes that were expanded (None for a folder)
    archive_sha256: str | None = None
    unsafe_paths: set[str] = field(default_factory=set)
    #: folders found to be no link, while :meth:`remembering_folders` is active
    _safe_folders: set[str] | None = field(default=None, repr=False, compare=False)

    def path(self, rel: str) -> Path | None:
        """Resolve a bundle-relative path, or ``None`` when it is unsafe or a link."""
        found = self._lstat(rel)
        return None if found is None else Path(found[0])

    def regular_file(self, rel: str) -> Path | None:
        """:meth:`path`, when it names a regular file (judged by the same ``lstat``)."""
        name = self.regular_file_name(rel)
        return None if name is None else Path(name)

    def regular_file_name(self, rel: str) -> str | None:
        """:meth:`regular_file` as a string: payload hashing opens thousands of files,
        and building a ``Path`` for each was half the cost of checking its name."""
        found = self._lstat(rel)
        if found is None or found[1] is None or not stat.S_ISREG(found[1].st_mode):
            return None
        return found[0]

    def exists(self, rel: str) -> bool:
        return self.regular_file(rel) is not None

    def _lstat(self, rel: str) -> tuple[str, os.stat_result | None] | None:
        """The full path and the ``lstat`` of its last component (``None``: absent), or
        ``None`` when ``rel`` is unsafe or passes through a link.

        Every component is checked, not just the last: a symlinked *folder*
        (payloads/sha256 -> /elsewhere) would otherwise let the verifier read
        files outside the bundle.  While :meth:`remembering_folders` is active, a
        folder found safe is not looked at again (a bundle's thousands of payloads
        share two folders).
        """
        if not is_safe_relpath(rel):
            return None
        parts = rel.split("/")
        if "" in parts or "." in parts:  # a//b, a/./b: let pathlib normalise them
            parts = list(PurePosixPath(rel).parts)
        root = os.fspath(self.root)
        full = os.path.join(root, *parts)
        safe, unsafe = self._safe_folders, self.unsafe_paths
        prefix = ""
        last = len(parts) - 1
        for i, part in enumerate(parts):
            prefix = f"{prefix}/{part}" if prefix else part
            if i < last and safe is not None and prefix in safe:
                continue
            try:
                st = os.lstat(os.path.join(root, prefix))
            except PermissionError:
                raise       # present but unreadable: not "absent" (see unreadable())
            except OSError:
                return full, None
            if stat.S_ISLNK(st.st_mode) or prefix in unsafe:
                return None
            if i < last and safe is not None:
                safe.add(prefix)
        return full, st

    @contextmanager
    def remembering_folders(self) -> Iterator[None]:
        """Check each folder once inside the block (for a pass over many files).

        Outside it every call looks at every component again, so a folder swapped
        for a link between two steps of the pipeline is still caught.
        """
        self._safe_folders = set()
        try:
            yield
        finally:
            self._safe_folders = None

    def files(self, under: str | None = None) -> Iterator[str]:
        """Every file that is not a folder, as sorted bundle-relative POSIX paths; with
        ``under``, only those in that folder (none if it is a link or no folder), so that
        finding the checkpoints does not walk a hundred thousand payloads."""
        root = top = os.fspath(self.root)
        if under is not None:
            found = self._lstat(under)
            if found is None or found[1] is None or not stat.S_ISDIR(found[1].st_mode):
                return iter(())
            top = found[0]
        out: list[str] = []
        for dirpath, dirnames, filenames in os.walk(top, followlinks=False,
                                                    onerror=_raise_unreadable):
            dirnames.sort()
            rel = os.path.relpath(dirpath, root)
            prefix = "" if rel == "." else rel.replace(os.sep, "/") + "/"
            out += [prefix + name for name in filenames]
        return iter(sorted(out))


def is_safe_relpath(rel: str) -> bool:
    """A relative POSIX path that stays inside its folder.

    Called for every payload (twice), so it splits the string itself: the components
    kept are exactly ``PurePosixPath(rel).parts`` for a path that does not start with
    a slash (empty and ``.`` components dropped), at a tenth of the cost.
    """
    if not rel or rel.startswith(("/", "\\")) or "\\" in rel or "\x00" in rel:
        return False
    parts = [p for p in rel.split("/") if p and p != "."]
    return bool(parts) and ".." not in parts and ":" not in parts[0]


def _raise_unreadable(exc: OSError) -> None:
    """``os.walk`` skips a folder it cannot list; an unreadable one must not read as an
    empty one (its payloads "missing")."""
    if isinstance(exc, PermissionError):
        raise exc


def unreadable(exc: PermissionError, bundle: str | os.PathLike[str]) -> InputError:
    """The error for a bundle file or folder this user may not read.

    A verdict needs every byte: a payload that cannot be read is not missing, and
    calling the bundle invalid for it would blame the bundle for the reader's
    permissions.  So there is no verdict, and the file is named.
    """
    return InputError(f"cannot read {exc.filename or os.fspath(bundle)}: "
                      f"{exc.strerror or exc}; a bundle is verified whole, so every file and "
                      "folder in it must be readable (no verdict was reached)")


def _check_folder_links(root: Path, sink: DiagnosticSink, source: BundleSource) -> None:
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False,
                                                onerror=_raise_unreadable):
        for name in sorted(dirnames + filenames):
            full = Path(dirpath, name)
            st = full.lstat()
            rel = full.relative_to(root).as_posix()
            if stat.S_ISLNK(st.st_mode):
                target = os.readlink(full)
                try:
                    inside = (full.parent / target).resolve().is_relative_to(root.resolve())
                    where = "" if inside else " leaves the bundle"
                except (RuntimeError, OSError):  # a loop (3.11 raises RuntimeError)
                    where = " is a loop"
                sink.emit("RB103", f"symlink {rel!r} -> {target!r}{where}; links are never "
                          "followed", Location(path=rel))
                source.unsafe_paths.add(rel)
            elif not (stat.S_ISREG(st.st_mode) or stat.S_ISDIR(st.st_mode)):
                sink.emit("RB103", f"{rel!r} is not a regular file", Location(path=rel))
                source.unsafe_paths.add(rel)


@contextmanager
def open_bundle(path: str | os.PathLike[str], sink: DiagnosticSink,
                limits: Limits = DEFAULT_LIMITS) -> Iterator[BundleSource]:
    """Yield a ``BundleSource``; raises ``InputError`` when nothing can be read.

    Archive problems that leave a partly usable bundle are diagnostics; an
    archive that cannot be expanded safely at all raises after recording them.
    """
    p = Path(path)
    if not p.exists() and not p.is_symlink():
        sink.emit("RB100", f"no such file or folder: {p}", Location(path=str(p)))
        raise InputError(f"bundle not found: {p}", diagnostics=list(sink))
    if p.is_dir():
        src = BundleSource(root=p, origin=p)
        _check_folder_links(p, sink, src)
        yield src
        return
    name = p.name.lower()
    if not name.endswith(ARCHIVE_SUFFIXES):
        sink.emit("RB101", f"{p.name}: expected a folder, .zip, .tar.gz or .tar",
                  Location(path=str(p)))
        raise InputError(f"not a bundle: {p}", diagnostics=list(sink))
    work = Path(tempfile.mkdtemp(prefix="review-bundle-"))
    try:
        copy, tmp = work / "archive", work / "bundle"
        tmp.mkdir()
        sha256 = _private_copy(p, copy, sink)
        ok = (_expand_zip if name.endswith(".zip") else _expand_tar)(copy, tmp, sink, limits,
                                                                     p.name)
        if not ok:
            raise InputError(f"refusing to expand unsafe archive {p}", diagnostics=list(sink))
        copy.unlink()
        root = _single_top_folder(tmp)
        yield BundleSource(root=root, origin=p, archive=p.name, archive_sha256=sha256)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _private_copy(p: Path, copy: Path, sink: DiagnosticSink) -> str:
    """Copy the archive at ``p`` to ``copy`` and return the copy's SHA-256 (hex): what
    is expanded is then what was hashed, whatever happens to ``p`` meanwhile.  An
    archive that is no regular file (a pipe, a device) or cannot be read is RB117;
    one the build may not read raises ``PermissionError`` for the caller to report."""
    try:
        if not p.is_file():     # shutil would say so too, but naming the build's path
            raise shutil.SpecialFileError("not a regular file")
        shutil.copyfile(p, copy)
        with open(copy, "rb") as fh:
            return hashlib.file_digest(fh, "sha256").hexdigest()
    except PermissionError:
        raise
    except OSError as exc:
        sink.emit("RB117", f"cannot be read: {exc.strerror or exc}",
                  Location(path=p.name))
        raise InputError(f"cannot read archive {p}", diagnostics=list(sink)) from exc


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
