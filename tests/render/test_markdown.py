"""Untrusted Markdown: hostile input must come out inert.

The HTML is checked with a real parser (``html.parser``), not substring
matches, so ``&lt;script&gt;`` text is fine but a ``<script>`` element, an
``on*`` attribute or a dangerous URL is a failure wherever it appears.
"""

from __future__ import annotations

import re
from html.parser import HTMLParser

import pytest
from markupsafe import Markup, escape

from bundler.render.markdown import EXTERNAL_REL, classify_href, render_markdown
from bundler.render.text import plain_text
from bundler.shown import on_page

HOSTILE = "<script>alert(1)</script>"
_DANGEROUS_URL = re.compile(r"^\s*(?:javascript|vbscript|file|data:text/html)", re.I)
#: Elements no renderer output may contain, outside an iframe's srcdoc value.
FORBIDDEN = {"script", "style", "link", "meta", "base", "object", "embed", "form", "svg",
             "math", "frame", "frameset", "applet", "input", "button", "textarea", "template"}


class Scan(HTMLParser):
    """Every start tag with its attributes, in document order."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict[str, str]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, {k: v or "" for k, v in attrs}))

    handle_startendtag = handle_starttag

    def named(self, tag: str) -> list[dict[str, str]]:
        return [a for t, a in self.tags if t == tag]


def scan(html: str) -> Scan:
    s = Scan()
    s.feed(html)
    s.close()
    return s


def assert_inert(html: str) -> Scan:
    """No script-capable element, handler attribute or dangerous URL anywhere.

    ``srcdoc`` values are not inspected here (they are parsed separately by
    the HTML-viewer tests, which check the sandbox and the CSP meta).
    """
    s = scan(html)
    for tag, attrs in s.tags:
        assert tag not in FORBIDDEN, (tag, html)
        for name, value in attrs.items():
            assert not name.startswith("on"), (tag, name, html)
            assert name != "style" or tag in ("th", "td"), (tag, name, html)
            if name in ("href", "src", "action", "formaction", "xlink:href", "poster"):
                assert not _DANGEROUS_URL.match(value), (tag, name, value)
        if tag == "iframe":
            assert attrs.get("sandbox") == "", attrs
    return s


def test_returns_markup_and_is_deterministic() -> None:
    text = "# T\n\nSome *text* with [a link](https://example.org/x).\n"
    out = render_markdown(text)
    assert isinstance(out, Markup)
    assert out == render_markdown(text)


def test_raw_html_is_escaped_not_passed_through() -> None:
    text = f"{HOSTILE}\n\n<div onclick=\"x()\">hi</div>\n\ninline <img src=x onerror=alert(1)> end"
    out = str(render_markdown(text))
    s = assert_inert(out)
    assert [t for t, _ in s.tags] == ["p", "p", "p"]
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in out
    assert "&lt;img src=x onerror=alert(1)&gt;" in out


@pytest.mark.parametrize("link", [
    "[x](javascript:alert(1))",
    "[x](JaVaScRiPt:alert(1))",
    "[x](vbscript:msgbox(1))",
    "[x](file:///etc/passwd)",
    "[x](data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==)",
    "<javascript:alert(1)>",
    "[x]: javascript:alert(1)\n\n[y][x]",
    "[x](../../secret.html)",
    "[x](%2e%2e/secret.html)",
    "[x](//evil.example/x)",
    "[x](ftp://evil.example/x)",
    "[x](irc://evil.example/x)",
    "[x](a\\b.html)",
])
def test_unsafe_links_become_text(link: str) -> None:
    out = str(render_markdown(link))
    s = assert_inert(out)
    assert s.named("a") == []


@pytest.mark.parametrize(("link", "href"), [
    ("[x](https://example.org/a?b=1&c=2)", "https://example.org/a?b=1&c=2"),
    ("[x](http://example.org)", "http://example.org"),
    ("[x](mailto:someone@example.org)", "mailto:someone@example.org"),
    ("<https://example.org/auto>", "https://example.org/auto"),
])
def test_external_links_get_rel(link: str, href: str) -> None:
    anchors = assert_inert(str(render_markdown(link))).named("a")
    assert anchors == [{"href": href, "rel": "noopener noreferrer nofollow"}]
    assert EXTERNAL_REL == "noopener noreferrer nofollow"


@pytest.mark.parametrize("href", ["claims/c-1.html", "#section-2", "report.md", "a/b/c.txt?x=1"])
def test_relative_links_become_text_with_their_target(href: str) -> None:
    """Relative paths point into the agent's workspace, not the site: no dead links."""
    html = str(render_markdown(f"[x]({href})"))
    assert assert_inert(html).named("a") == []
    assert f"x ({escape(href)})" in html


