"""The command line: output formats, exit codes 0/1/2, keys, redaction.

Most tests call ``main(argv)`` in-process (fast, exact stdout/stderr); the
ones about tracebacks, argparse and file modes run the real executable in a
subprocess, because that is where an uncaught exception would show.
"""

from __future__ import annotations

import argparse
import json
import os
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from fixtures.builders import (
    BASE_EVENTS,
    TABLE_BYTES,
    BuiltBundle,
    ev,
    make_signer,
    make_valid_bundle,
    payload_ref,
    read_lines,
    write_chained_bundle,
    write_lines,
)

from bundler import layout
from bundler.cli import build_parser, main
from bundler.diagnostics import CODES
from bundler.integrity.note import parse_signer_key, parse_verifier_key

CLI = [sys.executable, "-m", "bundler"]
KEY = make_signer().verifier().to_text()  # the key write_chained_bundle signs with


@pytest.fixture
def built(tmp_path: Path) -> BuiltBundle:
    return make_valid_bundle(tmp_path / "bundle")


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def run_json(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, dict[str, Any]]:
    code, out, _ = run([*argv, "--format", "json"], capsys)
    return code, json.loads(out)


def proc(*args: str) -> subprocess.CompletedProcess[str]:
    p = subprocess.run([*CLI, *args], capture_output=True, text=True, timeout=120)
    assert "Traceback" not in p.stdout + p.stderr
    return p


def tamper(b: BuiltBundle) -> None:
    """Edit the last event: exactly one RB301."""
    lines = read_lines(b.path)
    lines[-1] = lines[-1].replace(b"confirmed", b"disputed")
    write_lines(b.path, lines)


def mixed_bundle(tmp_path: Path) -> Path:
    """One error (RB501), one warning (RB503), one info (RB508), on known lines."""
    path = tmp_path / "mixed"
    data = b"x\n"
    write_chained_bundle(path, [
        *BASE_EVENTS,
        ev("individual", "d-1", kind="table", name="d", payload=payload_ref(data)),
        ev("claim", "c-1", name="c", text="t", evidence=["ext:doi:10.1/x"], final=True),
        ev("claim", "c-2", name="c", text="t", evidence=["ghost"]),
    ], payloads=[(data, "text/plain")])
    return path


