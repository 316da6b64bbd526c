"""BundleSource path checks: links anywhere on the way are refused, folders are
remembered only inside ``remembering_folders``."""

from __future__ import annotations

import contextlib
import os
import tarfile
import threading
import zipfile
from pathlib import Path, PurePosixPath

import pytest
from fixtures.bad import bundle_files
from fixtures.builders import make_valid_bundle, verify
from hypothesis import given
from hypothesis import strategies as st

from bundler.diagnostics import DiagnosticSink
from bundler.errors import InputError
from bundler.load import archive as archive_module
from bundler.load.archive import ENTRY_OVERHEAD, _Placer, max_archive_bytes
from bundler.load.limits import Limits
from bundler.load.paths import is_safe_relpath
from bundler.load.source import BundleSource, open_bundle
from bundler.verify.result import VerificationReport


def _source(tmp_path: Path) -> tuple[BundleSource, Path]:
    root = tmp_path / "b"
    (root / "payloads" / "sha256").mkdir(parents=True)
    (root / "payloads" / "sha256" / "aa").write_bytes(b"x")
    return BundleSource(root=root, origin=root), root


def test_regular_file_and_path(tmp_path: Path) -> None:
    src, root = _source(tmp_path)
    (tmp_path / "outside").write_bytes(b"secret")
    os.symlink(tmp_path / "outside", root / "payloads" / "sha256" / "link")
    os.mkfifo(root / "payloads" / "sha256" / "fifo")
    assert src.regular_file("payloads/sha256/aa") == root / "payloads" / "sha256" / "aa"
    assert src.regular_file("payloads//sha256/./aa") == root / "payloads" / "sha256" / "aa"
    assert src.path("payloads/sha256/link") is None
    assert src.regular_file("payloads/sha256/link") is None
    assert src.regular_file("payloads/sha256/fifo") is None
    assert src.path("payloads/sha256/fifo") == root / "payloads" / "sha256" / "fifo"
    assert src.regular_file("payloads/sha256") is None  # a folder
    assert src.regular_file("payloads/sha256/missing") is None
    assert src.path("payloads/sha256/missing") == root / "payloads" / "sha256" / "missing"
    assert src.path("../outside") is None
    assert src.exists("payloads/sha256/aa") and not src.exists("payloads/sha256/link")


def test_every_link_and_special_file_is_flagged_in_name_order(tmp_path: Path) -> None:
    """The walk of a bundle folder: every symlink (to a file, to a folder, leaving the
    bundle, a loop) and every special file, at any depth, in name order with a folder's
    own entries before its subfolders'; a linked folder is flagged, never entered."""
    root = tmp_path / "b"
    for folder in ("a/z", "a/b", "c"):
        (root / folder).mkdir(parents=True)
    (root / "events.jsonl").write_bytes(b"")
    (root / "a" / "b" / "file").write_bytes(b"x")
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "secret").write_bytes(b"s")
    os.symlink(tmp_path / "outside", root / "a" / "z" / "out")
    os.symlink("file", root / "a" / "b" / "in")
    os.symlink("loop", root / "c" / "loop")
    os.symlink("b", root / "a" / "linked-folder")
    os.mkfifo(root / "a" / "fifo")
    os.mkfifo(root / "zz-fifo")
    sink = DiagnosticSink()
    with open_bundle(root, sink) as src:
        found = [(d.code, str(d.location.path if d.location else ""), d.message)
                 for d in sink]
        assert src.unsafe_paths == {"a/z/out", "a/b/in", "c/loop", "a/linked-folder",
                                    "a/fifo", "zz-fifo"}
    assert [(code, where) for code, where, _ in found] == [
        ("RB103", "zz-fifo"), ("RB103", "a/fifo"), ("RB103", "a/linked-folder"),
        ("RB103", "a/b/in"), ("RB103", "a/z/out"), ("RB103", "c/loop")]
    messages = [m for _, _, m in found]
    assert "is not a regular file" in messages[0]
    assert messages[2] == ("symlink 'a/linked-folder' -> 'b'; links are never followed")
    assert messages[4].endswith("leaves the bundle; links are never followed")
    assert " is a loop;" in messages[5]


def test_a_folder_swapped_for_a_link_is_caught_outside_the_block(tmp_path: Path) -> None:
    src, root = _source(tmp_path)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "aa").write_bytes(b"secret")
    with src.remembering_folders():
        assert src.regular_file("payloads/sha256/aa") is not None
    os.rename(root / "payloads" / "sha256", tmp_path / "moved")
    os.symlink(elsewhere, root / "payloads" / "sha256")
    assert src.regular_file("payloads/sha256/aa") is None
    with src.remembering_folders():  # a new block checks every folder again
        assert src.regular_file("payloads/sha256/aa") is None


