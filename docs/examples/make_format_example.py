"""Write the small worked example that docs/format.md quotes byte for byte.

Run from the repository root::

    .venv/bin/python docs/examples/make_format_example.py [OUT_DIR]

OUT_DIR defaults to ``docs/examples/format-example``.  Everything is
deterministic (fixed clock, fixed origin, the committed demo key, and Ed25519
signatures are deterministic), so ``tests/test_docs.py`` can regenerate the
example into a temporary folder and insist that the lines quoted in
``docs/format.md`` are exactly what the library writes today.  The example
therefore cannot drift away from the code.
"""

from __future__ import annotations

import shutil
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

from bundler.author import BundleWriter
from bundler.integrity.merkle import MerkleTree, leaf_hash
from bundler.integrity.note import parse_signer_key
from bundler.integrity.proof import TlogProof

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
DEMO_KEY = REPO / "example_bundles" / "DEMO-KEY-NOT-SECRET.key"
DEFAULT_OUT = HERE / "format-example"
CLAIM_INDEX = 3  # the claim is the fourth event; its proof is written as claim.proof

CSV = b"hour,CO\n7,0.4\n8,1.3\n9,0.9\n"


class _Clock:
    """One second per event from a fixed start, so every run writes the same bytes."""

    def __init__(self) -> None:
        self.now = datetime(2026, 5, 1, 12, 0, 0, tzinfo=UTC)

    def __call__(self) -> str:
        self.now += timedelta(seconds=1)
        return self.now.strftime("%Y-%m-%dT%H:%M:%SZ")


def build(out: Path) -> Path:
    """Write the example bundle and the claim's tlog-proof into ``out`` (replaced)."""
    if out.exists():
        shutil.rmtree(out)
    signer = parse_signer_key(DEMO_KEY.read_text(encoding="utf-8").strip())
    with BundleWriter.create(out, title="Format example", signer=signer,
                             origin="example.invalid/review-bundler/format-example",
                             created="2026-05-01T12:00:00Z", checkpoint_every=100,
                             clock=_Clock(), generator="docs/examples") as w:
        w.append("run", id="run-1", stream="agent", title="Peak CO hour")
        w.append("stream", id="agent", run="run-1", kind="agent", name="analyst")
        ref = w.put_payload(CSV, "text/csv", "co.csv")
        w.append("individual", id="table-co", run="run-1", stream="agent", kind="table",
                 name="CO by hour", payload=ref)
        w.append("claim", id="claim-peak", run="run-1", stream="agent", name="peak",
                 text="CO peaks at 08:00.", evidence=["table-co"], final=True,
                 bindings=[{"evidence": "table-co", "field": "CO@hour=8", "value": 1.3,
                            "comparison": "max of column CO"}])
        w.append("fitness", id="check-peak", run="run-1", stream="agent", target="claim-peak",
                 evaluator={"name": "recompute", "version": "1.0"}, verdict="supported")
    lines = (out / "events.jsonl").read_bytes().splitlines()
    leaves = [leaf_hash(line) for line in lines]
    note = (out / "checkpoints" / f"{len(lines):010d}.note").read_text(encoding="utf-8")
    proof = TlogProof(index=CLAIM_INDEX,
                      hashes=tuple(MerkleTree(leaves).inclusion_proof(CLAIM_INDEX)),
                      checkpoint_note=note, extra=lines[CLAIM_INDEX])
    (out.parent / f"{out.name}.claim.proof").write_text(proof.to_text(), encoding="utf-8")
    return out


if __name__ == "__main__":
    target = Path(sys.argv[1]) if len(sys.argv) > 1 else DEFAULT_OUT
    print(build(target))
