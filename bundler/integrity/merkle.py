"""RFC 6962 / RFC 9162 Merkle tree hashing, proof generation and verification.

Written here rather than imported: the algorithms are short, and the usual
Python packages are GPL, 1-based or not RFC 9162.  All hashes are raw 32-byte
``bytes``; indexes are 0-based; the empty tree's root is ``SHA-256("")``.

Verification follows the RFC 9162 text step by step (sections 2.1.3.2 and
2.1.4.2) and fails closed: wrong hash lengths, impossible sizes, short or long
proofs all raise :class:`ProofError`, whose message shows expected against
computed values in hex, as sigstore does.
"""

from __future__ import annotations

from collections.abc import Sequence
from hashlib import sha256

__all__ = [
    "EMPTY_ROOT",
    "HASH_SIZE",
    "MerkleAccumulator",
    "MerkleTree",
    "ProofError",
    "consistency_proof",
    "inclusion_proof",
    "leaf_hash",
    "node_hash",
    "root_from_inclusion_proof",
    "root_from_leaf_hashes",
    "verify_consistency",
    "verify_inclusion",
]

HASH_SIZE = 32
EMPTY_ROOT = sha256(b"").digest()


class ProofError(ValueError):
    """A Merkle proof does not verify; ``expected``/``computed`` are set for root mismatches."""

    def __init__(
        self, message: str, *, expected: bytes | None = None, computed: bytes | None = None
    ) -> None:
        if expected is not None and computed is not None:
            message = f"{message}: expected {expected.hex()}, computed {computed.hex()}"
        super().__init__(message)
        self.expected = expected
        self.computed = computed


def leaf_hash(data: bytes) -> bytes:
    """RFC 6962 leaf hash ``SHA-256(0x00 || data)``; the 0x00 prefix stops leaf/node confusion."""
    return sha256(b"\x00" + data).digest()


def node_hash(left: bytes, right: bytes) -> bytes:
    """RFC 6962 interior node hash ``SHA-256(0x01 || left || right)``."""
    return sha256(b"\x01" + left + right).digest()


def _split(n: int) -> int:
    """Largest power of two strictly smaller than ``n`` (``n >= 2``): RFC 6962's split point."""
    return 1 << ((n - 1).bit_length() - 1)


def root_from_leaf_hashes(leaves: Sequence[bytes]) -> bytes:
    """Root of the tree over ``leaves`` (leaf hashes), level by level.

    Pairing neighbours and promoting an unpaired last node gives exactly the
    RFC 6962 "split at the largest power of two" tree, without recursion, and
    each level is built by ``map`` so a million leaves take about a second.
    """
    level = list(leaves)
    if not level:
        return EMPTY_ROOT
    while len(level) > 1:
        paired = list(map(node_hash, level[0::2], level[1::2]))
        if len(level) % 2:
            paired.append(level[-1])
        level = paired
    return level[0]


class MerkleAccumulator:
    """Streaming root computation in O(log n) memory.

    Keeps the compact range: the roots of the perfect subtrees that make up the
    tree so far, largest (leftmost) first, one per set bit of ``size``.  The
    root at any size folds them right to left.
    """

    __slots__ = ("_size", "_stack")

    def __init__(self) -> None:
        self._stack: list[bytes] = []
        self._size = 0

    @property
    def size(self) -> int:
        """Number of leaves appended so far."""
        return self._size

    def append(self, leaf_hash: bytes) -> None:
        """Add the next leaf hash (already ``SHA-256(0x00 || data)``)."""
        if len(leaf_hash) != HASH_SIZE:
            raise ValueError(f"leaf hash must be {HASH_SIZE} bytes, got {len(leaf_hash)}")
        stack = self._stack
        stack.append(leaf_hash)
        n = self._size
        while n & 1:  # each trailing 1 bit is a perfect subtree now completed by its twin
            right = stack.pop()
            stack[-1] = node_hash(stack[-1], right)
            n >>= 1
        self._size += 1

    def root(self) -> bytes:
        """Root of the tree of the first ``size`` leaves."""
        if not self._stack:
            return EMPTY_ROOT
        it = reversed(self._stack)
        acc = next(it)
        for left in it:
            acc = node_hash(left, acc)
        return acc


