"""Run fuzzing campaigns by hand; exit 1 if any run broke the contract.

    PYTHONPATH=tests .venv/bin/python -m fuzzing raw --runs 600 --bundle multi-agent-paper
    PYTHONPATH=tests .venv/bin/python -m fuzzing all --runs 200 --seed 7
    PYTHONPATH=tests .venv/bin/python -m fuzzing render --runs 40 --browser 2
    PYTHONPATH=tests .venv/bin/python -m fuzzing render --runs 20 --browser 2 --firefox --webkit

Inputs that broke it are kept under ``--work``/CAMPAIGN/keep/finding-N.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import time
from pathlib import Path
from typing import Any

from fuzzing.campaigns import CAMPAIGNS, OTHER_BROWSERS

#: The campaigns whose sites ``--browser`` loads (incremental compares bytes with a cold
#: build, whose site render already covers).
BROWSED = ("raw", "archive", "render")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m fuzzing", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("campaign", choices=[*CAMPAIGNS, "all"])
    ap.add_argument("--runs", type=int, default=200)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--bundle", default="multi-agent-paper",
                    help="an example bundle (folder name under example_bundles/)")
    ap.add_argument("--work", type=Path, default=Path("/tmp/review-bundler-fuzz"))
    ap.add_argument("--browser", type=int, default=0, metavar="N",
                    help="raw, archive, render: also load every Nth site written in "
                         "Chromium (0: none)")
    ap.add_argument("--firefox", action="store_true",
                    help="with --browser: load those sites in Firefox ESR too")
    ap.add_argument("--webkit", action="store_true",
                    help="with --browser: load those sites in WebKit (WebKitGTK) too")
    args = ap.parse_args(argv)
    also = tuple(name for name in ("firefox", "webkit") if getattr(args, name))
    if also and not args.browser:
        ap.error(f"--{also[0]} needs --browser N")
    names = list(CAMPAIGNS) if args.campaign == "all" else [args.campaign]
    findings = 0
    for name in names:
        work = args.work / name
        shutil.rmtree(work, ignore_errors=True)
        work.mkdir(parents=True)
        started = time.perf_counter()
        extra: dict[str, Any] = {"browser_every": args.browser, "also": also} \
            if name in BROWSED and args.browser else {}
        tally = CAMPAIGNS[name](args.seed, args.runs, args.bundle, work, **extra)
        where = " and ".join(["Chromium", *(OTHER_BROWSERS[n][0] for n in also)])
        browsed = f", {tally.browsed} in {where}" if tally.browsed else ""
        print(f"{name}: {args.runs} runs in {time.perf_counter() - started:.0f} s, outcomes "
              f"{dict(sorted(tally.counts.items()))}{browsed}, {len(tally.findings)} finding(s)")
        for f in tally.findings:
            print(f"  {f}")
        findings += len(tally.findings)
    return 1 if findings else 0


if __name__ == "__main__":
    sys.exit(main())
