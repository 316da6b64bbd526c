"""What the builder keeps of each page once it is written.

The builder needs, at the end, the number of pages, bytes and graphs, and,
for the page cache, each page's fingerprint and digest (the manifest).  It
used to keep every :class:`~bundler.render.chunks.PageResult` until then:
about 0.5 KB a page, 87 MB for the 167k pages of a million-event site, held
while the build is at its largest, and the manifest was then made from them
as a dict, a list of lines and one text (another 90 MB at the very end).
A ledger keeps one string per page instead, made so that sorting the strings
sorts the pages by path, and the manifest is written from them line by line.
"""

from __future__ import annotations

from collections.abc import Iterator

from bundler.output.manifest import NOT_A_PAGE
from bundler.render.chunks import PageResult

#: Between a path and the rest of its row: below every character a path can hold, so
#: rows sort as their paths do ("a" before "a/b" before "a0").
_SEP = "\x00"


class PageLedger:
    """Counts of the pages written, and (``keep_rows``) each one's manifest row."""

    def __init__(self, *, keep_rows: bool) -> None:
        self.pages = 0
        self.bytes = 0
        self.graphs = 0
        self.reused = 0
        self._rows: list[str] | None = [] if keep_rows else None

    def add(self, result: PageResult) -> None:
        self.pages += 1
        self.bytes += result.size
        self.graphs += result.graphs
        self.reused += result.reused
        if self._rows is not None:
            self._rows.append(self._row(result.path, result.fingerprint or NOT_A_PAGE,
                                        result.digest))

    def add_file(self, path: str, digest: str) -> None:
        """A file that is not a page (a copy, an asset, a report): reused only when the
        whole bundle is unchanged."""
        if self._rows is not None:
            self._rows.append(self._row(path, NOT_A_PAGE, digest))

    @staticmethod
    def _row(path: str, fingerprint: str, digest: str) -> str:
        if _SEP in path:        # never made by the planner; a row must not be ambiguous
            raise ValueError(f"a page path holds a NUL character: {path!r}")
        return f"{path}{_SEP}{fingerprint} {digest}"

    def rows(self) -> Iterator[tuple[str, str, str]]:
        """(path, fingerprint, digest) of every page and file added, sorted by path."""
        if self._rows is None:
            return
        self._rows.sort()
        for row in self._rows:
            path, _, rest = row.partition(_SEP)
            fingerprint, _, digest = rest.partition(" ")
            yield path, fingerprint, digest
