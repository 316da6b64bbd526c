"""search/docs.js: hostile titles must never escape the JS string, and must round-trip."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bundler.render.search import TEXT_CAP, TITLE_CAP, SearchDoc, search_docs_js
from bundler.shown import on_page

NODE = shutil.which("node")

# Evaluates docs.js in a bare vm context (no DOM, no require) and prints the
# docs back as JSON; JSON.stringify escapes lone surrogates, so Python can read
# them back exactly.
_NODE_SCRIPT = r"""
const vm = require("vm");
const fs = require("fs");
const code = fs.readFileSync(process.argv[2], "utf8");
const sandbox = { window: {}, JSON: JSON };
vm.runInNewContext(code, sandbox, { timeout: 5000 });
const keys = Object.keys(sandbox).sort();
process.stdout.write(JSON.stringify({ keys: keys, docs: sandbox.window.RB_SEARCH_DOCS }));
"""

HOSTILE = [
    'a "quoted" title',
    "single ' quote and back\\slash \\\\ and \\u0041 literal",
    "</script><script>alert(1)</script>",
    "<!-- comment --> & &amp; <b>bold</b>",
    "line\u2028separator\u2029paragraph",
    "lone \ud800 high and \udfff low surrogates",
    "emoji 😀 and astral 𝔘 and NUL \x00 and DEL \x7f",
    "${template} `backtick` */ /* //",
    '"); alert(1); ("',
]


def _eval_in_node(js: str, tmp_path: Path) -> dict[str, Any]:
    if NODE is None:
        pytest.fail("node is required for this test (apt-get install nodejs)", pytrace=False)
    script = tmp_path / "eval.js"
    script.write_text(_NODE_SCRIPT, encoding="utf-8")
    docs_file = tmp_path / "docs.js"
    docs_file.write_text(js, encoding="ascii")
    out = subprocess.run(
        [NODE, str(script), str(docs_file)],
        capture_output=True,
        text=True,
        check=False,
        timeout=30,
    )
    assert out.returncode == 0, f"node could not evaluate docs.js:\n{out.stderr}"
    result: dict[str, Any] = json.loads(out.stdout)
    return result


def _doc(i: int, title: str, text: str = "body") -> SearchDoc:
    return SearchDoc(id=f"ev-{i}", title=title, kind="event", text=text, url=f"events/{i}.html")


def test_exact_output_for_a_simple_doc() -> None:
    js = search_docs_js([SearchDoc("c1", "Claim <1>", "claim", "x & y", "claims/c1.html")])
    assert js == (
        'window.RB_SEARCH_DOCS = JSON.parse("[{\\"id\\":\\"c1\\",'
        '\\"t\\":\\"Claim \\u003c1\\u003e\\",\\"k\\":\\"claim\\",'
        '\\"x\\":\\"x \\u0026 y\\",\\"u\\":\\"claims/c1.html\\"}]");\n'
    )


def test_empty_list() -> None:
    assert search_docs_js([]) == 'window.RB_SEARCH_DOCS = JSON.parse("[]");\n'


def test_hostile_strings_stay_inside_the_literal(tmp_path: Path) -> None:
    docs = [_doc(i, t, text=t) for i, t in enumerate(HOSTILE)]
    js = search_docs_js(docs)
    assert js.isascii()
    for forbidden in ("<", ">", "&", "\u2028", "\u2029"):
        assert forbidden not in js
    # Exactly one string literal: the only unescaped quotes are its delimiters.
    body = js.removeprefix("window.RB_SEARCH_DOCS = JSON.parse(").removesuffix(");\n")
    assert body.startswith('"') and body.endswith('"')
    assert re.search(r'(?<!\\)(?:\\\\)*"', body[1:-1]) is None

    result = _eval_in_node(js, tmp_path)
    assert result["keys"] == ["JSON", "window"]  # nothing leaked into the global scope
    assert result["docs"] == [
        {
            "id": d.id,
            "t": on_page(d.title),      # shown in the results: controls marked
            "k": "event",
            "x": " ".join(d.text.split()),
            "u": d.url,
        }
        for d in docs
    ]
    assert result["docs"][6]["t"] == "emoji 😀 and astral 𝔘 and NUL [U+0000] and DEL [U+007F]"


def test_round_trip_keeps_order_and_fields(tmp_path: Path) -> None:
    docs = [
        SearchDoc("z", "Zeta", "claim", "last letter", "claims/z.html"),
        SearchDoc("a", "Alpha", "artifact", "first letter", "artifacts/a.html#x"),
        SearchDoc("m", "Mu", "page", "", "index.html"),
    ]
    result = _eval_in_node(search_docs_js(docs), tmp_path)
    assert result["docs"] == [
        {"id": "z", "t": "Zeta", "k": "claim", "x": "last letter", "u": "claims/z.html"},
        {"id": "a", "t": "Alpha", "k": "artifact", "x": "first letter", "u": "artifacts/a.html#x"},
        {"id": "m", "t": "Mu", "k": "page", "x": "", "u": "index.html"},
    ]


def test_caps_bound_the_file_and_collapse_whitespace(tmp_path: Path) -> None:
    long_title = "T" * (TITLE_CAP + 50)
    long_text = "word  \n\t " * 200
    result = _eval_in_node(search_docs_js([_doc(1, long_title, long_text)]), tmp_path)
    doc = result["docs"][0]
    assert doc["t"] == "T" * (TITLE_CAP - 1) + "…"
    assert len(doc["x"]) == TEXT_CAP
    assert doc["x"] == ("word " * 200)[: TEXT_CAP - 1] + "…"
    exact = _eval_in_node(search_docs_js([_doc(2, "x" * TITLE_CAP, "y" * TEXT_CAP)]), tmp_path)
    assert exact["docs"][0]["t"] == "x" * TITLE_CAP
    assert exact["docs"][0]["x"] == "y" * TEXT_CAP


@pytest.mark.parametrize(("title", "shown"), [
    ("a" * 195 + "\x1b\x1b", "a" * 195 + "…"),       # the cap falls in the first marker
    ("a" * 191 + "\x1b\x1b", "a" * 191 + "[U+001B]…"),
    ("a" * 199 + "\x1b", "a" * 199 + "…"),
])
def test_the_title_cap_never_cuts_a_marker_in_half(title: str, shown: str) -> None:
    js = search_docs_js([_doc(1, title)])
    literal = js.removeprefix("window.RB_SEARCH_DOCS = JSON.parse(").removesuffix(");\n")
    assert json.loads(json.loads(literal))[0]["t"] == shown


def test_output_is_deterministic() -> None:
    docs = [_doc(i, t) for i, t in enumerate(HOSTILE)]
    assert search_docs_js(docs) == search_docs_js(list(docs))


@pytest.mark.parametrize(
    "url",
    [
        "javascript:alert(1)",
        "JavaScript:x",
        "https://example.org/",
        "//evil.example/",
        "/abs.html",
        "\\\\share\\x",
        "data:text/html,x",
        "file:///etc/passwd",
    ],
)
def test_non_relative_urls_are_refused(url: str) -> None:
    with pytest.raises(ValueError, match="relative to the site root"):
        SearchDoc("x", "t", "page", "", url)


@pytest.mark.parametrize("url", ["index.html", "claims/c1.html#ev", "../x.html", "q?x=1:2"])
def test_relative_urls_are_accepted(url: str) -> None:
    assert SearchDoc("x", "t", "page", "", url).url == url


@settings(max_examples=60, deadline=None)
@given(st.lists(st.text(max_size=24), min_size=1, max_size=8))
def test_any_text_round_trips(tmp_path_factory: pytest.TempPathFactory, titles: list[str]) -> None:
    tmp_path = tmp_path_factory.mktemp("rt")
    docs = [_doc(i, t, text=t) for i, t in enumerate(titles)]
    js = search_docs_js(docs)
    assert js.isascii() and "<" not in js
    result = _eval_in_node(js, tmp_path)
    # a title is shown: its controls marked ([U+0007] is 8 characters: 24 fit the cap)
    assert [d["t"] for d in result["docs"]] == [on_page(t) for t in titles]
    assert [d["x"] for d in result["docs"]] == [" ".join(t.split()) for t in titles]
