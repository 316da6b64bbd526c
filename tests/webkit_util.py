"""WebKit (the engine of Safari) for the browser tests: Debian's WebKitGTK MiniBrowser,
driven by ``WebKitWebDriver`` over classic WebDriver, on a private Xvfb display.

Why this way: no Safari runs here, and Playwright's WebKit cannot be downloaded;
WebKitGTK is the same engine (``AppleWebKit/605.1.15``, the CSP, sandboxing,
``file://`` and storage rules of WebCore).  Its driver speaks only classic
WebDriver (no BiDi, so no console or network events).  So:

* **requests** are seen by a recording HTTP proxy that the browser is told to use
  for every scheme: a request the page makes reaches it whatever its host (which
  need not resolve), and ``file://`` never goes through it;
* **dialogs** are left open (``unhandledPromptBehavior: ignore``) and read back
  after each load, then dismissed;
* **script errors** cannot be listed, so tests check that ``site.js`` ran.

Import as ``from webkit_util import ...`` (``tests/`` is on ``sys.path``).
"""

from __future__ import annotations

import base64
import contextlib
import http.server
import json
import os
import shutil
import socket
import subprocess
import tempfile
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from browser_util import FLAGS_JS, poll, settled

DRIVER = Path("/usr/bin/WebKitWebDriver")
XVFB = Path("/usr/bin/Xvfb")
#: Debian's build of WebKitGTK's test browser (package libwebkit2gtk-4.1-0, a
#: dependency of webkit2gtk-driver), in the folder of the machine's architecture.
MINIBROWSER = next(iter(sorted(Path("/usr/lib").glob("*/webkit2gtk-4.1/MiniBrowser"))),
                   Path("/usr/lib/webkit2gtk-4.1/MiniBrowser"))
#: The W3C element reference key.
ELEMENT = "element-6066-11e4-a52e-4f735466cecf"


def require_webkit() -> None:
    """Skip the calling test when the driver, the browser or Xvfb is not installed."""
    for path, package in ((DRIVER, "webkit2gtk-driver"), (MINIBROWSER, "webkit2gtk-driver"),
                          (XVFB, "xvfb")):
        if not path.is_file():
            pytest.skip(f"browser test needs {path} (apt-get install {package})")


class _Recorder(http.server.BaseHTTPRequestHandler):
    """A proxy that forwards nothing: it notes each request and answers 404."""

    seen: list[str]

    def _note(self) -> None:
        self.seen.append(self.path if self.command != "CONNECT" else f"https://{self.path}")
        self.send_response(404)
        self.send_header("Content-Length", "0")
        self.end_headers()

    do_GET = do_POST = do_HEAD = do_PUT = do_OPTIONS = do_CONNECT = _note

    def log_message(self, format: str, *args: Any) -> None:
        pass


