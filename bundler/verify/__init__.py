"""Stage 2, verify: numbered steps that fail closed and report diagnostics."""

from bundler.verify.result import (
    CheckpointCheck,
    LoadedBundle,
    PayloadState,
    PayloadStatus,
    Trust,
    Verdict,
    VerificationReport,
)
from bundler.verify.verifier import VerifyOptions, verify_bundle

__all__ = [
    "CheckpointCheck",
    "LoadedBundle",
    "PayloadState",
    "PayloadStatus",
    "Trust",
    "Verdict",
    "VerificationReport",
    "VerifyOptions",
    "verify_bundle",
]
