"""Seeded fuzzing campaigns against the CLI's contract (see :mod:`fuzzing.campaigns`)."""
