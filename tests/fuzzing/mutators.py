"""How the campaigns break bundles; each function takes the campaign's seeded ``rng``."""

from __future__ import annotations

import json
import os
import random
from pathlib import Path
from typing import Any

#: Values swapped into JSON files as they are (the chain then breaks: verifier checks).
PLAIN_VALUES: list[Any] = [None, True, 0, -1, 2**53 - 1, 1.5, "", "x", "<b>", [], {}, [1],
                           {"a": 1}, "sha256:" + "0" * 64]
#: Values put into re-authored events (the schema refuses many; the rest reach pages).
HOSTILE_TEXT = ["javascript:alert(1)", "", " ", "\u202e\u0000x", "a" * 5000,
                "../../etc/passwd", "</script><script>alert(1)</script>", "{{7*7}}", "%s%n",
                "e\u0301", "#", "-1", "NaN", "[x](javascript:alert(1))",
                "<svg onload=alert(1)>", "data:text/html,hi", "\n\n# H\n\n```\ncode\n```",
                "C:\\x", "x" * 200 + "-" * 200, '"><img src=x onerror=alert(1)>']
HOSTILE_NUMBERS: list[Any] = [0, -1, 1, 2**53 - 1, -(2**53) + 1, 2**53, 1.5, 1e300, -0.0]
#: Top-level members no mutation touches: the writer sets them.
FIXED = ("seq", "prev", "type", "time")


def _json_value(rng: random.Random, obj: Any) -> Any:
    if isinstance(obj, dict) and obj:
        k = rng.choice(sorted(obj))
        obj[k] = rng.choice(PLAIN_VALUES) if rng.random() < 0.5 else _json_value(rng, obj[k])
        return obj
    if isinstance(obj, list) and obj:
        i, r = rng.randrange(len(obj)), rng.random()
        if r < 0.3:
            del obj[i]
        elif r < 0.5:
            obj.append(obj[i])
        else:
            obj[i] = _json_value(rng, obj[i])
        return obj
    return rng.choice(PLAIN_VALUES)


def mutate_files(rng: random.Random, bundle: Path, *, outside: Path) -> str:
    """Break one file of the bundle folder in place; says what it did.  ``outside``:
    a file out of the bundle that links may point at."""
    outside.write_bytes(b"a file outside the bundle\n")
    files = sorted(p for p in bundle.rglob("*") if p.is_file() and not p.is_symlink())
    events, manifest = bundle / "events.jsonl", bundle / "manifest.json"
    choices = files + [p for p in (events, manifest) if p in files] * 3
    if not choices:
        return "nothing left to break"
    f = rng.choice(choices)
    rel, data, r = f.relative_to(bundle).as_posix(), f.read_bytes(), rng.random()
    if r < 0.15 and data:
        i = rng.randrange(len(data))
        data = data[:i] + bytes([data[i] ^ (1 << rng.randrange(8))]) + data[i + 1:]
    elif r < 0.25:
        data = data[:rng.randrange(len(data) + 1)]
    elif r < 0.3:
        i = rng.randrange(len(data) + 1)
        data = data[:i] + rng.randbytes(rng.randint(1, 20)) + data[i:]
    elif r < 0.7 and f.suffix in (".jsonl", ".json", ".note"):
        lines = data.split(b"\n")
        i = rng.randrange(len(lines))
        try:
            lines[i] = json.dumps(_json_value(rng, json.loads(lines[i])),
                                  separators=(",", ":"), sort_keys=rng.random() < 0.8).encode()
        except ValueError:
            lines[i] = lines[i][::-1]
        data = b"\n".join(lines)
    elif r < 0.8 and f.suffix == ".jsonl":
        lines = data.split(b"\n")
        i, j = rng.randrange(len(lines)), rng.randrange(len(lines))
        if rng.random() < 0.5:
            lines.insert(j, lines[i])
        else:
            lines[i], lines[j] = lines[j], lines[i]
        data = b"\n".join(lines)
    elif r < 0.9:
        f.unlink()
        kind = rng.choice(["deleted", "folder", "link out", "link in"])
        if kind == "folder":
            f.mkdir()
        elif kind == "link out":
            os.symlink(outside, f)
        elif kind == "link in":
            os.symlink(os.path.relpath(bundle / "bundle.json", f.parent), f)
        return f"{rel}: {kind}"
    else:
        data += b"\n" + b'{"a":' * rng.choice([10, 1000, 100_000]) + b"1"
    f.write_bytes(data)
    return f"{rel}: r={r:.2f}"


def mutate_archive(rng: random.Random, data: bytes) -> bytes:
    out = bytearray(data)
    for _ in range(rng.randint(1, 8)):
        r = rng.random()
        if r < 0.6:
            out[rng.randrange(len(out))] = rng.randrange(256)
        elif r < 0.75:
            del out[rng.randrange(len(out)):]
        elif r < 0.9:
            i = rng.randrange(len(out) + 1)
            out[i:i] = rng.randbytes(rng.randint(1, 64))
        elif len(out) > 4:
            i = rng.randrange(len(out) - 4)
            out[i:i + 4] = rng.choice([b"\xff\xff\xff\xff", b"\x00\x00\x00\x00",
                                       b"\x7f\xff\xff\xff"])
    return bytes(out)


