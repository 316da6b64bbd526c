"""C2SP tlog-proof@v1: round trips, strict parsing and end-to-end verification."""

from __future__ import annotations

import base64

import pytest

from bundler.integrity.canonical import canonicalize
from bundler.integrity.merkle import MerkleTree, ProofError, leaf_hash
from bundler.integrity.note import (
    Checkpoint,
    NoteFormatError,
    SignerKey,
    generate_signer,
    sign_note,
)
from bundler.integrity.proof import (
    CheckpointSignatureError,
    ProofFormatError,
    TlogProof,
    verify_tlog_proof,
)

ORIGIN = "example.com/review-log"
# A fixed seed keeps the texts below reproducible (Ed25519 signing is deterministic).
SIGNER = SignerKey(ORIGIN, bytes(range(32)))
EVENTS = [canonicalize({"seq": i, "kind": "demo", "text": f"event {i}"}) for i in range(11)]


def _proof(index: int, *, extra: bool = True, size: int = len(EVENTS)) -> TlogProof:
    tree = MerkleTree([leaf_hash(e) for e in EVENTS[:size]])
    note = sign_note(Checkpoint(ORIGIN, size, tree.root()).body(), [SIGNER])
    return TlogProof(
        index=index,
        hashes=tuple(tree.inclusion_proof(index)),
        checkpoint_note=note,
        extra=EVENTS[index] if extra else None,
    )


def test_layout_follows_the_spec() -> None:
    proof = _proof(6)
    lines = proof.to_text().split("\n")
    assert lines[0] == "c2sp.org/tlog-proof@v1"
    assert lines[1] == "extra " + base64.b64encode(EVENTS[6]).decode()
    assert lines[2] == "index 6"
    assert [base64.b64decode(x) for x in lines[3 : 3 + len(proof.hashes)]] == list(proof.hashes)
    assert lines[3 + len(proof.hashes)] == ""
    assert "\n".join(lines[4 + len(proof.hashes) :]) == proof.checkpoint_note


@pytest.mark.parametrize("extra", [True, False])
def test_round_trip(extra: bool) -> None:
    for index in range(len(EVENTS)):
        proof = _proof(index, extra=extra)
        text = proof.to_text()
        assert TlogProof.parse(text) == proof
        assert TlogProof.parse(text).to_text() == text


def test_single_leaf_tree_has_no_hashes() -> None:
    proof = _proof(0, size=1)
    assert proof.hashes == ()
    assert "\nindex 0\n\n" in proof.to_text()
    assert TlogProof.parse(proof.to_text()) == proof
    assert verify_tlog_proof(proof, None, [SIGNER.verifier()]).size == 1


def test_empty_extra_is_kept() -> None:
    proof = TlogProof(0, (), _proof(0, size=1).checkpoint_note, extra=b"")
    assert "\nextra \n" in proof.to_text()
    assert TlogProof.parse(proof.to_text()).extra == b""


def test_spec_example_layout_is_accepted() -> None:
    """The c2sp.org/tlog-proof example, with its elided checkpoint replaced by a real one."""
    head = (
        "c2sp.org/tlog-proof@v1\n"
        "extra YWdlLXYxLjIuMS1kYXJ3aW4tYXJtNjQudGFyLmd6kYXJ3aW4tYXJ\n"
        "index 73894\n"
        "gSKyXoYZUgZ6jduWYrkDOARinOMGJveXjgMkBTcdPlQ=\n"
        "B95lDa8R83lS8n0eG+o0buTxRKQTYFi//1U8anccXmA=\n"
        "EKNzoDWG8LGC0Yp9o+sv3qllpMP9uHQ9B20KNL+Q1zs=\n"
        "RoopEkOdqkYqMB4MJXrbt/hMjOxsVn0IrWjpz1ZMMes=\n"
        "AHCioX9nLjsrse6YhjRRmk1WUEirVOLLRoOQ6vfO5vk=\n"
        "\n"
    )
    root = base64.b64decode("sFodV/vSp5O8n9a8QpW6PRY97tfOSW5bsc2Xl/EQi08=")
    note = sign_note(Checkpoint("example.com/fancylog", 109482, root).body(), [SIGNER])
    proof = TlogProof.parse(head + note)
    assert proof.index == 73894 and len(proof.hashes) == 5
    assert proof.checkpoint().size == 109482
    assert proof.to_text() == head + note


