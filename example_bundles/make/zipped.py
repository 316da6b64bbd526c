"""A deterministic zip of a bundle folder.

``zipfile`` stamps each entry with the file's mtime, the host OS and its
permission bits, and writes entries in whatever order the caller supplies,
so zipping the same folder twice rarely gives the same bytes.  Here every
one of those inputs is pinned: entries sorted by POSIX path, date
1980-01-01 00:00:00 (the earliest DOS date), Unix host, mode 0644, DEFLATE
at level 9, no directory entries and no extra fields.  What remains is
zlib's own output, which is stable for a given zlib version.

The files sit under one top folder (``<top>/bundle.json`` ...), which the
loader unwraps (bundler/load/source.py ``_single_top_folder``).
"""

from __future__ import annotations

import io
import zipfile
from pathlib import Path

FIXED_DATE = (1980, 1, 1, 0, 0, 0)
FILE_MODE = 0o100644  # regular file, rw-r--r--
UNIX_HOST = 3


def zip_bytes(folder: Path, top: str) -> bytes:
    """Return the zip archive of ``folder`` (regular files only) as bytes."""
    files = sorted(
        (p.relative_to(folder).as_posix(), p) for p in folder.rglob("*") if p.is_file()
    )
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=9) as zf:
        for rel, path in files:
            info = zipfile.ZipInfo(f"{top}/{rel}", date_time=FIXED_DATE)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.create_system = UNIX_HOST
            info.external_attr = FILE_MODE << 16
            zf.writestr(info, path.read_bytes(), compress_type=zipfile.ZIP_DEFLATED,
                        compresslevel=9)
    return buf.getvalue()


def write_zip(folder: Path, dest: Path, top: str | None = None) -> Path:
    """Write ``dest`` (replacing it) with the deterministic zip of ``folder``."""
    dest.write_bytes(zip_bytes(folder, top or folder.name))
    return dest


__all__ = ["write_zip", "zip_bytes"]
