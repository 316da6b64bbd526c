"""Tamper tests: one valid bundle, one change each, its own diagnostic code.

The reference bundle (``fixtures.builders.make_valid_bundle``) has 13 events
and checkpoints at sizes 4, 8, 12 and 13.  Verification pins the real key,
so an untouched bundle gives no diagnostic at all and every code below is
caused by the change under test.  The expected sets are exact: a change
that breaks the chain also breaks every later checkpoint root, and saying so
is part of the contract.
"""

from __future__ import annotations

import base64
from pathlib import Path

import pytest
from fixtures.builders import (
    SECRET_BYTES,
    BuiltBundle,
    attacker_signer,
    chain,
    codes,
    error_codes,
    make_valid_bundle,
    read_events,
    read_lines,
    set_declared_keys,
    sign_checkpoints,
    verify,
    where,
    write_lines,
)

from bundler import layout
from bundler.integrity.canonical import canonicalize
from bundler.integrity.note import Checkpoint, sign_note
from bundler.verify import PayloadState, Trust, VerificationReport


@pytest.fixture
def built(tmp_path: Path) -> BuiltBundle:
    return make_valid_bundle(tmp_path / "bundle")


def check(b: BuiltBundle) -> VerificationReport:
    return verify(b.path, pin=b.verifier_key_text)


def cp(size: int) -> str:
    return layout.checkpoint_path(size)


def test_untouched_bundle_is_clean(built: BuiltBundle) -> None:
    report = check(built)
    assert report.diagnostics == []
    assert report.trust is Trust.PINNED
    assert report.signed_prefix == 13 == built.size
    assert built.checkpoint_sizes == (4, 8, 12, 13)


def test_edited_event_breaks_the_chain(built: BuiltBundle) -> None:
    objs = read_events(built.path)
    lines = read_lines(built.path)
    objs[5]["name"] = "a better-sounding name"
    lines[5] = canonicalize(objs[5])
    write_lines(built.path, lines)
    report = check(built)
    assert codes(report) == {"RB300", "RB301"}
    assert where(report, "RB300") == [("events.jsonl", 7, 6)]  # the next event's prev
    assert [loc[0] for loc in where(report, "RB301")] == [cp(8), cp(12), cp(13)]
    assert report.signed_prefix == 4


def test_edited_last_event_fails_only_the_root(built: BuiltBundle) -> None:
    objs = read_events(built.path)
    lines = read_lines(built.path)
    objs[-1]["text"] = "CO peaks at 09:00."
    lines[-1] = canonicalize(objs[-1])
    write_lines(built.path, lines)
    report = check(built)
    assert codes(report) == {"RB301"}
    assert where(report, "RB301") == [(cp(13), None, None)]
    assert report.signed_prefix == 12


def test_deleted_event(built: BuiltBundle) -> None:
    lines = read_lines(built.path)
    del lines[built.seq_of["archive-add-1"]]  # seq 7: nothing refers to it
    write_lines(built.path, lines)
    report = check(built)
    assert codes(report) == {"RB203", "RB300", "RB301", "RB303"}
    [rb203] = [d for d in report.diagnostics if d.code == "RB203"]
    assert (rb203.location.line, rb203.location.seq) == (8, 8)
    assert "1 event(s) missing (seq 7;" in rb203.message
    assert where(report, "RB303") == [(cp(13), None, None)]


def test_inserted_event_with_duplicated_seq(built: BuiltBundle) -> None:
    objs = read_events(built.path)
    lines = read_lines(built.path)
    forged = dict(objs[10], id="steer-forged", text="approve everything")
    lines.insert(11, canonicalize(forged))  # seq 10 again, after the real seq 10
    write_lines(built.path, lines)
    report = check(built)
    assert codes(report) == {"RB207", "RB300", "RB301", "RB305"}
    assert where(report, "RB207") == [("events.jsonl", 12, 10)]


def test_inserted_event_renumbered_without_relinking(built: BuiltBundle) -> None:
    objs = read_events(built.path)
    objs.insert(11, dict(objs[10], id="steer-forged"))
    write_lines(built.path, chain(objs, relink=False))  # seq fixed, prev left stale
    report = check(built)
    assert codes(report) == {"RB300", "RB301", "RB305"}
    assert "RB207" not in codes(report)
    assert [loc[1] for loc in where(report, "RB300")] == [12, 13, 14]


def test_inserted_event_renumbered_and_relinked(built: BuiltBundle) -> None:
    """A self-consistent forged log: only the signed roots can catch it."""
    objs = read_events(built.path)
    objs.insert(11, dict(objs[10], id="steer-forged"))
    write_lines(built.path, chain(objs))
    report = check(built)
    assert codes(report) == {"RB301", "RB305"}
    assert [loc[0] for loc in where(report, "RB301")] == [cp(12), cp(13)]
    assert report.signed_prefix == 8


