"""Claim proofs: each is a receipt against the first good checkpoint covering the
claim, verifiable on its own, and unchanged when the log grows."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bundler.errors import InputError
from bundler.integrity.note import parse_verifier_key
from bundler.integrity.proof import TlogProof, verify_tlog_proof
from bundler.render.proofs import checkpoint_finder, claim_proofs
from bundler.verify import VerifyOptions, verify_bundle
from bundler.verify.result import CheckpointCheck, SignatureCheck

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
    find = checkpoint_finder(checkpoints)
    assert find(last) is None
    assert find(0) is not None


_CHECKPOINTS = st.lists(st.tuples(st.integers(0, 40), st.booleans(), st.booleans()), max_size=12)


@settings(max_examples=400, deadline=None)
@given(_CHECKPOINTS, st.integers(-1, 45))
def test_the_finder_picks_what_the_definition_picks(
        spec: list[tuple[int, bool, bool]], seq: int) -> None:
    """``checkpoint_finder`` (sorted once, bisected per claim) returns the very object
    the definition does: the smallest good checkpoint covering ``seq``, the first in
    the bundle among equal sizes; none when no good one covers it."""
    checkpoints = [
        CheckpointCheck(f"checkpoints/{i}", "o", size, "00", f"note {i}", root_ok,
                        (SignatureCheck("k", "00", sig_ok, False, True),))
        for i, (size, root_ok, sig_ok) in enumerate(spec)]
    good = [c for c in checkpoints if c.root_matches and c.any_ok and c.size > seq]
    expected = min(good, key=lambda c: c.size) if good else None
    assert checkpoint_finder(checkpoints)(seq) is expected


def test_a_line_rewritten_after_verification_is_never_proved(tmp_path: Path) -> None:
    """The proof of a claim carries its line as read again for the page.  That line is
    held to the leaf hash verified, not to the file's clock: a same-size rewrite (which a
    coarse ctime can miss) stops the build instead of showing a line never proved."""
    bundle_dir = tmp_path / "b"
    shutil.copytree(BUNDLE, bundle_dir)
    bundle = verify_bundle(bundle_dir, VerifyOptions(trusted_keys=(KEY,))).bundle
    claim = next(e for e in bundle.events if e.type == "claim")
    assert claim_proofs(bundle, [claim.seq])            # the bundle as verified: proved
    log = bundle_dir / "events.jsonl"
    lines = log.read_bytes().split(b"\n")
    no = bundle.event_lines[claim.seq]
    old = lines[no - 1]
    lines[no - 1] = old.replace(b'"claim"', b'"cla1m"', 1)
    assert len(lines[no - 1]) == len(old) and lines[no - 1] != old
    log.write_bytes(b"\n".join(lines))
    with pytest.raises(InputError) as info:
        claim_proofs(bundle, [claim.seq])
    assert info.value.code == "RB902"
    assert f"line {no} is not the line verified" in str(info.value)
