"""The ``minnx`` checkout the networkx-feature session changes, and the tools it runs on it.

The repository is held as ``{path: text}``.  :func:`repo_states` derives
the four states the session passes through (before, +implementation,
+guard, +tests) from the checkout in ``sources/networkx-feature/repo/`` and
the code blocks in ``sources/networkx-feature/patches/``; every patch the
agent applies is the :func:`git_diff` between two states, so the stored
diffs and source versions cannot disagree.  ``grep``, ``head`` and
``tree_listing`` produce the output of the agent's read-only commands; the
missing-node probe and :func:`run_pytest` really execute the code.
"""

from __future__ import annotations

import difflib
import hashlib
import re

from example_bundles.make.common import source_text
from example_bundles.make.running import run_script

SOURCES = "networkx-feature"  # the folder under sources/
CWD = "/home/agent/minnx"
TEST_FILE = "minnx/shortest_paths/tests/test_generic.py"
GENERIC = "minnx/shortest_paths/generic.py"
DOC = "doc/reference/shortest_paths.rst"
PYTEST = f"python -m pytest -v {TEST_FILE}"

#: The checkout before the session, as stored under ``sources/networkx-feature/repo/``.
FILES: dict[str, str] = {path: source_text(SOURCES, f"repo/{path}") for path in (
    "minnx/__init__.py", "minnx/exception.py", "minnx/classes.py",
    "minnx/shortest_paths/__init__.py", GENERIC, "minnx/shortest_paths/tests/__init__.py",
    TEST_FILE, DOC)}

#: The function the implementation patch inserts before ``has_path``.
IMPL = "\n\n" + source_text(SOURCES, "patches/shortest_path_through.py")

#: The guard patch: check every node up front and say which role a missing one had.
GUARD_OLD = '''    stops = [source, *through, target]
'''
GUARD_NEW = '''    through = list(through)
    for role, node in [("Source", source), *(("Intermediate node", n) for n in through),
                       ("Target", target)]:
        if node not in G:
            raise NodeNotFound(f"{role} {node} is not in G")
    stops = [source, *through, target]
'''

#: The regression tests the test patch appends to TEST_FILE.
TESTS = "\n\n" + source_text(SOURCES, "patches/test_through.py")


# ----------------------------------------------------------------- repository
def repo_states() -> dict[str, dict[str, str]]:
    """The four states of the tree: before, +implementation, +guard, +tests."""
    base = dict(FILES)
    impl = dict(base)
    impl[GENERIC] = base[GENERIC].replace(
        '"shortest_path_length"]', '"shortest_path_length",\n           "shortest_path_through"]'
    ).replace("\n\ndef has_path(", IMPL.rstrip("\n") + "\n\n\ndef has_path(")
    impl[DOC] = base[DOC].replace("   shortest_path_length\n",
                                  "   shortest_path_length\n   shortest_path_through\n")
    guard = dict(impl)
    guard[GENERIC] = impl[GENERIC].replace(GUARD_OLD, GUARD_NEW)
    tests = dict(guard)
    tests[TEST_FILE] = guard[TEST_FILE] + TESTS
    for before, after in ((base, impl), (impl, guard), (guard, tests)):
        assert before != after
    return {"base": base, "impl": impl, "guard": guard, "tests": tests}


def git_diff(before: dict[str, str], after: dict[str, str]) -> str:
    """``git diff`` between two states: the patch payload, and what apply_patch receives."""
    out = []
    for path in sorted(after):
        if before.get(path) == after[path]:
            continue
        out.append(f"diff --git a/{path} b/{path}\n")
        out += difflib.unified_diff(before[path].splitlines(keepends=True),
                                    after[path].splitlines(keepends=True),
                                    f"a/{path}", f"b/{path}")
    return "".join(out)


def tree_listing(files: dict[str, str]) -> bytes:
    """``git ls-files -s``-like listing: a deterministic fingerprint of the checkout."""
    rows = [f"100644 {hashlib.sha256(files[p].encode()).hexdigest()[:40]} 0\t{p}"
            for p in sorted(files)]
    return ("\n".join(rows) + "\n").encode()


def grep(files: dict[str, str], pattern: str, under: str) -> str:
    """What ``rg -n PATTERN UNDER`` prints on the checkout (files in sorted order)."""
    rx = re.compile(pattern)
    hits = [f"{p}:{n}:{line}" for p in sorted(files) if p.startswith(under)
            for n, line in enumerate(files[p].splitlines(), 1) if rx.search(line)]
    return "\n".join(hits) + "\n"


def head(files: dict[str, str], path: str, last: int) -> str:
    """What ``sed -n '1,LASTp' PATH`` prints."""
    return "".join(files[path].splitlines(keepends=True)[:last])


def inspection(base: dict[str, str]) -> list[tuple[str, str, str, str]]:
    """The agent's read-only look at the checkout: (key, command, record kind, output)."""
    return [
        ("rg-def", "rg -n 'def (shortest_path|has_path)' minnx", "search",
         grep(base, r"def (shortest_path|has_path)", "minnx")),
        ("rg-exports", "rg -n '__all__|import \\*' minnx", "search",
         grep(base, r"__all__|import \*", "minnx")),
        ("read-generic", f"sed -n '1,40p' {GENERIC}", "file_read", head(base, GENERIC, 40)),
        ("read-tests", f"sed -n '1,40p' {TEST_FILE}", "file_read", head(base, TEST_FILE, 40)),
        ("read-doc", f"cat {DOC}", "file_read", base[DOC]),
    ]


#: Shows which error a missing waypoint raises before the guard patch.
PROBE = source_text(SOURCES, "probe_missing_nodes.py")


def run_pytest(files: dict[str, str]) -> tuple[int, str]:
    """The real focused run; elapsed time is the only thing normalised."""
    code, out, _ = run_script(
        {p: t.encode() for p, t in files.items()},
        ["-m", "pytest", "-v", "--no-header", "-p", "no:cacheprovider", TEST_FILE],
        alias=CWD, isolated=False, env={"PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1", "COLUMNS": "80"})
    return code, re.sub(r" in \d+\.\d+s ", " in N.NNs ", out)
