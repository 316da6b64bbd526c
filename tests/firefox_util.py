"""Headless Firefox for the browser tests, driven over WebDriver BiDi.

Why not Playwright: its Firefox needs a patched build that cannot be downloaded
here, and its BiDi channel for a stock Firefox sends a command Debian's ESR does
not know (``emulation.setMediaFeaturesOverride``, on every new context).  The
few BiDi commands these tests need are spoken directly, over one WebSocket.

Import as ``from firefox_util import ...`` (``tests/`` is on ``sys.path``).
"""

from __future__ import annotations

import base64
import json
import re
import shutil
import subprocess
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

import pytest
from browser_util import FLAGS_JS, poll, settled
from browser_util import LOCAL_SCHEMES as CHROMIUM_LOCAL

FIREFOX = Path("/usr/bin/firefox-esr")
#: Firefox loads some of its own pages and resources through these schemes too.
LOCAL_SCHEMES = (*CHROMIUM_LOCAL, "moz-extension:", "resource:", "chrome:")

#: A fresh profile that makes no request of its own (the tests assert that the site
#: makes none) and shows the site in the colour scheme asked for.  Not the prefs
#: "recommended" for automation: they include
#: ``security.fileuri.strict_origin_policy=false``, under which file:// pages share
#: an origin (and storage) as they do in no Firefox a reader runs, so pages that
#: depend on it pass (DESIGN-NOTES §4; ``test_firefox_keeps_file_pages_apart``).
_PREFS = {
    "app.normandy.enabled": False,
    "app.update.disabledForTesting": True,
    "browser.aboutwelcome.enabled": False,
    "browser.newtabpage.enabled": False,
    "browser.safebrowsing.malware.enabled": False,
    "browser.safebrowsing.phishing.enabled": False,
    "browser.shell.checkDefaultBrowser": False,
    "browser.startup.homepage_override.mstone": "ignore",
    "datareporting.policy.dataSubmissionEnabled": False,
    "extensions.update.enabled": False,
    "network.captive-portal-service.enabled": False,
    "network.connectivity-service.enabled": False,
    "remote.prefs.recommended": False,
    "toolkit.telemetry.enabled": False,
}


def require_firefox() -> None:
    """Skip the calling test when Firefox or the WebSocket client is not installed."""
    if not FIREFOX.is_file():
        pytest.skip(f"browser test needs {FIREFOX} (apt-get install firefox-esr)")
    try:
        import websockets.sync.client  # noqa: F401
    except ImportError:  # pragma: no cover - depends on the environment
        pytest.skip("browser test needs the websockets package")


@dataclass
class Seen:
    """What pages did since the last :meth:`Firefox.goto`; every list should stay empty."""

    #: console errors (a refusal by the CSP among them) and uncaught script errors,
    #: each with the address of the frame it came from
    console: list[str] = field(default_factory=list)
    #: requests to anything but a local scheme
    requests: list[str] = field(default_factory=list)
    #: alert, confirm and prompt dialogs (dismissed)
    dialogs: list[str] = field(default_factory=list)

    def problems(self) -> list[str]:
        return ([f"console: {m}" for m in self.console] + [f"request: {m}" for m in self.requests]
                + [f"dialog: {m}" for m in self.dialogs])