class MerkleTree:
    """All perfect-subtree hashes of a list of leaf hashes, for repeated proofs.

    ``_levels[k][j]`` is the root of leaves ``[j*2**k, (j+1)*2**k)``; every
    subtree hash that a proof for any tree size <= ``size`` needs is either one
    of these or a right-to-left fold of O(log n) of them.  Building costs n
    hashes once; each proof after that costs O(log^2 n) hashes at most.
    """

    def __init__(self, leaves: Sequence[bytes]) -> None:
        level = list(leaves)
        for i, h in enumerate(level):
            if len(h) != HASH_SIZE:
                raise ValueError(f"leaf hash {i} must be {HASH_SIZE} bytes, got {len(h)}")
        self._levels: list[list[bytes]] = [level]
        while len(level) > 1:
            level = list(map(node_hash, level[0::2], level[1::2]))
            self._levels.append(level)

    @property
    def size(self) -> int:
        return len(self._levels[0])

    def _check_size(self, size: int | None) -> int:
        n = self.size if size is None else size
        if not 0 <= n <= self.size:
            raise ValueError(f"tree size {n} outside 0..{self.size}")
        return n

    def _range_hash(self, lo: int, hi: int) -> bytes:
        """MTH of leaves [lo, hi) where lo is aligned as in the RFC recursion (or hi == lo+2**k)."""
        if hi == lo:
            return EMPTY_ROOT
        lefts: list[bytes] = []
        while (hi - lo) & (hi - lo - 1):  # not a power of two: peel the perfect left part
            k = _split(hi - lo)
            lefts.append(self._levels[k.bit_length() - 1][lo // k])
            lo += k
        width = hi - lo
        acc = self._levels[width.bit_length() - 1][lo // width]
        for left in reversed(lefts):
            acc = node_hash(left, acc)
        return acc

    def root(self, size: int | None = None) -> bytes:
        """Root of the tree of the first ``size`` leaves (default: all)."""
        return self._range_hash(0, self._check_size(size))

    def inclusion_proof(self, index: int, size: int | None = None) -> list[bytes]:
        """RFC 6962 PATH(index, D[0:size]), ordered from the leaf's sibling upwards."""
        n = self._check_size(size)
        if not 0 <= index < n:
            raise ValueError(f"leaf index {index} outside tree of size {n}")
        path: list[bytes] = []
        lo, hi = 0, n
        while hi - lo > 1:
            k = _split(hi - lo)
            if index < lo + k:
                path.append(self._range_hash(lo + k, hi))
                hi = lo + k
            else:
                path.append(self._range_hash(lo, lo + k))
                lo += k
        path.reverse()
        return path

    def consistency_proof(self, size1: int, size2: int | None = None) -> list[bytes]:
        """RFC 6962 PROOF(size1, D[0:size2]); empty when the sizes are equal.

        A proof from the empty tree is meaningless (RFC 9162 requires
        ``0 < size1``), so ``size1 == 0 < size2`` raises ``ValueError``.
        """
        n = self._check_size(size2)
        if not 0 <= size1 <= n:
            raise ValueError(f"size1 {size1} outside 0..{n}")
        if size1 == n:
            return []
        if size1 == 0:
            raise ValueError("a consistency proof from the empty tree is meaningless")
        proof: list[bytes] = []
        lo, hi, m, complete = 0, n, size1, True
        while m != hi - lo:  # SUBPROOF(m, D[lo:hi], complete)
            k = _split(hi - lo)
            if m <= k:
                proof.append(self._range_hash(lo + k, hi))
                hi = lo + k
            else:
                proof.append(self._range_hash(lo, lo + k))
                lo, m, complete = lo + k, m - k, False
        if not complete:
            proof.append(self._range_hash(lo, hi))
        proof.reverse()
        return proof


def inclusion_proof(leaves: Sequence[bytes], index: int, size: int | None = None) -> list[bytes]:
    """Inclusion proof for leaf ``index`` in the tree of the first ``size`` leaf hashes.

    Builds a :class:`MerkleTree` each call (O(n)); keep one for many proofs.
    """
    n = len(leaves) if size is None else size
    if not 0 <= n <= len(leaves):
        raise ValueError(f"tree size {n} outside 0..{len(leaves)}")
    return MerkleTree(leaves[:n]).inclusion_proof(index)


def consistency_proof(leaves: Sequence[bytes], size1: int, size2: int) -> list[bytes]:
    """Consistency proof between the trees of the first ``size1`` and ``size2`` leaf hashes."""
    if not 0 <= size2 <= len(leaves):
        raise ValueError(f"size2 {size2} outside 0..{len(leaves)}")
    return MerkleTree(leaves[:size2]).consistency_proof(size1)


def _check_hashes(proof: Sequence[bytes]) -> None:
    for i, h in enumerate(proof):
        if len(h) != HASH_SIZE:
            raise ProofError(f"proof hash {i} is {len(h)} bytes, expected {HASH_SIZE}")


def root_from_inclusion_proof(index: int, size: int, leaf: bytes, proof: Sequence[bytes]) -> bytes:
    """Root implied by an inclusion proof (RFC 9162 section 2.1.3.2, steps 1-4)."""
    if not 0 <= index < size:
        raise ProofError(f"leaf index {index} is not below tree size {size}")
    if len(leaf) != HASH_SIZE:
        raise ProofError(f"leaf hash is {len(leaf)} bytes, expected {HASH_SIZE}")
    _check_hashes(proof)
    fn, sn, r = index, size - 1, leaf
    for p in proof:
        if sn == 0:
            raise ProofError(f"inclusion proof too long: {len(proof)} hashes for size {size}")
        if fn & 1 or fn == sn:
            r = node_hash(p, r)
            while fn and not fn & 1:  # only when fn == sn: climb to the next left turn
                fn >>= 1
                sn >>= 1
        else:
            r = node_hash(r, p)
        fn >>= 1
        sn >>= 1
    if sn != 0:
        raise ProofError(f"inclusion proof too short: {len(proof)} hashes for size {size}")
    return r


def verify_inclusion(
    index: int, size: int, leaf: bytes, proof: Sequence[bytes], root: bytes
) -> None:
    """Check that ``leaf`` (a leaf hash) is at ``index`` in the tree of ``size`` with ``root``."""
    computed = root_from_inclusion_proof(index, size, leaf, proof)
    if computed != root:
        raise ProofError(
            f"inclusion proof for leaf {index} in tree of size {size} does not match the root",
            expected=root,
            computed=computed,
        )


def verify_consistency(
    size1: int, size2: int, proof: Sequence[bytes], root1: bytes, root2: bytes
) -> None:
    """Check that the tree (size2, root2) extends the tree (size1, root1).

    RFC 9162 section 2.1.4.2, plus the edge cases it leaves out: equal sizes
    need an empty proof and equal roots (and for size 0 the empty-tree root);
    a proof from the empty tree to a larger one is refused as meaningless.
    """
    if not 0 <= size1 <= size2:
        raise ProofError(f"sizes out of order: size1 {size1}, size2 {size2}")
    if size1 == size2:
        if proof:
            raise ProofError(f"sizes are equal ({size1}) but the proof has {len(proof)} hashes")
        if root1 != root2:
            raise ProofError(
                f"sizes are equal ({size1}) but roots differ", expected=root1, computed=root2
            )
        if size1 == 0 and root1 != EMPTY_ROOT:
            raise ProofError("root of the empty tree is wrong", expected=EMPTY_ROOT, computed=root1)
        return
    if size1 == 0:
        raise ProofError("a consistency proof from the empty tree is meaningless")
    if not proof:  # step 1
        raise ProofError("consistency proof is empty")
    _check_hashes(proof)
    path = list(proof)
    if size1 & (size1 - 1) == 0:  # step 2: size1 is a power of two
        path.insert(0, root1)
    fn, sn = size1 - 1, size2 - 1  # step 3
    while fn & 1:  # step 4
        fn >>= 1
        sn >>= 1
    fr = sr = path[0]  # step 5
    for c in path[1:]:  # step 6
        if sn == 0:
            raise ProofError(f"consistency proof too long: {len(proof)} hashes")
        if fn & 1 or fn == sn:
            fr = node_hash(c, fr)
            sr = node_hash(c, sr)
            while fn and not fn & 1:
                fn >>= 1
                sn >>= 1
        else:
            sr = node_hash(sr, c)
        fn >>= 1
        sn >>= 1
    if sn != 0:  # step 7
        raise ProofError(f"consistency proof too short: {len(proof)} hashes")
    for size, root, computed in ((size1, root1, fr), (size2, root2, sr)):
        if computed != root:
            raise ProofError(
                f"consistency proof does not match the root of size {size}",
                expected=root,
                computed=computed,
            )
