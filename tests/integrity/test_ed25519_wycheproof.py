"""Wycheproof Ed25519 verification vectors, through ``cryptography`` and through our note API.

DESIGN-NOTES 2 chose ``cryptography`` because it passed all 151 cases; this
test keeps that true on every upgrade, and shows that the note layer uses the
very same primitive rather than a lenient one of its own.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from bundler.integrity.note import NoteSignature, VerifierKey, key_id, verify_note_signature

EXPECTED_CASES = 151


def _cases(vectors_dir: Path) -> list[tuple[bytes, dict[str, Any]]]:
    data = json.loads((vectors_dir / "ed25519" / "ed25519_test.json").read_text())
    assert data["algorithm"] == "EDDSA"
    assert data["numberOfTests"] == EXPECTED_CASES
    return [
        (bytes.fromhex(group["publicKey"]["pk"]), case)
        for group in data["testGroups"]
        for case in group["tests"]
    ]


def _cryptography_verifies(public_key: bytes, msg: bytes, sig: bytes) -> bool:
    try:
        Ed25519PublicKey.from_public_bytes(public_key).verify(sig, msg)
    except (InvalidSignature, ValueError):  # ValueError: the key itself does not load
        return False
    return True


def test_all_wycheproof_cases(vectors_dir: Path, subtests: pytest.Subtests) -> None:
    cases = _cases(vectors_dir)
    ran = 0
    for public_key, case in cases:
        with subtests.test(msg=f"tcId {case['tcId']}: {case['comment']}"):
            assert case["result"] in ("valid", "invalid")
            msg, sig = bytes.fromhex(case["msg"]), bytes.fromhex(case["sig"])
            assert _cryptography_verifies(public_key, msg, sig) is (case["result"] == "valid")
            ran += 1
    assert ran == len(cases) == EXPECTED_CASES


def test_note_layer_agrees_on_every_case(vectors_dir: Path) -> None:
    """Feed each case through NoteSignature/verify_note_signature.

    Notes sign UTF-8 text, so only cases whose message is valid UTF-8 can be
    expressed as a note body; each of those must get the same verdict.
    """
    checked = valid = 0
    for public_key, case in _cases(vectors_dir):
        try:
            body = bytes.fromhex(case["msg"]).decode("utf-8")
        except UnicodeDecodeError:
            continue
        key = VerifierKey("wycheproof", key_id("wycheproof", public_key), public_key)
        sig = NoteSignature(key.name, key.key_id, bytes.fromhex(case["sig"]))
        assert verify_note_signature(body, sig, key) is (case["result"] == "valid"), case["tcId"]
        checked += 1
        valid += case["result"] == "valid"
    # Counts for the pinned vector file: 84 messages are UTF-8, 22 of them with valid signatures.
    assert (checked, valid) == (84, 22)
