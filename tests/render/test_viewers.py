"""Payload viewers: hostile bytes and names in, inert HTML out, honest notes."""

from __future__ import annotations

import hashlib
import json
import re
from html import unescape
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bundler.errors import InputError
from bundler.load.json_members import parse_json
from bundler.render.highlight import DARK_STYLE, LIGHT_STYLE, pygments_css
from bundler.render.viewer_jobs import ViewerJob
from bundler.render.viewers import HTML_SANDBOX_CSP, Viewer, render_payload, viewer_category
from bundler.render.viewers_common import human_size
from bundler.render.viewers_json import MAX_NODES, OPEN_SMALL, REPEATED_NOTE, count_nodes
from bundler.render.viewers_table import is_numeric, sniff_delimiter
from bundler.render.viewers_text import HIGHLIGHT_LIMIT, diff_line_classes

from .test_markdown import HOSTILE, Scan, assert_inert, scan

HB = HOSTILE.encode()
HREF = "../files/abc"


def view(data: bytes | None, media_type: str, name: str | None = "f", **kw: object) -> Viewer:
    kw.setdefault("file_href", HREF)
    v = render_payload(data, media_type, name, **kw)  # type: ignore[arg-type]
    assert isinstance(v, Viewer)
    assert_inert(str(v.html))
    assert v == render_payload(data, media_type, name, **kw)  # type: ignore[arg-type]
    return v


def text_of(html: str) -> str:
    return re.sub(r"<[^>]+>", "", html)


def visible(html: str) -> str:
    """What a reader sees: tags dropped, entities decoded."""
    return unescape(text_of(html))


# --- unavailable / download ------------------------------------------------------------

def test_unavailable_when_no_bytes() -> None:
    v = view(None, "text/plain", HOSTILE, file_href=None)
    assert (v.kind, v.truncated, v.note) == ("unavailable", False, "")
    assert str(v.html) == '<p class="viewer-unavailable">The content of this payload is not ' \
                          'available.</p>'


def test_binary_is_a_download_link_with_size() -> None:
    v = view(b"PK\x03\x04" + bytes(2044), "application/zip", f"../{HOSTILE}.zip")
    assert v.kind == "download"
    assert scan(str(v.html)).named("a") == [{"href": HREF, "download": "script_.zip"}]
    assert text_of(str(v.html)) == "Download ../&lt;script&gt;alert(1)&lt;/script&gt;.zip (2 KiB)"


def test_download_without_file_is_unavailable() -> None:
    v = view(b"%PDF-1.7", "application/pdf", "r.pdf", file_href=None)
    assert v.kind == "unavailable"


# --- text and code -----------------------------------------------------------------------

def test_python_is_highlighted_with_classes_only() -> None:
    v = view(f"def f():\n    return {HOSTILE!r}\n".encode(), "text/x-python", "evil.py")
    assert v.kind == "code"
    html = str(v.html)
    assert html.startswith('<div class="highlight"><pre>')
    assert '<span class="k">def</span>' in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert all("style" not in attrs for _, attrs in scan(html).tags)


def test_plain_text_kind_and_lexer_by_filename_first() -> None:
    assert view(HB, "text/plain", "notes.txt").kind == "text"
    # declared text/plain, but the file name says TOML: lexer by file name
    assert view(b'a = "b"\n', "text/plain", "pyproject.toml").kind == "code"
    assert view(b"x: 1\n", "application/x-yaml", None).kind == "code"
    assert view(b"echo hi\n", "application/x-sh", None).kind == "code"


