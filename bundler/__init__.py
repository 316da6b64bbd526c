"""review-bundler: verified, self-contained review sites from agent audit bundles.

Pipeline (one subpackage per stage): load -> verify -> graph -> render -> write.
The public library API is re-exported lazily from here.
"""

from __future__ import annotations

from typing import Any

__version__ = "0.1.0"

__all__ = ["BundleWriter", "VerifyOptions", "__version__", "verify_bundle"]


def __getattr__(name: str) -> Any:
    # Lazy so that `import bundler` stays cheap for the CLI's --help.
    if name == "BundleWriter":
        from bundler.author import BundleWriter

        return BundleWriter
    if name in ("VerifyOptions", "verify_bundle"):
        from bundler import verify

        return getattr(verify, name)
    raise AttributeError(name)
