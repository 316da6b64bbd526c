"""C2SP signed notes and checkpoints, checked against Go's sumdb/note test vectors and a real
sum.golang.org checkpoint."""

from __future__ import annotations

import base64

import pytest

from bundler.integrity.merkle import EMPTY_ROOT
from bundler.integrity.note import (
    Checkpoint,
    KeyFormatError,
    NoteFormatError,
    NoteSignature,
    NoteVerificationError,
    SignerKey,
    VerifierKey,
    generate_signer,
    key_id,
    open_checkpoint,
    open_note,
    parse_signer_key,
    parse_verifier_key,
    sign_note,
    split_note,
    verify_note_signature,
)

# golang.org/x/mod sumdb/note/note_test.go (TestNewVerifier, TestNewSigner, TestSign, TestOpen).
PETER_VKEY = "PeterNeumann+c74f20a3+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW"
PETER_SKEY = "PRIVATE+KEY+PeterNeumann+c74f20a3+AYEKFALVFGyNhPJEMzD1QIDr+Y7hfZx09iUvxdXHKDFz"
ENOCH_VKEY = "EnochRoot+af0cfe78+ATtqJ7zOtqQtYqOo0CpvDXNlMhV3HeJDpjrASKGLWdop"
GO_TEXT = (
    "If you think cryptography is the answer to your problem,\n"
    "then you don't know what your problem is.\n"
)
PETER_SIG = (
    "— PeterNeumann x08go/ZJkuBS9UG/SffcvIAQxVBtiFupLLr8pAcElZInNIuGUgYN1FFYC2pZSNXgKvqfqdngo"
    "tpRZb6KE6RyyBwJnAM=\n"
)
ENOCH_SIG = (
    "— EnochRoot rwz+eBzmZa0SO3NbfRGzPCpDckykFXSdeX+MNtCOXm2/5n2tiOHp+vAF1aGrQ5ovTG01oOTGwnWLox"
    "33WWd1RvMc+QQ=\n"
)

# The Go checksum database's public key (note the '+' inside its base64) and a checkpoint
# it served, quoted from a sum.golang.org/lookup response in sigsum-go's documentation.
SUMDB_VKEY = "sum.golang.org+033de0ae+Ac4zctda0e5eza+HJyk9SxEdh+s3Ux18htTTAD8OuAn8"
SUMDB_NOTE = (
    "go.sum database tree\n49189689\nftjbAOzaupaIvaPo/G+Dk63nxOZ2s1OPOKIaPtXs7S4=\n\n"
    "— sum.golang.org Az3grlKZssqRoMNPpZfKt0TphbbcF+pzXqElURJKRNFKfaUAgqeI5k2AORH0QAhg/ebRwyIqD"
    "/OqP4oLtLnNumvOBAM=\n"
)


def test_go_verifier_and_signer_keys() -> None:
    peter = parse_verifier_key(PETER_VKEY)
    assert peter.name == "PeterNeumann"
    assert peter.key_id == bytes.fromhex("c74f20a3") == key_id(peter.name, peter.public_key)
    assert peter.to_text() == PETER_VKEY
    signer = parse_signer_key(PETER_SKEY)
    assert signer.verifier() == peter
    assert signer.to_text() == PETER_SKEY
    assert "private_key" not in repr(signer)  # seeds never end up in logs


def test_go_sign_is_byte_identical() -> None:
    signer = parse_signer_key(PETER_SKEY)
    assert sign_note(GO_TEXT, [signer]) == GO_TEXT + "\n" + PETER_SIG


def test_go_open() -> None:
    peter, enoch = parse_verifier_key(PETER_VKEY), parse_verifier_key(ENOCH_VKEY)
    note = GO_TEXT + "\n" + PETER_SIG + ENOCH_SIG
    assert open_note(note, [peter]) == (GO_TEXT, [peter])  # Enoch's unknown: ignored
    assert open_note(note, [peter, enoch]) == (GO_TEXT, [peter, enoch])
    with pytest.raises(NoteVerificationError, match="no signature from a trusted key"):
        open_note(note, [])
    body, sigs = split_note(note)
    assert body == GO_TEXT
    assert [s.name for s in sigs] == ["PeterNeumann", "EnochRoot"]
    assert sigs[1].key_id == bytes.fromhex("af0cfe78")
    assert verify_note_signature(body, sigs[0], peter)
    assert verify_note_signature(body, sigs[1], enoch)
    assert not verify_note_signature(body, sigs[0], enoch)