class Firefox:
    """One headless Firefox with one tab; see :func:`firefox`."""

    def __init__(self, ws: Any) -> None:
        self._ws = ws
        self._next = 0
        self.seen = Seen()
        #: the address of every frame seen, by BiDi context id (log entries name a
        #: context); set before the first command, whose answer events may precede
        self._urls: dict[str, str] = {}
        self.session = self.send("session.new", capabilities={
            "alwaysMatch": {"unhandledPromptBehavior": {"default": "dismiss"}}})
        self.version = str(self.session["capabilities"]["browserVersion"])
        self.send("session.subscribe", events=[
            "log.entryAdded", "network.beforeRequestSent", "browsingContext.userPromptOpened",
            "browsingContext.contextCreated", "browsingContext.load"])
        self.context = self.send("browsingContext.getTree")["contexts"][0]["context"]

    def send(self, method: str, **params: Any) -> dict[str, Any]:
        """One command; the events that arrive before its answer are recorded."""
        self._next += 1
        self._ws.send(json.dumps({"id": self._next, "method": method, "params": params}))
        while True:
            msg = json.loads(self._ws.recv(timeout=60))
            if msg.get("id") == self._next:
                if msg.get("type") == "error":
                    raise RuntimeError(f"{method}: {msg.get('error')}: {msg.get('message')}")
                result: dict[str, Any] = msg["result"]
                return result
            self._record(msg)

    def _record(self, msg: dict[str, Any]) -> None:
        method, p = msg.get("method"), msg.get("params", {})
        if method in ("browsingContext.contextCreated", "browsingContext.load"):
            self._urls[str(p.get("context"))] = str(p.get("url"))
        elif method == "log.entryAdded" and (p.get("level") == "error"
                                             or p.get("type") == "javascript"):
            where = self._urls.get(str((p.get("source") or {}).get("context")), "?")
            self.seen.console.append(f"{p.get('text')} @ {where}")
        elif method == "network.beforeRequestSent":
            url = str(p["request"]["url"])
            if not url.startswith(LOCAL_SCHEMES):
                self.seen.requests.append(url)
        elif method == "browsingContext.userPromptOpened":
            self.seen.dialogs.append(f"{p.get('type')} {p.get('message')!r}")

    def goto(self, url: str) -> Seen:
        """Load ``url`` and wait for its load event; what the last page did is returned
        and the record starts afresh."""
        self.settle(0)
        done, self.seen = self.seen, Seen()
        self.send("browsingContext.navigate", context=self.context, url=url, wait="complete")
        return done

    def evaluate(self, expression: str, context: str | None = None) -> Any:
        """The value of ``expression`` in the page, or in the frame ``context``, carried
        as JSON.  Like Playwright's, this is not bound by the page's CSP."""
        got = self.send("script.evaluate", expression=f"JSON.stringify({expression})",
                        target={"context": context or self.context}, awaitPromise=True)
        if got.get("type") == "exception":
            raise RuntimeError(f"{expression}: {got['exceptionDetails'].get('text')}")
        value = got["result"].get("value")
        return None if value is None else json.loads(value)

    def frames(self) -> list[tuple[str, str]]:
        """(context, address) of every frame below the page, at any depth."""
        out: list[tuple[str, str]] = []
        todo = self.send("browsingContext.getTree", root=self.context)["contexts"]
        while todo:
            node = todo.pop()
            children = node.get("children") or []
            out += [(str(c["context"]), str(c["url"])) for c in children]
            todo += children
        return out

    def click(self, selector: str) -> None:
        """A real (trusted) click in the middle of the first element ``selector`` names."""
        node = self.send("script.evaluate", awaitPromise=False, resultOwnership="root",
                         expression=f"document.querySelector({json.dumps(selector)})",
                         target={"context": self.context})["result"]
        if "sharedId" not in node:
            raise RuntimeError(f"no element {selector!r}")
        self.send("input.performActions", context=self.context, actions=[{
            "type": "pointer", "id": "mouse", "actions": [
                {"type": "pointerMove", "x": 0, "y": 0,
                 "origin": {"type": "element", "element": {"sharedId": node["sharedId"]}}},
                {"type": "pointerDown", "button": 0}, {"type": "pointerUp", "button": 0}]}])

    def type(self, text: str) -> None:
        """Real key presses, one character at a time, into whatever has the focus."""
        keys: list[dict[str, str]] = []
        for ch in text:
            keys += [{"type": "keyDown", "value": ch}, {"type": "keyUp", "value": ch}]
        self.send("input.performActions", context=self.context,
                  actions=[{"type": "key", "id": "keyboard", "actions": keys}])

    def settle(self, ms: int) -> None:
        """Wait ``ms`` in the page, taking in what it logs meanwhile."""
        self.send("script.evaluate", expression=f"new Promise(r => setTimeout(r, {ms}))",
                  target={"context": self.context}, awaitPromise=True)

    def set_viewport(self, width: int, height: int) -> None:
        self.send("browsingContext.setViewport", context=self.context,
                  viewport={"width": width, "height": height})

    def screenshot(self, path: Path) -> None:
        got = self.send("browsingContext.captureScreenshot", context=self.context)
        path.write_bytes(base64.b64decode(got["data"]))


