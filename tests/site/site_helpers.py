"""Shared helpers for the site tests: building, tree comparison and an HTML scanner.

Imported as ``from site_helpers import ...`` (``tests/site`` has no
``__init__.py``, so pytest puts this folder on ``sys.path``; the name is
unique so it cannot shadow anything).
"""

from __future__ import annotations

import difflib
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path, PurePosixPath
from urllib.parse import unquote, urlsplit

from bundler.model.events import EventBase, IndividualEvent
from bundler.render.site import BuildOptions, BuildResult, build_site

REPO = Path(__file__).resolve().parents[2]
EXAMPLES_DIR = REPO / "example_bundles"
DEMO_KEY = EXAMPLES_DIR / "demo-key.pub"
EXAMPLES = ("air-quality", "networkx-feature", "multi-agent-paper", "unsupported-gain",
            "evolutionary-search", "closed-loop-lab")
CSP = ("default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; "
       "img-src 'self' data:; frame-src 'self'; base-uri 'none'; form-action 'none'")
EXTERNAL_REL = {"noopener", "noreferrer", "nofollow"}
VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source",
        "track", "wbr", "param"}


def demo_key_text() -> str:
    lines = DEMO_KEY.read_text(encoding="utf-8").splitlines()
    return next(ln for ln in lines if ln and not ln.startswith("#"))


@dataclass(frozen=True)
class BuiltSite:
    name: str
    bundle: Path
    site: Path
    result: BuildResult


def build(bundle: Path, out: Path, *keys: str, jobs: int = 1, strict: bool = False) -> BuildResult:
    """Build ``bundle`` into ``out`` pinning ``keys`` (the demo key when none are given)."""
    trusted = keys or (demo_key_text(),)
    return build_site(bundle, BuildOptions(output=out, trusted_keys=tuple(trusted), jobs=jobs,
                                           strict=strict))


def payload_owner(events: list[EventBase], *, oid: str | None = None,
                  digest: str | None = None) -> tuple[str, str]:
    """(id, payload digest) of the first individual with that id or that payload digest."""
    for e in events:
        if isinstance(e, IndividualEvent) and e.payload is not None and (
                e.id == oid or e.payload.digest == digest):
            return e.id, e.payload.digest
    raise LookupError(oid or digest)


