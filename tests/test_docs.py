"""The documentation must build, and every fact it quotes from the code must match it.

The format specification is only useful if it is true, so the checks here
tie docs/format.md to the code: the worked example is regenerated and
compared byte for byte, every event field must appear in the field tables,
the reference table must equal what the verifier enforces, and the declared
limits must be the numbers in ``bundler/load/limits.py``.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from bundler.cli import build_parser
from bundler.diagnostics import CODES
from bundler.docgen import render_diagnostics
from bundler.integrity.merkle import MerkleTree, leaf_hash
from bundler.integrity.note import parse_verifier_key
from bundler.integrity.proof import TlogProof, verify_tlog_proof
from bundler.load.archive import ENTRY_OVERHEAD
from bundler.load.limits import DEFAULT_LIMITS
from bundler.model.events import (
    EVENT_MODELS,
    ClaimEvent,
    EventBase,
    EvidenceBinding,
    IndividualEvent,
    PayloadRef,
    SourceRef,
)
from bundler.model.metadata import BundleMetadata, Manifest, ManifestEntry
from bundler.verify import VerifyOptions, verify_bundle
from bundler.verify.invariants import references

REPO = Path(__file__).resolve().parent.parent
DOCS = REPO / "docs"
FORMAT_MD = DOCS / "format.md"
EXAMPLE_SCRIPT = DOCS / "examples" / "make_format_example.py"
DEMO_PUB = REPO / "example_bundles" / "demo-key.pub"
PAGES = ["index.md", "cli.md", "format.md", "diagnostics.md", "security.md",
         "mkdocs-integration.md"]

MARKED_BLOCK = re.compile(r"<!-- (example|test): ([^ ]+) -->\n```[a-z]*\n(.*?)^```", re.S | re.M)


def _blocks(page: Path, kind: str) -> dict[str, str]:
    return {name: body for k, name, body in MARKED_BLOCK.findall(page.read_text("utf-8"))
            if k == kind}


def _demo_key_text() -> str:
    lines = DEMO_PUB.read_text("utf-8").splitlines()
    return next(ln for ln in lines if ln and not ln.startswith("#"))


def _section(text: str, heading: str) -> str:
    """The text from ``heading`` (a full heading line) to the next heading of any level."""
    start = text.index(heading + "\n")
    rest = text[start + len(heading) + 1:]
    m = re.search(r"^#{1,6} ", rest, re.M)
    return rest[: m.start()] if m else rest


def _table_fields(section: str) -> list[str]:
    """First-column backticked names of the tables in ``section``."""
    return re.findall(r"^\| `([a-z_]+)` \|", section, re.M)


# ---------------------------------------------------------------- the build
def test_mkdocs_build_strict(tmp_path: Path) -> None:
    site = tmp_path / "site"
    env = dict(os.environ, NO_MKDOCS_2_WARNING="1")
    proc = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-q",
                           "-f", str(REPO / "mkdocs.yml"), "-d", str(site)],
                          capture_output=True, text=True, env=env, cwd=REPO, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    for page in PAGES:
        stem = page.removesuffix(".md")
        built = site / ("index.html" if stem == "index" else f"{stem}/index.html")
        assert built.is_file(), f"{page} was not built"
    html = "".join(p.read_text("utf-8") for p in site.rglob("*.html"))
    assert "fonts.googleapis" not in html and "fonts.gstatic" not in html
    remote = re.findall(r'<(?:script|link|img)[^>]+(?:src|href)="(https?://[^"]+)"', html)
    assert remote == [], f"the docs load remote resources: {sorted(set(remote))}"


def test_nav_lists_every_page() -> None:
    nav = re.findall(r"^  - [^:]+: (\S+\.md)$", (REPO / "mkdocs.yml").read_text("utf-8"), re.M)
    assert sorted(nav) == sorted(PAGES)
    assert sorted(p.name for p in DOCS.glob("*.md")) == sorted(PAGES)


# ------------------------------------------------------------ diagnostics
def test_diagnostics_page_is_current() -> None:
    committed = (DOCS / "diagnostics.md").read_text("utf-8")
    assert committed == render_diagnostics(), (
        "docs/diagnostics.md is stale: run .venv/bin/python -m bundler.docgen")


def test_diagnostics_page_has_one_correct_row_per_code() -> None:
    rows = re.findall(r"^\| <span id=\"(rb\d+)\"></span>`(RB\d+)` \| (\w+) \| (\w+) \| (.+) \|$",
                      render_diagnostics(), re.M)
    assert [r[1] for r in rows] == sorted(CODES)
    for anchor, code, severity, step, title in rows:
        info = CODES[code]
        assert (anchor, severity, step, title.replace("\\|", "|")) == (
            code.lower(), info.severity.label, info.step, info.title)


def test_docgen_check_mode(tmp_path: Path) -> None:
    from bundler.docgen import main

    stale = tmp_path / "diagnostics.md"
    stale.write_text("old\n", encoding="utf-8")
    assert main(["--check", "--output", str(stale)]) == 1
    assert main(["--output", str(stale)]) == 0
    assert main(["--check", "--output", str(stale)]) == 0
    assert stale.read_text("utf-8") == render_diagnostics()


# -------------------------------------------------------- worked example
@pytest.fixture(scope="module")
def regenerated(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Run the example script into a fresh folder; return the folder holding its outputs."""
    out = tmp_path_factory.mktemp("example")
    proc = subprocess.run([sys.executable, str(EXAMPLE_SCRIPT), str(out / "format-example")],
                          capture_output=True, text=True, cwd=REPO, timeout=120,
                          env=dict(os.environ, PYTHONDONTWRITEBYTECODE="1"))
    assert proc.returncode == 0, proc.stderr
    return out


