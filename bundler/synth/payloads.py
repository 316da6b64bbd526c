"""Deterministic payload contents for synthetic bundles.

A payload's bytes depend only on ``(seed, kind, key)``, never on the main
random stream, so that

* drawing the same key twice yields identical bytes, which the writer stores
  once (real runs repeat outputs too: a no-op mutation, a re-run tool);
* the ``large`` variant has exactly the same events as the ``small`` one, only
  bigger payload commitments, which isolates "memory versus payload bytes".

The number of distinct keys per kind is bounded (it grows with the bundle but
saturates), which keeps the writer's manifest, rewritten at every checkpoint,
and this module's reference cache bounded.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

PayloadSize = Literal["small", "large"]
LARGE_BYTES = 1 << 20

WORDS = (
    "agent", "baseline", "batch", "cache", "claim", "column", "commit", "config", "dataset",
    "delta", "error", "estimate", "evidence", "filter", "gradient", "held-out", "index",
    "latency", "median", "metric", "model", "outlier", "parser", "patch", "plan", "query",
    "ratio", "regression", "sample", "schema", "score", "seed", "signal", "split", "table",
    "test", "threshold", "trace", "variance", "window", "café", "naïve", "Größe", "→",
)


@dataclass(frozen=True, slots=True)
class Stored:
    """What the writer returned for a payload, minus the per-event display name."""

    digest: str
    size: int
    media_type: str
    ext: str


def sentence(rng: random.Random, n: int) -> str:
    words = [rng.choice(WORDS) for _ in range(n)]
    return " ".join(words).capitalize() + "."


def _program(rng: random.Random) -> bytes:
    lines = ['"""Synthetic candidate program."""', "", "import math", ""]
    for f in range(rng.randint(1, 12)):
        a, b = rng.randint(1, 99), round(rng.uniform(0.01, 9.9), 3)
        lines += [f"def step_{f}(x: float, k: int = {a}) -> float:",
                  f"    # {sentence(rng, rng.randint(3, 9))}",
                  f"    return math.tanh(x * {b}) + k / {a + 1}", ""]
    lines += ["def main() -> None:", "    print(step_0(1.0))", ""]
    return "\n".join(lines).encode("utf-8")


def _csv(rng: random.Random, rows: int) -> bytes:
    out = ["timestamp,sensor,value,quality"]
    for i in range(rows):
        out.append(f"2026-01-01T{i // 3600 % 24:02d}:{i // 60 % 60:02d}:{i % 60:02d}Z,"
                   f"s{rng.randint(1, 40)},{rng.uniform(-50, 50):.4f},{rng.random():.3f}")
    return ("\n".join(out) + "\n").encode("utf-8")


def _large_csv(rng: random.Random) -> bytes:
    """About 1 MiB of CSV, built from random bytes so it costs milliseconds, not seconds."""
    blob = rng.randbytes(LARGE_BYTES // 2).hex()
    rows = [f"{i},{blob[j:j + 62]}" for i, j in enumerate(range(0, len(blob), 62))]
    return ("row,value\n" + "\n".join(rows) + "\n").encode("ascii")


def _json(rng: random.Random) -> bytes:
    obj: dict[str, Any] = {
        "objective": sentence(rng, rng.randint(4, 14)),
        "steps": [{"n": i, "do": sentence(rng, rng.randint(3, 10)),
                   "budget": rng.randint(1, 500)} for i in range(rng.randint(1, 30))],
        "params": {f"p{i}": round(rng.uniform(0, 1), 4) for i in range(rng.randint(1, 12))},
    }
    return (json.dumps(obj, indent=2, ensure_ascii=False, sort_keys=True) + "\n").encode("utf-8")


def _markdown(rng: random.Random) -> bytes:
    parts = [f"# {sentence(rng, 4)[:-1]}", ""]
    for _ in range(rng.randint(1, 12)):
        parts += [" ".join(sentence(rng, rng.randint(5, 16)) for _ in range(rng.randint(1, 4))),
                  ""]
    return "\n".join(parts).encode("utf-8")


def _log(rng: random.Random) -> bytes:
    lines = [f"[{i:04d}] {rng.choice(('INFO', 'INFO', 'WARN', 'DEBUG'))} "
             f"{sentence(rng, rng.randint(2, 9))}" for i in range(rng.randint(2, 60))]
    return ("\n".join(lines) + "\n").encode("utf-8")


def _svg(rng: random.Random) -> bytes:
    bars = "".join(f'<rect x="{10 + 22 * i}" y="{100 - h}" width="18" height="{h}"/>'
                   for i, h in enumerate(rng.randint(5, 95) for _ in range(rng.randint(3, 12))))
    return (f'<svg xmlns="http://www.w3.org/2000/svg" width="300" height="110">'
            f"<title>{sentence(rng, 3)}</title>{bars}</svg>\n").encode()


#: payload kind -> (media type, file extension, small content generator)
FORMATS: dict[str, tuple[str, str, Callable[[random.Random], bytes]]] = {
    "py": ("text/x-python", "py", _program),
    "csv": ("text/csv", "csv", lambda r: _csv(r, r.randint(3, 400))),
    "json": ("application/json", "json", _json),
    "md": ("text/markdown", "md", _markdown),
    "log": ("text/plain", "txt", _log),
    "svg": ("image/svg+xml", "svg", _svg),
}

#: individual kind -> payload format
KIND_FORMAT: dict[str, str] = {
    "program": "py", "patch": "py", "agent_version": "json", "dataset": "csv", "table": "csv",
    "measurement": "csv", "figure": "svg", "plan": "json", "protocol": "md", "draft": "md",
    "report": "md", "command_output": "log", "sample": "json",
}


class PayloadPool:
    """Hands out payload commitments, storing each distinct content once.

    ``put`` is the writer's ``put_payload``; it is only called for a key seen
    for the first time, so a cache hit costs nothing at all.
    """

    def __init__(self, put: Callable[[bytes, str, str], Stored], *, seed: int, events: int,
                 size: PayloadSize) -> None:
        self._put = put
        self._seed = seed
        self._large = size == "large"
        # Distinct contents per kind saturate at 400 (about 5,000 in all): the
        # writer rewrites the whole manifest at every checkpoint, so a manifest
        # growing with the log would make generation quadratic.
        self.space = max(16, min(400, events // 250))
        # 1 MiB datasets: ~1 distinct per 500 events, at most 256 (256 MiB).
        self.large_space = max(4, min(256, events // 500))
        self._cache: dict[tuple[str, int], Stored] = {}

    def draw(self, kind: str, rng: random.Random) -> Stored:
        """A commitment for an individual of ``kind``; identical keys share bytes."""
        fmt = KIND_FORMAT.get(kind, "json")
        big = self._large and kind == "dataset"
        # Always one draw over the same range: the main random stream (hence
        # every event) is then identical for the small and large variants and
        # does not depend on what happens to be cached.
        key = rng.randrange(self.space)
        if big:
            key %= self.large_space
        cached = self._cache.get((kind, key))
        if cached is not None:
            return cached
        local = random.Random(f"{self._seed}/{kind}/{key}")
        media_type, ext, make = FORMATS[fmt]
        data = _large_csv(local) if big else make(local)
        stored = self._put(data, media_type, ext)
        self._cache[(kind, key)] = stored
        return stored

    def unique_secret_log(self, serial: int) -> tuple[bytes, str]:
        """A command output that leaks a (fake) credential: unique bytes, never pooled,
        because once redacted its digest can never be stored again."""
        local = random.Random(f"{self._seed}/secret/{serial}")
        token = local.randbytes(16).hex()
        text = (f"$ deploy --verbose\nusing API_KEY=sk-synthetic-{token}\n"
                f"{_log(local).decode('utf-8')}")
        return text.encode("utf-8"), "text/plain"
