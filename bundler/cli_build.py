"""``review-bundler build``: a thin CLI over :func:`bundler.render.site.build_site`."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from bundler.cli import SEVERITY_HELP, _overrides, _read_trust_keys
from bundler.errors import EXIT_INVALID, EXIT_OK, UsageError


class TerminalProgress:
    """A one-line progress display on a terminal; silent when piped or --quiet."""

    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled
        self.last = ""

    def __call__(self, stage: str, done: int, total: int) -> None:
        if not self.enabled:
            return
        text = f"{stage}: {done:,}" + (f"/{total:,}" if total else "")
        sys.stderr.write("\r\x1b[2K" + text)
        sys.stderr.flush()
        self.last = text

    def close(self) -> None:
        if self.enabled and self.last:
            sys.stderr.write("\r\x1b[2K")
            sys.stderr.flush()


def cmd_build(args: argparse.Namespace) -> int:
    from bundler.render.site import BuildOptions, build_site

    if args.jobs < 1:
        raise UsageError("--jobs must be at least 1")
    progress = TerminalProgress(sys.stderr.isatty() and not args.quiet)
    opts = BuildOptions(
        output=Path(args.output), trusted_keys=_read_trust_keys(args.trust_key),
        strict=args.strict, theme=Path(args.theme) if args.theme else None, title=args.title,
        base_url=args.base_url, jobs=args.jobs,
        severity_overrides=_overrides(args.severity),  # type: ignore[arg-type]
        progress=progress, incremental=not args.no_cache)
    try:
        result = build_site(args.bundle, opts)
    finally:
        progress.close()
    verdict = result.verdict
    if not args.quiet:
        print(f"built {result.pages:,} pages, {result.graphs:,} graphs, {result.files:,} files "
              f"({result.bytes / 1e6:.1f} MB) in {result.seconds:.2f} s", file=sys.stderr)
        again = "" if result.report is not None else "; unchanged inputs, as at the last build"
        print(f"verification: {verdict.trust.value} ({verdict.errors} errors, "
              f"{verdict.warnings} warnings{again})", file=sys.stderr)
        if result.renamed:      # repr: ids are untrusted, and this is a terminal
            some = ", ".join(map(repr, result.renamed[:4]))
            more = f" and {len(result.renamed) - 4:,} more" if len(result.renamed) > 4 else ""
            print(f"note: {len(result.renamed):,} ids were made to share a page name and "
                  f"were given longer ones: {some}{more}", file=sys.stderr)
    print((result.output / "index.html").as_uri())
    return EXIT_OK if verdict.ok(strict=args.strict) else EXIT_INVALID


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("build", help="verify a bundle and write its review site")
    p.add_argument("bundle", help="bundle folder, .zip or .tar.gz")
    p.add_argument("-o", "--output", required=True, help="site folder (replaced atomically)")
    p.add_argument("--trust-key", action="append", default=[], metavar="KEY",
                   help="pin a verification key (text, or a file of keys); repeatable")
    p.add_argument("--strict", action="store_true",
                   help="refuse to build unless the bundle verifies without warnings")
    p.add_argument("--severity", action="append", default=[], metavar="CODE=LEVEL",
                   help=SEVERITY_HELP)
    p.add_argument("--theme", help="theme folder overriding templates and assets")
    p.add_argument("--title", help="site title (default: the bundle's title)")
    p.add_argument("--base-url", help="public URL the site will be served from (canonical links)")
    p.add_argument("-j", "--jobs", type=int, default=min(2, os.cpu_count() or 1),
                   help="parallel Graphviz workers (default: %(default)s)")
    p.add_argument("--no-cache", action="store_true",
                   help="verify and render everything; reuse nothing from the previous site")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress or summary")
    p.set_defaults(func=cmd_build)