@contextmanager
def _recording_proxy() -> Iterator[tuple[int, list[str]]]:
    seen: list[str] = []
    handler = type("Handler", (_Recorder,), {"seen": seen})
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server.server_address[1], seen
    finally:
        server.shutdown()
        server.server_close()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def _display() -> Iterator[str]:
    """A private X display (Xvfb picks a free number and writes it to a pipe)."""
    read, write = os.pipe()
    proc = subprocess.Popen([str(XVFB), "-displayfd", str(write), "-screen", "0",
                             "1280x1024x24", "-nolisten", "tcp"],
                            pass_fds=(write,), stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    os.close(write)
    try:
        with os.fdopen(read) as fh:
            number = fh.readline().strip()
        if not number.isdigit():
            raise RuntimeError("Xvfb did not start")
        yield f":{number}"
    finally:
        proc.terminate()
        proc.wait(timeout=20)


class WebKit:
    """One MiniBrowser window driven by one WebDriver session; see :func:`webkit`."""

    def __init__(self, port: int, proxy: int, requests: list[str]) -> None:
        self._base = f"http://127.0.0.1:{port}"
        self.requests = requests
        #: dialogs seen (and dismissed) since the start
        self.dialogs: list[str] = []
        where = f"127.0.0.1:{proxy}"
        caps = {"browserName": "MiniBrowser", "unhandledPromptBehavior": "ignore",
                "proxy": {"proxyType": "manual", "httpProxy": where, "sslProxy": where},
                "webkitgtk:browserOptions": {"binary": str(MINIBROWSER),
                                             "args": ["--automation"]}}
        value = self._call("POST", "/session", {"capabilities": {"alwaysMatch": caps}})
        self.session = f"/session/{value['sessionId']}"
        self.version = str(value["capabilities"]["browserVersion"])

    def _call(self, method: str, path: str, body: Any = None) -> Any:
        data = json.dumps(body if body is not None else {}).encode() \
            if method == "POST" else None
        req = urllib.request.Request(self._base + path, data=data, method=method,
                                     headers={"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(req, timeout=120) as resp:
                return json.loads(resp.read())["value"]
        except urllib.error.HTTPError as exc:
            err = json.loads(exc.read())["value"]
            raise WebDriverError(err.get("error", "?"), err.get("message", "")) from None

    def call(self, method: str, path: str, body: Any = None) -> Any:
        """A command of this session (``path`` after ``/session/{id}``)."""
        return self._call(method, self.session + path, body)

    def goto(self, url: str) -> None:
        """Load ``url`` and wait for its load event; a dialog the page opened is noted."""
        try:
            self.call("POST", "/url", {"url": url})
        except WebDriverError as exc:
            if exc.error != "unexpected alert open":
                raise
        self.take_dialogs()

    def take_dialogs(self) -> None:
        """Note and dismiss the dialogs open now (one after another)."""
        for _ in range(50):
            try:
                text = self.call("GET", "/alert/text")
            except WebDriverError as exc:
                if exc.error == "no such alert":
                    return
                raise
            self.dialogs.append(str(text))
            self.call("POST", "/alert/dismiss")

    def evaluate(self, expression: str) -> Any:
        """The value of a JavaScript expression in the current frame."""
        return self.call("POST", "/execute/sync",
                         {"script": f"return ({expression});", "args": []})

    def frame_flags(self) -> list[tuple[int, list[str]]]:
        """``window.__pwned*`` flags in each frame of the page: (frame index, flags)."""
        out = []
        count = int(self.evaluate("window.frames.length"))
        for i in range(count):
            self.call("POST", "/frame", {"id": i})
            try:
                out.append((i, list(self.evaluate(FLAGS_JS))))
            except WebDriverError as exc:     # a frame that may run no script
                out.append((i, [] if exc.error == "javascript error" else [str(exc)]))
            finally:
                self.call("POST", "/frame/parent")
        return out

    def element(self, selector: str) -> str:
        found = self.call("POST", "/element", {"using": "css selector", "value": selector})
        return str(found[ELEMENT])

    def click(self, selector: str) -> None:
        self.call("POST", f"/element/{self.element(selector)}/click")

    def type(self, selector: str, text: str) -> None:
        """Keys typed into the element, one by one, as a user would."""
        self.call("POST", f"/element/{self.element(selector)}/value", {"text": text})

    def set_window(self, width: int, height: int) -> None:
        self.call("POST", "/window/rect", {"width": width, "height": height})

    def screenshot(self, path: Path) -> None:
        path.write_bytes(base64.b64decode(self.call("GET", "/screenshot")))

    def close(self) -> None:
        self.call("DELETE", "")


class WebDriverError(RuntimeError):
    def __init__(self, error: str, message: str) -> None:
        super().__init__(f"{error}: {message}")
        self.error = error


@contextmanager
def webkit(*, dark: bool = False, width: int = 1200, height: int = 900) -> Iterator[WebKit]:
    """A fresh MiniBrowser (own data folder: no stored theme, no cache), then closed.
    ``dark``: the GTK theme's dark variant, which WebKitGTK reports to pages as
    ``prefers-color-scheme: dark``."""
    require_webkit()
    home = Path(tempfile.mkdtemp(prefix="rb-webkit-"))
    with contextlib.ExitStack() as stack:
        stack.callback(shutil.rmtree, home, ignore_errors=True)
        display = stack.enter_context(_display())
        proxy, requests = stack.enter_context(_recording_proxy())
        env = {**os.environ, "DISPLAY": display, "HOME": str(home),
               "XDG_DATA_HOME": str(home / "data"), "XDG_CACHE_HOME": str(home / "cache"),
               "XDG_CONFIG_HOME": str(home / "config"), "NO_AT_BRIDGE": "1",
               "GTK_THEME": "Adwaita:dark" if dark else "Adwaita"}
        port = _free_port()
        driver = subprocess.Popen([str(DRIVER), f"--port={port}"], env=env,
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        stack.callback(driver.wait, timeout=20)
        stack.callback(driver.terminate)
        _wait_listening(port)
        browser = WebKit(port, proxy, requests)
        stack.callback(browser.close)
        browser.set_window(width, height)
        yield browser


def _wait_listening(port: int, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while True:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/status", timeout=5):
                return
        except OSError:
            if time.monotonic() > deadline:
                raise RuntimeError("WebKitWebDriver did not start") from None
            time.sleep(0.05)


def search(wk: WebKit, term: str) -> str:
    """Type ``term`` into the search box key by key (the driver focuses it first), and
    wait for the status line it ends on ("3 results", "No results", ...)."""
    wk.type("#rb-search", term)
    return str(poll(lambda: settled(wk.evaluate(
        "document.getElementById('rb-search-status').textContent")), timeout=10,
        what="the search status"))



def visit_inert(site: Path, pages: list[str], *, search_on: tuple[str, ...] = (),
                term: str = "pwned", settle_ms: int = 150) -> dict[str, list[str]]:
    """:func:`browser_util.visit_inert` in WebKit: ``flags`` set in the page or any of
    its frames, ``dialogs``, ``requests`` (any that reached the proxy, which a
    page's CSP refuses before they leave), and the status of a search for ``term``
    on each page of ``search_on``.  No console: the driver reports none."""
    found: dict[str, list[str]] = {"flags": [], "dialogs": [], "requests": [],
                                   "searches": []}
    with webkit() as wk:
        for rel in pages:
            dialogs, requests = len(wk.dialogs), len(wk.requests)
            wk.goto((site / rel).as_uri())
            if rel in search_on:
                found["searches"].append(f"{rel}: {search(wk, term)}")
            time.sleep(settle_ms / 1000)    # deferred scripts, timers and refreshes
            wk.take_dialogs()
            found["flags"] += [f"{rel}: {f}" for f in wk.evaluate(FLAGS_JS)]
            found["flags"] += [f"{rel} [frame {i}]: {f}" for i, flags in wk.frame_flags()
                               for f in flags]
            found["dialogs"] += [f"{rel}: {d}" for d in wk.dialogs[dialogs:]]
            found["requests"] += [f"{rel}: {r}" for r in wk.requests[requests:]]
    return found