def test_go_invalid_signature_from_known_key_rejects_note() -> None:
    peter = parse_verifier_key(PETER_VKEY)
    broken = PETER_SIG[:60] + "ABCD" + PETER_SIG[60:]
    with pytest.raises(NoteVerificationError, match="invalid signature for key PeterNeumann"):
        open_note(GO_TEXT + "\n" + broken, [peter])
    # ...even when another trusted key signed correctly (C2SP: SHOULD reject the whole note).
    with pytest.raises(NoteVerificationError):
        open_note(GO_TEXT + "\n" + PETER_SIG + broken, [peter])


@pytest.mark.parametrize(
    "text",
    [
        GO_TEXT,
        GO_TEXT + "\n",
        GO_TEXT + "\n" + PETER_SIG[:-1],
        "\x01" + GO_TEXT + "\n" + PETER_SIG,
        "\udcff" + GO_TEXT + "\n" + PETER_SIG,  # Go's "\xff": not valid UTF-8
        GO_TEXT + "\n" + "— Bad Name " + PETER_SIG.split(" ", 2)[2],
        GO_TEXT + "\n" + PETER_SIG + "Unexpected line.\n",
        GO_TEXT + "\n" + PETER_SIG + "\n",
        GO_TEXT + "\n" + PETER_SIG.replace("\n", "\r\n"),
        GO_TEXT + "\n" + PETER_SIG.replace("—", "-"),
        GO_TEXT + "\n" + PETER_SIG.replace("— ", "—  "),
        GO_TEXT + "\n" + PETER_SIG.replace("=", ""),  # unpadded base64
        GO_TEXT + "\n" + "— PeterNeumann AAAA\n",  # shorter than a key ID
        GO_TEXT + "\n" + "— PeterNeumann\n",
        GO_TEXT + "\n" + "—  x08go/ZJ\n",  # empty name
        GO_TEXT + "\n" + PETER_SIG * 101,
    ],
)
def test_malformed_notes(text: str) -> None:
    with pytest.raises(NoteFormatError):
        split_note(text)
    with pytest.raises(NoteFormatError):
        open_note(text, [parse_verifier_key(PETER_VKEY)])


def test_note_limits() -> None:
    peter = parse_verifier_key(PETER_VKEY)
    assert open_note(GO_TEXT + "\n" + PETER_SIG * 100, [peter]) == (GO_TEXT, [peter])


def test_non_canonical_base64_signature_rejected() -> None:
    sig64 = PETER_SIG.split(" ")[2].strip()
    raw = base64.b64decode(sig64)
    assert len(raw) % 3 == 2  # one padding char: the last char has 2 unused bits
    bumped = sig64[:-2] + chr(ord(sig64[-2]) + 1) + "="  # "M=" -> "N=": same bytes
    assert base64.b64decode(bumped) == raw
    with pytest.raises(NoteFormatError, match="canonical"):
        split_note(GO_TEXT + "\n— PeterNeumann " + bumped + "\n")


def test_c2sp_spec_examples_parse() -> None:
    # c2sp.org/signed-note: the text contains an empty line; the LAST one separates.
    text = (
        "Ognuno sta solo sul cuor della terra\ntrafitto da un raggio di sole:\n\n"
        "ed è subito sera.\n"
    )
    sig = (
        "NnugSzTjtVAewIS+Z/iJhUPeFDkO/5QQ2i5ddnGITLlC+EhfLW9oJKONrMouFSQU0xMcXxj99ihAQwaqP3Ze"
        "kRwNtIc="
    )
    body, sigs = split_note(text + "\n— quasimodo.example/salvatore " + sig + "\n")
    assert body == text
    assert sigs == [NoteSignature("quasimodo.example/salvatore", *_split_sig(sig))]
    # c2sp.org/tlog-checkpoint
    note = (
        "example.com/behind-the-sofa\n20852163\nCsUYapGGPo4dkMgIAUqom/Xajj7h2fB2MPA3j2jxq2I=\n\n"
        "— example.com/behind-the-sofa Az3grlgtzPICa5OS8npVmf1Myq/5IZniMp+ZJurmRDeOoRDe4URYN7u5"
        "/Zhcyv2q1gGzGku9nTo+zyWE+xeMcTOAYQ8=\n"
    )
    body, sigs = split_note(note)
    checkpoint = Checkpoint.parse(body)
    assert (checkpoint.origin, checkpoint.size) == ("example.com/behind-the-sofa", 20852163)
    assert checkpoint.body() == body


def _split_sig(sig64: str) -> tuple[bytes, bytes]:
    raw = base64.b64decode(sig64)
    return raw[:4], raw[4:]