@contextmanager
def firefox(*, dark: bool = False, width: int = 1200, height: int = 900) -> Iterator[Firefox]:
    """A fresh headless Firefox (own profile: no stored theme, no cache), then closed."""
    require_firefox()
    from websockets.sync.client import connect

    profile = Path(tempfile.mkdtemp(prefix="rb-firefox-"))
    prefs = {**_PREFS, "layout.css.prefers-color-scheme.content-override": 0 if dark else 1}
    (profile / "user.js").write_text("".join(
        f"user_pref({json.dumps(k)}, {json.dumps(v)});\n" for k, v in prefs.items()),
        encoding="utf-8")
    proc = subprocess.Popen(
        [str(FIREFOX), "--headless", "--no-remote", "--profile", str(profile),
         "--remote-debugging-port=0"],
        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
        text=True)
    try:
        url = _listening_on(proc)
        with connect(f"{url}/session", max_size=None, open_timeout=30) as ws:
            browser = Firefox(ws)
            browser.set_viewport(width, height)
            yield browser
            browser.send("session.end")
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:  # pragma: no cover - a hung browser
            proc.kill()
            proc.wait()
        shutil.rmtree(profile, ignore_errors=True)


def _drain(stream: IO[str]) -> None:
    for _ in stream:
        pass


def _listening_on(proc: subprocess.Popen[str], timeout: float = 60) -> str:
    """The BiDi address Firefox prints once its remote agent listens; its further
    output is drained in a thread so that it never blocks on a full pipe."""
    assert proc.stderr is not None
    lines: list[str] = []
    deadline = time.monotonic() + timeout
    for line in proc.stderr:
        lines.append(line)
        found = re.search(r"WebDriver BiDi listening on (ws://\S+)", line)
        if found:
            threading.Thread(target=_drain, args=(proc.stderr,), daemon=True).start()
            return found.group(1)
        if time.monotonic() > deadline:
            break
    raise RuntimeError("Firefox did not start its remote agent: " + "".join(lines[-20:]))


def search(ff: Firefox, term: str) -> str:
    """Click the search box, type ``term`` key by key, and wait for the status line it
    ends on ("3 results", "No results", "Search is unavailable...")."""
    ff.click("#rb-search")
    ff.type(term)
    return str(poll(lambda: settled(ff.evaluate(
        "document.getElementById('rb-search-status').textContent")), timeout=10,
        what="the search status"))



def visit_inert(site: Path, pages: list[str], *, search_on: tuple[str, ...] = (),
                term: str = "pwned", settle_ms: int = 150) -> dict[str, list[str]]:
    """:func:`browser_util.visit_inert` in Firefox, with the page CSP on (BiDi cannot
    bypass it): ``flags`` set in the page or any frame that may run scripts,
    ``dialogs``, ``requests`` off file://, ``console`` errors but for the sandboxed
    preview's (``about:srcdoc``, where refusing the payload is the point), and the
    status of a search for ``term`` on each page of ``search_on``."""
    found: dict[str, list[str]] = {"flags": [], "dialogs": [], "requests": [], "console": [],
                                   "searches": []}
    with firefox() as ff:
        for i, rel in enumerate([*pages, None]):
            seen = ff.goto((site / rel).as_uri() if rel else "about:blank")
            before = pages[i - 1] if i else ""   # what a page did shows once it is left
            found["dialogs"] += [f"{before}: {d}" for d in seen.dialogs]
            found["requests"] += [f"{before}: {r}" for r in seen.requests]
            found["console"] += [f"{before}: {c}" for c in seen.console
                                 if not c.endswith("@ about:srcdoc")]
            if rel is None:
                break
            if rel in search_on:
                found["searches"].append(f"{rel}: {search(ff, term)}")
            ff.settle(settle_ms)
            found["flags"] += [f"{rel}: {f}" for f in ff.evaluate(FLAGS_JS)]
            for context, url in ff.frames():
                try:
                    flags = ff.evaluate(FLAGS_JS, context)
                except RuntimeError as exc:   # a frame that may run no script at all
                    if not url.startswith(("about:srcdoc", "about:blank")):
                        raise RuntimeError(f"{rel} [{url[:60]}]: {exc}") from exc
                    flags = []
                found["flags"] += [f"{rel} [{url[:40]}]: {f}" for f in flags]
    return found