def test_huge_code_is_shown_uncoloured() -> None:
    src = (f"x = {HOSTILE!r}\n" * 3000).encode()  # ~105 KB, over HIGHLIGHT_LIMIT
    v = view(src, "text/x-python", "big.py")
    assert (v.kind, v.truncated) == ("code", False)
    assert v.note == "Too large to colour; shown as plain text."
    assert str(v.html).startswith('<div class="highlight"><pre>x = &#39;&lt;script&gt;')
    assert scan(str(v.html)).named("span") == []
    assert visible(str(v.html)) == src.decode() + "\n"  # the newline after </div>
    small = view(src[:HIGHLIGHT_LIMIT // 2], "text/x-python", "big.py")
    assert small.note == "" and scan(str(small.html)).named("span")


def test_undecodable_bytes_are_replaced_and_noted() -> None:
    v = view(b"ok \xff\xfe bad\n", "text/plain", "log.txt")
    assert "\ufffd" in str(v.html)
    assert v.note == ("Some bytes are not valid text in the declared encoding "
                      "and are shown as \ufffd.")


def test_charset_parameter_is_honoured() -> None:
    v = view("café\n".encode("latin-1"), "text/plain; charset=ISO-8859-1", "a.txt")
    assert "café" in str(v.html) and v.note == ""


def test_head_cut_inside_a_character_is_not_called_undecodable() -> None:
    data = "é".encode() * 200  # 400 bytes; 301 cuts the 151st character in half
    v = view(data, "text/plain", "a.txt", max_bytes=301)
    assert v.truncated
    assert v.note == "Showing the first 301 bytes of 400 bytes."
    assert "\ufffd" not in str(v.html)


def test_large_payload_note_and_full_file_link() -> None:
    head = b"x" * (1024 * 1024)
    v = view(head, "text/plain", "big.log", total_size=1_258_291)
    assert v.truncated
    assert v.note == "Showing the first 256 KiB of 1.2 MiB."
    assert scan(str(v.html)).named("a") == [{"href": HREF}]
    assert text_of(str(v.html)).endswith("Open the full file (1.2 MiB)")
    assert str(v.html).count("x") == 262_144  # exactly max_bytes rendered


def test_small_payload_is_not_truncated() -> None:
    v = view(b"hello\n", "text/plain", "a.txt", total_size=6)
    assert (v.truncated, v.note) == (False, "")
    assert scan(str(v.html)).named("a") == []


# --- markdown ----------------------------------------------------------------------------

def test_markdown_payload() -> None:
    md = f"# Title\n\n{HOSTILE}\n\n[x](javascript:alert(1)) ![i](https://evil.example/i.png)\n"
    v = view(md.encode(), "text/markdown", "README.md")
    assert v.kind == "markdown"
    s = scan(str(v.html))
    assert s.tags[0] == ("div", {"class": "markdown-body"})
    assert s.named("h3") == [{}] and s.named("img") == []
    assert "&lt;script&gt;" in str(v.html)


# --- CSV ---------------------------------------------------------------------------------

def _air_quality(rows: int) -> bytes:
    lines = ["Date;Time;CO(GT);NOx(GT);T;;"]
    lines += [f"10/03/2004;{i % 24:02d}.00.00;2,{i % 10};{-200 if i % 7 == 0 else 100 + i};"
              f"13,{i % 10};;" for i in range(rows)]
    return ("\n".join(lines) + "\n").encode()


def test_semicolon_csv_two_thousand_rows() -> None:
    v = view(_air_quality(2000), "text/csv", "AirQualityUCI.csv")
    assert v.kind == "table"
    assert v.truncated
    assert v.note == "Showing 500 of 2,000 rows."
    html = str(v.html)
    assert html.startswith('<div class="table-wrap"><table class="csv"><thead>')
    s = scan(html)
    assert len(s.named("tr")) == 501
    # Date, Time, CO, NOx, T, "", "": numeric columns get right-aligned headers too
    assert [a.get("class") for a in s.named("th")] == [None, None, "num", "num", "num", None, None]
    assert all(a["scope"] == "col" for a in s.named("th"))
    tds = s.named("td")
    assert len(tds) == 500 * 7
    # first data row: 10/03/2004, 00.00.00, 2,0, -200, 13,0, "", ""
    assert [a.get("class") for a in tds[:7]] == [None, None, "num", "num", "num", None, None]
    assert "<td class=\"num\">-200</td>" in html
    assert scan(html).named("a") == [{"href": HREF}]


def test_csv_row_count_over_a_head_says_at_least() -> None:
    full = _air_quality(3000)
    head = full[:60_000]
    v = view(head, "text/csv", "a.csv", total_size=len(full))
    complete_lines = head[: head.rfind(b"\n") + 1].count(b"\n") - 1
    assert v.note == f"Showing 500 of at least {complete_lines:,} rows."


def test_csv_hostile_cells_ragged_rows_and_tabs() -> None:
    data = f"a\tb\tc\n1\t{HOSTILE}\n2\t3\t4\t5\n".encode()
    v = view(data, "text/tab-separated-values", f"{HOSTILE}.tsv")
    assert (v.kind, v.note, v.truncated) == ("table", "", False)
    s = scan(str(v.html))
    assert len(s.named("td")) == 6
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in str(v.html)


def test_csv_with_huge_cells_stays_bounded() -> None:
    header = ",".join(f"c{i}" for i in range(50))
    row = ",".join(["y" * 900] * 50)
    data = "\n".join([header] + [row] * 10).encode() + b"\n"
    v = view(data, "text/csv", "wide.csv")
    # each row costs 45,000 characters of the 262,144 budget: six rows fit before it runs out
    assert v.note == "Showing 6 of 10 rows."
    assert len(scan(str(v.html)).named("tr")) == 7
    long_cell = "z" * 5000
    v = view(f"a\n{long_cell}\n".encode(), "text/csv", "long.csv")
    assert f">{'z' * 1000}\u2026</td>" in str(v.html)


@pytest.mark.parametrize(("sample", "delim"), [
    ("a,b,c\n1,2,3\n", ","),
    ("a;b;c\n1,5;2,5;3\n4;5;6\n", ";"),
    ("a\tb\n1,5\t2\n", "\t"),
    ('"x;y",b\n"1;2",3\n', ","),
    ("single\nrow\n", ","),
])
def test_sniff_delimiter(sample: str, delim: str) -> None:
    assert sniff_delimiter(sample) == delim


def test_is_numeric() -> None:
    assert all(map(is_numeric, ["-200", "2,6", "1,308.5", "1e-3", "+4", ".5", "12%"]))
    assert not any(map(is_numeric, ["", "abc", "1-2", "10/03/2004", "18.00.00", "--1"]))


def test_csv_that_does_not_parse_falls_back_to_text() -> None:
    v = view(b"", "text/csv", "empty.csv")
    assert v.kind == "text"
    assert v.note == "Could not be read as a table; shown as text."


# --- JSON --------------------------------------------------------------------------------

def test_json_tree_hostile_keys_and_values() -> None:
    doc = {HOSTILE: [1, {"deep": {"deeper": HOSTILE}}, True, None], "n": 2.5}
    v = view(json.dumps(doc).encode(), "application/json", "r.json")
    assert (v.kind, v.truncated, v.note) == ("json", False, "")
    s = scan(str(v.html))
    assert s.tags[0] == ("div", {"class": "json"})
    # depth 0 and 1 open, and below them blocks this small
    assert [("open" in a) for a in s.named("details")] == [True, True, True, True]
    assert str(v.html).count("&lt;script&gt;alert(1)&lt;/script&gt;") == 2


def test_json_tree_opens_the_top_two_levels_and_small_blocks_below_them() -> None:
    """Below depth 1 a block starts open only if it holds at most OPEN_SMALL values in
    all (itself included), wherever it is, even inside a closed block."""
    small = {"k": list(range(OPEN_SMALL - 2))}          # 1 + 1 + 10 values
    big = {"k": list(range(OPEN_SMALL - 1))}            # 1 + 1 + 11
    doc = {"a": {"small": small, "big": big, "wide": {"w": {**big, "in": small}}}}
    s = scan(str(view(json.dumps(doc).encode(), "application/json", "r.json").html))
    opened = [("open" in a) for a in s.named("details")]
    # doc, a | small, small.k | big, big.k | wide, w, w.k, w.in, w.in.k
    assert opened == [True, True, True, True, False, True, False, False, True, True, True]


def test_plus_json_media_type_and_node_cap() -> None:
    doc = {"items": [{"i": i, "s": "x"} for i in range(1500)]}
    v = view(json.dumps(doc).encode(), "application/vnd.example+json", None)
    assert v.kind == "json" and v.truncated
    assert v.note == f"Showing {MAX_NODES:,} of {1 + 1 + 1500 * 3:,} values."
    assert len(scan(str(v.html)).named("li")) <= MAX_NODES + 10
    assert "more entries not shown" in str(v.html)


def test_json_too_large_or_partial_is_text() -> None:
    doc = json.dumps({"k": ["v" * 100] * 3000}).encode()  # ~310 KB
    assert human_size(len(doc)) == "304.7 KiB"
    v = view(doc, "application/json", "big.json", max_bytes=65_536)
    assert v.kind == "code" and v.truncated
    assert v.note == ("This JSON file (304.7 KiB) is over the 256 KiB tree limit; shown as text. "
                      "Showing the first 64 KiB of 304.7 KiB.")
    v = view(doc[:1000], "application/json", "big.json", total_size=len(doc))
    assert v.note == ("Only part of this JSON file was read; shown as text. "
                      "Showing the first 1,000 bytes of 304.7 KiB.")


def test_json_repeated_keys_show_every_value_marked() -> None:
    """A dict would keep the last "verdict" only; another reader could keep the first."""
    doc = (b'{"verdict": "pass", "n": 1, "inner": {"a": [], "a": {"b": 1, "b": 2}}, '
           b'"verdict": "fail"}')
    v = view(doc, "application/json", "r.json")
    html = str(v.html)
    text = visible(html)
    for member in ('"verdict": "pass"', '"verdict": "fail"', '"b": 1', '"b": 2'):
        assert member in text
    assert html.count('<span class="json-dup">repeated key</span>') == 6
    assert v.note == REPEATED_NOTE
    assert "json-dup" not in str(view(b'{"a": {"a": 1}}', "application/json", "r.json").html)
    # every member counts as a value, the hidden one too
    assert count_nodes(parse_json('{"a": 1, "a": [1, 2]}')[0]) == 5


def test_invalid_json_is_text_with_note() -> None:
    v = view(b'{"a": ' + HB, "application/json", "bad.json")
    assert v.kind == "code"
    assert v.note.startswith("Not valid JSON (line 1, column 7: Expecting value)")
    assert HOSTILE in visible(str(v.html))


def test_pathologically_deep_json_does_not_crash() -> None:
    v = view(b"[" * 100_000 + b"]" * 100_000, "application/json", "deep.json",
             max_bytes=1_000_000)
    assert v.kind == "code"
    assert v.note == ("Not JSON this viewer can parse; shown as text. "
                      "Too large to colour; shown as plain text.")
    v = view(b"[" * 500 + b"]" * 500, "application/json", "deep.json")
    assert v.kind == "json" and "nested too deeply to show" in str(v.html)


# --- diff --------------------------------------------------------------------------------

def test_diff_lines_are_classified_and_escaped() -> None:
    diff = ("diff --git a/x b/x\n--- a/x\n+++ b/x\n@@ -1,3 +1,3 @@\n ctx\n--- not a header\n"
            f"+{HOSTILE}\n-gone\n\\ No newline at end of file\n")
    v = view(diff.encode(), "text/x-diff", "p.diff")
    assert v.kind == "diff"
    s = scan(str(v.html))
    assert s.tags[0] == ("pre", {"class": "diff"})
    assert [a["class"] for a in s.named("span")] == [
        "diff-meta", "diff-meta", "diff-meta", "diff-hunk", "diff-ctx", "diff-del", "diff-add",
        "diff-del", "diff-meta"]
    assert "+&lt;script&gt;alert(1)&lt;/script&gt;" in str(v.html)


def test_diff_line_classes_without_hunk_header() -> None:
    assert diff_line_classes(["+a", "-b", "@@ junk", "--- x", " c"]) == [
        "diff-add", "diff-del", "diff-hunk", "diff-meta", "diff-ctx"]


# --- HTML --------------------------------------------------------------------------------

class _SrcdocScan(Scan):
    pass


def test_html_only_in_strict_sandbox_with_csp_first() -> None:
    payload = f"<html><body onload=alert(2)>{HOSTILE}<img src=https://evil.example/x></body>"
    v = view(payload.encode(), "text/html", f"{HOSTILE}.html")
    assert v.kind == "html"
    s = scan(str(v.html))
    assert [t for t, _ in s.tags] == ["iframe", "p", "a"]
    frame = s.named("iframe")[0]
    assert set(frame) == {"class", "sandbox", "referrerpolicy", "title", "srcdoc"}
    assert frame["sandbox"] == ""
    assert "allow" not in str(v.html).split("srcdoc=")[0]
    inner = _SrcdocScan()
    inner.feed(frame["srcdoc"])
    assert inner.tags[0] == ("meta", {"http-equiv": "Content-Security-Policy",
                                      "content": HTML_SANDBOX_CSP})
    assert HTML_SANDBOX_CSP == "default-src 'none'; style-src 'unsafe-inline'; img-src data:"
    assert frame["srcdoc"].endswith(payload)
    # the raw payload never appears unescaped in the page
    assert "<script>" not in str(v.html) and "<body" not in str(v.html)
    assert v.note.startswith("HTML is shown in a sandbox")


def test_html_truncated() -> None:
    v = view(b"<p>" + b"a" * 5000, "application/xhtml+xml", "x.xhtml", max_bytes=1024)
    assert v.truncated and v.note.endswith("Showing the first 1 KiB of 4.9 KiB.")
    srcdoc = scan(str(v.html)).named("iframe")[0]["srcdoc"]
    assert srcdoc.count("a") == 1024 - 3 + srcdoc.split(">", 1)[0].count("a")


def test_html_is_never_chosen_by_extension_or_content() -> None:
    for mt in ("application/octet-stream", "text/plain", ""):
        v = view(b"<!doctype html><script>alert(1)</script>", mt, "page.html")
        assert v.kind != "html"
        assert scan(str(v.html)).named("iframe") == []


# --- images and SVG ----------------------------------------------------------------------

@pytest.mark.parametrize(("mt", "magic"), [
    ("image/png", b"\x89PNG\r\n\x1a\n"),
    ("image/jpeg", b"\xff\xd8\xff\xe0"),
    ("image/gif", b"GIF89a"),
    ("image/webp", b"RIFF\x00\x00\x00\x00WEBPVP8 "),
])
def test_images_with_matching_magic(mt: str, magic: bytes) -> None:
    v = view(magic + bytes(32), mt, f'{HOSTILE}" onerror="x')
    assert v.kind == "image"
    imgs = scan(str(v.html)).named("img")
    assert imgs == [{"class": "viewer-image", "src": HREF,
                     "alt": f'Image payload: {HOSTILE}" onerror="x'}]


def test_image_magic_mismatch_is_download_only() -> None:
    v = view(b"<svg onload=alert(1)>", "image/png", "x.png")
    assert v.kind == "download"
    assert scan(str(v.html)).named("img") == []
    assert v.note == ("The file is declared image/png but does not start like a PNG image, "
                      "so it is offered only as a download.")
    assert view(b"RIFF\x00\x00\x00\x00AVI ", "image/webp", "x.webp").kind == "download"


def test_image_without_file_href_is_unavailable() -> None:
    assert view(b"GIF87a", "image/gif", "x.gif", file_href=None).kind == "unavailable"


def test_svg_only_through_img() -> None:
    svg = b'<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script><style>*{}</style>'
    v = view(svg, "image/svg+xml", "chart.svg")
    assert v.kind == "svg"
    assert v.note == "Shown as an image: scripts, links and animations inside the SVG are disabled."
    s = scan(str(v.html))
    assert [t for t, _ in s.tags] == ["img"]
    assert s.named("img")[0]["src"] == HREF
    assert "svg" not in [t for t, _ in s.tags] and "alert" not in str(v.html)
    assert view(svg, "image/svg+xml", "c.svg", file_href=None).kind == "unavailable"


# --- choosing a viewer -------------------------------------------------------------------

@pytest.mark.parametrize(("mt", "name", "category"), [
    ("text/markdown; charset=utf-8", None, "markdown"),
    ("TEXT/CSV", None, "csv"),
    ("application/ld+json", None, "json"),
    ("text/x-patch", None, "diff"),
    ("application/x-patch", None, "diff"),
    ("text/x-python", "x.bin", "code"),
    ("application/octet-stream", "data.csv", "csv"),
    ("application/octet-stream", "train.py", "code"),
    ("application/octet-stream", "page.html", "code"),
    ("application/octet-stream", "x.svg", "code"),
    ("application/octet-stream", "blob", "download"),
    ("application/octet-stream", None, "download"),
    ("image/png", "notes.md", "image"),
    ("image/x-icon", "notes.md", "download"),
    ("application/zip", "a.zip", "download"),
    ("application/x-ndjson", "t.jsonl", "rows"),
    ("application/json-seq", None, "rows"),
    ("application/octet-stream", "log.ndjson", "rows"),
    ("text/plain", "log.jsonl", "code"),
    ("image/png", "x.jsonl", "image"),
    ("image/svg+xml", "x.png", "svg"),
])
def test_viewer_category(mt: str, name: str | None, category: str) -> None:
    assert viewer_category(mt, name) == category


def test_count_nodes() -> None:
    assert [count_nodes(v) for v in (1, [], {}, [1, [2, [3]]], {"a": [1, 2, {"b": None}]})] == [
        1, 1, 1, 6, 6]


def test_human_size() -> None:
    assert [human_size(n) for n in (0, 1, 1023, 1024, 262_144, 1_258_291, 5 * 1024**3)] == [
        "0 bytes", "1 byte", "1,023 bytes", "1 KiB", "256 KiB", "1.2 MiB", "5 GiB"]


_MEDIA = ["text/plain", "text/x-python", "text/markdown", "text/csv", "application/json",
          "text/x-diff", "text/html", "image/svg+xml", "image/png", "application/octet-stream",
          "text/plain; charset=utf-16", "text/csv; charset=base64", "text/html; charset=utf-7",
          "application/json; charset=utf-32", "text/markdown; charset=undefined",
          "text/x-diff; charset=idna", "text/tab-separated-values; charset=cp1252"]
_PIECES = [HOSTILE, "<img src=x onerror=alert(1)>", "[a](javascript:x)", '"', "'", ";", ",",
           "\n", "{", "}", "[", "]", "@@ -1 +1 @@\n", "+", "-", "\x00", "é", "\ufffd",
           "![i](https://e/x.png)", "<svg onload=x>", "&amp;", "</iframe>", "\r\n"]


@settings(max_examples=150, deadline=None)
@given(st.sampled_from(_MEDIA), st.lists(st.sampled_from(_PIECES), max_size=40),
       st.one_of(st.none(), st.sampled_from(_PIECES)))
def test_any_hostile_mix_renders_inert(mt: str, pieces: list[str], name: str | None) -> None:
    view("".join(pieces).encode(), mt, name, max_bytes=200, max_rows=5)


@settings(max_examples=150, deadline=None)
@given(st.sampled_from(_MEDIA), st.binary(max_size=400), st.integers(0, 500))
def test_any_bytes_render_without_error(mt: str, data: bytes, total_extra: int) -> None:
    v = view(data, mt, "x", max_bytes=100, max_rows=3, total_size=len(data) + total_extra)
    assert v.kind in {"text", "code", "markdown", "table", "json", "diff", "image", "svg",
                      "html", "download", "unavailable"}
    assert v.truncated == (v.kind in ("text", "code", "markdown", "table", "json", "diff",
                                      "html") and bool(v.note) and "Showing" in v.note)


# --- Pygments stylesheet -----------------------------------------------------------------

def test_pygments_css_light_and_dark_scoped() -> None:
    css = pygments_css()
    assert css == pygments_css()
    assert LIGHT_STYLE in css and DARK_STYLE in css
    lines = css.splitlines()
    assert ".highlight .k { color: #A90D91 } /* Keyword */" in lines
    assert ':root[data-theme="dark"] .highlight .k { color: #FF7B72 } /* Keyword */' in lines
    media = css.index("@media (prefers-color-scheme: dark) {")
    assert '  :root:not([data-theme="light"]) .highlight .k { color: #FF7B72 } /* Keyword */' \
        in css[media:].splitlines()
    assert css.rstrip().endswith("}") and css.count("{") == css.count("}")
    # no unscoped rule (Pygments' own defaults include a global `pre { ... }`)
    for line in lines:
        if "{" in line and not line.startswith(("/*", "@media")):
            selector = line.strip().split("{")[0]
            assert ".highlight" in selector, line
    # every token class coloured in light mode is covered in both dark scopes
    light = set(re.findall(r"^\.highlight (\.\w+) \{", css, re.M))
    explicit = set(re.findall(r'^:root\[data-theme="dark"\] \.highlight (\.\w+) \{', css, re.M))
    auto = set(re.findall(r'^  :root:not\(\[data-theme="light"\]\) \.highlight (\.\w+) \{',
                          css, re.M))
    assert light and light <= explicit and explicit == auto


# --- in a real browser -------------------------------------------------------------------

SITE_CSP = ("default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; "
            "img-src 'self' data:; frame-src 'self'; base-uri 'none'; form-action 'none'")
_HOSTILE_PAGE = b"""<html><head>
<meta http-equiv="refresh" content="0;url=http://127.0.0.1:9/refresh">
<style>@import url(http://127.0.0.1:9/css);</style></head>
<body onload="document.body.textContent='PWNED-onload'"><p id=v>visible body</p>
<script>document.getElementById('v').textContent='PWNED'; fetch('http://127.0.0.1:9/f')</script>
<img src="http://127.0.0.1:9/img"><form action="http://127.0.0.1:9/form"><input name=q></form>
</body></html>"""
_HOSTILE_SVG = (b'<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10" '
                b'onload="fetch(\'http://127.0.0.1:9/svg-onload\')"><script>'
                b"fetch('http://127.0.0.1:9/svg-script')</script>"
                b'<image href="http://127.0.0.1:9/svg-img"/><rect width="10" height="10"/></svg>')


@pytest.mark.browser
def test_hostile_html_and_svg_stay_inert_in_chromium(tmp_path: Path) -> None:
    """The iframe renders, its scripts do not run, and nothing leaves the machine.

    "Leaves the machine" is checked at the other end: the hostile payloads point
    at a listener on loopback, which must see no connection.  (Chromium reports
    some CSP-blocked subresources of the sandboxed frame as request events, so
    the browser's request log alone is not evidence of traffic.)
    """
    import socket
    import threading

    from browser_util import chromium_context, poll, watch

    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)
    listener.settimeout(0.2)
    port = listener.getsockname()[1]
    hits: list[str] = []
    stop = threading.Event()

    def accept() -> None:
        while not stop.is_set():
            try:
                conn, _ = listener.accept()
            except OSError:
                continue
            hits.append(conn.recv(200).decode("latin-1"))
            conn.close()

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    hostile_page = _HOSTILE_PAGE.replace(b"127.0.0.1:9", f"127.0.0.1:{port}".encode())
    hostile_svg = _HOSTILE_SVG.replace(b"127.0.0.1:9", f"127.0.0.1:{port}".encode())
    (tmp_path / "evil.svg").write_bytes(hostile_svg)
    html_view = render_payload(hostile_page, "text/html", "x.html", file_href="x.html")
    svg_view = render_payload(hostile_svg, "image/svg+xml", "evil.svg", file_href="evil.svg")
    page_file = tmp_path / "page.html"
    page_file.write_text(
        f'<!doctype html><html lang="en"><head><meta charset="utf-8"><meta '
        f'http-equiv="Content-Security-Policy" content="{SITE_CSP}"><title>v</title></head>'
        f"<body>{html_view.html}{svg_view.html}</body></html>", encoding="utf-8")
    with chromium_context() as ctx:
        page = ctx.new_page()
        log = watch(page)
        page.goto(page_file.as_uri())
        frame = poll(lambda: next((f for f in page.frames if f != page.main_frame), None),
                     what="the sandboxed iframe")

        def frame_text() -> str:
            try:  # the frame starts as about:blank and is replaced by about:srcdoc
                return str(frame.inner_text("body", timeout=1000)).strip()
            except Exception:
                return ""

        assert poll(frame_text, timeout=15, what="iframe text") == "visible body"
        assert poll(lambda: page.evaluate(
            "document.querySelector('img.viewer-svg').complete"), what="svg load")
        assert page.evaluate("document.querySelector('img.viewer-svg').naturalWidth") == 10
        page.wait_for_timeout(500)
        stop.set()
        thread.join()
        listener.close()
        assert hits == [], hits
        assert all(not u.startswith(("http:", "https:")) or f":{port}/" in u
                   for u in log.network_requests), log.network_requests
        assert log.page_errors == []
        # every complaint comes from inside the sandbox, none from the page itself
        assert log.console_errors
        assert all(m.endswith("@ about:srcdoc") for m in log.console_errors), log.console_errors


def test_a_viewer_of_a_whole_file_is_held_to_its_hash(tmp_path: Path) -> None:
    """A payload the viewer reads whole is shown only as the bytes verified: rewritten
    since (same size, which a coarse file-system clock can miss), it stops the build."""
    src = tmp_path / "notes.txt"
    src.write_bytes(b"rewritten after verification\n")
    verified = hashlib.sha256(b"as verified, same length ok!\n").hexdigest()
    job = ViewerJob(f"sha256:{verified}", 29, "text/plain", "notes.txt", "../f", 1000, 1000,
                    str(src), False, verified)
    with pytest.raises(InputError, match="no longer have the SHA-256 verified"):
        job.run()
    src.write_bytes(b"as verified, same length ok!\n")
    assert "as verified" in job.run().html
