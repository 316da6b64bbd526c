"""The command line: a thin layer over the library.

Every ``BundlerError`` is caught here, once, and turned into a message and
an exit code (0 ok, 1 invalid, 2 usage or unreadable input).  Nothing else
in the package prints.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import NoReturn

from bundler import __version__, interrupts
from bundler.errors import EXIT_INVALID, EXIT_OK, EXIT_USAGE, BundlerError, UsageError
from bundler.shown import shown

Handler = Callable[[argparse.Namespace], int]


def _read_trust_keys(values: Sequence[str]) -> tuple[str, ...]:
    """``--trust-key`` takes a key, or a file with one key per line (``#`` comments)."""
    keys: list[str] = []
    for value in values:
        try:
            is_file = Path(value).is_file()
        except (OSError, ValueError):   # a name too long for a path, a NUL byte: key text
            is_file = False
        p = Path(value)
        if is_file:
            try:
                text = p.read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError) as exc:
                raise UsageError(f"--trust-key {value}: {exc}") from exc
            keys += [ln.strip() for ln in text.splitlines()
                     if ln.strip() and not ln.lstrip().startswith("#")]
        else:
            keys.append(value)
    return tuple(keys)


def _overrides(values: Sequence[str]) -> dict[str, object]:
    from bundler.diagnostics import parse_overrides

    try:
        return dict(parse_overrides(values))
    except ValueError as exc:
        raise UsageError(str(exc)) from exc


def cmd_validate(args: argparse.Namespace) -> int:
    from bundler.reports import to_json, to_sarif, to_text
    from bundler.verify import VerifyOptions, verify_bundle

    opts = VerifyOptions(trusted_keys=_read_trust_keys(args.trust_key),
                         severity_overrides=_overrides(args.severity),  # type: ignore[arg-type]
                         keep_events=False)
    report = verify_bundle(args.bundle, opts)
    if args.format == "json":
        out = to_json(report)
    elif args.format == "sarif":
        out = to_sarif(report)
    else:
        out = to_text(report, color=sys.stdout.isatty() and not os.environ.get("NO_COLOR"))
    sys.stdout.write(out)
    return EXIT_OK if report.ok(strict=args.strict) else EXIT_INVALID


def cmd_keygen(args: argparse.Namespace) -> int:
    from bundler.integrity.note import KeyFormatError, generate_signer

    out = Path(args.output)
    if out.exists() and not args.force:
        raise UsageError(f"{out} exists; use --force to overwrite it")
    try:
        signer = generate_signer(args.name)
    except KeyFormatError as exc:
        raise UsageError(f"--name: {exc}") from exc
    try:
        fd = os.open(out, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(signer.to_text() + "\n")
        os.chmod(out, 0o600)
    except OSError as exc:
        raise UsageError(f"cannot write the key to {out}: {exc}") from exc
    print(signer.verifier().to_text())
    print(f"private key written to {out} (mode 0600); share only the line above",
          file=sys.stderr)
    return EXIT_OK


def _load_signer(path: str) -> object:
    from bundler.integrity.note import KeyFormatError, parse_signer_key

    try:
        return parse_signer_key(Path(path).read_text(encoding="utf-8").strip())
    except (OSError, UnicodeDecodeError, KeyFormatError) as exc:
        raise UsageError(f"--key {path}: {exc}") from exc


def cmd_redact(args: argparse.Namespace) -> int:
    from bundler.author.redact import redact_payload

    event = redact_payload(args.bundle, args.digest, reason=args.reason,
                           authority=args.authority, signer=_load_signer(args.key),  # type: ignore[arg-type]
                           stream=args.stream)
    print(f"redacted {args.digest} (event seq {event.seq}); bytes deleted, checkpoint signed")
    return EXIT_OK


def cmd_verify_proof(args: argparse.Namespace) -> int:
    """Check one claim's tlog-proof against pinned keys, without the bundle."""
    from bundler.integrity.merkle import ProofError
    from bundler.integrity.note import NoteFormatError
    from bundler.integrity.proof import ProofFormatError, TlogProof, verify_tlog_proof
    from bundler.verify.verifier import parse_trusted_keys

    keys = parse_trusted_keys(_read_trust_keys(args.trust_key))
    if not keys:
        raise UsageError("verify-proof needs at least one --trust-key")
    try:
        text = Path(args.proof).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"{args.proof}: {exc}") from exc
    try:
        proof = TlogProof.parse(text)
        cp = verify_tlog_proof(proof, None, keys)
    except (ProofFormatError, NoteFormatError, ProofError) as exc:
        print(f"INVALID: {shown(exc)}")
        return EXIT_INVALID
    print(f"VALID: leaf {proof.index} is included in {shown(cp.origin)} at tree size "
          f"{cp.size}, signed by a pinned key")
    if proof.extra is not None:
        print(shown(proof.extra.decode("utf-8", errors="replace"), lines=True))
    return EXIT_OK


