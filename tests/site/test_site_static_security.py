"""Static security checks on every page of every example site and of the hostile site.

The CSP in ``<meta>`` is the second line of defence; these checks make sure
the first one (escaping, and never emitting script-like markup) holds on its
own: every page carries the exact CSP, every script is an external file of
our own, no element has an ``on*`` attribute, no URL uses ``javascript:``,
nothing is loaded from elsewhere, and external links in agent Markdown carry
``rel="noopener noreferrer nofollow"``.
"""

from __future__ import annotations

import base64
import html
import re
from collections.abc import Callable
from pathlib import PurePosixPath

import pytest
from fixtures.hostile import EVIL_HOST, JSONL_ID, QUOTE_IDS, HostileBundle
from site_helpers import CSP, EXAMPLES, EXTERNAL_REL, BuiltSite, PageScan

from bundler.render.urls import artifact_href

Scans = Callable[[BuiltSite], dict[str, PageScan]]
OUR_SCRIPTS = {"assets/theme-init.js", "assets/site.js"}
#: Fields the site does not display as page text: payloads shown as <img> or inside a
#: sandboxed srcdoc, the redacted bytes, and (a gap, reported) free-form attributes,
#: operator params, stream descriptions, trace formats and edge rationales.
NOT_SHOWN = ("attr", "operator param", "redacted payload", "svg text", "html payload text",
             "stream description", "trace format", "edge rationale")
_CONTROL = re.compile(r"[\x00-\x20]+")


def _problems(site: BuiltSite, scans: dict[str, PageScan]) -> list[str]:
    out: list[str] = []
    for page, scan in scans.items():
        root = "../" * page.count("/")
        if scan.csp != [CSP]:
            out.append(f"{page}: CSP metas {scan.csp!r}")
        for src, body in scan.scripts:
            if src is None or body.strip():
                out.append(f"{page}: inline script {body[:80]!r}")
            elif not (src.startswith(root) and src[len(root):] in OUR_SCRIPTS):
                out.append(f"{page}: unexpected script src {src!r}")
        out += [f"{page}: event handler {h}" for h in scan.handlers]
        out += [f"{page}: meta refresh {m!r}" for m in scan.meta_refresh]
        for frame in scan.iframes:
            sandbox = frame.get("sandbox")
            if sandbox is None or "allow-same-origin" in sandbox.split():
                out.append(f"{page}: iframe without a strict sandbox: {sandbox!r}")
            if frame.get("src") is not None:
                out.append(f"{page}: iframe with src {frame.get('src')!r}")
        for link in scan.links:
            value = _CONTROL.sub("", html.unescape(link.value)).lower()
            if ":" in value.split("/", 1)[0].split("#", 1)[0]:
                scheme = value.split(":", 1)[0]
                if scheme in ("http", "https", "mailto"):
                    if link.tag != "a" or link.attr != "href" or not link.in_markdown:
                        out.append(f"{page}: external URL outside Markdown: "
                                   f"<{link.tag} {link.attr}={link.value!r}>")
                    elif not set(link.rel.split()) >= EXTERNAL_REL:
                        out.append(f"{page}: external link without rel {sorted(EXTERNAL_REL)}: "
                                   f"{link.value!r} rel={link.rel!r}")
                elif scheme == "data" and link.tag == "img" and link.attr == "src" and \
                        re.match(r"data:image/(png|gif|jpeg|webp);", value):
                    pass
                else:
                    out.append(f"{page}: URL scheme {scheme!r}: <{link.tag} {link.attr}="
                               f"{link.value!r}>")
    return out


@pytest.mark.parametrize("name", EXAMPLES)
def test_example_pages_are_static_and_safe(name: str, site_of: Callable[[str], BuiltSite],
                                           scans_of: Scans) -> None:
    built = site_of(name)
    scans = scans_of(built)
    assert len(scans) > 20
    problems = _problems(built, scans)
    assert not problems, f"{len(problems)} problem(s):\n" + "\n".join(problems[:40])


def test_hostile_pages_are_static_and_safe(hostile: tuple[HostileBundle, BuiltSite],
                                           scans_of: Scans) -> None:
    _, built = hostile
    problems = _problems(built, scans_of(built))
    assert not problems, f"{len(problems)} problem(s):\n" + "\n".join(problems[:40])