def test_real_sum_golang_org_checkpoint() -> None:
    key = parse_verifier_key(SUMDB_VKEY)
    assert key.name == "sum.golang.org"
    assert key.to_text() == SUMDB_VKEY
    checkpoint, signed_by = open_checkpoint(SUMDB_NOTE, [key])
    assert signed_by == [key]
    assert checkpoint.origin == "go.sum database tree"
    assert checkpoint.size == 49189689
    assert checkpoint.root == base64.b64decode("ftjbAOzaupaIvaPo/G+Dk63nxOZ2s1OPOKIaPtXs7S4=")
    tampered = SUMDB_NOTE.replace("49189689", "49189690")
    with pytest.raises(NoteVerificationError):
        open_checkpoint(tampered, [key])


@pytest.mark.parametrize(
    "vkey",
    [
        SUMDB_VKEY,
        "TEST+7997405c+AQcC+FTVKf0jlTdHDY3rbevmnKxxPjigCXlVtGe6RIr6",  # transparency-dev/formats
        ENOCH_VKEY,
    ],
)
def test_plus_inside_base64_keys(vkey: str) -> None:
    key = parse_verifier_key(vkey)
    assert key.to_text() == vkey
    assert "+" not in key.name


def test_go_verifier_key_manglings_rejected() -> None:
    """Go's TestNewVerifier: every proper substring and every single-byte bump fails."""
    rejected = 0
    for i in range(len(PETER_VKEY) + 1):
        for j in range(i + 1, len(PETER_VKEY) + 1):
            if (i, j) != (0, len(PETER_VKEY)):
                with pytest.raises(KeyFormatError):
                    parse_verifier_key(PETER_VKEY[i:j])
                rejected += 1
    for i in range(len(PETER_VKEY)):
        bumped = PETER_VKEY[:i] + chr(ord(PETER_VKEY[i]) + 1) + PETER_VKEY[i + 1 :]
        with pytest.raises(KeyFormatError):
            parse_verifier_key(bumped)
        rejected += 1
    assert rejected == len(PETER_VKEY) * (len(PETER_VKEY) + 1) // 2 - 1 + len(PETER_VKEY)


def test_go_signer_key_manglings_rejected() -> None:
    n = len(PETER_SKEY)
    for i in range(n + 1):
        for j in range(i + 1, n + 1):
            if (i, j) != (0, n):
                with pytest.raises(KeyFormatError):
                    parse_signer_key(PETER_SKEY[i:j])
    for i in range(n):
        with pytest.raises(KeyFormatError):
            parse_signer_key(PETER_SKEY[:i] + chr(ord(PETER_SKEY[i]) + 1) + PETER_SKEY[i + 1 :])


@pytest.mark.parametrize(
    ("vkey", "message"),
    [
        ("PeterNeumann+cc469956+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TWBADKEY==", "base64"),
        ("PeterNeumann+173116ae+ZRpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW", "algorithm"),
        ("PeterNeumann+C74F20A3+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW", "lowercase"),
        ("PeterNeumann+c74f20a4+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW", "does not match"),
        ("Peter Neumann+c74f20a3+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW", "spaces"),
        ("+c74f20a3+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW", "empty"),
        ("PeterNeumann+c74f20a3", r"NAME\+KEYID\+KEY"),
        ("PeterNeumann+c74f20a3+!!!!", "base64"),
        ("PeterNeumann+c74f20a3+", "algorithm"),
        ("PeterNeumann+c74f20a3+AhpcAA==", "algorithm 0x02"),
        ("PeterNeumann+c74f20a3+ARpc", "2 bytes, expected 32"),
    ],
)
def test_bad_verifier_keys(vkey: str, message: str) -> None:
    with pytest.raises(KeyFormatError, match=message):
        parse_verifier_key(vkey)


def test_sign_and_verify_round_trip() -> None:
    alice, bob = generate_signer("example.com/alice"), generate_signer("bob")
    assert parse_signer_key(alice.to_text()) == alice
    assert parse_verifier_key(alice.verifier().to_text()) == alice.verifier()
    checkpoint = Checkpoint("example.com/log", 0, EMPTY_ROOT)
    note = sign_note(checkpoint.body(), [alice, bob])
    assert note.startswith(checkpoint.body() + "\n— example.com/alice ")
    assert open_checkpoint(note, [bob.verifier()]) == (checkpoint, [bob.verifier()])
    body, sigs = split_note(note)
    assert [verify_note_signature(body, s, alice.verifier()) for s in sigs] == [True, False]
    assert verify_note_signature(body, sigs[1], bob.verifier())


