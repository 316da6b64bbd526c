"""Trust: a pinned key proves authorship, a bundle's own keys only integrity.

DESIGN-NOTES §2: report *valid, signed by a pinned key* separately from
*valid, signed by a key found only in the bundle*.  These tests pin that
distinction down, plus the checkpoint-level codes around it.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from fixtures.builders import (
    BuiltBundle,
    attacker_signer,
    codes,
    make_signer,
    make_valid_bundle,
    read_lines,
    set_declared_keys,
    sign_checkpoints,
    verify,
    where,
)

from bundler import layout
from bundler.errors import UsageError
from bundler.integrity.note import sign_note, split_note
from bundler.reports import to_json_obj
from bundler.verify import Trust, VerifyOptions, verify_bundle


@pytest.fixture
def built(tmp_path: Path) -> BuiltBundle:
    return make_valid_bundle(tmp_path / "bundle")


ALL_CPS = [layout.checkpoint_path(s) for s in (4, 8, 12, 13)]


def test_pinned_key_gives_pinned_trust(built: BuiltBundle) -> None:
    report = verify(built.path, pin=built.verifier_key_text)
    assert report.trust is Trust.PINNED
    assert report.diagnostics == []
    doc = to_json_obj(report)
    assert (doc["valid"], doc["trusted"], doc["trust"]) == (True, True, "pinned")
    assert doc["pinned_keys"] == [built.verifier_key_text]
    assert all(s["pinned"] and s["declared"] and s["valid"]
               for c in doc["checkpoints"] for s in c["signatures"])


def test_nothing_pinned_gives_bundle_only_trust(built: BuiltBundle) -> None:
    report = verify(built.path)
    assert report.valid
    assert report.trust is Trust.BUNDLE_ONLY
    assert codes(report) == {"RB307"}
    doc = to_json_obj(report)
    assert (doc["valid"], doc["trusted"], doc["trust"]) == (True, False, "bundle-only")


def test_pinning_some_other_key_fails_every_checkpoint(built: BuiltBundle) -> None:
    other = make_signer("someone else", name="other.invalid/key").verifier().to_text()
    report = verify(built.path, pin=other)
    assert codes(report) == {"RB308"}
    assert [loc[0] for loc in where(report, "RB308")] == ALL_CPS
    assert report.trust is Trust.INVALID


def test_pinning_two_keys_one_of_them_right(built: BuiltBundle) -> None:
    other = make_signer("someone else", name="other.invalid/key").verifier().to_text()
    report = verify_bundle(built.path,
                           VerifyOptions(trusted_keys=(other, built.verifier_key_text)))
    assert report.trust is Trust.PINNED
    assert report.diagnostics == []


def test_signed_by_an_undeclared_key(built: BuiltBundle) -> None:
    """The attacker re-signs but forgets to declare the key: unknown signer."""
    sign_checkpoints(built.path, read_lines(built.path), attacker_signer(),
                     sizes=built.checkpoint_sizes, origin=built.origin)
    report = verify(built.path)
    assert codes(report) == {"RB309"}
    assert [loc[0] for loc in where(report, "RB309")] == ALL_CPS
    assert report.signed_prefix == 0


def test_witness_cosignature_by_unknown_key_is_ignored(built: BuiltBundle) -> None:
    """C2SP: signatures by unknown keys are ignored when a known key signed too."""
    witness = make_signer("witness", name="witness.invalid/w1")
    for rel in ALL_CPS:
        p = built.path / rel
        body, _ = split_note(p.read_text(encoding="utf-8"))
        p.write_text(sign_note(body, [built.signer, witness]), encoding="utf-8")
    report = verify(built.path, pin=built.verifier_key_text)
    assert report.diagnostics == []
    assert report.trust is Trust.PINNED
    sigs = report.bundle.checkpoints[0].signatures
    assert [(s.key_name, s.valid, s.pinned, s.declared) for s in sigs] == [
        ("test.invalid/signer", True, True, True), ("witness.invalid/w1", False, False, False)]


def test_pinned_witness_key_alone_is_enough(built: BuiltBundle) -> None:
    witness = make_signer("witness", name="witness.invalid/w1")
    for rel in ALL_CPS:
        p = built.path / rel
        body, _ = split_note(p.read_text(encoding="utf-8"))
        p.write_text(sign_note(body, [built.signer, witness]), encoding="utf-8")
    report = verify(built.path, pin=witness.verifier().to_text())
    assert report.trust is Trust.PINNED
    assert report.diagnostics == []


def test_one_checkpoint_not_pinned_means_not_pinned_trust(built: BuiltBundle) -> None:
    attacker = attacker_signer()
    set_declared_keys(built.path, [built.verifier_key_text, attacker.verifier().to_text()])
    p = built.path / layout.checkpoint_path(13)
    body, _ = split_note(p.read_text(encoding="utf-8"))
    p.write_text(sign_note(body, [attacker]), encoding="utf-8")
    assert verify(built.path).trust is Trust.BUNDLE_ONLY
    pinned = verify(built.path, pin=built.verifier_key_text)
    assert codes(pinned) == {"RB308"}
    assert where(pinned, "RB308") == [(layout.checkpoint_path(13), None, None)]


def test_malformed_declared_key(built: BuiltBundle) -> None:
    set_declared_keys(built.path, ["not+a+key"])
    assert codes(verify(built.path)) == {"RB311", "RB309"}
    # Pinned, the signatures verify; the bad declaration is still an error.
    assert codes(verify(built.path, pin=built.verifier_key_text)) == {"RB311"}


@pytest.mark.parametrize("bad", ["", "garbage", "name+zzzzzzzz+AAAA",
                                 "test.invalid/signer+00000000+" + "A" * 44])
def test_malformed_pinned_key_is_a_usage_error(built: BuiltBundle, bad: str) -> None:
    with pytest.raises(UsageError, match="--trust-key"):
        verify(built.path, pin=bad or " ")


def test_checkpoint_for_another_origin(built: BuiltBundle) -> None:
    sign_checkpoints(built.path, read_lines(built.path), built.signer,
                     sizes=built.checkpoint_sizes, origin="test.invalid/another-log")
    report = verify(built.path, pin=built.verifier_key_text)
    assert codes(report) == {"RB310"}
    assert [loc[0] for loc in where(report, "RB310")] == ALL_CPS


def test_no_checkpoint_at_all(built: BuiltBundle) -> None:
    shutil.rmtree(built.path / layout.CHECKPOINTS)
    report = verify(built.path, pin=built.verifier_key_text)
    assert codes(report) == {"RB306"}
    assert report.signed_prefix == 0
    assert report.trust is Trust.INVALID


def test_malformed_checkpoint(built: BuiltBundle) -> None:
    (built.path / layout.checkpoint_path(8)).write_text("just text\n", encoding="utf-8")
    report = verify(built.path, pin=built.verifier_key_text)
    assert codes(report) == {"RB304"}


def test_checkpoint_file_name_disagrees_with_size(built: BuiltBundle) -> None:
    cps = built.path / layout.CHECKPOINTS
    (cps / "0000000008.note").rename(cps / "0000000009.note")
    report = verify(built.path, pin=built.verifier_key_text)
    assert codes(report) == {"RB304"}
    assert where(report, "RB304") == [("checkpoints/0000000009.note", None, None)]


def test_unexpected_file_in_checkpoints(built: BuiltBundle) -> None:
    (built.path / layout.CHECKPOINTS / "notes.txt").write_text("hi\n", encoding="utf-8")
    report = verify(built.path, pin=built.verifier_key_text)
    assert codes(report) == {"RB411"}
    assert report.trust is Trust.PINNED  # a warning does not change trust


def test_trust_key_text_is_reported_verbatim(built: BuiltBundle) -> None:
    report = verify(built.path, pin=built.verifier_key_text)
    assert json.loads(json.dumps(to_json_obj(report)))["pinned_keys"] == [
        built.verifier_key_text]