def _tree(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes()
            for p in sorted(root.rglob("*")) if p.is_file() and "__pycache__" not in p.parts}


def test_committed_example_is_what_the_script_writes(regenerated: Path) -> None:
    committed = DOCS / "examples"
    want = _tree(regenerated)
    got = {k: v for k, v in _tree(committed).items() if not k.endswith(".py")}
    assert got == want, ("docs/examples is stale: run "
                         ".venv/bin/python docs/examples/make_format_example.py")


def test_format_md_quotes_the_example_exactly(regenerated: Path) -> None:
    blocks = _blocks(FORMAT_MD, "example")
    files = {name: body for name, body in blocks.items() if name not in ("leaf-hashes", "validate")}
    assert "format-example/events.jsonl" in files
    assert "format-example.claim.proof" in files
    for name, body in files.items():
        assert body == (regenerated / name).read_text("utf-8"), f"format.md block {name} is stale"
    lines = (regenerated / "format-example" / "events.jsonl").read_bytes().splitlines()
    leaves = [leaf_hash(line) for line in lines]
    expected = "".join(f"seq {i}  {h.hex()}\n" for i, h in enumerate(leaves))
    expected += f"root   {MerkleTree(leaves).root().hex()}\n"
    assert blocks["leaf-hashes"] == expected


def test_example_verifies_with_the_demo_key_pinned() -> None:
    report = verify_bundle(DOCS / "examples" / "format-example",
                           VerifyOptions(trusted_keys=(_demo_key_text(),)))
    assert report.trust == "pinned"
    assert [d.code for d in report.diagnostics] == []
    assert report.signed_prefix == 5
    proof = TlogProof.parse((DOCS / "examples" / "format-example.claim.proof").read_text("utf-8"))
    lines = (DOCS / "examples" / "format-example" / "events.jsonl").read_bytes().splitlines()
    checkpoint = verify_tlog_proof(proof, lines[3], [parse_verifier_key(_demo_key_text())])
    assert (checkpoint.size, proof.index) == (5, 3)


def test_format_md_validate_output_is_real() -> None:
    text = FORMAT_MD.read_text("utf-8")
    m = re.search(r"```console\n\$ (review-bundler validate [^\n]+)\n(.*?)```", text, re.S)
    assert m is not None
    args = m.group(1).split()[1:]
    proc = subprocess.run([sys.executable, "-m", "bundler", *args], capture_output=True,
                          text=True, cwd=REPO, timeout=120, env=dict(os.environ, NO_COLOR="1"))
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == m.group(2)


