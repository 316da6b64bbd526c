"""The per-site store of text features for the near-duplicates query.

Why: near-duplicates reads and tokenises every small text payload of the
bundle, the costliest audit query (a fifth of a second at 10k events, two
seconds at 100k), and a rebuild after a few appended events would repeat
that for texts it has already seen.  What the query keeps of a text
(:class:`bundler.query.duplicates.TextFeatures`) is a function of its bytes,
and payloads are named by the SHA-256 of their bytes, so features kept by
digest stay true for as long as the code that computed them.

* **Where.**  Beside the site's page manifest in the cache folder; read only
  when the previous site was built with the same salt (which covers the
  code), like the graph store, so removing a site makes the next build cold.
* **Checked.**  The file carries the salt and a SHA-256 of its body; a file
  that does not match, or a line that does not parse, is ignored whole.
* **Bounded.**  Each save writes the features of the texts this build
  considered, so texts no longer in the bundle drop out.
* Writes are atomic (temporary file, rename).  Every failure to read or write
  the store only costs speed, never output.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
from dataclasses import dataclass
from pathlib import Path

from bundler.output.manifest import manifest_path
from bundler.query.duplicates import SKETCH, Features, TextFeatures

HEADER = "review-bundler text features v1"
_HEX64 = re.compile(r"[0-9a-f]{64}")
_DIGEST = re.compile(r"[a-z0-9-]+:[0-9a-f]{16,128}")


def store_path(site: Path) -> Path:
    return manifest_path(site).with_suffix(".texts")


def _body(features: Features) -> str:
    lines = []
    for digest, f in sorted(features.items()):
        if f is None:
            lines.append(f"{digest} -\n")
        else:
            lines.append(f"{digest} {f.norm} {f.count} {','.join(map(str, f.sketch))}\n")
    return "".join(lines)


def load_features(site: Path, salt: str) -> dict[str, TextFeatures | None]:
    """The features kept for the site at ``site`` by a build with ``salt``; {} if
    there are none or they do not check out."""
    try:
        text = store_path(site).read_text(encoding="utf-8")
        head, salt_line, seal_line, body = text.split("\n", 3)
        if head != HEADER or salt_line != f"salt {salt}" or \
                seal_line != f"seal {hashlib.sha256(body.encode('utf-8')).hexdigest()}":
            return {}
        return _parse(body)
    except (OSError, ValueError, UnicodeDecodeError):
        return {}


def _parse(body: str) -> dict[str, TextFeatures | None]:
    """Lines as :func:`_body` writes them; ValueError on any other."""
    out: dict[str, TextFeatures | None] = {}
    for line in body.splitlines():
        digest, *rest = line.split(" ")
        if not _DIGEST.fullmatch(digest):
            raise ValueError("bad digest")
        if rest == ["-"]:
            out[digest] = None
            continue
        norm, count_text, sketch_text = rest
        count = int(count_text)
        sketch = tuple(map(int, sketch_text.split(","))) if sketch_text else ()
        if not _HEX64.fullmatch(norm) or len(sketch) != min(SKETCH, count) \
                or list(sketch) != sorted(set(sketch)):
            raise ValueError("bad features")
        out[digest] = TextFeatures(norm, count, sketch)
    return out


def save_features(site: Path, salt: str, features: Features) -> None:
    """Keep ``features`` for the next build of ``site`` (best effort)."""
    path = store_path(site)
    body = _body(features)
    seal = hashlib.sha256(body.encode("utf-8")).hexdigest()
    tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp.write_text(f"{HEADER}\nsalt {salt}\nseal {seal}\n{body}", encoding="utf-8")
        os.replace(tmp, path)
    except OSError:
        with contextlib.suppress(OSError):
            tmp.unlink(missing_ok=True)


@dataclass(frozen=True)
class TextStore:
    """The store of one site for one build: read only if ``readable`` (the previous
    site is ours, built with this salt), written either way."""

    site: Path
    salt: str
    readable: bool

    def load(self) -> dict[str, TextFeatures | None]:
        return load_features(self.site, self.salt) if self.readable else {}

    def save(self, features: Features) -> None:
        save_features(self.site, self.salt, features)
