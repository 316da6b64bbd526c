"""Bundle text printed to a terminal or a page is shown, never acted on
(:mod:`bundler.shown`).

A hostile title, claim text or binding value must not reach the reviewer's
terminal as escape sequences (erase the verdict line, retitle the window), as
a newline (forge a line such as a pinned verdict), or as bidi overrides.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from fixtures.builders import START, StepClock, make_signer
from markupsafe import Markup

from bundler.author import BundleWriter
from bundler.cli import main
from bundler.query.format import to_table
from bundler.query.model import QueryResult, QueryRow
from bundler.render.site import BuildOptions, build_site
from bundler.shown import MARKED, on_page, shown

#: Every kind of character that acts on a terminal or reorders text.
HOSTILE = ("\x1b[1A\x1b[2K\x1b]0;owned\x07 \n  INVALID (a forged line)\r\t"
           "\u202egnp.exe\u2066\u200b\x9b31m\x7f\x00\ufeff")
ACTIVE = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f\u061c\u200b-\u200f\u2028-\u202e"
                    "\u2060-\u2069\ufeff]")


def test_each_active_character_is_escaped_and_the_rest_kept() -> None:
    assert shown("a\x1b[2Jb") == "a\\x1b[2Jb"
    assert shown("x\ny\r\tz") == "x\\ny\\r\\tz"
    assert shown("\u202e\u2066\u200b\ufeff\x9b\x7f") == "\\u202e\\u2066\\u200b\\ufeff\\x9b\\x7f"
    assert shown("café 中文 🙂 — “quoted”") == "café 中文 🙂 — “quoted”"
    assert shown("a\nb\x1b", lines=True) == "a\nb\\x1b"
    assert not ACTIVE.search(shown(HOSTILE)) and "\n" not in shown(HOSTILE)


def _hostile_bundle(path: Path) -> tuple[Path, str]:
    signer = make_signer()
    with BundleWriter.create(path, title="Study " + HOSTILE, signer=signer, description=HOSTILE,
                             origin="test.invalid/shown", created=START, clock=StepClock(),
                             checkpoint_every=4, generator="tests") as w:
        w.append("run", id="run-1", stream="agent-1", title=HOSTILE, objective=HOSTILE)
        w.append("stream", id="agent-1", run="run-1", kind="agent", name=HOSTILE)
        for name, media in (("check.py", "text/x-python"), ("notes.txt", "text/plain"),
                            ("table.csv", "text/csv")):
            data = f'{name} = "user\u202e \u2066# admin\u2069 \u2066"\n{HOSTILE}\n'
            ref = w.put_payload(data.encode("utf-8"), media, name)
            w.append("individual", id=f"file-{name}", run="run-1", stream="agent-1",
                     kind="report", name=name, payload=ref.model_dump())
        w.append("claim", id="claim-1", run="run-1", stream="agent-1", name=HOSTILE,
                 text=HOSTILE, evidence=[], final=True)
    return path, signer.verifier().to_text()


def test_validate_prints_a_hostile_title_on_one_line(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bundle, key = _hostile_bundle(tmp_path / "b")
    main(["validate", str(bundle), "--trust-key", key])
    out = capsys.readouterr().out
    assert not ACTIVE.search(out)
    lines = out.split("\n")
    assert lines[0].startswith(f"{bundle}: Study \\x1b[1A")
    assert lines[1] == "  VALID, signed by a pinned key"
    assert not any(line.startswith("  INVALID") for line in lines)


def test_a_query_table_shows_hostile_cells_on_their_row() -> None:
    result = QueryResult("demo", ("claim", "text"), (
        QueryRow({"claim": "claim-1", "text": HOSTILE}, "why", (1,)),
        QueryRow({"claim": "claim-2", "text": "plain"}, "why", (2,))))
    out = to_table(result)
    assert not ACTIVE.search(out)
    assert len(out.split("\n")) == 6     # header, rule, two rows, count, final newline


def test_verify_proof_prints_the_proven_line_escaped(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The proof's extra data (base64 in the file) is the event line: canonical JSON
    escapes C0 controls, but not bidi overrides or C1 controls, which were printed
    as they are."""
    bundle, key = _hostile_bundle(tmp_path / "b")
    assert main(["prove", str(bundle), "--id", "claim-1"]) == 0
    proof = tmp_path / "p.tlog-proof"
    proof.write_text(capsys.readouterr().out, encoding="utf-8")
    assert main(["verify-proof", str(proof), "--trust-key", key]) == 0
    out = capsys.readouterr().out
    assert re.match(r"VALID: leaf \d+ is included in test.invalid/shown", out)
    assert "\\u202egnp.exe" in out and not ACTIVE.search(out)