def test_index_quick_start_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Run the quick start as a user would: keygen, the Python snippet, then validate."""
    blocks = _blocks(DOCS / "index.md", "test")
    env = dict(os.environ, NO_COLOR="1")
    keygen = subprocess.run([sys.executable, "-m", "bundler", "keygen", "--name", "my-lab",
                             "-o", "my-lab.key"], capture_output=True, text=True, cwd=tmp_path,
                            env=env, timeout=60)
    assert keygen.returncode == 0, keygen.stderr
    (tmp_path / "my-lab.pub").write_text(keygen.stdout, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    namespace: dict[str, Any] = {}
    exec(compile(blocks["run"], "docs/index.md", "exec"), namespace)  # asserts its own result
    assert namespace["report"].trust == "pinned"
    command, _, expected = blocks["validate"].partition("\n")
    args = command.removeprefix("$ review-bundler ").split()
    proc = subprocess.run([sys.executable, "-m", "bundler", *args], capture_output=True,
                          text=True, cwd=tmp_path, env=env, timeout=60)
    assert (proc.returncode, proc.stdout) == (0, expected)


# ------------------------------------------------------- format.md vs code
def _fields(model: type[BaseModel], *, minus: type[BaseModel] | None = None) -> list[str]:
    base = set(minus.model_fields) if minus else set()
    return sorted(set(model.model_fields) - base)


def test_every_event_type_and_field_is_documented() -> None:
    text = FORMAT_MD.read_text("utf-8")
    envelope = _table_fields(_section(text, "### 4.2 The envelope"))
    assert sorted(envelope) == _fields(EventBase)
    headings = re.findall(r"^### 5\.\d+ `([a-z_]+)`$", text, re.M)
    assert sorted(headings) == sorted(EVENT_MODELS)
    for etype, model in EVENT_MODELS.items():
        heading = re.search(rf"^### 5\.\d+ `{etype}`$", text, re.M)
        assert heading is not None
        section = _section(text, heading.group(0))
        minus: type[BaseModel] = IndividualEvent if model is ClaimEvent else EventBase
        missing = set(_fields(model, minus=minus)) - set(_table_fields(section)) - {"type"}
        assert not missing, f"format.md does not document {etype} fields {sorted(missing)}"
    nested: dict[str, type[BaseModel]] = {"5.3": PayloadRef, "5.4": EvidenceBinding,
                                          "5.10": SourceRef}
    for number, sub in nested.items():
        block = text[text.index(f"### {number} "):]
        block = block[: block.index("\n### ", 1)]
        missing = set(sub.model_fields) - set(_table_fields(block))
        assert not missing, f"{sub.__name__} fields {sorted(missing)} are not documented"


def test_side_files_are_documented() -> None:
    text = FORMAT_MD.read_text("utf-8")
    assert sorted(_table_fields(_section(text, "## 2. `bundle.json`"))) == \
        _fields(BundleMetadata)
    manifest = text[text.index("## 3. `manifest.json`"):text.index("## 4. ")]
    assert set(_table_fields(manifest)) == set(Manifest.model_fields) | set(
        ManifestEntry.model_fields)


def _types(cell: str, every: set[str]) -> set[str]:
    named = set(re.findall(r"`([a-z_]+)`", cell))
    if cell.startswith("every type but") or cell.startswith("any type except"):
        return every - named
    if cell == "any type":
        return set(every)
    if cell == "artifact":
        return {"individual", "claim"}
    if cell == "evidence":
        return every - {"run", "stream", "edge", "redaction"}
    return named


def test_reference_table_matches_the_verifier() -> None:
    text = FORMAT_MD.read_text("utf-8")
    every = set(EVENT_MODELS)
    table = _section(text, "### 5.14 References")
    documented: dict[tuple[str, str], tuple[frozenset[str], bool]] = {}
    for row in re.findall(r"^\| (.+?) \| (`.+?`) \| (.+?) \|\s*(yes|)\s*\|$", table, re.M):
        types, fields, allowed, derivation = row
        for etype in _types(types, every):
            for fname in re.findall(r"`([a-z_.\[\]]+)`", fields):
                key = (etype, fname.replace("[]", ""))
                documented[key] = (frozenset(_types(allowed, every)), derivation == "yes")
    enforced: dict[tuple[str, str], tuple[frozenset[str], bool]] = {}
    for etype, model in EVENT_MODELS.items():
        ev = model.model_construct(
            type=etype, id="i", run="r", stream="s", supersedes="x", produced_by="x",
            trace=["x"], evidence=["x"], derived_from=["x"], parents=["x"], steering="x",
            target="x", operator="x", member="x", records=["x"], individual="x",
            members=["x"], source="x", bindings=[EvidenceBinding.model_construct(evidence="x")])
        for fname, _target, allowed, derivation in references(ev):
            enforced[(etype, fname)] = (allowed, derivation)
    assert documented == enforced


def test_declared_limits_match_the_code() -> None:
    section = _section(FORMAT_MD.read_text("utf-8"), "## 11. Declared limits")
    for value in (DEFAULT_LIMITS.max_line_bytes, DEFAULT_LIMITS.max_expanded_bytes,
                  DEFAULT_LIMITS.max_archive_entries, DEFAULT_LIMITS.max_compression_ratio,
                  DEFAULT_LIMITS.max_side_file_bytes, ENTRY_OVERHEAD):
        assert f"| {value:,} " in section, f"limit {value:,} is not in format.md section 11"


# --------------------------------------------------------------- cli.md
def test_cli_md_documents_every_command_and_option() -> None:
    text = (DOCS / "cli.md").read_text("utf-8")
    parser = build_parser()
    sub = next(a for a in parser._actions if a.dest == "command")
    choices: dict[str, Any] = sub.choices  # type: ignore[assignment]
    for name, cmd in choices.items():
        assert f"\n## {name}\n" in text, f"cli.md has no section for {name}"
        section = _section(text, f"## {name}")
        for action in cmd._actions:
            for opt in action.option_strings:
                if opt not in ("-h", "--help"):
                    assert opt in section, f"cli.md does not document {name} {opt}"
    for planned in ("build", "query"):
        assert f"\n## {planned}\n" in text