def test_an_unsafe_folder_is_refused_with_or_without_memory(tmp_path: Path) -> None:
    src, _ = _source(tmp_path)
    src.unsafe_paths.add("payloads/sha256")
    assert src.path("payloads/sha256/aa") is None
    with src.remembering_folders():
        assert src.path("payloads/sha256/aa") is None
        assert src.path("payloads/sha256/aa") is None


def _safe_by_pathlib(rel: str) -> bool:
    """The definition is_safe_relpath had before it split strings itself."""
    if not rel or rel.startswith(("/", "\\")) or "\\" in rel or "\x00" in rel:
        return False
    parts = PurePosixPath(rel).parts
    return bool(parts) and all(p not in ("..", ".", "") for p in parts) and ":" not in parts[0]


@given(st.text(alphabet="/.\\a:\x00", max_size=12))
def test_safe_relpath_is_the_pathlib_verdict(rel: str) -> None:
    assert is_safe_relpath(rel) is _safe_by_pathlib(rel)


def test_safe_relpath_cases() -> None:
    for rel in ("a", "a/b", "a//b", "a/./b", "./a", "a/", "a/d:e", "payloads/sha256/ab"):
        assert is_safe_relpath(rel), rel
    for rel in ("", ".", "./", "/a", "\\a", "a\\b", "a/../b", "..", "a/..", "c:/x", "c:", "a:b/c",
                "a\x00b", "//a"):
        assert not is_safe_relpath(rel), rel


def _files_by_pathlib(root: Path) -> list[str]:
    """What files() listed before it built the names itself."""
    out = []
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        dirnames.sort()
        out += [Path(dirpath, name).relative_to(root).as_posix() for name in filenames]
    return sorted(out)


def test_files_and_files_under_a_folder(tmp_path: Path) -> None:
    src, root = _source(tmp_path)
    (root / "checkpoints" / "deep").mkdir(parents=True)
    for rel in ("checkpoints/0001.json", "checkpoints/deep/x", "events.jsonl", "a b.txt",
                "payloads/sha256/é"):
        (root / rel).write_bytes(b"x")
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "elsewhere" / "secret").write_bytes(b"s")
    os.symlink(tmp_path / "elsewhere", root / "linked")
    os.symlink(root / "events.jsonl", root / "checkpoints" / "link")
    everything = list(src.files())
    assert everything == _files_by_pathlib(root)
    assert "linked/secret" not in everything and "checkpoints/link" in everything
    assert list(src.files(under="checkpoints")) == [
        r for r in everything if r.startswith("checkpoints/")]
    assert list(src.files(under="linked")) == []  # a link is never walked
    assert list(src.files(under="events.jsonl")) == []
    assert list(src.files(under="missing")) == []
    os.rename(root / "checkpoints", tmp_path / "cps")
    os.symlink(tmp_path / "cps", root / "checkpoints")
    assert list(src.files(under="checkpoints")) == []
    assert [r for r in src.files() if r.startswith("checkpoints/")] == []


# ------------------------------------------------------------------ archives
def _report_facts(report: VerificationReport) -> tuple[object, ...]:
    return (report.valid, sorted((d.code, d.message) for d in report.diagnostics),
            report.bundle.leaf_hashes, sorted(report.bundle.payloads))


def test_a_tar_of_the_folder_with_dot_entries_verifies_like_the_folder(tmp_path: Path) -> None:
    """``tar -C run -czf run.tar.gz .`` writes a ``./`` root entry and ``./`` prefixes."""
    folder = make_valid_bundle(tmp_path / "b").path
    archive = tmp_path / "b.tar.gz"
    with tarfile.open(archive, "w:gz") as tf:
        tf.add(folder, arcname=".")
    with tarfile.open(archive) as tf:
        names = tf.getnames()
    assert names[0] == "." and "./events.jsonl" in names
    assert _report_facts(verify(archive)) == _report_facts(verify(folder))


def test_a_zip_with_a_root_entry_and_repeated_folders_verifies_like_the_folder(
        tmp_path: Path) -> None:
    folder = make_valid_bundle(tmp_path / "b").path
    archive = tmp_path / "b.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        zf.writestr("./", b"")
        zf.writestr("./payloads/", b"")
        for rel, data in bundle_files(folder):
            zf.writestr(f"./{rel}", data)
        zf.writestr("payloads/", b"")   # a folder given again is no conflict
    assert _report_facts(verify(archive)) == _report_facts(verify(folder))


_EARLIER = "conflicts with an earlier entry:"