def test_on_a_page_reordering_characters_show_as_code_points() -> None:
    assert on_page("Gain of \u202e%1.0") == "Gain of [U+202E]%1.0"
    marked = on_page(Markup("<p>\u2066x\u2069 é</p>"))
    assert isinstance(marked, Markup) and marked == "<p>[U+2066]x[U+2069] é</p>"
    assert on_page("café — 中文") == "café — 中文"
    assert on_page(42) == 42


def test_on_a_page_controls_show_as_code_points_but_tabs_and_line_ends() -> None:
    """The browser draws ESC, BEL and DEL as one box, NUL as U+FFFD, C1 as nothing."""
    assert on_page("\x1b[31mred\x07\x7f") == "[U+001B][31mred[U+0007][U+007F]"
    assert on_page("a\x00b\x0cc\x1fd") == "a[U+0000]b[U+000C]c[U+001F]d"
    assert on_page("été\x85\x9b1m") == "été[U+0085][U+009B]1m"
    block = Markup("<pre>line 1\r\n\tline 2\n</pre>")
    assert on_page(block) is block                 # layout characters stay
    marked = on_page(Markup("<pre>ok\n\x1b[0m</pre>"))
    assert isinstance(marked, Markup) and marked == "<pre>ok\n[U+001B][0m</pre>"
    printable = "".join(map(chr, range(0x20, 0x7f)))
    assert on_page(printable) is printable
    for code in [*range(0x20), 0x7f, *range(0x80, 0xa0)]:
        expected = chr(code) if chr(code) in "\t\n\r" else f"[U+{code:04X}]"
        assert on_page(f"x{chr(code)}") == f"x{expected}", hex(code)
        assert on_page(f"é{chr(code)}") == f"é{expected}", hex(code)


def test_no_page_of_the_site_reorders_its_text(tmp_path: Path) -> None:
    """Claim text, names and titles reach every kind of page and the search data."""
    bundle, key = _hostile_bundle(tmp_path / "b")
    site = tmp_path / "site"
    build_site(bundle, BuildOptions(output=site, trusted_keys=(key,)))
    shown_in = [p for p in sorted(site.rglob("*")) if p.suffix in (".html", ".js")]
    assert len(shown_in) > 20
    for page in shown_in:
        text = page.read_text(encoding="utf-8")
        assert not MARKED.search(text), page
        # nor in a place the page's own marking does not reach: graph labels (made
        # XML-safe before layout) and Markdown (CommonMark's NUL) mark theirs the same
        assert "\ufffd" not in text, page
    claim = next(site.glob("claims/claim-1-*.html")).read_text(encoding="utf-8")
    assert "[U+202E]gnp.exe[U+2066][U+200B]" in claim
    assert "[U+001B][1A[U+001B][2K[U+001B]]0;owned[U+0007]" in claim
    assert "[U+009B]31m[U+007F][U+0000][U+FEFF]" in claim
    assert claim.count("[U+0000]") >= 2
    assert len(list(site.glob("artifacts/file-*.html"))) == 3
    for viewer in site.glob("artifacts/file-*.html"):
        text = viewer.read_text(encoding="utf-8")
        assert "[U+202E]" in text and "[U+001B][2K" in text, viewer
