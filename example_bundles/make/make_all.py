"""Regenerate every committed example bundle, or check that they are up to date.

Usage, from the repository root::

    .venv/bin/python -m example_bundles.make.make_all           # rewrite example_bundles/
    .venv/bin/python -m example_bundles.make.make_all --check   # exit 1 if any byte differs

``--check`` builds into a temporary folder and compares every file (and the
zip) with the committed copies, so CI fails when a generator, the writer or
the format changes without the examples being regenerated.

Binding fields in every example are machine-checkable; the syntax (CSV
``#rows`` and ``<column>@<key_column>=<key_value>``, JSON dotted paths,
``re:<regex>``) and the comparison rule are stated in :mod:`example_bundles.make.bindings`.
"""

from __future__ import annotations

import argparse
import importlib
import shutil
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from example_bundles.make.common import EXAMPLES
from example_bundles.make.zipped import write_zip

GENERATORS = ("air_quality", "networkx_feature", "multi_agent_paper", "unsupported_gain",
              "evolutionary_search", "closed_loop_lab")
ZIPPED = ("unsupported-gain",)


def build_all(out_dir: Path | None = None, *, log: Callable[[str], None] = print) -> list[Path]:
    """Build all six bundles (and the zip copies) under ``out_dir`` or example_bundles/."""
    base = out_dir or EXAMPLES
    built: list[Path] = []
    for name in GENERATORS:
        module = importlib.import_module(f"example_bundles.make.{name}")
        start = time.perf_counter()
        root: Path = module.build(out_dir)
        built.append(root)
        log(f"built {root.name:<20} {time.perf_counter() - start:6.2f} s")
    for folder in ZIPPED:
        write_zip(base / folder, base / f"{folder}.zip", folder)
        built.append(base / f"{folder}.zip")
        log(f"zipped {folder}.zip")
    return built


def _files(path: Path) -> dict[str, bytes]:
    if path.is_file():
        return {path.name: path.read_bytes()}
    if not path.is_dir():
        return {}
    return {p.relative_to(path).as_posix(): p.read_bytes()
            for p in sorted(path.rglob("*")) if p.is_file()}


def differences(fresh: Path, committed: Path) -> list[str]:
    """Every path that is missing, extra or different, relative to the examples folder."""
    out: list[str] = []
    for item in sorted(fresh.iterdir()):
        new, old = _files(item), _files(committed / item.name)
        prefix = item.name if item.is_dir() else ""
        for rel in sorted(set(new) | set(old)):
            where = f"{prefix}/{rel}" if prefix else rel
            if rel not in old:
                out.append(f"not committed: {where}")
            elif rel not in new:
                out.append(f"no longer generated: {where}")
            elif new[rel] != old[rel]:
                out.append(f"differs: {where}")
    return out


def check(*, log: Callable[[str], None] = print) -> int:
    tmp = Path(tempfile.mkdtemp(prefix="examples-check-"))
    try:
        build_all(tmp, log=log)
        diffs = differences(tmp, EXAMPLES)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    for line in diffs:
        log(line)
    log("examples are up to date" if not diffs else
        f"{len(diffs)} file(s) out of date: run python -m example_bundles.make.make_all")
    return 1 if diffs else 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="make_all", description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true",
                        help="regenerate into a temporary folder and compare byte for byte")
    args = parser.parse_args(argv)
    start = time.perf_counter()
    code = check() if args.check else (build_all(), 0)[1]
    print(f"total {time.perf_counter() - start:.2f} s")
    return code


if __name__ == "__main__":
    sys.exit(main())