def test_hostile_strings_are_shown_as_text(hostile: tuple[HostileBundle, BuiltSite],
                                           scans_of: Scans) -> None:
    """The attacks were rendered (so the other tests mean something), as inert text.

    Each attack's marker ``PWN<n>`` must appear in the text of some page; the
    raw attack markup must never appear outside an ``<iframe srcdoc>``
    attribute (where the sandboxed HTML viewer keeps it, escaped).
    """
    bundle, built = hostile
    scans = scans_of(built)
    text = "\n".join(" ".join(s.text) for s in scans.values())
    shown = {where for where, attack in bundle.attacks.items()
             if re.search(rf"PWN{attack.split()[0][3:]}\b", text)}
    required = {w for w in bundle.attacks if not w.startswith(NOT_SHOWN)}
    missing = sorted(required - shown)
    assert not missing, f"attack strings never shown: {missing}"
    for page in scans:
        raw = (built.site / page).read_text(encoding="utf-8")
        for where, attack in bundle.attacks.items():
            vector = attack.split(" ", 2)[2]
            if "<" in vector and vector in raw:
                pytest.fail(f"{page}: unescaped attack from {where!r}: {vector!r}")


def test_a_hostile_transcript_is_shown_row_by_row_and_checked_against_its_records(
        hostile: tuple[HostileBundle, BuiltSite]) -> None:
    """Its rows (a repeated key, a torn row) reach the JSON Lines viewer, its records the
    page's section and the transcript-mismatch audit page: all as text (the test above
    holds every page to that)."""
    bundle, built = hostile
    page = (built.site / artifact_href(JSONL_ID)).read_text(encoding="utf-8")
    assert page.count('<span class="json-dup">repeated key</span>') == 2
    assert 'class="row-bad"' in page and "Row 2 is not JSON; shown as text." in page
    assert re.search(r'<a class="json-index" href="\.\./events/page-0001\.html#e\d+"[^>]*>'
                     r'row 1</a>', page)
    assert "2 trace records in the log quote 2 lines between 1 and 9 of <code>" in page
    audit = (built.site / "audit" / "transcript-mismatch.html").read_text(encoding="utf-8")
    text = html.unescape(re.sub(r"<[^>]+>", " ", audit))
    for rid, status in zip(QUOTE_IDS, ("differs", "past-end"), strict=True):
        assert re.search(rf"{re.escape(rid)}\s.*?\s{status}\s", text, re.S), (rid, status)
    marker = bundle.attacks["trace raw quoting the transcript otherwise"].split()[0]
    assert f"the record has '{marker}" in text


def test_hostile_search_data_cannot_break_out(hostile: tuple[HostileBundle, BuiltSite]) -> None:
    """search/docs.js carries every attack as JSON inside a JS string literal."""
    _, built = hostile
    js = (built.site / "search" / "docs.js").read_text(encoding="utf-8")
    assert js.startswith('window.RB_SEARCH_DOCS = JSON.parse("')
    assert js.endswith('");\n')
    body = js[len('window.RB_SEARCH_DOCS = JSON.parse("'):-len('");\n')]
    for ch in ("<", ">", "&", "\u2028", "\u2029", "\n"):
        assert ch not in body, f"unescaped {ch!r} in search/docs.js"
    assert "PWN" in body, "the hostile claims are searchable"


def test_hostile_files_keep_safe_names(hostile: tuple[HostileBundle, BuiltSite]) -> None:
    """Ids and file names with quotes, brackets, ``..`` and schemes never reach a path."""
    _, built = hostile
    for p in built.site.rglob("*"):
        rel = p.relative_to(built.site).as_posix()
        assert re.fullmatch(r"[A-Za-z0-9._/-]+", rel), rel
        assert ".." not in PurePosixPath(rel).parts
    assert EVIL_HOST not in {p.name for p in built.site.rglob("*")}


def test_hostile_redacted_bytes_absent(hostile: tuple[HostileBundle, BuiltSite]) -> None:
    bundle, built = hostile
    secret = bundle.attacks["redacted payload"].encode()
    needles = [secret, base64.b64encode(secret)]
    for p in built.site.rglob("*"):
        if p.is_file():
            data = p.read_bytes()
            for n in needles:
                assert n not in data, f"redacted bytes in {p.relative_to(built.site)}"
