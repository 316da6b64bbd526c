"""A payload viewer as a job: plain data naming everything the viewer is made from.

Why a job rather than a closure: making a viewer (reading the head of the file,
highlighting code, laying out a table) is a tenth of the work of a large build,
and a pure function of a few strings and numbers.  When pages render in the
build process (bundles too big to fork workers for), the graph helper
processes (:mod:`bundler.render.graph_helper`) run these jobs beside it, which
needs a value that pickles and a module that imports no more than the viewers.
Run here or there, a job gives the same :class:`Viewer`.
"""

from __future__ import annotations

import hashlib
import threading
from dataclasses import dataclass

from bundler.load.reopen import reopen
from bundler.load.stamp import require_digest
from bundler.render.highlight import pick_lexer
from bundler.render.viewers import Viewer, render_payload
from bundler.render.viewers_rows import Quotes

#: Viewer HTML reused across artifacts that share a payload (per process, oldest out).
MEMO_BYTES = 32 << 20
_memo: dict[tuple[object, ...], Viewer] = {}
_memo_bytes = 0
#: Where no helper process can be started, jobs run in threads of the build.
_memo_lock = threading.Lock()


@dataclass(frozen=True, slots=True)
class ViewerJob:
    """The viewer of one verified payload: read ``head`` bytes of ``src`` (whose bytes
    ``digest`` commits to) and show up to ``shown`` of them, linking to ``href``."""

    digest: str
    size: int
    media_type: str
    name: str | None
    href: str
    shown: int
    head: int
    src: str
    code: bool
    #: The hex SHA-256 verified for the ``head`` bytes read (the whole file's, or one of
    #: verification's prefix hashes): the bytes shown are held to it, since the bundle's
    #: stamp is only as fine as the file system's clock.  None: no such hash was taken.
    expect: str | None = None
    #: (line, the trace records that quote it) for each quoted row of a JSON Lines viewer
    rows: tuple[tuple[int, Quotes], ...] = ()

    @property
    def key(self) -> tuple[object, ...]:
        """What the page fingerprint hashes: every input but ``src`` and ``code``, which
        the digest and the media type and name decide."""
        return ("verified", self.digest, self.size, self.media_type, self.name, self.href,
                self.shown, self.head, self.rows)

    def run(self) -> Viewer:
        """The viewer, made once per process for artifacts that share a payload."""
        memo_key = self._memo_key()
        with _memo_lock:
            found = _memo.get(memo_key)
        if found is not None:
            return found
        data = read_head(self.src, self.head)
        require_digest(self.src, hashlib.sha256(data).hexdigest(), self.expect)
        value = render_payload(data, self.media_type, self.name, file_href=self.href,
                               max_bytes=self.shown, total_size=self.size,
                               row_links=dict(self.rows))
        _remember(memo_key, value)
        return value

    def _memo_key(self) -> tuple[object, ...]:
        # A code viewer depends on the file name only through the lexer it picks,
        # and versions of one program share bytes under different names.
        if not self.code:
            return self.key
        lexer = type(pick_lexer(self.name, self.media_type))
        return ("verified", self.digest, self.size, self.media_type,
                f"{lexer.__module__}.{lexer.__qualname__}", self.href, self.shown, self.head,
                self.rows)


def _remember(key: tuple[object, ...], value: Viewer) -> None:
    global _memo_bytes
    size = len(value.html)
    if size > MEMO_BYTES:
        return
    with _memo_lock:
        if key in _memo:
            return
        while _memo and _memo_bytes + size > MEMO_BYTES:
            _memo_bytes -= len(_memo.pop(next(iter(_memo))).html)
        _memo[key] = value
        _memo_bytes += size


def read_head(path: str, limit: int) -> bytes:
    """Never load a whole multi-GB payload to show its first screenful (and never
    follow a link swapped in for the verified file: :func:`reopen`)."""
    with reopen(path) as fh:
        return fh.read(limit)