def test_tampering_detected() -> None:
    signer = generate_signer("example.com/log")
    key = signer.verifier()
    body = Checkpoint("example.com/log", 7, bytes(range(32))).body()
    note = sign_note(body, [signer])
    (sig,) = split_note(note)[1]
    assert verify_note_signature(body, sig, key)
    assert not verify_note_signature(body.replace("7", "8"), sig, key)
    for bit in range(len(sig.signature) * 8):
        flipped = bytearray(sig.signature)
        flipped[bit // 8] ^= 1 << (bit % 8)
        assert not verify_note_signature(
            body, NoteSignature(sig.name, sig.key_id, bytes(flipped)), key
        )
    # A key with the same name but different bytes has another key ID: ignored, so untrusted.
    impostor = generate_signer("example.com/log").verifier()
    with pytest.raises(NoteVerificationError, match="no signature from a trusted key"):
        open_note(note, [impostor])
    # Forcing the ID does not help: the signature does not verify.
    forged = VerifierKey(key.name, key.key_id, impostor.public_key)
    assert not verify_note_signature(body, sig, forged)
    with pytest.raises(NoteVerificationError, match="invalid signature"):
        open_note(note, [forged])
    renamed = NoteSignature("other", sig.key_id, sig.signature)
    assert not verify_note_signature(body, renamed, key)


def test_ambiguous_keys() -> None:
    signer = generate_signer("log")
    key = signer.verifier()
    twin = VerifierKey(key.name, key.key_id, bytes(32))
    note = sign_note("hello\n", [signer])
    assert open_note(note, [key, key]) == ("hello\n", [key])  # a duplicate is harmless
    with pytest.raises(NoteVerificationError, match="ambiguous"):
        open_note(note, [key, twin])


@pytest.mark.parametrize("body", ["no newline", "", "a\x00b\n", "tab\there\n", "cr\r\n"])
def test_sign_note_rejects_bad_text(body: str) -> None:
    with pytest.raises(NoteFormatError):
        sign_note(body, [generate_signer("log")])


def test_sign_note_needs_signers_and_valid_names() -> None:
    with pytest.raises(ValueError):
        sign_note("x\n", [])
    for name in ["", "a b", "a+b", "a\u00a0b", "tab\t"]:
        with pytest.raises(KeyFormatError):
            generate_signer(name)
        with pytest.raises(KeyFormatError):
            sign_note("x\n", [SignerKey(name, bytes(32))])


def test_checkpoint_round_trip_with_extensions() -> None:
    checkpoint = Checkpoint("example.com/log", 12345, bytes(range(32)), ("ext one", "— two"))
    body = checkpoint.body()
    assert body == (
        "example.com/log\n12345\nAAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=\next one\n— two\n"
    )
    assert Checkpoint.parse(body) == checkpoint


ROOT64 = base64.b64encode(EMPTY_ROOT).decode()


@pytest.mark.parametrize(
    "body",
    [
        f"log\n01\n{ROOT64}\n",  # leading zero
        f"log\n00\n{ROOT64}\n",
        f"log\n+1\n{ROOT64}\n",
        f"log\n-1\n{ROOT64}\n",
        f"log\n 1\n{ROOT64}\n",
        f"log\n1_000\n{ROOT64}\n",
        f"log\n١\n{ROOT64}\n",  # a non-ASCII digit that int() accepts
        f"log\n{2**64}\n{ROOT64}\n",
        f"log\n1\n{ROOT64}",  # no final newline
        f"log\n1\n{ROOT64}\n\n",  # trailing empty line
        f"log\n1\n{ROOT64}\n\next\n",  # empty extension line
        f"\n1\n{ROOT64}\n",  # empty origin
        "log\n1\n",  # no root
        "log\n1\nAAAA\n",  # root too short
        f"log\n1\n{ROOT64[:-1]}\n",  # bad base64
        f"log\n1\n{ROOT64[:-2]}V=\n",  # non-canonical base64 of the same bytes
        f"log\r\n1\n{ROOT64}\n",
    ],
)
def test_checkpoint_parse_is_strict(body: str) -> None:
    with pytest.raises(NoteFormatError):
        Checkpoint.parse(body)


def test_key_objects_validate_their_fields() -> None:
    peter = parse_verifier_key(PETER_VKEY)
    assert VerifierKey.from_public_key(peter.name, peter.public_key) == peter
    for args in [
        ("a b", peter.key_id, peter.public_key),
        ("p", b"abc", peter.public_key),
        ("p", peter.key_id, peter.public_key[:31]),
    ]:
        with pytest.raises(KeyFormatError):
            VerifierKey(*args)
    with pytest.raises(KeyFormatError, match="32-byte seed"):
        SignerKey("p", bytes(31))


def test_checkpoint_fields_validated() -> None:
    for args in [
        ("", 0, EMPTY_ROOT),
        ("a\nb", 0, EMPTY_ROOT),
        ("log", -1, EMPTY_ROOT),
        ("log", 2**64, EMPTY_ROOT),
        ("log", 0, b"short"),
    ]:
        with pytest.raises(NoteFormatError):
            Checkpoint(*args)
    assert Checkpoint.parse(f"log\n{2**64 - 1}\n{ROOT64}\n").size == 2**64 - 1