def cmd_prove(args: argparse.Namespace) -> int:
    """Print the tlog-proof@v1 of any event against the latest signed checkpoint."""
    from contextlib import ExitStack

    from bundler.render.proofs import claim_proofs
    from bundler.verify import VerifyOptions, verify_bundle

    with ExitStack() as stack:
        report = verify_bundle(args.bundle, VerifyOptions(
            trusted_keys=_read_trust_keys(args.trust_key)), stack=stack)
        bundle = report.bundle
        if args.id is not None:
            seq = next((e.seq for e in bundle.events if e.id == args.id), None)
            if seq is None:
                raise UsageError(f"no event with id {args.id!r} in {args.bundle}")
        else:
            seq = args.seq
        if seq not in bundle.event_lines:
            raise UsageError(f"no valid event with seq {seq} in {args.bundle}")
        proof = claim_proofs(bundle, [seq]).get(seq)
        if proof is None:
            print(f"review-bundler: no signed checkpoint with a matching root covers seq {seq}",
                  file=sys.stderr)
            return EXIT_INVALID
        sys.stdout.write(proof)
    if not report.valid:
        print("review-bundler: warning: the bundle has verification errors; run validate",
              file=sys.stderr)
    return EXIT_OK


def cmd_schema(args: argparse.Namespace) -> int:
    from bundler.schema import schema_json

    sys.stdout.write(schema_json())
    return EXIT_OK


