"""Producing bundles: the append-only writer is the only supported way."""

from bundler.author.writer import BundleWriter, sha256_digest

__all__ = ["BundleWriter", "sha256_digest"]
