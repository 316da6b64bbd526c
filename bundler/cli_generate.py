"""``review-bundler generate``: write a synthetic bundle for benchmarks and scale tests.

Registered through ``bundler.cli._register_optional``.  It prints the bundle
path and the verification key on stdout (one per line, so scripts can read
them) because a synthetic bundle is only useful with its key pinned.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from bundler.errors import EXIT_OK, UsageError


def cmd_generate(args: argparse.Namespace) -> int:
    from bundler.synth import generate, synthetic_signer

    if args.checkpoint_every < 1:
        raise UsageError(f"--checkpoint-every must be at least 1, not {args.checkpoint_every}")
    try:
        path = generate(Path(args.out), events=args.events, seed=args.seed,
                        checkpoint_every=args.checkpoint_every,
                        payload_bytes="large" if args.large_payloads else "small")
    except OSError as exc:
        raise UsageError(f"cannot write {args.out}: {exc.strerror or exc}") from exc
    key = synthetic_signer(args.seed).verifier().to_text()
    print(path)
    print(key)
    print(f"verify with: review-bundler validate {path} --trust-key {key}", file=sys.stderr)
    return EXIT_OK


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "generate", help="write a synthetic bundle (benchmarks, scale tests)",
        description="Write a deterministic synthetic bundle: same arguments, same bytes. "
                    "Prints the bundle path and the verification key to pin.")
    p.add_argument("out", help="output folder (must not exist or be empty)")
    p.add_argument("--events", type=int, required=True, metavar="N",
                   help="exact number of events")
    p.add_argument("--seed", type=int, default=0, metavar="S",
                   help="random seed; also derives the signing key (default 0)")
    p.add_argument("--checkpoint-every", type=int, default=1000, metavar="K",
                   help="sign a checkpoint every K events (default 1000)")
    p.add_argument("--large-payloads", action="store_true",
                   help="make dataset payloads about 1 MiB each (same events otherwise)")
    p.set_defaults(func=cmd_generate)