#: ``--severity``'s help, shared by every command that verifies a bundle.
SEVERITY_HELP = ("override the severity of one diagnostic code (LEVEL: error, warning or "
                 "info); repeatable")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="review-bundler",
        description="Verify review bundles and turn them into self-contained review sites.")
    parser.add_argument("--version", action="version", version=f"review-bundler {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    def trust_args(p: argparse.ArgumentParser) -> None:
        p.add_argument("--trust-key", action="append", default=[], metavar="KEY",
                       help="pin a verification key (NAME+ID+KEY text, or a file of keys); "
                            "repeatable")
        p.add_argument("--strict", action="store_true", help="treat warnings as failures")
        p.add_argument("--severity", action="append", default=[], metavar="CODE=LEVEL",
                       help=SEVERITY_HELP)

    p = sub.add_parser("validate", help="verify a bundle and report diagnostics")
    p.add_argument("bundle", help="bundle folder, or .zip / .tar.gz / .tgz / .tar archive")
    trust_args(p)
    p.add_argument("--format", choices=["text", "json", "sarif"], default="text",
                   help="report for people (text, the default), for tools (json) or for "
                        "code scanning (sarif)")
    p.set_defaults(func=cmd_validate)

    p = sub.add_parser("keygen", help="create an Ed25519 signing key for bundles")
    p.add_argument("--name", required=True, help="key name (no spaces or '+')")
    p.add_argument("-o", "--output", required=True, help="private key file (written mode 0600)")
    p.add_argument("--force", action="store_true", help="overwrite an existing key file")
    p.set_defaults(func=cmd_keygen)

    p = sub.add_parser("redact", help="redact a payload: append the record, delete the bytes")
    p.add_argument("bundle", help="bundle folder (redaction edits it in place)")
    p.add_argument("digest", help="sha256:<hex> of the payload")
    p.add_argument("--reason", required=True, help="why the payload is withheld (recorded)")
    p.add_argument("--authority", required=True, help="who authorised the redaction")
    p.add_argument("--key", required=True, help="the bundle's private signing key file")
    p.add_argument("--stream", default="redaction-cli",
                   help="stream id recorded for the redaction (declared if new)")
    p.set_defaults(func=cmd_redact)

    p = sub.add_parser("verify-proof", help="verify a claim's tlog-proof@v1 file offline")
    p.add_argument("proof", help="a .tlog-proof file from a review site's proofs/ folder")
    p.add_argument("--trust-key", action="append", default=[], metavar="KEY", required=True,
                   help="the signer's verification key (text or file); repeatable")
    p.set_defaults(func=cmd_verify_proof)

    p = sub.add_parser("prove", help="print the tlog-proof@v1 inclusion proof of one event")
    p.add_argument("bundle", help="bundle folder, or .zip / .tar.gz / .tgz / .tar archive")
    which = p.add_mutually_exclusive_group(required=True)
    which.add_argument("--seq", type=int, help="the event's seq")
    which.add_argument("--id", help="the event's object id")
    p.add_argument("--trust-key", action="append", default=[], metavar="KEY",
                   help="pin a verification key (text or file); repeatable")
    p.set_defaults(func=cmd_prove)

    p = sub.add_parser("schema", help="print the JSON Schema of the event format")
    p.set_defaults(func=cmd_schema)

    _register_optional(sub)
    return parser


def _register_optional(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Commands from later pipeline stages register themselves here."""
    from importlib import import_module

    for module in ("bundler.cli_build", "bundler.cli_query", "bundler.cli_generate"):
        try:
            mod = import_module(module)
        except ModuleNotFoundError as exc:
            if exc.name != module:
                raise
            continue
        mod.register(sub)


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # argparse exits 2 on usage errors, 0 on --help
        return int(exc.code or 0)
    func: Handler = args.func
    with interrupts.recorded():
        return _run(func, args)


def _interrupted() -> int:
    print("review-bundler: interrupted", file=sys.stderr)
    return 130


def _run(func: Handler, args: argparse.Namespace) -> int:
    try:
        code = func(args)
        interrupts.check()      # a Ctrl-C whose exception a finalizer swallowed
        return code
    except BundlerError as exc:
        if interrupts.requested():
            return _interrupted()
        print(f"review-bundler: error [{exc.code}]: {shown(exc.message)}", file=sys.stderr)
        for d in exc.diagnostics[:20]:
            print(f"  {d.code} {shown(d.location)}: {shown(d.message)}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        return _interrupted()
    except BrokenPipeError:
        return EXIT_OK
    except Exception as exc:  # a bug in review-bundler, never in the input
        # ... unless Ctrl-C came first: Python turns a KeyboardInterrupt raised while a
        # class is made (a lazy import) into "RuntimeError: Error calling __set_name__";
        # whatever failed after a Ctrl-C, the reviewer asked to stop.
        if interrupts.requested():
            return _interrupted()
        if os.environ.get("REVIEW_BUNDLER_DEBUG"):
            raise
        print(f"review-bundler: internal error [RB900]: {type(exc).__name__}: {shown(exc)}\n"
              "This is a bug in review-bundler, not in your bundle. Set "
              "REVIEW_BUNDLER_DEBUG=1 for the traceback and please report it.",
              file=sys.stderr)
        return EXIT_INVALID


def run() -> NoReturn:
    """The ``review-bundler`` command: :func:`main`, then exit without tearing the
    heap down.

    Python frees every object at exit, one by one: the verified bundle and its
    index are hundreds of thousands of them: about 0.03 s after a 10k-event build,
    0.24 s at 100k, growing with the bundle.  By the time
    :func:`main` returns, everything it writes is written and closed (sites are
    committed by rename, manifests and records by rename, workers and Graphviz
    are reaped), so only the standard streams are left to flush.
    """
    code = main()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):   # a closed pipe or stream
            stream.flush()
    os._exit(code)


__all__ = ["EXIT_INVALID", "EXIT_OK", "EXIT_USAGE", "main", "run"]
