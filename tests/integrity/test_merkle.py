"""RFC 6962/9162 Merkle trees against transparency-dev's vectors, the RFC reference tree,
and generated proofs."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bundler.integrity.merkle import (
    EMPTY_ROOT,
    MerkleAccumulator,
    MerkleTree,
    ProofError,
    consistency_proof,
    inclusion_proof,
    leaf_hash,
    node_hash,
    root_from_inclusion_proof,
    root_from_leaf_hashes,
    verify_consistency,
    verify_inclusion,
)

# Counts of the vector files shipped in shared/vectors/merkle (see SOURCES.md).
INCLUSION_FILES, INCLUSION_VALID = 98, 6
CONSISTENCY_FILES, CONSISTENCY_VALID = 98, 6


def _b64(value: str) -> bytes:
    return base64.b64decode(value, validate=True)


def _hashes(values: list[str] | None) -> list[bytes]:
    return [_b64(v) for v in values or []]  # some files write "proof": null


def _load(folder: Path) -> list[tuple[str, dict[str, Any]]]:
    return [
        (str(p.relative_to(folder)), json.loads(p.read_text()))
        for p in sorted(folder.rglob("*.json"))
    ]


def test_every_inclusion_vector(vectors_dir: Path, subtests: pytest.Subtests) -> None:
    cases = _load(vectors_dir / "merkle" / "inclusion")
    assert len(cases) == INCLUSION_FILES
    assert sum(not c["wantErr"] for _, c in cases) == INCLUSION_VALID
    for name, case in cases:
        with subtests.test(msg=name):
            args = (case["leafIdx"], case["treeSize"], _b64(case["leafHash"]))
            proof, root = _hashes(case["proof"]), _b64(case["root"])
            if case["wantErr"]:
                with pytest.raises(ProofError):
                    verify_inclusion(*args, proof, root)
            else:
                verify_inclusion(*args, proof, root)
                assert root_from_inclusion_proof(*args, proof) == root


def test_every_consistency_vector(vectors_dir: Path, subtests: pytest.Subtests) -> None:
    cases = _load(vectors_dir / "merkle" / "consistency")
    assert len(cases) == CONSISTENCY_FILES
    assert sum(not c["wantErr"] for _, c in cases) == CONSISTENCY_VALID
    for name, case in cases:
        with subtests.test(msg=name):
            args = (case["size1"], case["size2"], _hashes(case["proof"]))
            roots = (_b64(case["root1"]), _b64(case["root2"]))
            if case["wantErr"]:
                with pytest.raises(ProofError):
                    verify_consistency(*args, *roots)
            else:
                verify_consistency(*args, *roots)


def test_rfc6962_reference_roots(vectors_dir: Path) -> None:
    ref = json.loads((vectors_dir / "merkle" / "rfc6962-reference.json").read_text())
    leaves = [leaf_hash(bytes.fromhex(x)) for x in ref["leaf_inputs"]]
    roots = [bytes.fromhex(r) for r in ref["roots_by_size"]]
    assert len(leaves) == 8 and len(roots) == 9
    acc = MerkleAccumulator()
    tree = MerkleTree(leaves)
    for size, root in enumerate(roots):
        assert root_from_leaf_hashes(leaves[:size]) == root, size
        assert acc.size == size
        assert acc.root() == root, size
        assert tree.root(size) == root, size
        if size < len(leaves):
            acc.append(leaves[size])


def test_reference_proofs_match_vectors(vectors_dir: Path) -> None:
    """Our generated proofs are byte-identical to transparency-dev's happy paths.

    Every happy path is over the RFC 6962 reference tree, so the proofs can be
    regenerated from its eight leaf inputs.
    """
    ref = json.loads((vectors_dir / "merkle" / "rfc6962-reference.json").read_text())
    tree = MerkleTree([leaf_hash(bytes.fromhex(x)) for x in ref["leaf_inputs"]])
    happy = sorted((vectors_dir / "merkle").glob("*/*/happy-path.json"))
    assert len(happy) == 10
    for path in happy:
        case = json.loads(path.read_text())
        if "leafIdx" in case:
            assert tree.root(case["treeSize"]) == _b64(case["root"])
            proof = tree.inclusion_proof(case["leafIdx"], case["treeSize"])
        else:
            assert tree.root(case["size1"]) == _b64(case["root1"])
            assert tree.root(case["size2"]) == _b64(case["root2"])
            proof = tree.consistency_proof(case["size1"], case["size2"])
        assert proof == _hashes(case["proof"]), path


def test_empty_tree_and_basic_hashes() -> None:
    assert EMPTY_ROOT.hex() == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
    assert root_from_leaf_hashes([]) == EMPTY_ROOT
    assert MerkleAccumulator().root() == EMPTY_ROOT
    assert leaf_hash(b"") != node_hash(b"", b"")  # domain separation


def test_accumulator_rejects_wrong_length() -> None:
    with pytest.raises(ValueError, match="32 bytes"):
        MerkleAccumulator().append(b"short")


def test_proof_error_shows_expected_and_computed() -> None:
    leaves = [leaf_hash(bytes([i])) for i in range(5)]
    proof = inclusion_proof(leaves, 2)
    wrong = b"\x00" * 32
    with pytest.raises(ProofError) as err:
        verify_inclusion(2, 5, leaves[2], proof, wrong)
    computed = root_from_leaf_hashes(leaves)
    assert err.value.expected == wrong and err.value.computed == computed
    assert f"expected {wrong.hex()}, computed {computed.hex()}" in str(err.value)


@pytest.mark.parametrize(
    ("index", "size", "message"),
    [(5, 5, "not below"), (-1, 5, "not below"), (0, 0, "not below")],
)
def test_inclusion_bad_arguments(index: int, size: int, message: str) -> None:
    with pytest.raises(ProofError, match=message):
        root_from_inclusion_proof(index, size, EMPTY_ROOT, [])


def test_proof_generation_arguments_checked() -> None:
    leaves = [leaf_hash(bytes([i])) for i in range(4)]
    with pytest.raises(ValueError):
        inclusion_proof(leaves, 4)
    with pytest.raises(ValueError):
        inclusion_proof(leaves, 0, 5)
    with pytest.raises(ValueError):
        consistency_proof(leaves, 3, 2)
    with pytest.raises(ValueError, match="meaningless"):
        consistency_proof(leaves, 0, 4)
    assert consistency_proof(leaves, 4, 4) == []
    assert consistency_proof(leaves, 0, 0) == []
    verify_consistency(0, 0, [], EMPTY_ROOT, EMPTY_ROOT)


def _flip_each_bit(proof: list[bytes]) -> list[list[bytes]]:
    out = []
    for i, h in enumerate(proof):
        for bit in range(256):
            changed = bytearray(h)
            changed[bit // 8] ^= 1 << (bit % 8)
            out.append([*proof[:i], bytes(changed), *proof[i + 1 :]])
    return out


@settings(max_examples=60, deadline=None)
@given(st.integers(min_value=1, max_value=200), st.randoms(use_true_random=False))
def test_generated_proofs_verify_and_bit_flips_fail(size: int, rnd: Any) -> None:
    leaves = [leaf_hash(i.to_bytes(4, "big")) for i in range(size)]
    tree = MerkleTree(leaves)
    root = root_from_leaf_hashes(leaves)
    assert tree.root() == root
    for index in range(size):
        proof = tree.inclusion_proof(index)
        assert proof == inclusion_proof(leaves, index)
        verify_inclusion(index, size, leaves[index], proof, root)
    # Tampering: a flipped bit anywhere in a proof, leaf or root must fail.
    index = rnd.randrange(size)
    proof = tree.inclusion_proof(index)
    for bad in _flip_each_bit(proof):
        with pytest.raises(ProofError):
            verify_inclusion(index, size, leaves[index], bad, root)
    for bad_leaf in _flip_each_bit([leaves[index]]):
        with pytest.raises(ProofError):
            verify_inclusion(index, size, bad_leaf[0], proof, root)
    for bad_root in _flip_each_bit([root]):
        with pytest.raises(ProofError):
            verify_inclusion(index, size, leaves[index], proof, bad_root[0])
    if size > 1:  # a neighbouring index, or a proof one hash short or long, fails too
        with pytest.raises(ProofError):
            verify_inclusion(
                index ^ 1 if index ^ 1 < size else index - 1, size, leaves[index], proof, root
            )
        with pytest.raises(ProofError):
            verify_inclusion(index, size, leaves[index], proof[:-1], root)
    with pytest.raises(ProofError):
        verify_inclusion(index, size, leaves[index], [*proof, root], root)


@settings(max_examples=60, deadline=None)
@given(st.integers(min_value=1, max_value=200), st.randoms(use_true_random=False))
def test_generated_consistency_proofs(size2: int, rnd: Any) -> None:
    leaves = [leaf_hash(i.to_bytes(4, "big")) for i in range(size2)]
    tree = MerkleTree(leaves)
    root2 = tree.root()
    for size1 in range(1, size2 + 1):
        proof = tree.consistency_proof(size1)
        assert proof == consistency_proof(leaves, size1, size2)
        verify_consistency(size1, size2, proof, tree.root(size1), root2)
    size1 = rnd.randrange(1, size2 + 1)
    proof = tree.consistency_proof(size1)
    root1 = tree.root(size1)
    for bad in _flip_each_bit(proof):
        with pytest.raises(ProofError):
            verify_consistency(size1, size2, bad, root1, root2)
    for bad_root in _flip_each_bit([root1]):
        with pytest.raises(ProofError):
            verify_consistency(size1, size2, proof, bad_root[0], root2)
    for bad_root in _flip_each_bit([root2]):
        with pytest.raises(ProofError):
            verify_consistency(size1, size2, proof, root1, bad_root[0])


def test_streaming_matches_batch_at_every_size() -> None:
    leaves = [leaf_hash(i.to_bytes(4, "big")) for i in range(300)]
    acc = MerkleAccumulator()
    for i, h in enumerate(leaves):
        acc.append(h)
        assert acc.root() == root_from_leaf_hashes(leaves[: i + 1])
    # O(log n) memory: one stored subtree per set bit of the size.
    assert len(acc._stack) == bin(300).count("1")


@pytest.mark.slow
def test_million_leaves() -> None:
    leaves = [leaf_hash(i.to_bytes(4, "big")) for i in range(1_000_000)]
    root = root_from_leaf_hashes(leaves)
    acc = MerkleAccumulator()
    for h in leaves:
        acc.append(h)
    assert acc.root() == root
    tree = MerkleTree(leaves)
    verify_inclusion(765_432, len(leaves), leaves[765_432], tree.inclusion_proof(765_432), root)
    verify_consistency(
        654_321, len(leaves), tree.consistency_proof(654_321), tree.root(654_321), root
    )
