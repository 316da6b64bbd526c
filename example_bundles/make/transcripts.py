"""Agent transcripts in their tools' own formats, each line kept verbatim as a trace record.

LEDGER starts from the raw trace: every line an agent tool wrote is stored
byte for byte as a ``trace_record`` event (``raw``), with where it came from
(``source``: transcript name, line number, format) and what the tracer made
of it (``record_kind``, and ``error`` for a line it could not normalise).
The whole transcript is stored once more as a payload at the end of a run.

Three formats appear in the examples:

* :class:`ClaudeTranscript`: Claude Code 1.0.x session JSONL (``air-quality``);
* :class:`CodexRollout`: Codex CLI rollout JSONL (``networkx-feature``);
* :class:`TeamBus`: a hub-and-spoke team's message bus (``multi-agent-paper``).

Ids, tokens and sub-second timestamps come from a seeded ``random.Random``,
times from the bundle's :class:`~example_bundles.make.common.FixedClock`.
"""

from __future__ import annotations

import json
import random
import uuid
from collections.abc import Callable
from typing import Any

from bundler.author import BundleWriter

#: A clock returning the next RFC 3339 time on each call (``FixedClock``).
Clock = Callable[[], str]


class ClaudeTranscript:
    """Claude Code 1.0.x style JSONL lines, each kept verbatim as a trace_record."""

    def __init__(self, w: BundleWriter, clock: Clock, *, name: str, seed: int, run: str,
                 cwd: str) -> None:
        self.w, self.clock, self.name = w, clock, name
        self.run, self.cwd = run, cwd
        self.rng = random.Random(seed)
        self.session = self._uuid()
        self.parent: str | None = None
        self.lines: list[str] = []

    def _uuid(self) -> str:
        return str(uuid.UUID(int=self.rng.getrandbits(128), version=4))

    def _token(self, prefix: str) -> str:
        alphabet = "ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz0123456789"
        return prefix + "".join(self.rng.choice(alphabet) for _ in range(24))

    def _line(self, kind: str, obj: dict[str, Any] | None, raw: str | None = None,
              error: str | None = None) -> str:
        t = self.clock()
        if obj is not None:
            uid = self._uuid()
            obj = {"parentUuid": self.parent, "isSidechain": False, "userType": "external",
                   "cwd": self.cwd, "sessionId": self.session, "version": "1.0.98",
                   "gitBranch": "main", **obj, "uuid": uid,
                   "timestamp": t[:-1] + f".{self.rng.randrange(1000):03d}Z"}
            self.parent = uid
            raw = json.dumps(obj, ensure_ascii=False, separators=(",", ":"))
        assert raw is not None
        self.lines.append(raw)
        rid = f"tr:{len(self.lines):03d}"
        self.w.append("trace_record", id=rid, run=self.run, stream="agent", time=t, raw=raw,
                      source={"transcript": self.name, "line": len(self.lines),
                              "format": "claude-code-jsonl"}, record_kind=kind, error=error)
        return rid

    def _assistant(self, content_item: dict[str, Any], out_tokens: int) -> dict[str, Any]:
        return {"message": {"id": self._token("msg_01"), "type": "message", "role": "assistant",
                            "model": "claude-sonnet-4-20250514", "content": [content_item],
                            "stop_reason": None, "stop_sequence": None,
                            "usage": {"input_tokens": 4, "output_tokens": out_tokens,
                                      "cache_read_input_tokens": 15000 + 37 * len(self.lines)}},
                "requestId": self._token("req_011"), "type": "assistant"}

    def user(self, text: str) -> str:
        return self._line("message", {"type": "user",
                                      "message": {"role": "user", "content": text}})

    def say(self, text: str) -> str:
        return self._line("message", self._assistant({"type": "text", "text": text},
                                                     len(text) // 4))

    def call(self, tool: str, tool_input: dict[str, Any], kind: str = "tool_call"
             ) -> tuple[str, str]:
        tid = self._token("toolu_01")
        item = {"type": "tool_use", "id": tid, "name": tool, "input": tool_input}
        return self._line(kind, self._assistant(item, 60 + len(json.dumps(tool_input)) // 4)), tid

    def result(self, tid: str, text: str, *, is_error: bool = False,
               extra: dict[str, Any] | None = None) -> str:
        item = {"tool_use_id": tid, "type": "tool_result", "content": text, "is_error": is_error}
        return self._line("tool_result", {"type": "user",
                                          "message": {"role": "user", "content": [item]},
                                          "toolUseResult": extra or {"stdout": text,
                                                                     "stderr": "",
                                                                     "interrupted": False,
                                                                     "isImage": False}})

    def odd(self, kind: str, raw: str, error: str) -> str:
        """A row the tracer could not normalise: kept verbatim with the reason."""
        return self._line(kind, None, raw=raw, error=error)


def codex_patch(diff: str) -> str:
    """The same change in Codex's apply_patch envelope (hunk headers become ``@@``)."""
    lines = ["*** Begin Patch"]
    for line in diff.splitlines():
        if line.startswith("diff --git"):
            lines.append("*** Update File: " + line.split(" b/", 1)[1])
        elif line.startswith(("--- ", "+++ ")):
            continue
        else:
            lines.append("@@" if line.startswith("@@") else line)
    return "\n".join([*lines, "*** End Patch"])


class CodexRollout:
    """Codex CLI rollout JSONL lines (``response_item`` / ``event_msg``), kept verbatim."""

    def __init__(self, w: BundleWriter, clock: Clock, *, name: str, seed: int, run: str,
                 cwd: str) -> None:
        self.w, self.clock, self.name = w, clock, name
        self.run, self.cwd = run, cwd
        self.rng = random.Random(seed)
        self.lines: list[str] = []
        self.turn = self.hex_id(8) + "-" + self.hex_id(4)

    def hex_id(self, n: int) -> str:
        return "".join(self.rng.choice("0123456789abcdef") for _ in range(n))

    def call_id(self) -> str:
        alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
        return "call_" + "".join(self.rng.choice(alphabet) for _ in range(24))

    def line(self, kind: str, top: str | None, payload: dict[str, Any] | None,
             raw: str | None = None, error: str | None = None) -> str:
        t = self.clock()
        if raw is None:
            stamp = t[:-1] + f".{self.rng.randrange(1000):03d}Z"
            raw = json.dumps({"timestamp": stamp, "type": top, "payload": payload},
                             ensure_ascii=False, separators=(",", ":"))
        self.lines.append(raw)
        rid = f"tr:{len(self.lines):03d}"
        self.w.append("trace_record", id=rid, run=self.run, stream="agent", time=t, raw=raw,
                      record_kind=kind, error=error,
                      source={"transcript": self.name, "line": len(self.lines),
                              "format": "codex-rollout-jsonl"})
        return rid

    def say(self, text: str) -> str:
        return self.line("message", "response_item", {
            "type": "message", "role": "assistant",
            "content": [{"type": "output_text", "text": text}]})

    def exec(self, cmd: str, output: str, code: int, kind: str) -> tuple[str, str]:
        cid = self.call_id()
        call = self.line(kind, "response_item", {
            "type": "function_call", "name": "exec_command", "call_id": cid,
            "arguments": json.dumps({"cmd": cmd, "workdir": self.cwd, "yield_time_ms": 10000})})
        res = self.line("tool_result", "response_item", {
            "type": "function_call_output", "call_id": cid,
            "output": f"Chunk ID: {self.hex_id(6)}\nProcess exited with code {code}\n"
                      f"Output:\n{output}"})
        return call, res

    def apply_patch(self, diff: str) -> tuple[str, str]:
        cid = self.call_id()
        call = self.line("file_write", "response_item", {
            "type": "custom_tool_call", "status": "completed", "call_id": cid,
            "name": "apply_patch", "input": codex_patch(diff)})
        changed = [ln.split(" b/", 1)[1] for ln in diff.splitlines()
                   if ln.startswith("diff --git")]
        res = self.line("tool_result", "event_msg", {
            "type": "patch_apply_end", "call_id": cid, "turn_id": self.turn, "success": True,
            "stdout": "Success. Updated the following files:\n"
                      + "".join(f"M {p}\n" for p in changed), "stderr": ""})
        return call, res


class TeamBus:
    """The team's message bus: one JSON object per line, every message via the PI."""

    def __init__(self, w: BundleWriter, clock: Clock, *, name: str, run: str) -> None:
        self.w, self.clock, self.name, self.run = w, clock, name, run
        self.lines: list[str] = []

    def post(self, sender: str, to: str, kind: str, body: str, record_kind: str = "message",
             **extra: Any) -> str:
        t = self.clock()
        line = json.dumps({"ts": t, "msg": len(self.lines) + 1, "from": sender, "to": to,
                           "type": kind, **extra, "body": body},
                          ensure_ascii=False, separators=(",", ":"))
        self.lines.append(line)
        rid = f"tr:{len(self.lines):03d}"
        self.w.append("trace_record", id=rid, run=self.run, stream=sender, time=t, raw=line,
                      record_kind=record_kind,
                      source={"transcript": self.name, "line": len(self.lines),
                              "format": "team-bus-jsonl"})
        return rid