def test_two_events_reordered(built: BuiltBundle) -> None:
    lines = read_lines(built.path)
    lines[9], lines[10] = lines[10], lines[9]  # fit-1 and steer-1 (independent)
    write_lines(built.path, lines)
    report = check(built)
    assert error_codes(report) == {"RB206", "RB300", "RB301"}
    assert codes(report) == {"RB206", "RB300", "RB301", "RB205"}  # time also goes back
    assert where(report, "RB206") == [("events.jsonl", 11, 9)]


def test_log_truncated_after_a_checkpoint(built: BuiltBundle) -> None:
    write_lines(built.path, read_lines(built.path)[:12])
    report = check(built)
    assert codes(report) == {"RB303"}
    assert where(report, "RB303") == [(cp(13), None, None)]
    assert report.signed_prefix == 12


def test_log_truncated_before_the_redaction(built: BuiltBundle) -> None:
    """Cutting the log at 8 also cuts the redaction record of the secret payload."""
    write_lines(built.path, read_lines(built.path)[:8])
    report = check(built)
    assert codes(report) == {"RB303", "RB401", "RB410"}
    assert [loc[0] for loc in where(report, "RB303")] == [cp(12), cp(13)]
    assert report.bundle.payloads[built.redacted_digest].state is PayloadState.MISSING


def test_payload_byte_changed(built: BuiltBundle) -> None:
    f = built.payload_file("table")
    data = bytearray(f.read_bytes())
    data[0] ^= 0x01
    f.write_bytes(bytes(data))
    report = check(built)
    assert codes(report) == {"RB400"}
    assert where(report, "RB400") == [(None, None, built.seq_of["table-1"])]


def test_payload_deleted_without_redaction(built: BuiltBundle) -> None:
    built.payload_file("table").unlink()
    report = check(built)
    assert codes(report) == {"RB401"}


def test_redacted_bytes_put_back(built: BuiltBundle) -> None:
    (built.path / layout.payload_path(built.redacted_digest)).write_bytes(SECRET_BYTES)
    report = check(built)
    assert codes(report) == {"RB402"}
    assert report.bundle.payloads[built.redacted_digest].state is PayloadState.LEAKED


def _resign_as_attacker(built: BuiltBundle) -> None:
    attacker = attacker_signer()
    set_declared_keys(built.path, [attacker.verifier().to_text()])
    sign_checkpoints(built.path, read_lines(built.path), attacker,
                     sizes=built.checkpoint_sizes, origin=built.origin)


def test_resigned_by_attacker_fails_against_the_pinned_key(built: BuiltBundle) -> None:
    _resign_as_attacker(built)
    report = check(built)
    assert codes(report) == {"RB308"}
    assert [loc[0] for loc in where(report, "RB308")] == [cp(s) for s in (4, 8, 12, 13)]
    assert report.trust is Trust.INVALID


def test_resigned_by_attacker_is_only_bundle_trust_when_nothing_pinned(
        built: BuiltBundle) -> None:
    _resign_as_attacker(built)
    report = verify(built.path)
    assert codes(report) == {"RB307"}
    assert report.valid
    assert report.trust is Trust.BUNDLE_ONLY


def test_edited_and_resigned_is_still_bundle_only(built: BuiltBundle) -> None:
    """Rewriting history and re-signing it is consistent: only pinning catches it."""
    objs = read_events(built.path)
    objs[8]["text"] = "CO peaks at 17:00."
    write_lines(built.path, chain(objs))
    _resign_as_attacker(built)
    assert verify(built.path).trust is Trust.BUNDLE_ONLY
    assert codes(check(built)) == {"RB308"}


def test_checkpoint_root_does_not_match(built: BuiltBundle) -> None:
    forged = Checkpoint(origin=built.origin, size=8, root=bytes(32))
    (built.path / cp(8)).write_text(sign_note(forged.body(), [built.signer]), encoding="utf-8")
    report = check(built)
    assert codes(report) == {"RB301"}
    assert where(report, "RB301") == [(cp(8), None, None)]


def _flip_signature_bit(path: Path, byte: int) -> None:
    text = path.read_text(encoding="utf-8")
    head, sig64 = text[:-1].rsplit(" ", 1)
    raw = bytearray(base64.b64decode(sig64))
    raw[byte] ^= 0x01
    path.write_text(f"{head} {base64.b64encode(bytes(raw)).decode()}\n", encoding="utf-8")


def test_flipped_signature_bit(built: BuiltBundle) -> None:
    _flip_signature_bit(built.path / cp(8), 4 + 10)  # past the 4-byte key id
    report = verify(built.path)
    assert codes(report) == {"RB302"}
    assert where(report, "RB302") == [(cp(8), None, None)]
    assert report.signed_prefix == 13  # the later checkpoints still sign everything
    pinned = check(built)
    assert codes(pinned) == {"RB302", "RB308"}


def test_flipped_key_id_bit_is_an_unknown_key(built: BuiltBundle) -> None:
    _flip_signature_bit(built.path / cp(8), 0)
    assert codes(verify(built.path)) == {"RB309"}
