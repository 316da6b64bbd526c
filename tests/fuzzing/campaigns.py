"""Seeded fuzzing of the whole CLI with hostile bundles: the judge is the contract.

Whatever a bundle holds, ``validate`` and ``build`` end with exit 0, 1 or 2 and
a diagnostic, never an internal error (RB900) or a traceback; a site that is
built escapes what the bundle says and puts a CSP on every page; a rebuild
into an existing site writes the bytes a cold build writes.  Each campaign
breaks bundles one way and holds every outcome to that contract:

* ``raw``: bytes of a bundle folder (flips, cuts, JSON values swapped, lines
  moved, files turned into folders or links out of the bundle, whose target
  must then be nowhere in the site);
* ``archive``: bytes of the bundle as .zip, .tar.gz and .tar;
* ``render``: a bundle re-authored (chain and signatures intact, so the pages
  are made) with hostile values in random fields: markup, ``javascript:``
  links, references to other objects and to itself, huge and odd numbers, and
  in half the runs hostile bytes for a few payloads (script and markup for each
  viewer, broken text, binary);
* ``incremental``: a site built from one such bundle, then rebuilt from a
  grown or changed one (its payloads' bytes changed too, in some runs), against
  a cold build of the second.

With ``--browser N``, every Nth site that ``raw``, ``archive`` and ``render``
write (for an invalid bundle too) is also loaded in Chromium, page by page,
with its CSP and without (:func:`judge_browser`); ``--firefox`` and ``--webkit``
load those sites in Firefox and in WebKit (Safari's engine) too.

The campaigns found: a linked ``events.jsonl`` copied into the site, a missing
one failing with RB900, a corrupt deflate stream in an archive failing with
RB900, an out-of-range integer raised by the writer as a non-writer error, and
(in Chromium) an SVG artifact whose bytes were first committed as text linking
a copy of the file that the site never made.
``test_campaigns.py`` runs a small fixed sample of each in the suite; longer
runs are by hand (``PYTHONPATH=tests .venv/bin/python -m fuzzing --help``).
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib
import io
import json
import os
import random
import shutil
import tarfile
import traceback
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bundler.author import BundleWriter
from bundler.cli import main
from bundler.errors import WriterError
from bundler.integrity.note import parse_signer_key
from fuzzing.mutators import (
    grow_events,
    hostile_bodies,
    hostile_events,
    hostile_payload,
    mutate_archive,
    mutate_files,
    swap_refs,
)

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "example_bundles"
#: Put in the bundle's title and description, and among hostile values: it must
#: reach no page unescaped.
MARK = "<x-fuzz q='1'>"


def _key_line(path: Path) -> str:
    return next(ln for ln in path.read_text(encoding="utf-8").splitlines()
                if ln and not ln.startswith("#"))


PUB = _key_line(EXAMPLES / "demo-key.pub")


@dataclass
class Tally:
    """Outcomes by kind, and the findings with the inputs kept for each."""

    counts: dict[str, int] = field(default_factory=dict)
    findings: list[str] = field(default_factory=list)
    #: sites written that passed the other judges, and those also loaded in Chromium
    built: int = 0
    browsed: int = 0

    def add(self, kind: str) -> None:
        self.counts[kind] = self.counts.get(kind, 0) + 1


@contextlib.contextmanager
def _env(name: str, value: str) -> Iterator[None]:
    old = os.environ.get(name)
    os.environ[name] = value
    try:
        yield
    finally:
        if old is None:
            del os.environ[name]
        else:
            os.environ[name] = old


def run_cli(*args: str) -> tuple[int | str, str]:
    """``review-bundler ARGS`` in this process: (exit status, stderr); an exception
    that escapes ``main`` comes back as its traceback in place of the status."""
    err = io.StringIO()
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
        try:
            rc: int | str = main(list(args))
        except BaseException:  # what escapes is the finding
            rc = "raised " + traceback.format_exc()
    return rc, err.getvalue()


def judge(rc: int | str, stderr: str) -> str | None:
    """What breaks the contract in one run, or None."""
    if rc not in (0, 1, 2) or "RB900" in stderr or "Traceback" in stderr:
        return f"exit {rc}: {stderr[-1500:]}"
    return None


def judge_site(site: Path) -> str | None:
    """A built site, if one was written (an invalid bundle gets one too, which shows
    its diagnostics): no unescaped mark, a CSP on every page."""
    for page in sorted(site.rglob("*.html")):
        text = page.read_text(encoding="utf-8", errors="replace")
        if "<x-fuzz" in text:
            return f"{page.relative_to(site)}: the bundle's markup reached the page"
        if 'http-equiv="Content-Security-Policy"' not in text:
            return f"{page.relative_to(site)}: no CSP"
    return None


#: The campaign's hostile strings hold this word (``alert(1)``), so a search for it
#: puts hostile titles in the page through ``site.js``.
SEARCH_TERM = "alert"


def judge_browser(site: Path, *, also: tuple[str, ...] = ()) -> str | None:
    """A built site in Chromium, every page from file://: with its CSP, and again
    without it (escaping alone must hold); then in each browser of ``also``
    (``"firefox"``, ``"webkit"``) with the CSP.  Every hostile script the campaign
    puts in a bundle calls ``alert``: no dialog may open, nor a page error (a value
    that breaks ``site.js``), a request off file://, or, with the CSP, a console
    error (where the browser reports them).  Search runs on the overview and must
    answer."""
    from browser_util import visit_inert

    pages = sorted(p.relative_to(site).as_posix() for p in site.rglob("*.html"))
    said: list[str] = []
    for bypass in (False, True):
        try:
            found = visit_inert(site, pages, bypass_csp=bypass, search_on=("index.html",),
                                term=SEARCH_TERM, settle_ms=50)
        except Exception as exc:  # a page that never loads, a search that never answers
            return f"in Chromium: {type(exc).__name__}: {str(exc)[:500]}"
        # without the CSP, what it would have refused is no finding
        problems = _problems(found, ("flags", "dialogs", "page errors") if bypass else None)
        if problems:
            said.append(f"in Chromium{' without the CSP' if bypass else ''}: {problems}")
    for name in also:
        said += _in_other(name, site, pages)
    return "; ".join(said) or None


def _problems(found: dict[str, list[str]], kinds: tuple[str, ...] | None = None
              ) -> dict[str, list[str]]:
    """The first few of each kind a visit found (only ``kinds`` if given), and the
    searches that said search was unavailable."""
    problems = {k: v[:3] for k, v in found.items()
                if v and k != "searches" and (kinds is None or k in kinds)}
    broken = [s for s in found.get("searches", []) if "unavailable" in s]
    if broken:
        problems["search"] = broken
    return problems


#: The other browsers a campaign can load its sites in: name -> (shown as, helper module).
OTHER_BROWSERS = {"firefox": ("Firefox", "firefox_util"), "webkit": ("WebKit", "webkit_util")}


def _in_other(name: str, site: Path, pages: list[str]) -> list[str]:
    shown, module = OTHER_BROWSERS[name]
    visit = importlib.import_module(module).visit_inert
    try:
        found = visit(site, pages, search_on=("index.html",), term=SEARCH_TERM, settle_ms=50)
    except Exception as exc:
        return [f"in {shown}: {type(exc).__name__}: {str(exc)[:500]}"]
    problems = _problems(found)
    return [f"in {shown}: {problems}"] if problems else []


def _browse(tally: Tally, site: Path, every: int, also: tuple[str, ...]) -> str | None:
    """Every ``every``-th site written (0: none), valid bundle's or not, in Chromium
    (and the browsers of ``also``: :func:`judge_browser`, about 0.1 s a page); the
    others are not opened."""
    if not every or not (site / "index.html").is_file():
        return None
    tally.built += 1
    if tally.built % every:
        return None
    tally.browsed += 1
    return judge_browser(site, also=also)


def judge_outside(site: Path, outside: Path) -> str | None:
    """No file of a site holds the bytes of a file outside the bundle a link pointed at."""
    secret = outside.read_bytes().strip() if outside.is_file() else b""
    for path in sorted(site.rglob("*")) if secret else ():
        if path.is_file() and secret in path.read_bytes():
            return f"{path.relative_to(site)} holds a file from outside the bundle"
    return None


def _keep(tally: Tally, what: str, keep: Path, *inputs: Path) -> None:
    target = keep / f"finding-{len(tally.findings)}"
    shutil.rmtree(target, ignore_errors=True)
    target.mkdir(parents=True)
    for src in inputs:
        if src.is_dir():
            shutil.copytree(src, target / src.name, symlinks=True)
        elif src.exists():
            shutil.copy(src, target / src.name)
    tally.findings.append(f"{what} (kept in {target})")


def _build_args(bundle: Path, site: Path) -> list[str]:
    return ["build", str(bundle), "-o", str(site), "--trust-key", PUB, "-j", "1"]


# ------------------------------------------------------------------ campaigns
def raw(seed: int, runs: int, bundle: str, work: Path, *, build_every: int = 4,
        browser_every: int = 0, also: tuple[str, ...] = ()) -> Tally:
    rng, tally = random.Random(seed), Tally()
    b, site = work / "bundle", work / "site"
    for i in range(runs):
        shutil.rmtree(b, ignore_errors=True)
        shutil.copytree(EXAMPLES / bundle, b, symlinks=True)
        what = [mutate_files(rng, b, outside=work / "outside") for _ in range(rng.randint(1, 3))]
        args = (_build_args(b, site) if i % build_every == 0
                else ["validate", str(b), "--trust-key", PUB])
        shutil.rmtree(site, ignore_errors=True)
        rc, err = run_cli(*args)
        found = (judge(rc, err) or judge_outside(site, work / "outside") or judge_site(site)
                 or _browse(tally, site, browser_every, also))
        if found:
            _keep(tally, f"raw {args[0]} after {what}: {found}", work / "keep", b)
        tally.add(str(rc))
    return tally


def archive(seed: int, runs: int, bundle: str, work: Path, *, browser_every: int = 0,
            also: tuple[str, ...] = ()) -> Tally:
    rng, tally = random.Random(seed), Tally()
    work.mkdir(parents=True, exist_ok=True)
    packed = _packed(EXAMPLES / bundle, work)
    for i in range(runs):
        name, data = rng.choice(sorted(packed.items()))
        path = work / name
        path.write_bytes(mutate_archive(rng, data))
        args = (_build_args(path, work / "site") if i % 5 == 0
                else ["validate", str(path), "--trust-key", PUB])
        shutil.rmtree(work / "site", ignore_errors=True)
        rc, err = run_cli(*args)
        found = judge(rc, err) or judge_site(work / "site") or _browse(
            tally, work / "site", browser_every, also)
        if found:
            _keep(tally, f"archive {args[0]} of {name}: {found}", work / "keep", path)
        tally.add(str(rc))
    return tally


def _packed(src: Path, work: Path) -> dict[str, bytes]:
    out = {}
    for name, mode in (("b.tar.gz", "w:gz"), ("b.tar", "w")):
        with tarfile.open(work / name, mode) as tf:  # type: ignore[call-overload]
            tf.add(src, arcname=src.name)
        out[name] = (work / name).read_bytes()
    zipped = EXAMPLES / f"{src.name}.zip"
    if zipped.is_file():
        out["b.zip"] = zipped.read_bytes()
    else:
        shutil.make_archive(str(work / "b"), "zip", src.parent, src.name)
        out["b.zip"] = (work / "b.zip").read_bytes()
    return out


class Source:
    """An example bundle's events, payloads and metadata, to author variants of."""

    def __init__(self, bundle: str) -> None:
        self.root = EXAMPLES / bundle
        with open(self.root / "events.jsonl", encoding="utf-8") as fh:
            self.events: list[dict[str, Any]] = [json.loads(line) for line in fh]
        self.ids = sorted({str(e["id"]) for e in self.events if "id" in e})
        self.manifest = json.loads((self.root / "manifest.json").read_text(encoding="utf-8"))
        self.meta = json.loads((self.root / "bundle.json").read_text(encoding="utf-8"))
        self.signer = parse_signer_key(_key_line(EXAMPLES / "DEMO-KEY-NOT-SECRET.key"))

    def author(self, dst: Path, events: list[dict[str, Any]],
               payloads: dict[str, tuple[bytes, str]] | None = None) -> None:
        """A valid bundle of ``events`` (chain, manifest and checkpoints made anew), with
        the payloads in ``payloads`` (by digest) replaced by other bytes of a media type,
        and the events' references to them made to match; raises :class:`WriterError`
        for events the schema refuses."""
        shutil.rmtree(dst, ignore_errors=True)
        w = BundleWriter.create(dst, title=self.meta["title"] + MARK, signer=self.signer,
                                description=MARK, origin=self.meta["origin"],
                                created=self.meta["created"], checkpoint_every=40)
        swapped: dict[str, tuple[str, int, str]] = {}
        with w:
            for p in self.manifest["payloads"]:
                if p["state"] == "present":
                    salt = self.root / (p["path"] + ".salt")
                    data, media_type = (payloads or {}).get(p["digest"]) or (
                        (self.root / p["path"]).read_bytes(), p["media_type"])
                    ref = w.put_payload(data, media_type,
                                        salt=salt.read_bytes() if p.get("salted") else None)
                    if p["digest"] in (payloads or {}):
                        swapped[p["digest"]] = (ref.digest, ref.size, ref.media_type)
            for e in swap_refs(events, swapped) if swapped else events:
                w.append(e["type"], **{k: v for k, v in e.items()
                                       if k not in ("seq", "prev", "type")})
        self._keep_redacted(dst)

    def _keep_redacted(self, dst: Path) -> None:
        """List the source's redacted payloads in the new manifest too: their bytes are
        gone, so the writer cannot store them, and without an entry every variant of a
        bundle with a redaction was invalid (RB405) before any hostile value."""
        gone = [p for p in self.manifest["payloads"] if p["state"] == "redacted"]
        if not gone:
            return
        path = dst / "manifest.json"
        manifest = json.loads(path.read_text(encoding="utf-8"))
        manifest["payloads"] = sorted([*manifest["payloads"], *gone],
                                      key=lambda p: str(p["digest"]))
        path.write_text(json.dumps(manifest, indent=2, sort_keys=True) + "\n", encoding="utf-8")

    def hostile_payloads(self, rng: random.Random) -> dict[str, tuple[bytes, str]]:
        """New bytes for one to three of the payloads (each viewer's attack surface),
        under another media type one time in five (HTML among them)."""
        present = [p for p in self.manifest["payloads"] if p["state"] == "present"]
        chosen = rng.sample(present, min(len(present), rng.randint(1, 3)))
        return {p["digest"]: (hostile_payload(rng, (self.root / p["path"]).read_bytes(), MARK),
                              rng.choice(sorted(hostile_bodies(MARK))) if rng.random() < 0.2
                              else p["media_type"])
                for p in sorted(chosen, key=lambda p: str(p["digest"]))}

    def variant(self, rng: random.Random, dst: Path, tries: int = 30) -> bool:
        """Author a hostile variant at ``dst`` (hostile payload bytes in half of them);
        False if the schema refused them all."""
        for _ in range(tries):
            try:
                self.author(dst, hostile_events(rng, self.events, self.ids, MARK),
                            self.hostile_payloads(rng) if rng.random() < 0.5 else None)
                return True
            except WriterError:
                continue
        return False