@pytest.mark.parametrize(("entries", "conflict"), [
    ([("a", False), ("./a", False)], f"'./a' {_EARLIER} 'a' is already a file"),
    ([("a", False), ("a/b", False)], f"'a/b' {_EARLIER} 'a' is already a file"),
    ([("a/b", False), ("a", False)], f"'a' {_EARLIER} 'a' is already a folder"),
    ([("a/", True), ("a", False)], f"'a' {_EARLIER} 'a' is already a folder"),
    ([("a", False), ("a/", True)], f"'a/' {_EARLIER} 'a' is already a file"),
])
def test_conflicting_entries_are_refused(entries: list[tuple[str, bool]], conflict: str,
                                         tmp_path: Path) -> None:
    sink = DiagnosticSink()
    placer = _Placer(tmp_path, sink, "x.zip")
    targets = [placer.place(name, is_dir) for name, is_dir in entries]
    assert targets[0] is not None and targets[-1] is None
    [diag] = list(sink)
    assert (diag.code, diag.message) == ("RB118", f"archive entry {conflict}")
    assert diag.location is not None and diag.location.path == f"x.zip!{entries[-1][0]}"


def test_the_root_and_repeated_folders_are_no_conflict(tmp_path: Path) -> None:
    sink = DiagnosticSink()
    placer = _Placer(tmp_path, sink, "x.tar")
    assert placer.place("./", True) == tmp_path
    assert placer.place(".", True) == tmp_path
    assert placer.place("a/b/", True) == tmp_path / "a" / "b"
    assert placer.place("./a", True) == tmp_path / "a"
    assert placer.place("a/b/c", False) == tmp_path / "a" / "b" / "c"
    assert list(sink) == []
    assert placer.place(".", False) is None   # a file cannot stand for the root
    assert placer.place("/", True) is None    # nor can an absolute path
    assert [d.code for d in sink] == ["RB102", "RB102"]


def test_an_archive_that_is_a_named_pipe_is_refused_not_waited_on(tmp_path: Path) -> None:
    """Expanding a pipe named like an archive would wait for a writer forever; the
    private copy opens it without waiting and refuses it at once as RB117.  A writer opens
    the pipe every 5 s, so that a regression fails here instead of hanging."""
    fifo = tmp_path / "bundle.tar.gz"
    os.mkfifo(fifo)
    done = threading.Event()
    writer = threading.Thread(target=_open_for_writing, args=(fifo, done), daemon=True)
    writer.start()
    try:
        sink = DiagnosticSink()
        with pytest.raises(InputError), open_bundle(fifo, sink):
            pass
    finally:
        done.set()
    [diag] = list(sink)
    assert (diag.code, diag.message) == ("RB117", "cannot be read: not a regular file")
    assert diag.location is not None and diag.location.path == "bundle.tar.gz"


def _open_for_writing(fifo: Path, done: threading.Event) -> None:
    """Until ``done``, every 5 s, open and close the pipe's writing end: a reader
    waiting in ``open`` wakes and reads an empty file.  With no reader, the open fails
    at once (``O_NONBLOCK``) instead of waiting for one."""
    while not done.wait(5.0):
        with contextlib.suppress(OSError):
            os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))


def test_an_archive_too_large_to_expand_within_the_limits_is_not_copied(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The private copy would fill the disk with a 50 GB file named ``.zip`` before the
    expansion limit could refuse it: a file larger than any archive that expands
    within the limits is RB104 at once."""
    archive = tmp_path / "b.tar"
    with tarfile.open(archive, "w") as tf:
        tf.add(make_valid_bundle(tmp_path / "b").path, arcname=".")
    size = archive.stat().st_size
    copies: list[object] = []
    real = archive_module._copy_hashed
    monkeypatch.setattr(archive_module, "_copy_hashed", lambda *a: copies.append(a) or real(*a))
    at_most = Limits(max_expanded_bytes=size - ENTRY_OVERHEAD - 1, max_archive_entries=1)
    assert max_archive_bytes(at_most) == size - 1
    sink = DiagnosticSink()
    with pytest.raises(InputError), open_bundle(archive, sink, at_most):
        pass
    [diag] = list(sink)
    assert diag.code == "RB104" and f"the archive is {size} bytes" in diag.message
    assert copies == []
    just = Limits(max_expanded_bytes=size, max_archive_entries=1)   # copied, then refused
    sink = DiagnosticSink()
    with pytest.raises(InputError), open_bundle(archive, sink, just):
        pass
    assert len(copies) == 1 and [d.code for d in sink] == ["RB104"]
    assert "entries" in next(iter(sink)).message


def test_an_archive_given_through_a_link_is_read_like_the_archive(tmp_path: Path) -> None:
    """The private copy opens no link (``open_regular``), so it resolves the path the
    user gave first: a link to an archive is a normal way to name one."""
    folder = make_valid_bundle(tmp_path / "b").path
    archive = tmp_path / "b.tar.gz"
    with tarfile.open(archive, "w:gz") as tf:
        tf.add(folder, arcname=".")
    link = tmp_path / "latest.tar.gz"
    link.symlink_to(archive)
    assert _report_facts(verify(link)) == _report_facts(verify(folder))
