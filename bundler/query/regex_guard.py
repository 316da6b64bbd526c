"""Evaluate bundle-supplied regular expressions without letting them hang a build.

A binding field ``re:<pattern>`` is written by the agent whose work is under
review, so it is hostile input.  Python's ``re`` has no timeout and even
``.*Z`` is quadratic (100 kB of text took 28 s here), while the audit pages
run on every ``build``.  So patterns are (1) refused outright when they have
the shapes that backtrack exponentially (a repeat inside a repeat, a
backreference), which keeps those answers deterministic, and (2) run in a
small isolated child process (``python -I``, no project imports) that is
killed when one search exceeds its time budget.  A killed search answers
"timed out"; the next one starts a fresh child.
"""

from __future__ import annotations

import importlib
import json
import queue
import subprocess
import sys
import threading
from dataclasses import dataclass
from typing import Any

MAX_PATTERN = 1_000
MAX_TEXT = 4 * 1024 * 1024
TIMEOUT = 2.0          # seconds per search
BUDGET = 10.0          # seconds of timed-out searches per runner, then stop trying

_WORKER = r"""
import json, re, sys
sys.stdin.reconfigure(encoding="utf-8")
text = ""
for line in sys.stdin:
    req = json.loads(line)
    if req.get("t") is not None:
        text = req["t"]
    try:
        m = re.search(req["p"], text, re.MULTILINE)
    except (re.error, RecursionError, OverflowError, ValueError) as exc:
        out = {"error": str(exc)}
    else:
        if m is None:
            out = {"none": True}
        else:
            out = {"ok": m.group(1) if m.re.groups else m.group(0)}
    sys.stdout.write(json.dumps(out) + "\n")
    sys.stdout.flush()
"""


@dataclass(frozen=True)
class Match:
    """``status`` is ok, none (no match), refused, error or timeout."""

    status: str
    value: str | None = None
    detail: str = ""


def refusal(pattern: str) -> str | None:
    """Why ``pattern`` is not run at all, or ``None`` when it may be."""
    if len(pattern) > MAX_PATTERN:
        return f"the pattern is longer than {MAX_PATTERN} characters"
    parser: Any = importlib.import_module("re._parser")
    try:
        parsed = parser.parse(pattern, 0)
    except Exception as exc:  # re.error, RecursionError, OverflowError, ...
        return f"invalid regular expression: {exc}"
    return _shape(parsed, inside_repeat=False)


def _shape(items: Any, *, inside_repeat: bool) -> str | None:
    for op, av in items:
        name = str(op)
        if name in ("GROUPREF", "GROUPREF_EXISTS"):
            return "backreferences are not evaluated"
        subs: list[Any] = []
        repeat = False
        if name in ("MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT"):
            _lo, hi, sub = av
            repeat = hi > 1
            if repeat and inside_repeat:
                return "nested repeats (catastrophic backtracking) are not evaluated"
            subs = [sub]
        elif name == "SUBPATTERN":
            subs = [av[3]]
        elif name == "BRANCH":
            subs = list(av[1])
        elif name in ("ASSERT", "ASSERT_NOT"):
            subs = [av[1]]
        elif name == "ATOMIC_GROUP":
            subs = [av]
        for sub in subs:
            why = _shape(sub, inside_repeat=inside_repeat or repeat)
            if why:
                return why
    return None


class RegexRunner:
    """One child process, reused for every search of one query run."""

    def __init__(self, timeout: float = TIMEOUT, budget: float = BUDGET) -> None:
        self.timeout = timeout
        self.budget = budget
        self.spent = 0.0
        self.proc: subprocess.Popen[str] | None = None
        self.replies: queue.Queue[str] = queue.Queue()
        self.text_key: str | None = None

    def __enter__(self) -> RegexRunner:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        if self.proc is not None:
            self.proc.kill()
            self.proc.wait()
            for stream in (self.proc.stdin, self.proc.stdout):
                if stream is not None:
                    stream.close()
            self.proc = None
            self.text_key = None

    def _start(self) -> subprocess.Popen[str]:
        proc = subprocess.Popen([sys.executable, "-I", "-c", _WORKER], stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                text=True, encoding="utf-8")
        replies: queue.Queue[str] = queue.Queue()
        out = proc.stdout

        def pump() -> None:
            assert out is not None
            for line in out:
                replies.put(line)
            replies.put("")

        threading.Thread(target=pump, daemon=True).start()
        self.replies = replies
        self.proc = proc
        return proc

    def search(self, key: str, text: str, pattern: str) -> Match:
        """First match of ``pattern`` in ``text`` (``key`` names the text, for reuse)."""
        why = refusal(pattern)
        if why:
            return Match("refused", detail=why)
        if len(text) > MAX_TEXT:
            return Match("refused", detail=f"the text is longer than {MAX_TEXT:,} characters")
        if self.spent >= self.budget:
            return Match("timeout", detail="earlier patterns used up the time budget")
        proc = self.proc or self._start()
        send_text = key != self.text_key
        req = {"p": pattern, "t": text if send_text else None}
        try:
            assert proc.stdin is not None
            proc.stdin.write(json.dumps(req) + "\n")
            proc.stdin.flush()
            self.text_key = key
            line = self.replies.get(timeout=self.timeout)
        except queue.Empty:
            self.spent += self.timeout
            self.close()
            return Match("timeout", detail=f"the search took longer than {self.timeout:g} s")
        except OSError as exc:
            self.close()
            return Match("error", detail=f"regex worker failed: {exc}")
        if not line:
            self.close()
            return Match("error", detail="regex worker exited")
        reply = json.loads(line)
        if "error" in reply:
            return Match("error", detail=f"invalid regular expression: {reply['error']}")
        if "none" in reply:
            return Match("none")
        value = reply["ok"]
        if value is None:
            return Match("none", detail="group 1 did not take part in the match")
        return Match("ok", str(value))