def test_verify_with_extra_and_with_leaf_data() -> None:
    key = SIGNER.verifier()
    for index in range(len(EVENTS)):
        proof = _proof(index)
        checkpoint = verify_tlog_proof(proof, None, [key])
        assert (checkpoint.origin, checkpoint.size) == (ORIGIN, len(EVENTS))
        assert verify_tlog_proof(proof, EVENTS[index], [key], origin=ORIGIN) == checkpoint
        without_extra = _proof(index, extra=False)
        assert verify_tlog_proof(without_extra, EVENTS[index], [key]) == checkpoint


def test_untrusted_or_missing_signature() -> None:
    proof = _proof(3)
    stranger = generate_signer(ORIGIN).verifier()
    with pytest.raises(CheckpointSignatureError, match="not trusted"):
        verify_tlog_proof(proof, None, [stranger])
    with pytest.raises(ProofError):  # CheckpointSignatureError is a ProofError
        verify_tlog_proof(proof, None, [])
    with pytest.raises(ProofError, match="origin"):
        verify_tlog_proof(proof, None, [SIGNER.verifier()], origin="example.com/other")


def test_tampering_fails() -> None:
    key = SIGNER.verifier()
    proof = _proof(5)
    # index
    for index in (4, 6, 2**63):
        with pytest.raises(ProofError):
            verify_tlog_proof(
                TlogProof(index, proof.hashes, proof.checkpoint_note, proof.extra), None, [key]
            )
    # each hash, one bit at a time
    for i, h in enumerate(proof.hashes):
        for bit in range(256):
            changed = bytearray(h)
            changed[bit // 8] ^= 1 << (bit % 8)
            hashes = (*proof.hashes[:i], bytes(changed), *proof.hashes[i + 1 :])
            with pytest.raises(ProofError):
                verify_tlog_proof(
                    TlogProof(5, hashes, proof.checkpoint_note, proof.extra), None, [key]
                )
    # dropped or added hash
    for hashes in (proof.hashes[:-1], (*proof.hashes, proof.hashes[0])):
        with pytest.raises(ProofError):
            verify_tlog_proof(TlogProof(5, hashes, proof.checkpoint_note, proof.extra), None, [key])
    # extra: another event's bytes, or one changed byte
    for extra in (EVENTS[4], EVENTS[5].replace(b"5", b"6")):
        with pytest.raises(ProofError):
            verify_tlog_proof(TlogProof(5, proof.hashes, proof.checkpoint_note, extra), None, [key])
    # leaf data that disagrees with extra
    with pytest.raises(ProofError, match="extra"):
        verify_tlog_proof(proof, EVENTS[4], [key])
    # no leaf data at all
    with pytest.raises(ProofError, match="no leaf data"):
        verify_tlog_proof(_proof(5, extra=False), None, [key])
    # checkpoint: edited size, or a re-signed checkpoint for a different root
    edited = proof.checkpoint_note.replace(f"\n{len(EVENTS)}\n", f"\n{len(EVENTS) + 1}\n", 1)
    with pytest.raises(CheckpointSignatureError):
        verify_tlog_proof(TlogProof(5, proof.hashes, edited, proof.extra), None, [key])
    wrong_root = sign_note(Checkpoint(ORIGIN, len(EVENTS), bytes(32)).body(), [SIGNER])
    with pytest.raises(ProofError) as err:
        verify_tlog_proof(TlogProof(5, proof.hashes, wrong_root, proof.extra), None, [key])
    assert err.value.expected == bytes(32)


def test_tampered_text_fails_to_parse_or_verify() -> None:
    key = SIGNER.verifier()
    text = _proof(7).to_text()
    lines = text.split("\n")
    for i, line in enumerate(lines):
        if not line or i == 0:
            continue
        # Change one character in each line: every variant must be refused somewhere.
        pos = len(line) // 2
        swapped = "B" if line[pos] != "B" else "C"
        changed = "\n".join([*lines[:i], line[:pos] + swapped + line[pos + 1 :], *lines[i + 1 :]])
        with pytest.raises((ProofFormatError, ProofError, NoteFormatError)):
            verify_tlog_proof(TlogProof.parse(changed), None, [key])


NOTE = _proof(0, size=1).checkpoint_note
HASH = base64.b64encode(bytes(32)).decode()


@pytest.mark.parametrize(
    "text",
    [
        "",
        "c2sp.org/tlog-proof@v1",
        "c2sp.org/tlog-proof@v2\nindex 0\n\n" + NOTE,
        "C2SP.org/tlog-proof@v1\nindex 0\n\n" + NOTE,
        "c2sp.org/tlog-proof@v1\r\nindex 0\n\n" + NOTE,
        "c2sp.org/tlog-proof@v1\n\n\n" + NOTE,  # missing index
        "c2sp.org/tlog-proof@v1\nindex notanumber\n\n" + NOTE,
        "c2sp.org/tlog-proof@v1\nindex -5\n\n" + NOTE,
        "c2sp.org/tlog-proof@v1\nindex 05\n\n" + NOTE,  # leading zero
        "c2sp.org/tlog-proof@v1\nindex  5\n\n" + NOTE,
        "c2sp.org/tlog-proof@v1\nindex 5 \n\n" + NOTE,
        f"c2sp.org/tlog-proof@v1\nindex {2**64}\n\n" + NOTE,
        "c2sp.org/tlog-proof@v1\nextra !!notbase64!!\nindex 0\n\n" + NOTE,
        "c2sp.org/tlog-proof@v1\nextra AB==\nindex 0\n\n" + NOTE,  # non-canonical base64
        "c2sp.org/tlog-proof@v1\nindex 0\nextra AA==\n\n" + NOTE,  # extra after index
        "c2sp.org/tlog-proof@v1\nextra AA==\nextra AA==\nindex 0\n\n" + NOTE,
        "c2sp.org/tlog-proof@v1\nindex 0\n!!notbase64!!\n\n" + NOTE,
        "c2sp.org/tlog-proof@v1\nindex 0\n" + base64.b64encode(bytes(64)).decode() + "\n\n" + NOTE,
        "c2sp.org/tlog-proof@v1\nindex 0\n" + HASH[:-1] + "\n\n" + NOTE,
        "c2sp.org/tlog-proof@v1\nindex 0\n" + (HASH + "\n") * 65 + "\n" + NOTE,
        "c2sp.org/tlog-proof@v1\nindex 0\n" + HASH + "\n",  # no checkpoint
        "c2sp.org/tlog-proof@v1\nindex 0\n" + HASH,
        "c2sp.org/tlog-proof@v1\nindex 0\n\ncheckpoint\n",  # not a signed note
        "c2sp.org/tlog-proof@v1\nindex 0\n\n" + NOTE + "trailing junk\n",
        "c2sp.org/tlog-proof@v1\nindex 0\n\n" + NOTE[:-1],
        "c2sp.org/tlog-proof@v1\nindex 0\n\n\n" + NOTE,  # two empty lines
        "c2sp.org/tlog-proof@v1\nindex 0\n\n" + NOTE.replace("\n1\n", "\n01\n", 1),
    ],
)
def test_parse_is_strict(text: str) -> None:
    with pytest.raises(ProofFormatError):
        TlogProof.parse(text)