def run_cli(*args: str | os.PathLike[str], cwd: Path | None = None,
            timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """``review-bundler ARGS`` in a subprocess (the real exit code and output)."""
    return subprocess.run([sys.executable, "-m", "bundler", *map(str, args)], cwd=cwd or REPO,
                          capture_output=True, text=True, timeout=timeout, check=False)


def tree(root: Path) -> dict[str, bytes]:
    """Every file under ``root`` (relative POSIX path -> bytes)."""
    return {p.relative_to(root).as_posix(): p.read_bytes()
            for p in sorted(root.rglob("*")) if p.is_file()}


def tree_diff(expected: dict[str, bytes], actual: dict[str, bytes], *,
              labels: tuple[str, str] = ("expected", "actual")) -> str:
    """'' if equal, else the missing/extra names and a unified diff of the first changed file."""
    lines: list[str] = []
    missing = sorted(set(expected) - set(actual))
    extra = sorted(set(actual) - set(expected))
    if missing:
        lines.append(f"only in {labels[0]}: {missing[:20]}{' …' if len(missing) > 20 else ''}")
    if extra:
        lines.append(f"only in {labels[1]}: {extra[:20]}{' …' if len(extra) > 20 else ''}")
    changed = [n for n in sorted(set(expected) & set(actual)) if expected[n] != actual[n]]
    if changed:
        lines.append(f"{len(changed)} file(s) differ: {changed[:20]}")
        for name in changed:
            try:
                a = expected[name].decode("utf-8").splitlines(keepends=True)
                b = actual[name].decode("utf-8").splitlines(keepends=True)
            except UnicodeDecodeError:
                continue
            diff = difflib.unified_diff(a, b, f"{labels[0]}/{name}", f"{labels[1]}/{name}", n=2)
            text = "".join(diff)
            lines.append(text[:6000] + ("\n… (diff cut)" if len(text) > 6000 else ""))
            break
    return "\n".join(lines)


@dataclass
class Link:
    tag: str
    attr: str
    value: str
    in_markdown: bool
    in_graph: bool
    rel: str
    classes: str


@dataclass
class PageScan:
    """What the static checks need from one HTML page."""

    ids: set[str] = field(default_factory=set)
    links: list[Link] = field(default_factory=list)
    #: one entry per <script>: (src or None, inline text)
    scripts: list[tuple[str | None, str]] = field(default_factory=list)
    handlers: list[str] = field(default_factory=list)
    csp: list[str] = field(default_factory=list)
    meta_refresh: list[str] = field(default_factory=list)
    iframes: list[dict[str, str | None]] = field(default_factory=list)
    text: list[str] = field(default_factory=list)


class _Scanner(HTMLParser):
    """Collects links, ids, scripts and handlers; tracks Markdown-rendered regions."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.scan = PageScan()
        self.stack: list[str] = []
        self.md_depth: int | None = None
        self.graph_depth: int | None = None
        self.in_script = False

    def _start(self, tag: str, attrs: list[tuple[str, str | None]], closed: bool) -> None:
        a = {k: v for k, v in attrs}
        classes = a.get("class") or ""
        if self.md_depth is None and "markdown-body" in classes.split():
            self.md_depth = len(self.stack)
        if self.graph_depth is None and tag == "svg" and "rb-graph" in classes.split():
            self.graph_depth = len(self.stack)
        for k, v in attrs:
            if k.startswith("on"):
                self.scan.handlers.append(f"<{tag} {k}={v!r}>")
            if k == "id" and v:
                self.scan.ids.add(v)
            if k in ("href", "src", "xlink:href", "action", "formaction", "poster", "data",
                     "background", "srcset") and v is not None:
                self.scan.links.append(Link(tag, k, v, self.md_depth is not None,
                                            self.graph_depth is not None,
                                            a.get("rel") or "", classes))
        if tag == "a" and "name" in a and a["name"]:
            self.scan.ids.add(a["name"] or "")
        if tag == "meta":
            equiv = (a.get("http-equiv") or "").lower()
            if equiv == "content-security-policy":
                self.scan.csp.append(a.get("content") or "")
            elif equiv == "refresh":
                self.scan.meta_refresh.append(a.get("content") or "")
        if tag == "script":
            self.scan.scripts.append((a.get("src"), ""))
            self.in_script = not closed
        if tag == "iframe":
            self.scan.iframes.append(a)
        if not closed and tag not in VOID:
            self.stack.append(tag)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self._start(tag, attrs, closed=False)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self._start(tag, attrs, closed=True)

    def handle_endtag(self, tag: str) -> None:
        if tag == "script":
            self.in_script = False
        if tag in VOID:
            return
        if tag in self.stack:
            while self.stack:
                if self.stack.pop() == tag:
                    break
        if self.md_depth is not None and len(self.stack) <= self.md_depth:
            self.md_depth = None
        if self.graph_depth is not None and len(self.stack) <= self.graph_depth:
            self.graph_depth = None

    def handle_data(self, data: str) -> None:
        if self.in_script and self.scan.scripts:
            src, text = self.scan.scripts[-1]
            self.scan.scripts[-1] = (src, text + data)
        else:
            self.scan.text.append(data)


def scan_html(text: str) -> PageScan:
    parser = _Scanner()
    parser.feed(text)
    parser.close()
    return parser.scan


def html_pages(site: Path) -> list[str]:
    return sorted(p.relative_to(site).as_posix() for p in site.rglob("*.html"))


_CSP_META = re.compile(r'<meta http-equiv="Content-Security-Policy" content="[^"]*">')


def without_csp(site: Path, dest: Path) -> list[str]:
    """A copy of ``site`` at ``dest`` with the CSP taken out of every page, for browsers
    that cannot bypass it (escaping alone must hold there); its pages."""
    shutil.copytree(site, dest)
    pages = html_pages(dest)
    for rel in pages:
        path = dest / rel
        text, n = _CSP_META.subn("", path.read_text(encoding="utf-8"))
        assert n == 1, rel          # every page has its CSP, once
        path.write_text(text, encoding="utf-8")
    return pages


def resolve(page: str, url: str) -> tuple[str, str] | None:
    """A relative URL on ``page`` -> (site-relative path, fragment); None if it leaves the site.

    Query strings are not used by the site; a path that climbs above the root
    returns ``None`` too (the caller treats that as a broken link).
    """
    parts = urlsplit(url)
    if parts.scheme or parts.netloc or url.startswith("//"):
        return None
    path = unquote(parts.path)
    base = PurePosixPath(page).parent
    if not path:
        return page, parts.fragment
    segments: list[str] = []
    for seg in (base / path).parts:
        if seg == "..":
            if not segments:
                return None
            segments.pop()
        elif seg != ".":
            segments.append(seg)
    return "/".join(segments), parts.fragment