def hostile(rng: random.Random, old: Any, ids: list[str], mark: str) -> Any:
    """A value of about the kind of ``old``: markup, a reference, an odd number."""
    r = rng.random()
    if isinstance(old, bool):
        return rng.choice([True, False, None, 1])
    if isinstance(old, int | float):
        return rng.choice([*HOSTILE_NUMBERS, None, "1"])
    if isinstance(old, str):
        if r < 0.45:
            return rng.choice(ids)
        return rng.choice([mark, *HOSTILE_TEXT]) if r < 0.9 else rng.choice([None, 1, [], {}])
    if isinstance(old, list):
        if r < 0.3:
            return []
        if r < 0.6:
            return [*old, rng.choice(ids)]
        if r < 0.75:
            return old + old
        if r < 0.9 and old:
            return [hostile(rng, old[0], ids, mark), *old[1:]]
        return [rng.choice(ids) for _ in range(rng.randint(1, 60))]
    if isinstance(old, dict):
        new = dict(old)
        if old:
            k = rng.choice(sorted(old))
            new[k] = hostile(rng, old[k], ids, mark)
        if not old or rng.random() < 0.3:
            new[rng.choice([mark, *HOSTILE_TEXT])[:30] or "k"] = rng.choice(
                [mark, *HOSTILE_TEXT, *HOSTILE_NUMBERS])
        return new
    return rng.choice([mark, *HOSTILE_TEXT, *HOSTILE_NUMBERS, [], {}])


def hostile_events(rng: random.Random, events: list[dict[str, Any]], ids: list[str],
                   mark: str) -> list[dict[str, Any]]:
    """``events`` with one to four members of events after the first swapped or dropped."""
    out = [dict(e) for e in events]
    for _ in range(rng.randint(1, 4)):
        e = out[rng.randrange(1, len(out))]
        keys = [k for k in e if k not in FIXED]
        if not keys:
            continue
        k = rng.choice(keys)
        if rng.random() < 0.1:
            del e[k]
        else:
            e[k] = hostile(rng, e[k], ids, mark)
    return out


def grow_events(rng: random.Random, events: list[dict[str, Any]], ids: list[str], n: int,
                mark: str) -> list[dict[str, Any]]:
    """Up to ``n`` new events: copies of old ones under new ids, some members pointed at
    other old objects (a verdict on an old claim, an edge between old nodes, ...)."""
    out = []
    for k in range(n):
        e = dict(rng.choice(events[1:]))
        if e.get("type") in ("run", "stream"):
            continue
        e["id"] = f"{str(e.get('id', 'x'))[:150]}-new{k}"
        for key in [k for k in e if k not in (*FIXED, "id", "run", "stream")]:
            if rng.random() < 0.12:
                e[key] = hostile(rng, e[key], ids, mark)
        e["time"] = events[-1].get("time")
        out.append(e)
    return out


def hostile_bodies(mark: str) -> dict[str, bytes]:
    """Payload bytes that attack each viewer, by the media type they are written for;
    every script in them calls ``alert``, every fetch goes off the machine."""
    m = mark.encode()
    return {
        "text/html": b"<!doctype html><script>alert(1)</script><img src=x onerror=alert(1)>"
                     b'<meta http-equiv="refresh" content="0;url=javascript:alert(1)">' + m,
        "image/svg+xml": b'<svg xmlns="http://www.w3.org/2000/svg" onload="alert(1)">'
                         b'<script>alert(1)</script><a href="javascript:alert(1)"><text y="9">'
                         b'x</text></a><image href="http://127.0.0.1:9/s.png"/><foreignObject>'
                         b'<iframe src="javascript:alert(1)"/></foreignObject>' + m + b"</svg>",
        "text/markdown": b"# t\n\n<script>alert(1)</script>\n\n[x](javascript:alert(1)) "
                         b"![b](http://127.0.0.1:9/md.png) <img src=x onerror=alert(1)> " + m
                         + b"\n\n[r]: javascript:alert(1)\n",
        "text/csv": b'a,b\n"<img src=x onerror=alert(1)>",=HYPERLINK("javascript:alert(1)")\n'
                    + m + b',"x\n' + b",".join([b"c"] * 300) + b"\n",
        "application/json": b'{"</script><script>alert(1)</script>": "'
                            + m.replace(b"'", b"\\u0027")
                            + b'", "n": [1e999, -0, 9007199254740993, {"": null}]}',
        "application/x-ndjson": b'{"role": "</li></ol><script>alert(1)</script>", "role": "'
                                + m.replace(b"'", b"\\u0027") + b'"}\n{"torn": "<img src=x '
                                b'onerror=alert(1)>\n\n\x1e[{"<svg onload=alert(1)>": '
                                b'[[[[1e999]]]]}]\r\n' + b'{"k": 1}\n' * 3000,
        "text/x-python": b"</pre></code></textarea><script>alert(1)</script>" + m + b"\n" * 3
                         + b"x" * 20000,
        "text/plain": b"\xff\xfe\x00<script>alert(1)</script>\xed\xa0\x80" + m,
    }


def hostile_payload(rng: random.Random, old: bytes, mark: str) -> bytes:
    """Bytes for a payload, whatever its media type says: markup and script for every
    viewer (:func:`hostile_bodies`), or broken text and binary."""
    bodies = [*hostile_bodies(mark).values(), rng.randbytes(rng.randint(0, 2048)), b"",
              old[: rng.randint(0, len(old))] + mark.encode() + old]
    return rng.choice(bodies)


def swap_refs(value: Any, new: dict[str, tuple[str, int, str]]) -> Any:
    """``value`` with each reference to a payload of ``new`` (old digest -> new digest,
    size and media type) pointed at the new bytes, with their size and media type."""
    if isinstance(value, str):
        return new[value][0] if value in new else value
    if isinstance(value, list):
        return [swap_refs(v, new) for v in value]
    if isinstance(value, dict):
        out = {k: swap_refs(v, new) for k, v in value.items()}
        old = value.get("digest")
        if isinstance(old, str) and old in new:
            for k, v in (("size", new[old][1]), ("media_type", new[old][2])):
                if k in out:
                    out[k] = v
        return out
    return value
