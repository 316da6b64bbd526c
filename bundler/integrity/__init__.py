"""Byte-exact integrity primitives for review bundles (DESIGN-NOTES section 2).

Nothing here invents a format.  Each module implements one public standard so
that a bundle can be checked with independent tools:

- :mod:`.canonical` -- RFC 8785 (JCS) canonical event lines, strict parsing;
- :mod:`.merkle` -- RFC 6962 / RFC 9162 Merkle tree hashes and proofs;
- :mod:`.note` -- C2SP signed notes and checkpoints with Ed25519;
- :mod:`.proof` -- C2SP ``tlog-proof@v1`` per-claim proofs.

The submodules are deliberately not re-exported here: importing the package
must stay cheap (no ``cryptography`` import) for code that only needs hashes.
"""