def test_classify_href() -> None:
    assert classify_href("https://a.example/") == "external"
    assert classify_href("MAILTO:a@b.example") == "external"
    assert classify_href("x/y.html#z") == "relative"
    assert classify_href("../x") == "unsafe"
    assert classify_href("x/%2E%2E/y") == "unsafe"
    assert classify_href("//host/x") == "unsafe"
    assert classify_href("https:/host") == "unsafe"
    assert classify_href("") == "unsafe"


def test_remote_image_becomes_alt_text_and_link() -> None:
    out = str(render_markdown("![a *chart*](https://evil.example/x.png)"))
    s = assert_inert(out)
    assert s.named("img") == []
    assert s.named("a") == [{"href": "https://evil.example/x.png", "class": "md-image-link",
                             "rel": "noopener noreferrer nofollow"}]
    assert "[image: a chart]" in out


def test_unsafe_and_linked_images_become_text_only() -> None:
    for md in ("![i](javascript:alert(1))", "![i](../x.png)",
               "![i](data:image/svg+xml;base64,PHN2Zz4=)"):
        s = assert_inert(str(render_markdown(md)))
        assert s.named("img") == [] and s.named("a") == [], md
    # an image inside a link must not produce a nested <a>
    out = str(render_markdown("[![logo](https://evil.example/l.png)](https://example.org)"))
    s = assert_inert(out)
    assert s.named("img") == []
    assert [a["href"] for a in s.named("a")] == ["https://example.org"]
    assert "[image: logo]" in out


def test_inline_raster_data_image_is_kept() -> None:
    src = "data:image/png;base64,iVBORw0KGgo="
    s = assert_inert(str(render_markdown(f"![dot]({src})")))
    assert s.named("img") == [{"src": src, "alt": "dot"}]


def test_headings_are_demoted_below_h2() -> None:
    out = str(render_markdown("# one\n\n## two\n\n### three\n\n#### four\n\n###### six\n\nT\n=\n"))
    tags = [t for t, _ in scan(out).tags]
    assert tags == ["h3", "h4", "h5", "h6", "h6", "h3"]
    assert "<h1" not in out and "<h2" not in out


def test_pipe_tables_render() -> None:
    out = str(render_markdown(f"| a | b |\n|---|--:|\n| 1 | {HOSTILE} |\n"))
    s = assert_inert(out)
    assert [t for t, _ in s.tags] == ["table", "thead", "tr", "th", "th", "tbody", "tr", "td", "td"]
    assert s.named("td")[1] == {"style": "text-align:right"}
    assert "&lt;script&gt;" in out


def test_code_fence_info_string_is_escaped() -> None:
    out = str(render_markdown('```"><script>alert(1)</script>\ncode\n```\n'))
    s = assert_inert(out)
    assert [t for t, _ in s.tags] == ["pre", "code"]


@pytest.mark.parametrize(("text", "html"), [
    ("a\x00b", "<p>a[U+0000]b</p>\n"),
    ("`x\x00y`", "<p><code>x[U+0000]y</code></p>\n"),
    ("```py\x00\nz\x00\n```\n",
     '<pre><code class="language-py[U+0000]">z[U+0000]\n</code></pre>\n'),
    ("# h\x00", "<h3>h[U+0000]</h3>\n"),
    # a link target may hold no control character, so this is text, not a link
    ("[l](https://a\x00b)", "<p>[l](https://a[U+0000]b)</p>\n"),
    ("&#0;", "<p>\ufffd</p>\n"),            # the entity stands for U+FFFD: kept
    ("a\r\nb\rc\n", "<p>a\nb\nc</p>\n"),    # line ends are still normalized
])
def test_nul_reaches_the_page_as_a_control_character(text: str, html: str) -> None:
    """CommonMark turns NUL into U+FFFD; the renderer keeps it, so that the page marks
    it like every other control character instead of showing a character the record
    does not hold."""
    out = render_markdown(text)
    assert on_page(out) == html
    assert_inert(str(out))


def test_a_listing_excerpt_keeps_nul_as_the_claim_page_does() -> None:
    assert plain_text("*a*\x00b `c\x00`") == "a\x00b c\x00"
    assert plain_text("&#0;") == "\ufffd"