def render(seed: int, runs: int, bundle: str, work: Path, *, browser_every: int = 0,
           also: tuple[str, ...] = ()) -> Tally:
    """Hostile variants built (and every ``browser_every``-th site loaded in Chromium)."""
    rng, tally, src = random.Random(seed), Tally(), Source(bundle)
    b, site = work / "bundle", work / "site"
    for _ in range(runs):
        if not src.variant(rng, b):
            tally.add("refused")
            continue
        shutil.rmtree(site, ignore_errors=True)
        rc, err = run_cli(*_build_args(b, site))
        found = judge(rc, err) or judge_site(site) or _browse(tally, site, browser_every,
                                                              also)
        if found:
            _keep(tally, f"render: {found}", work / "keep", b)
        tally.add(str(rc))
    return tally


def _digests(root: Path) -> dict[str, str]:
    return {p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file()}


def incremental(seed: int, runs: int, bundle: str, work: Path) -> Tally:
    rng, tally, src = random.Random(seed), Tally(), Source(bundle)
    first, second = work / "first", work / "second"
    for _ in range(runs):
        for _ in range(30):
            base = hostile_events(rng, src.events, src.ids, MARK) if rng.random() < 0.7 \
                else list(src.events)
            grown = rng.random() < 0.7
            later = (base + grow_events(rng, base, src.ids, rng.randint(1, 12), MARK)
                     if grown else hostile_events(rng, base, src.ids, MARK))
            # hostile payload bytes in some bundles: in both alike, or changed between them
            pays = [src.hostile_payloads(rng) if rng.random() < 0.3 else None for _ in "12"]
            if rng.random() < 0.5:
                pays[1] = pays[0]
            try:
                src.author(first, base, pays[0])
                src.author(second, later, pays[1])
                break
            except WriterError:
                continue
        else:
            tally.add("refused")
            continue
        site, cold = work / "site", work / "cold"
        shutil.rmtree(cold, ignore_errors=True)
        shutil.rmtree(work / "cache-cold", ignore_errors=True)
        with _env("REVIEW_BUNDLER_CACHE_DIR", str(work / "cache")):
            outcomes = [run_cli(*_build_args(first, site)), run_cli(*_build_args(second, site))]
        with _env("REVIEW_BUNDLER_CACHE_DIR", str(work / "cache-cold")):
            outcomes.append(run_cli(*_build_args(second, cold)))
        found = next((f for f in (judge(*o) for o in outcomes) if f), None)
        if found is None and outcomes[1][0] != outcomes[2][0]:
            found = f"the rebuild exited {outcomes[1][0]}, a cold build {outcomes[2][0]}"
        if found is None and outcomes[2][0] == 0:
            warm, fresh = _digests(site), _digests(cold)
            differ = sorted(k for k in set(warm) | set(fresh) if warm.get(k) != fresh.get(k))
            if differ:
                found = f"the rebuild differs from a cold build in {differ[:8]}"
        if found:
            _keep(tally, f"incremental ({'grown' if grown else 'changed'}): {found}",
                  work / "keep", first, second)
        tally.add("same" if found is None else "finding")
    return tally


CAMPAIGNS = {"raw": raw, "archive": archive, "render": render, "incremental": incremental}
