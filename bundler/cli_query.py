"""``review-bundler query``: run one audit query over a bundle and print its rows.

Exit status is 0 whether or not rows come back, so a query can be run for
information; ``--fail-on-rows`` turns rows into exit status 1 for CI gates.
An invalid bundle does not stop a query (the reviewer may want to know what
an invalid record claims), but a one-line warning goes to standard error.
"""

from __future__ import annotations

import argparse
import sys
from contextlib import ExitStack

from bundler.cli import SEVERITY_HELP, _overrides, _read_trust_keys
from bundler.errors import EXIT_INVALID, EXIT_OK, InvalidBundleError, UsageError


def cmd_query(args: argparse.Namespace) -> int:
    from bundler.diagnostics import Severity
    from bundler.query import QUERIES, check_call, open_index, run_query
    from bundler.query.format import query_list, to_csv, to_json, to_table
    from bundler.verify import VerifyOptions

    if args.list:
        sys.stdout.write(query_list(list(QUERIES.values())))
        return EXIT_OK
    if args.bundle is None or args.name is None:
        raise UsageError("name a bundle and a query: review-bundler query BUNDLE NAME [ARG]; "
                         "'review-bundler query --list' shows the queries")
    check_call(args.name, args.arg)   # before verifying: a typo should not cost a verification
    opts = VerifyOptions(trusted_keys=_read_trust_keys(args.trust_key),
                         severity_overrides=_overrides(args.severity),  # type: ignore[arg-type]
                         keep_events=True)
    with ExitStack() as stack:
        report, idx = open_index(args.bundle, opts, stack)
        if args.strict and not report.ok(strict=True):
            raise InvalidBundleError(
                f"{args.bundle} did not pass strict verification; no query was run",
                diagnostics=[d for d in report.diagnostics if d.severity >= Severity.WARNING])
        if not report.valid:
            print(f"review-bundler: warning: {args.bundle} is INVALID "
                  f"({report.count(Severity.ERROR)} errors); the answer covers what could "
                  "be read, run 'validate' for the findings", file=sys.stderr)
        result = run_query(idx, args.name, args.arg)
    render = {"json": to_json, "csv": to_csv}.get(args.format, to_table)
    sys.stdout.write(render(result))
    return EXIT_INVALID if args.fail_on_rows and result.rows else EXIT_OK


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("query", help="run a named audit query over a verified bundle")
    p.add_argument("bundle", nargs="?", help="bundle folder, .zip or .tar.gz")
    p.add_argument("name", nargs="?", help="query name (see --list)")
    p.add_argument("arg", nargs="?", help="the query's argument, when it takes one")
    p.add_argument("--list", action="store_true", help="list the queries and exit")
    p.add_argument("--format", choices=["table", "json", "csv"], default="table",
                   help="rows as a table for people (the default), or as json or csv")
    p.add_argument("--fail-on-rows", action="store_true",
                   help="exit with status 1 when the query returns rows")
    p.add_argument("--trust-key", action="append", default=[], metavar="KEY",
                   help="pin a verification key (text, or a file of keys); repeatable")
    p.add_argument("--strict", action="store_true",
                   help="refuse to answer unless the bundle verifies without warnings")
    p.add_argument("--severity", action="append", default=[], metavar="CODE=LEVEL",
                   help=SEVERITY_HELP)
    p.set_defaults(func=cmd_query)
