"""Ctrl-C at moments spread over a whole build: one message, or a finished build.

Where a signal lands is down to timing, so this samples it: builds (forked render
workers, and pages made in the build process beside graph helpers) are sent SIGINT at
delays spread from start-up to past the end.  Each must end in one of two ways: exit
130, the one line "review-bundler: interrupted" and the previous site untouched; or
exit 0 with nothing on stderr and the new site in place.  Before the workers ignored
Ctrl-C while idle, 1-2 builds in 40 printed a traceback from inside multiprocessing;
before Ctrl-C was recorded, a build could publish and exit 0 after it.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from browser_util import poll

SAMPLES = 6


@pytest.mark.parametrize("memory_mib", [None, "1"], ids=["forked", "in-process"])
def test_ctrl_c_at_any_moment_ends_cleanly(synth_3k: Path, tmp_path: Path,
                                           memory_mib: str | None) -> None:
    env = dict(os.environ)
    if memory_mib is not None:
        env["REVIEW_BUNDLER_MEMORY_MIB"] = memory_mib
    site = tmp_path / "site"
    argv = [sys.executable, "-m", "bundler", "build", str(synth_3k), "-o", str(site), "-q"]
    start = time.monotonic()
    subprocess.run(argv, env=env, check=True, capture_output=True, timeout=300)
    whole = time.monotonic() - start
    (site / "previous").write_text("the site before", encoding="utf-8")
    outcomes = []
    for i in range(SAMPLES):
        proc = subprocess.Popen([*argv, "--no-cache"], env=env, start_new_session=True,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        time.sleep(whole * (0.1 + 1.0 * i / SAMPLES))
        os.killpg(proc.pid, signal.SIGINT)
        _, err = proc.communicate(timeout=120)
        stderr = err.decode()
        if proc.returncode == 130:
            assert stderr == "review-bundler: interrupted\n", stderr
            assert (site / "previous").read_text(encoding="utf-8") == "the site before"
        else:
            assert (proc.returncode, stderr) == (0, ""), stderr
            assert not (site / "previous").exists()     # replaced by the new site
            (site / "previous").write_text("the site before", encoding="utf-8")
        outcomes.append(proc.returncode)
    assert 130 in outcomes      # the delays reach into the build, not only past it
    # no staging left; the previous site, renamed aside by the last build that
    # finished, goes with the detached removal (output/writer.py), which a loaded
    # machine can still be running: it must end, on its own
    assert [p.name for p in tmp_path.iterdir() if ".building-" in p.name] == []
    poll(lambda: sorted(p.name for p in tmp_path.iterdir()) == ["site"], timeout=60,
         what=f"only the site to be left in {tmp_path}")
