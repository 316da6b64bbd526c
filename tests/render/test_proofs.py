"""Claim proofs: each is a receipt against the first good checkpoint covering the
claim, verifiable on its own, and unchanged when the log grows."""

from __future__ import annotations

from pathlib import Path

from bundler.integrity.note import parse_verifier_key
from bundler.integrity.proof import TlogProof, verify_tlog_proof
from bundler.render.proofs import claim_proofs, covering_checkpoint
from bundler.verify import VerifyOptions, verify_bundle

REPO = Path(__file__).resolve().parents[2]
BUNDLE = REPO / "example_bundles" / "air-quality"
KEY = next(line for line in (REPO / "example_bundles" / "demo-key.pub").read_text(
    encoding="utf-8").splitlines() if line and not line.startswith("#"))


def test_each_claim_is_proved_against_the_first_checkpoint_that_covers_it() -> None:
    report = verify_bundle(BUNDLE, VerifyOptions(trusted_keys=(KEY,)))
    bundle = report.bundle
    sizes = sorted(c.size for c in bundle.checkpoints)
    assert len(sizes) >= 3             # so "first" and "newest" differ for most claims
    claims = [e.seq for e in bundle.events if e.type == "claim"]
    proofs = claim_proofs(bundle, claims)
    assert set(proofs) == set(claims)
    key = parse_verifier_key(KEY)
    older = 0
    for seq, text in proofs.items():
        proof = TlogProof.parse(text)
        checkpoint = verify_tlog_proof(proof, None, [key])
        first = min(s for s in sizes if s > seq)
        assert checkpoint.size == first
        older += first < sizes[-1]
    assert older > 0


def test_no_good_checkpoint_gives_no_proof() -> None:
    report = verify_bundle(BUNDLE, VerifyOptions(trusted_keys=(KEY,)))
    checkpoints = report.bundle.checkpoints
    last = max(c.size for c in checkpoints)
    assert covering_checkpoint(checkpoints, last) is None
    assert covering_checkpoint(checkpoints, 0) is not None