# ------------------------------------------------------------------ validate
def test_validate_text_valid_unpinned(built: BuiltBundle,
                                      capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(["validate", str(built.path)], capsys)
    assert code == 0
    assert err == ""
    lines = out.splitlines()
    assert lines[0] == f"{built.path}: Valid test bundle"
    assert lines[1] == "  VALID, but signed only by a key found in the bundle (not pinned)"
    assert lines[2] == "  13 events, 4 checkpoints (signed prefix 13), 3 payloads"
    assert lines[3] == "  0 error(s), 1 warning(s), 0 info"
    assert "WARNING RB307 checkpoint signed by a key found only in the bundle (1)" in lines


def test_validate_text_pinned(built: BuiltBundle, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(["validate", str(built.path), "--trust-key", built.verifier_key_text,
                        "--strict"], capsys)
    assert code == 0
    assert out.splitlines()[1:4] == ["  VALID, signed by a pinned key",
                                     "  13 events, 4 checkpoints (signed prefix 13), 3 payloads",
                                     "  0 error(s), 0 warning(s), 0 info"]


def test_validate_text_invalid(built: BuiltBundle, capsys: pytest.CaptureFixture[str]) -> None:
    tamper(built)
    code, out, _ = run(["validate", str(built.path)], capsys)
    assert code == 1
    assert out.splitlines()[1] == "  INVALID"
    assert "ERROR RB301 checkpoint root does not match the event log (1)" in out


@pytest.mark.parametrize("fmt", ["text", "json", "sarif"])
def test_exit_codes_do_not_depend_on_format(built: BuiltBundle, fmt: str,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    base = ["validate", str(built.path), "--format", fmt]
    assert run(base, capsys)[0] == 0
    assert run([*base, "--strict"], capsys)[0] == 1  # RB307 is a warning
    assert run([*base, "--strict", "--trust-key", built.verifier_key_text], capsys)[0] == 0
    tamper(built)
    assert run(base, capsys)[0] == 1


def test_strict_fails_a_final_claim_without_support(tmp_path: Path,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "b"
    write_chained_bundle(path, [*BASE_EVENTS, ev("claim", "c-1", name="c", text="t",
                                                 final=True)])
    code, doc = run_json(["validate", str(path), "--trust-key", KEY], capsys)
    assert code == 0
    assert [d["code"] for d in doc["diagnostics"]] == ["RB503"]
    assert run(["validate", str(path), "--trust-key", KEY, "--strict"], capsys)[0] == 1


# ------------------------------------------------------------------ trust keys
def test_trust_key_from_a_file(built: BuiltBundle, tmp_path: Path,
                               capsys: pytest.CaptureFixture[str]) -> None:
    keyfile = tmp_path / "keys.txt"
    keyfile.write_text(f"# the signer's key\n\n  {built.verifier_key_text}  \n",
                       encoding="utf-8")
    code, doc = run_json(["validate", str(built.path), "--trust-key", str(keyfile)], capsys)
    assert code == 0
    assert (doc["trust"], doc["trusted"], doc["pinned_keys"]) == (
        "pinned", True, [built.verifier_key_text])


def test_trust_key_of_someone_else(built: BuiltBundle,
                                   capsys: pytest.CaptureFixture[str]) -> None:
    other = make_signer("other").verifier().to_text()
    code, doc = run_json(["validate", str(built.path), "--trust-key", other], capsys)
    assert code == 1
    assert {d["code"] for d in doc["diagnostics"]} == {"RB308"}
    assert doc["trust"] == "invalid"


@pytest.mark.parametrize("bad", ["not-a-key", "a+b+c",
                                 # a key file's contents pasted instead of its path
                                 "# comment\n" + "x" * 300 + "+1234abcd+AAAA", "nul\x00byte"])
def test_malformed_trust_key_is_a_usage_error(built: BuiltBundle, bad: str,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(["validate", str(built.path), "--trust-key", bad], capsys)
    assert (code, out) == (2, "")
    assert err.startswith("review-bundler: error [RB901]: --trust-key ")


def test_trust_key_file_that_is_not_utf8(built: BuiltBundle, tmp_path: Path) -> None:
    keyfile = tmp_path / "keys.bin"
    keyfile.write_bytes(b"\xff\xfe\x00")
    p = proc("validate", str(built.path), "--trust-key", str(keyfile))
    assert p.returncode == 2
    assert p.stderr.startswith("review-bundler: error [RB901]: --trust-key ")


# ---------------------------------------------------------------- severities
def test_severity_override_raises_a_warning_to_error(built: BuiltBundle,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    code, doc = run_json(["validate", str(built.path), "--severity", "RB307=error"], capsys)
    assert code == 1
    assert doc["summary"] == {"error": 1, "warning": 0, "info": 0}
    assert doc["diagnostics"][0]["severity"] == "error"


def test_severity_override_lowers_a_warning_for_strict(
        built: BuiltBundle, capsys: pytest.CaptureFixture[str]) -> None:
    code, doc = run_json(["validate", str(built.path), "--strict",
                          "--severity", "RB307=info"], capsys)
    assert code == 0
    assert doc["summary"] == {"error": 0, "warning": 0, "info": 1}


def test_severity_override_can_waive_an_error(built: BuiltBundle,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    tamper(built)
    code, doc = run_json(["validate", str(built.path), "--severity", "RB301=warning"], capsys)
    assert code == 0
    assert doc["valid"] is True


@pytest.mark.parametrize(("bad", "says"), [
    ("RB307", "expected CODE=error|warning|info"),
    ("RB999=error", "'RB999' is no diagnostic code"),
    ("RB307=fatal", "unknown severity 'fatal'")])
def test_bad_severity_override_is_a_usage_error(built: BuiltBundle, bad: str, says: str,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(["validate", str(built.path), "--severity", bad], capsys)
    assert (code, out) == (2, "")
    assert "review-bundler: error [RB901]: " in err
    assert says in err


# ------------------------------------------------------------- report shapes
def test_json_report_shape(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, doc = run_json(["validate", str(mixed_bundle(tmp_path)), "--trust-key", KEY], capsys)
    assert code == 1
    assert {"valid", "trusted", "trust", "summary", "diagnostics", "events", "checkpoints",
            "payloads", "signed_prefix", "pinned_keys", "tool", "bundle", "title"} <= set(doc)
    assert (doc["valid"], doc["trusted"], doc["trust"]) == (False, False, "invalid")
    assert doc["summary"] == {"error": 1, "warning": 1, "info": 1}
    by_sev: dict[str, int] = {}
    for d in doc["diagnostics"]:
        assert set(d) == {"code", "severity", "title", "message", "location"}
        assert d["code"] in CODES and d["title"] == CODES[d["code"]].title
        assert d["severity"] in ("error", "warning", "info")
        assert isinstance(d["message"], str) and d["message"]
        assert isinstance(d["location"], dict)
        by_sev[d["severity"]] = by_sev.get(d["severity"], 0) + 1
    assert by_sev == doc["summary"]
    assert [(d["code"], d["location"]) for d in doc["diagnostics"]] == [
        ("RB501", {"path": "events.jsonl", "line": 5, "seq": 4}),
        ("RB503", {"path": "events.jsonl", "line": 4, "seq": 3}),
        ("RB508", {"path": "events.jsonl", "line": 4, "seq": 3}),
    ]
    assert doc["payloads"] == {"verified": 1}


def test_sarif_report_shape(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(["validate", str(mixed_bundle(tmp_path)), "--format", "sarif",
                        "--trust-key", KEY], capsys)
    assert code == 1
    doc = json.loads(out)
    assert doc["version"] == "2.1.0"
    assert "sarif-2.1.0" in doc["$schema"]
    [sarif_run] = doc["runs"]
    rules = sarif_run["tool"]["driver"]["rules"]
    results = sarif_run["results"]
    assert sarif_run["tool"]["driver"]["name"] == "review-bundler"
    assert [r["id"] for r in rules] == sorted({r["ruleId"] for r in results})
    for r in results:
        assert rules[r["ruleIndex"]]["id"] == r["ruleId"]
        assert r["level"] in ("error", "warning", "note")
        assert r["message"]["text"]
        [loc] = r["locations"]
        phys = loc["physicalLocation"]
        assert phys["artifactLocation"]["uri"] == "events.jsonl"
        line = phys["region"]["startLine"]
        assert isinstance(line, int) and not isinstance(line, bool) and line >= 1
    assert [(r["ruleId"], r["level"]) for r in results] == [
        ("RB501", "error"), ("RB503", "warning"), ("RB508", "note")]


def test_sarif_without_line_has_no_region(built: BuiltBundle,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    tamper(built)
    _, out, _ = run(["validate", str(built.path), "--format", "sarif"], capsys)
    results = json.loads(out)["runs"][0]["results"]
    rb301 = next(r for r in results if r["ruleId"] == "RB301")
    phys = rb301["locations"][0]["physicalLocation"]
    assert phys["artifactLocation"]["uri"] == layout.checkpoint_path(13)
    assert "region" not in phys


def test_json_output_is_deterministic(built: BuiltBundle,
                                      capsys: pytest.CaptureFixture[str]) -> None:
    tamper(built)
    first = run(["validate", str(built.path), "--format", "json"], capsys)[1]
    second = run(["validate", str(built.path), "--format", "json"], capsys)[1]
    assert first == second


# --------------------------------------------------------------------- keygen
def test_keygen_writes_0600_and_prints_the_verifier_key(tmp_path: Path) -> None:
    out = tmp_path / "signer.key"
    p = proc("keygen", "--name", "alice.example/bundles", "-o", str(out))
    assert p.returncode == 0
    assert stat.S_IMODE(out.stat().st_mode) == 0o600
    signer = parse_signer_key(out.read_text(encoding="utf-8").strip())
    verifier = parse_verifier_key(p.stdout.strip())
    assert verifier == signer.verifier()
    assert verifier.name == "alice.example/bundles"
    assert signer.to_text() not in p.stdout + p.stderr  # the secret is never printed


def test_keygen_refuses_to_overwrite_without_force(tmp_path: Path) -> None:
    out = tmp_path / "signer.key"
    out.write_text("precious\n")
    os.chmod(out, 0o644)
    p = proc("keygen", "--name", "alice", "-o", str(out))
    assert p.returncode == 2
    assert out.read_text() == "precious\n"
    p = proc("keygen", "--name", "alice", "-o", str(out), "--force")
    assert p.returncode == 0
    assert stat.S_IMODE(out.stat().st_mode) == 0o600  # tightened on overwrite
    assert parse_signer_key(out.read_text().strip()).name == "alice"


@pytest.mark.parametrize("name", ["has space", "a+b"])
def test_keygen_bad_name_is_a_usage_error(tmp_path: Path, name: str) -> None:
    p = proc("keygen", "--name", name, "-o", str(tmp_path / "k"))
    assert p.returncode == 2
    assert p.stderr.startswith("review-bundler: error [RB901]: --name: ")
    assert not (tmp_path / "k").exists()


def test_keygen_into_a_missing_folder_is_a_usage_error(tmp_path: Path) -> None:
    p = proc("keygen", "--name", "alice", "-o", str(tmp_path / "nope" / "k"))
    assert p.returncode == 2
    assert "cannot write the key to" in p.stderr


# --------------------------------------------------------------------- redact
def test_redact_end_to_end(built: BuiltBundle, tmp_path: Path,
                           capsys: pytest.CaptureFixture[str]) -> None:
    keyfile = tmp_path / "signer.key"
    keyfile.write_text(built.signer.to_text() + "\n", encoding="utf-8")
    digest = built.digests["table"]
    p = proc("redact", str(built.path), digest, "--reason", "licence", "--authority",
             "legal", "--key", str(keyfile))
    assert p.returncode == 0, p.stderr
    assert p.stdout.startswith(f"redacted {digest} (event seq 14)")
    code, doc = run_json(["validate", str(built.path), "--trust-key", built.verifier_key_text,
                          "--strict"], capsys)
    assert code == 0
    assert doc["diagnostics"] == []
    assert doc["payloads"] == {"redacted": 2, "verified": 1}
    assert doc["events"] == 15  # + redaction stream + redaction record
    assert not (built.path / layout.payload_path(digest)).exists()
    for f in built.path.rglob("*"):
        if f.is_file():
            assert TABLE_BYTES not in f.read_bytes(), f
    manifest = json.loads((built.path / layout.MANIFEST).read_text())
    assert {e["digest"]: e["state"] for e in manifest["payloads"]}[digest] == "redacted"


def test_redact_errors_are_usage_errors(built: BuiltBundle, tmp_path: Path) -> None:
    keyfile = tmp_path / "signer.key"
    keyfile.write_text(built.signer.to_text() + "\n", encoding="utf-8")
    unknown = "sha256:" + "0" * 64
    p = proc("redact", str(built.path), unknown, "--reason", "r", "--authority", "a",
             "--key", str(keyfile))
    assert p.returncode == 2
    assert f"no payload {unknown}" in p.stderr
    p = proc("redact", str(built.path), built.redacted_digest, "--reason", "r",
             "--authority", "a", "--key", str(tmp_path / "missing.key"))
    assert p.returncode == 2
    assert "--key " in p.stderr


def test_redact_on_a_corrupt_log_is_a_usage_error(built: BuiltBundle, tmp_path: Path) -> None:
    keyfile = tmp_path / "signer.key"
    keyfile.write_text(built.signer.to_text() + "\n", encoding="utf-8")
    with open(built.path / layout.EVENTS, "ab") as fh:
        fh.write(b"not json\n")
    p = proc("redact", str(built.path), built.digests["table"], "--reason", "r",
             "--authority", "a", "--key", str(keyfile))
    assert p.returncode == 2
    assert "line 14" in p.stderr
    assert built.payload_file("table").exists()  # nothing was deleted


# ------------------------------------------------------------ usage and input
def test_nonexistent_path_exits_2_without_traceback(tmp_path: Path) -> None:
    p = proc("validate", str(tmp_path / "nowhere"))
    assert p.returncode == 2
    assert p.stdout == ""
    assert p.stderr.splitlines() == [
        f"review-bundler: error [RB902]: bundle not found: {tmp_path / 'nowhere'}",
        f"  RB100 {tmp_path / 'nowhere'}: no such file or folder: {tmp_path / 'nowhere'}"]


@pytest.mark.parametrize("argv", [[], ["validate"], ["validate", "x", "--format", "xml"],
                                  ["frobnicate"], ["keygen", "-o", "k"]])
def test_argparse_usage_errors_exit_2(argv: list[str]) -> None:
    p = proc(*argv)
    assert p.returncode == 2
    assert p.stdout == ""
    assert "usage: review-bundler" in p.stderr


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(["--version"], capsys)
    assert code == 0
    assert out.startswith("review-bundler ")


def test_the_command_flushes_everything_before_its_fast_exit(built: BuiltBundle) -> None:
    """``python -m bundler`` leaves with ``os._exit`` (no heap teardown): output that is
    still buffered must be flushed first, and the exit code must be main()'s."""
    from bundler.schema import schema_json

    p = proc("schema")
    assert p.returncode == 0 and p.stdout == schema_json()     # 48 KB through a pipe
    p = proc("validate", str(built.path), "--trust-key", KEY, "--format", "json")
    assert p.returncode == 0 and json.loads(p.stdout)["valid"] is True
    p = proc("no-such-command")
    assert p.returncode == 2 and "invalid choice" in p.stderr


@pytest.mark.parametrize("code", ["ENOSPC", "EDQUOT"])
def test_a_full_disk_is_an_output_error_not_a_bug(
        built: BuiltBundle, tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch, code: str) -> None:
    import errno

    from bundler.render import site

    def full(*_args: object) -> None:
        raise OSError(getattr(errno, code), os.strerror(getattr(errno, code)),
                      str(tmp_path / "site"))

    monkeypatch.setattr(site, "write_files", full)
    assert main(["build", str(built.path), "-o", str(tmp_path / "site"), "-q",
                 "-j", "1"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("review-bundler: error [RB906]: ")
    assert os.strerror(getattr(errno, code)) in err and "internal error" not in err
    assert not (tmp_path / "site").exists()


def test_any_other_os_error_is_still_reported_as_a_bug(
        built: BuiltBundle, tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    from bundler.render import site

    def odd(*_args: object) -> None:
        raise OSError(22, "Invalid argument")

    monkeypatch.delenv("REVIEW_BUNDLER_DEBUG", raising=False)
    monkeypatch.setattr(site, "write_files", odd)
    assert main(["build", str(built.path), "-o", str(tmp_path / "site"), "-q"]) == 1
    assert "internal error [RB900]: OSError" in capsys.readouterr().err


def test_every_argument_of_every_command_says_what_it_is() -> None:
    """``--help`` is where a user looks first: an argument listed bare (``--severity
    CODE=LEVEL`` with no word on what it does, or which levels there are) sends them to
    the docs for each one."""
    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    bare = [f"{name} {'/'.join(a.option_strings) or a.dest}"
            for name, cmd in sub.choices.items() for a in cmd._actions
            if not isinstance(a, argparse._HelpAction) and not a.help]
    assert bare == []
    for name in ("validate", "build", "query"):
        assert "LEVEL: error, warning or info" in " ".join(
            sub.choices[name].format_help().split()), name
