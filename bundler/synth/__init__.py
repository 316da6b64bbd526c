"""Synthetic review bundles of any size (benchmarks, scale and memory tests)."""

from bundler.synth.generator import START, SyntheticClock, generate, synthetic_signer

__all__ = ["START", "SyntheticClock", "generate", "synthetic_signer"]
