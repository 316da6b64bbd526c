"""The default theme: page chrome, assets, vendored MiniSearch, and the page in a real browser."""

from __future__ import annotations

import hashlib
import re
import shutil
from html.parser import HTMLParser
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import jinja2
import pytest
from browser_util import axe_serious, chromium_context, poll, watch
from markupsafe import Markup

from bundler.render.search import SearchDoc, search_docs_js

REPO = Path(__file__).resolve().parents[2]
THEME = REPO / "themes" / "default"
ASSETS = THEME / "assets"
CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; "
    "img-src 'self' data:; frame-src 'self'; base-uri 'none'; form-action 'none'"
)
GENERATED_ASSETS = {"assets/pygments.css"}  # written at build time by the viewers stage
NAV = [
    ("overview", "Overview", "index.html"),
    ("claims", "Claims", "claims/index.html"),
    ("artifacts", "Artifacts", "artifacts/index.html"),
    ("workflow", "Workflow", "workflow.html"),
    ("lineage", "Lineage", "lineage.html"),
    ("steering", "Steering", "steering.html"),
    ("events", "Events", "events/index.html"),
    ("integrity", "Integrity", "integrity.html"),
    ("audit", "Audit", "audit.html"),
    ("downloads", "Downloads", "downloads.html"),
]
GRAPH_VARS = (
    "--fg", "--node-bg", "--node-border", "--edge", "--edge-inferred",
    "--node-claim", "--node-individual", "--node-operator", "--node-fitness",
    "--node-trace-record", "--node-evidence-node", "--node-workflow-node", "--node-steering",
    "--node-archive", "--node-run", "--node-stream", "--node-missing", "--node-external",
)  # fmt: skip
TONES = ("ok", "warn", "err", "info", "review", "neutral")

# A child page as the lead's body templates write them: extends the layout,
# fills content with the classes the contract names.
CHILD = """{% extends "layout.html" %}
{% block content %}{{ body }}{% endblock %}
"""


# ---------------------------------------------------------------- rendering


def _site(trust: str = "pinned", title: str = "Demo bundle", **kw: Any) -> SimpleNamespace:
    labels = {"pinned": "Verified · pinned key", "bundle-only": "Valid · bundle key only",
              "invalid": "Verification failed"}  # fmt: skip
    base: dict[str, Any] = {
        "title": title, "description_html": Markup("<p>Demo.</p>"), "trust": trust,
        "trust_label": labels[trust], "errors": 0, "warnings": 0,
        "generator": "review-bundler 0.1.0", "nav": NAV,
    }  # fmt: skip
    base.update(kw)
    return SimpleNamespace(**base)


def render(
    tmp_path: Path, *, root: str = "", key: str = "overview", body: str = "<h1>Hello</h1>",
    site: SimpleNamespace | None = None, crumbs: list[tuple[str, str | None]] | None = None,
) -> str:  # fmt: skip
    """Render ``layout.html`` through a child template, the way the builder does."""
    child_dir = tmp_path / "child-templates"
    child_dir.mkdir(exist_ok=True)
    (child_dir / "child.html").write_text(CHILD, encoding="utf-8")
    env = jinja2.Environment(
        loader=jinja2.ChoiceLoader(
            [jinja2.FileSystemLoader(str(THEME)), jinja2.FileSystemLoader(str(child_dir))]
        ),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
    )
    page = SimpleNamespace(title=f"Page {key}", key=key, breadcrumbs=crumbs or [])
    return env.get_template("child.html").render(
        root=root, site=site or _site(), page=page, csp=CSP, canonical=None, body=Markup(body)
    )


class _Tags(HTMLParser):
    """Every start tag with its (unescaped) attributes, plus inline script text."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.script_text: list[str] = []
        self._in_script = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))
        self._in_script = tag == "script"

    def handle_endtag(self, tag: str) -> None:
        self._in_script = False

    def handle_data(self, data: str) -> None:
        if self._in_script and data.strip():
            self.script_text.append(data)


def parse(html: str) -> _Tags:
    parser = _Tags()
    parser.feed(html)
    return parser


# ---------------------------------------------------------------- layout


def test_csp_meta_is_exact_and_precedes_every_script_and_stylesheet(tmp_path: Path) -> None:
    tags = parse(render(tmp_path)).tags
    metas = [a for t, a in tags if t == "meta" and a.get("http-equiv") == "Content-Security-Policy"]
    assert [m["content"] for m in metas] == [CSP]
    first_csp = next(i for i, (t, a) in enumerate(tags) if a.get("http-equiv"))
    first_resource = next(i for i, (t, _) in enumerate(tags) if t in ("script", "link"))
    assert first_csp < first_resource
    assert ("meta", {"name": "referrer", "content": "no-referrer"}) in tags


def test_head_loads_assets_in_contract_order(tmp_path: Path) -> None:
    tags = parse(render(tmp_path, root="../")).tags
    loaded = [(t, a.get("src") or a.get("href"), "defer" in a) for t, a in tags
              if t == "script" or (t == "link" and a.get("rel") == "stylesheet")]  # fmt: skip
    assert loaded == [
        ("script", "../assets/theme-init.js", False),
        ("link", "../assets/site.css", False),
        ("link", "../assets/pygments.css", False),
        ("script", "../assets/site.js", True),
    ]


def test_no_inline_script_handlers_styles_or_javascript_urls(tmp_path: Path) -> None:
    html = render(tmp_path, site=_site("invalid", errors=2, warnings=1),
                  crumbs=[("Claims", "claims/index.html"), ("C1", None)])  # fmt: skip
    parsed = parse(html)
    assert parsed.script_text == []
    for tag, attrs in parsed.tags:
        assert tag != "script" or attrs.get("src"), "inline <script>"
        assert tag != "style", "inline <style>"
        for name, value in attrs.items():
            assert not name.startswith("on"), f"event handler {name} on <{tag}>"
            assert name != "style", f"style attribute on <{tag}>"
            assert not (value or "").strip().lower().startswith("javascript:")


def test_every_reference_is_relative_and_exists(tmp_path: Path) -> None:
    for root in ("", "../", "../../"):
        html = render(tmp_path, root=root, site=_site("invalid"))
        for tag, attrs in parse(html).tags:
            for name in ("src", "href"):
                ref = attrs.get(name)
                if ref is None:
                    continue
                assert ref == "#main" or ref.startswith(root), (tag, ref)
                assert not re.match(r"^[a-z][a-z0-9+.-]*:|^/", ref, re.I), (tag, ref)
                target = ref.removeprefix(root)
                if target.startswith("assets/") and target not in GENERATED_ASSETS:
                    assert (THEME / target).is_file(), target


def test_header_nav_badge_search_and_landmarks(tmp_path: Path) -> None:
    html = render(tmp_path, root="../", key="claims", site=_site("bundle-only", warnings=3),
                  crumbs=[("Claims", "claims/index.html"), ("Claim c1", None)])  # fmt: skip
    tags = parse(html).tags
    names = [t for t, _ in tags]
    for landmark in ("header", "nav", "main", "footer"):
        assert landmark in names
    assert ("html", {"lang": "en", "data-root": "../"}) in tags
    current = [a["href"] for t, a in tags if t == "a" and a.get("aria-current") == "page"]
    assert current == ["../claims/index.html"]
    badge = next(a for t, a in tags if "badge" in (a.get("class") or "").split())
    assert badge["class"] == "badge trust-bundle-only"
    assert "Valid · bundle key only" in html and "3 warnings" in html
    search = next(a for t, a in tags if a.get("id") == "rb-search")
    assert search["type"] == "search" and search["autocomplete"] == "off"
    assert search["aria-label"] == "Search claims, artifacts and events"
    assert any(a.get("id") == "rb-search-results" and a.get("role") == "listbox" for _, a in tags)
    toggle = next(a for t, a in tags if a.get("id") == "rb-theme-toggle")
    assert (toggle["type"], toggle["aria-label"]) == ("button", "Toggle dark mode")
    skip = next(a for t, a in tags if "skip-link" in (a.get("class") or ""))
    assert skip["href"] == "#main"
    assert ("main", {"id": "main", "tabindex": "-1"}) in tags
    assert '<a href="../claims/index.html">Claims</a>' in html
    assert '<span aria-current="page">Claim c1</span>' in html
    assert "<title>Page claims · Demo bundle</title>" in html
    assert "review-bundler 0.1.0" in html.split("<footer", 1)[1]


@pytest.mark.parametrize("trust", ["pinned", "bundle-only", "invalid"])
def test_invalid_banner_only_when_invalid(tmp_path: Path, trust: str) -> None:
    html = render(tmp_path, root="../", site=_site(trust))
    banner = re.search(r'<div class="banner-invalid" role="alert">(.*?)</div>', html, re.S)
    if trust == "invalid":
        assert banner is not None
        assert '<a href="../integrity.html">' in banner.group(1)
        assert html.index("banner-invalid") < html.index("<header")
    else:
        assert banner is None


def test_bundle_text_is_escaped(tmp_path: Path) -> None:
    html = render(tmp_path, site=_site(title='<script>alert("t")</script>',
                                       trust_label="<b>x</b>"))  # fmt: skip
    assert "<script>alert" not in html and "<b>x</b>" not in html
    assert "&lt;script&gt;alert(&#34;t&#34;)&lt;/script&gt;" in html


# ---------------------------------------------------------------- asset files


def _strip_js_comments(js: str) -> str:
    js = re.sub(r"/\*.*?\*/", "", js, flags=re.S)
    return "\n".join(line for line in js.splitlines() if not line.lstrip().startswith("//"))


def test_no_remote_urls_in_theme_files() -> None:
    exempt = {THEME / "VENDORED.md", ASSETS / "vendor" / "minisearch.LICENSE.txt"}
    checked = 0
    for path in sorted(THEME.rglob("*")):
        if not path.is_file() or path in exempt:
            continue
        text = path.read_text(encoding="utf-8")
        if path.parent.name == "vendor":  # upstream comments cite URLs; code must not
            text = _strip_js_comments(text)
        assert not re.search(r"https?://", text, re.I), path
        checked += 1
    assert checked >= 5


def test_own_scripts_use_no_network_or_html_injection_apis() -> None:
    forbidden = (
        r"\bfetch\s*\(|XMLHttpRequest|\bimport\s*\(|WebSocket|EventSource|sendBeacon|"
        r"innerHTML|outerHTML|insertAdjacentHTML|document\.write|\beval\s*\(|new Function"
    )
    for name in ("site.js", "theme-init.js"):
        code = _strip_js_comments((ASSETS / name).read_text(encoding="utf-8"))
        assert not re.search(forbidden, code), name
    vendored = _strip_js_comments((ASSETS / "vendor" / "minisearch.min.js").read_text("utf-8"))
    assert not re.search(r"XMLHttpRequest|\bimport\s*\(|WebSocket|sendBeacon|\beval\s*\(",
                         vendored)  # fmt: skip


def test_css_loads_nothing() -> None:
    css = re.sub(r"/\*.*?\*/", "", (ASSETS / "site.css").read_text(encoding="utf-8"), flags=re.S)
    for needle in ("url(", "@import", "@font-face"):
        assert needle not in css


def _selectors(css: str) -> set[str]:
    """Every simple class selector (``.name``) used anywhere in ``css``."""
    css = re.sub(r"/\*.*?\*/", "", css, flags=re.S)
    return set(re.findall(r"\.([A-Za-z_][\w-]*)", re.sub(r"\{[^{}]*\}", "{}", css)))


def test_css_styles_every_class_the_contract_and_the_model_name() -> None:
    from bundler.diagnostics import Severity
    from bundler.graph.index import ClaimStatus
    from bundler.verify.result import PayloadState, Trust

    classes = _selectors((ASSETS / "site.css").read_text(encoding="utf-8"))
    wanted = {"badge", "diff", "diff-add", "diff-del", "diff-hunk", "diff-meta", "json", "csv",
              "callout", "callout-error", "callout-warning", "callout-info", "callout-ok",
              "proof", "rb-copy", "gap", "edge-inferred", "table-wrap", "rb-graph", "graph",
              "node", "edge", "inferred", "root", "skip-link", "banner-invalid"}  # fmt: skip
    wanted |= {f"status-{s.value}" for s in ClaimStatus}
    wanted |= {f"state-{s.value}" for s in PayloadState}
    wanted |= {f"trust-{t.value}" for t in Trust}
    wanted |= {f"sev-{s.name.lower()}" for s in Severity}
    kinds = [
        "claim", "individual", "operator", "fitness", "trace_record", "evidence_node",
        "workflow_node", "steering", "archive", "run", "stream", "missing", "external",
    ]  # fmt: skip
    wanted |= {f"kind-{k}" for k in kinds}
    assert sorted(wanted - classes) == []


def test_vendored_minisearch_matches_recorded_digest() -> None:
    record = (THEME / "VENDORED.md").read_text(encoding="utf-8")
    digest = re.search(r"^\| sha256 \| `([0-9a-f]{64})` \|$", record, re.M)
    committed = re.search(r"^\| committed as \| `([^`]+)` \|$", record, re.M)
    version = re.search(r"^\| version \| (\d+\.\d+\.\d+) \|$", record, re.M)
    assert digest and committed and version
    data = (THEME / committed.group(1)).read_bytes()
    assert hashlib.sha256(data).hexdigest() == digest.group(1)
    assert f"| size | {len(data)} bytes |" in record
    assert "global.MiniSearch = factory()" in data.decode("utf-8")  # the UMD build
    license_text = (ASSETS / "vendor" / "minisearch.LICENSE.txt").read_text(encoding="utf-8")
    assert license_text.startswith("Copyright 2022 Luca Ongaro")
    assert "Permission is hereby granted, free of charge" in license_text


# ---------------------------------------------------------------- colours


def css_rules(css: str) -> list[tuple[tuple[str, ...], dict[str, str]]]:
    """(nesting path of preludes, custom-property declarations) for every block of ``css``."""
    css = re.sub(r"/\*.*?\*/", "", css, flags=re.S)
    rules: list[tuple[tuple[str, ...], dict[str, str]]] = []
    stack: list[str] = []  # preludes of the open blocks
    buf = ""
    for ch in css:
        if ch == "{":
            stack.append(" ".join(buf.split()))
            buf = ""
        elif ch == "}":
            prelude = stack.pop()
            decls = dict(re.findall(r"(--[\w-]+)\s*:\s*([^;]+?)\s*(?:;|$)", buf))
            rules.append(((*stack, prelude), decls))
            buf = ""
        else:
            buf += ch
    return rules


def _palettes() -> dict[str, dict[str, str]]:
    rules = dict(css_rules((ASSETS / "site.css").read_text(encoding="utf-8")))
    return {
        "light": rules[(":root",)],
        "dark-system": rules[
            ("@media (prefers-color-scheme: dark)", ':root:not([data-theme="light"])')
        ],
        "dark-toggle": rules[(':root[data-theme="dark"]',)],
        "print": rules[
            ("@media print", ':root, :root[data-theme], :root:not([data-theme="light"])')
        ],
    }


def test_palettes_define_graph_variables_and_agree() -> None:
    pal = _palettes()
    for name, decls in pal.items():
        missing = [v for v in GRAPH_VARS if v not in decls]
        assert missing == [], (name, missing)
    assert pal["dark-system"] == pal["dark-toggle"]
    assert pal["print"] == pal["light"]
    assert set(pal["light"]) == set(pal["dark-toggle"])
    assert pal["light"]["--bg"] != pal["dark-toggle"]["--bg"]


def _luminance(hex_colour: str) -> float:
    r, g, b = (int(hex_colour[i : i + 2], 16) / 255 for i in (1, 3, 5))

    def lin(c: float) -> float:
        return c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4

    return 0.2126 * lin(r) + 0.7152 * lin(g) + 0.0722 * lin(b)


def contrast(a: str, b: str) -> float:
    la, lb = sorted((_luminance(a), _luminance(b)), reverse=True)
    return (la + 0.05) / (lb + 0.05)


def _text_pairs() -> list[tuple[str, str]]:
    surfaces = ("--bg", "--bg-subtle", "--bg-inset", "--bg-hover", "--header-bg")
    pairs = [(fg, bg) for fg in ("--fg", "--fg-muted", "--link") for bg in surfaces]
    for tone in TONES:
        pairs += [(f"--{tone}-fg", f"--{tone}-bg"), (f"--{tone}-fg", "--bg"),
                  (f"--{tone}-fg", "--bg-subtle"), ("--fg", f"--{tone}-bg"),
                  ("--link", f"--{tone}-bg")]  # fmt: skip
    fills = [v for v in GRAPH_VARS if v.startswith("--node-") and v != "--node-border"]
    pairs += [("--fg", v) for v in fills]
    pairs += [("--fg", "--diff-add-bg"), ("--fg", "--diff-del-bg"),
              ("--diff-hunk-fg", "--diff-hunk-bg")]  # fmt: skip
    pairs += [(f"--syn-{s}", "--bg-inset") for s in ("key", "string", "number", "literal")]
    return pairs


@pytest.mark.parametrize("theme", ["light", "dark-toggle"])
def test_text_contrast_is_at_least_4_5(theme: str) -> None:
    pal = _palettes()[theme]
    low = [(fg, bg, round(contrast(pal[fg], pal[bg]), 2)) for fg, bg in _text_pairs()
           if contrast(pal[fg], pal[bg]) < 4.5]  # fmt: skip
    assert low == []


@pytest.mark.parametrize("theme", ["light", "dark-toggle"])
def test_graph_strokes_and_focus_are_visible(theme: str) -> None:
    pal = _palettes()[theme]
    strokes = ["--node-border", "--edge", "--edge-inferred", "--focus"]
    strokes += [f"--{t}-border" for t in TONES]
    low = [(s, round(contrast(pal[s], pal["--bg"]), 2)) for s in strokes
           if contrast(pal[s], pal["--bg"]) < 3.0]  # fmt: skip
    assert low == []


# ---------------------------------------------------------------- demo site + browser

GRAPH_SVG = """<svg class="rb-graph" role="img" aria-labelledby="wf-title wf-desc" width="470" \
height="130" viewBox="0 0 470 130">
<title id="wf-title">Workflow graph</title>
<desc id="wf-desc">plan produces execute; execute is checked by validate; validate supports \
claim c1; an inferred edge from plan informs the claim.</desc>
<g class="graph">
<g class="node kind-workflow_node state-success" id="n-plan"><title>plan</title>\
<polygon points="10,40 100,40 100,80 10,80"/><text x="55" y="65" text-anchor="middle">plan\
</text></g>
<g class="node kind-operator state-success" id="n-exec"><title>execute</title>\
<polygon points="130,40 220,40 220,80 130,80"/><text x="175" y="65" text-anchor="middle">execute\
</text></g>
<g class="node kind-fitness state-pass" id="n-val"><title>validate</title>\
<ellipse cx="295" cy="60" rx="45" ry="20"/><text x="295" y="65" text-anchor="middle">validate\
</text></g>
<g class="node kind-claim state-supported root" id="n-c1"><title>claim c1</title>\
<polygon points="370,40 460,40 460,80 370,80"/><text x="415" y="65" text-anchor="middle">claim c1\
</text></g>
<g class="edge rel-produces"><path d="M100,60 L126,60"/>\
<polygon points="126,56 130,60 126,64"/></g>
<g class="edge rel-checked_by"><path d="M220,60 L246,60"/>\
<polygon points="246,56 250,60 246,64"/></g>
<g class="edge rel-supports"><path d="M340,60 L366,60"/>\
<polygon points="366,56 370,60 366,64"/></g>
<g class="edge rel-informs inferred"><path d="M55,40 C55,5 415,5 415,36"/>\
<polygon points="411,34 415,40 419,34"/><text x="235" y="18" text-anchor="middle">informs \
(inferred)</text></g>
</g></svg>"""

INDEX_BODY = """<h1>Overview</h1>
<p class="lead">An agent tuned an air-quality forecaster and reported three results.</p>
<div class="callout callout-warning"><strong>1 claim lacks support.</strong>
<a href="claims/index.html">Review the unsupported claims</a> before relying on the summary.</div>
<dl class="stats"><div><dt>Events</dt><dd>1,204</dd></div><div><dt>Claims</dt><dd>6</dd></div>
<div><dt>Artifacts</dt><dd>37</dd></div><div><dt>Checkpoints</dt><dd>5</dd></div></dl>
<h2>Claims</h2>
<div class="table-wrap"><table><thead><tr><th scope="col">Claim</th><th scope="col">Status</th>
<th scope="col" class="num">Evidence</th><th scope="col">Event</th></tr></thead><tbody>
<tr><td><a href="claims/c1.html">Zircon model lowers PM2.5 RMSE by 12%</a></td>
<td><span class="badge status-supported">supported</span></td><td class="num">4</td>
<td><code>ev-000123</code></td></tr>
<tr><td><a href="claims/c1.html">Runtime stays under one minute</a></td>
<td><span class="status status-unsupported">unsupported</span></td><td class="num">0</td>
<td><code>ev-000311</code></td></tr>
<tr><td><a href="claims/c1.html">Baseline was already optimal</a></td>
<td><span class="badge status-contradicted">contradicted</span></td><td class="num">2</td>
<td><code>ev-000402</code></td></tr>
<tr><td><a href="claims/c1.html">Forecast generalises to winter</a></td>
<td><span class="badge status-needs_human_review">needs human review</span></td>
<td class="num">1</td><td><code>ev-000517</code></td></tr>
<tr><td><a href="claims/c1.html">Feature set is minimal</a></td>
<td><span class="badge status-unverified">unverified</span></td><td class="num">1</td>
<td><code>ev-000630</code></td></tr>
<tr><td><a href="claims/c1.html">Old result from run 1</a></td>
<td><span class="badge status-retracted">retracted</span></td><td class="num">1</td>
<td><code>ev-000702</code></td></tr>
</tbody></table></div>
<h2>Workflow</h2>
<figure class="graph">{graph}<figcaption>Workflow. Dashed edges are inferred, not recorded.
</figcaption></figure>
<h2>Payloads</h2>
<div class="table-wrap"><table><thead><tr><th scope="col">Name</th><th scope="col">State</th>
<th scope="col">Digest</th></tr></thead><tbody>
<tr><td>metrics.json</td><td><span class="badge state-verified">verified</span></td>
<td><code>sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08</code></td></tr>
<tr><td>prompt.txt</td><td><span class="badge state-redacted">redacted</span></td>
<td><code>sha256:60303ae22b998861bce3b28f33eec1be758a213c86c93c076dbe9f558c11c752</code></td></tr>
<tr><td>eval.log</td><td><span class="badge state-missing">missing</span></td>
<td><code>sha256:fd61a03af4f77d870fc21e05e7e80678095c92d808cfb3b5c279ee04c74aca13</code></td></tr>
<tr><td>model.bin</td><td><span class="state state-corrupt">corrupt</span></td>
<td><code>sha256:a4e624d686e03ed2767c0abd85c14426b0b1157d2ce81d27bb4fe4f6f01d688a</code></td></tr>
</tbody></table></div>
"""

CLAIM_BODY = """<h1>Zircon model lowers PM2.5 RMSE by 12%
<span class="badge status-supported">supported</span></h1>
<dl><dt>Claim id</dt><dd><code>c1</code></dd><dt>Recorded</dt><dd>2026-03-02T10:15:00Z</dd>
<dt>Leaf hash</dt><dd><span class="hash">\
3b7e72e2c1a3b58c1f0a5e2d41ad2e1c9f1b8b2c4d5e6f708192a3b4c5d6e7f8</span></dd></dl>
<h2>Evidence paths</h2>
<ul><li><a href="../index.html">metrics.json</a>: checked by fitness <code>f1</code>
<span class="badge state-pass">pass</span></li>
<li class="edge-inferred">eval.log informs the claim (inferred, confidence 0.7)</li>
<li class="gap">No evidence links the baseline run to this claim.</li></ul>
<div class="callout callout-info"><strong>Redacted input.</strong> prompt.txt was redacted by
<em>security-team</em>: contains credentials.</div>
<div class="callout callout-error"><strong>Missing payload.</strong> eval.log is referenced
but was not shipped.</div>
<div class="callout callout-ok"><strong>Proof verified.</strong> Included in checkpoint 5.</div>
<h2>Change</h2>
<pre class="diff"><span class="diff-meta">--- a/model.py</span>
<span class="diff-meta">+++ b/model.py</span>
<span class="diff-hunk">@@ -10,3 +10,3 @@</span>
 def forecast(x):
<span class="diff-del">-    return baseline(x)</span>
<span class="diff-add">+    return zircon(x)</span>
<span class="diff-add">+    # a newline inside the span renders the same
</span><span class="diff-add">+    pass</span>
</pre>
<h2>Metrics</h2>
<div class="json"><details open><summary>object, 3 keys</summary><ul>
<li><span class="json-key">"rmse"</span>: <span class="json-num">4.21</span></li>
<li><span class="json-key">"model"</span>: <span class="json-str">"zircon-v2"</span></li>
<li><span class="json-key">"leak"</span>: <span class="json-bool">false</span></li>
</ul></details></div>
<div class="table-wrap csv"><table><thead><tr><th scope="col">station</th><th scope="col">rmse</th>
<th scope="col">mae</th><th scope="col">n</th></tr></thead><tbody>
<tr><td>north</td><td class="num">4.02</td><td class="num">3.10</td><td class="num">480</td></tr>
<tr><td>south</td><td class="num">4.40</td><td class="num">3.38</td><td class="num">465</td></tr>
</tbody></table></div>
<h2>Inclusion proof <button class="rb-copy" type="button" data-copy="proof-c1">Copy</button></h2>
<pre class="proof" id="proof-c1">c2sp.org/tlog-proof@v1
index 123
2hzTk1AkF3ZLpiR4VvG1jQk0y0I2s1mD1L3xJpZq9aE=
w9lq3mK2aVJ1rS0pV8nYf3b9pQ7cX4eT6uH1zL5oM2g=

demo.example/log
1204
q8m0bJ2VvXh7kPj3sYw1Zr5tLc9NfQe4uAa6DgHiKoE=

— demo AbCdEf0123456789abcdefABCDEF0123456789abcdefABCDEF0123456789abcdefABCDEFGH==
</pre>
"""


TOP_TITLE = "Zircon model lowers PM2.5 RMSE by 12%"


def _docs(n: int) -> list[SearchDoc]:
    words = ["forecast", "station", "rmse", "baseline", "winter", "runtime", "feature"]
    docs = [SearchDoc("c1", TOP_TITLE, "claim",
                      "metrics.json checked by fitness f1", "claims/c1.html")]  # fmt: skip
    for i in range(1, n):
        kind = ("claim", "artifact", "event", "page")[i % 4]
        w = words[i % len(words)]
        docs.append(SearchDoc(f"d{i}", f"{kind.title()} {i}: {w} record", kind,
                              f"{w} detail number {i} " * 3, f"events/{i}.html"))  # fmt: skip
    return docs


def build_demo_site(dest: Path, *, graph_svg: str = GRAPH_SVG, trust: str = "pinned",
                    title: str = "Air-quality agent run", crumb: str = "Claim c1") -> Path:
    """Write index.html, claims/c1.html, search/docs.js and the theme assets into ``dest``."""
    site = _site(trust, title=title, warnings=1)
    pages = [
        ("index.html", "", "overview", INDEX_BODY.replace("{graph}", graph_svg), []),
        ("claims/c1.html", "../", "claims", CLAIM_BODY,
         [("Claims", "claims/index.html"), (crumb, None)]),
    ]  # fmt: skip
    for rel, root, key, body, crumbs in pages:
        out = dest / rel
        out.parent.mkdir(parents=True, exist_ok=True)
        html = render(dest.parent, root=root, key=key, body=body, site=site, crumbs=crumbs)
        out.write_text(html, encoding="utf-8")
    shutil.copytree(ASSETS, dest / "assets")
    (dest / "assets" / "pygments.css").write_text("/* generated at build time */\n", "utf-8")
    (dest / "search").mkdir()
    (dest / "search" / "docs.js").write_text(search_docs_js(_docs(50)), encoding="ascii")
    return dest


def _scroll_width(page: Any) -> int:
    return int(page.evaluate("document.documentElement.scrollWidth"))


@pytest.mark.browser
def test_pages_work_from_file_urls_in_chromium(tmp_path: Path) -> None:
    site = build_demo_site(tmp_path / "site")
    with chromium_context(viewport={"width": 1100, "height": 800}, color_scheme="light") as ctx:
        page = ctx.new_page()
        log = watch(page)
        page.goto((site / "claims" / "c1.html").as_uri())
        # Search data loads lazily: nothing but the four head resources before focus.
        loaded = sorted(u.removeprefix(site.as_uri() + "/") for u in log.requests)
        assert loaded == ["assets/pygments.css", "assets/site.css", "assets/site.js",
                          "assets/theme-init.js", "claims/c1.html"]  # fmt: skip

        # Search from a page one level down: result links must get the "../" root.
        page.fill("#rb-search", "zircon")
        poll(lambda: page.locator("#rb-search-results [role=option]").count() == 1,
             what="one search result for 'zircon'")  # fmt: skip
        option = page.locator("#rb-search-results [role=option]")
        assert option.get_attribute("href") == "../claims/c1.html"
        assert option.locator(".rb-result-kind").text_content() == "claim"
        assert option.locator(".rb-result-title").text_content() == TOP_TITLE
        assert page.inner_text("#rb-search-status") == "1 result"
        assert page.get_attribute("#rb-search", "aria-expanded") == "true"
        page.fill("#rb-search", "record")  # 49 of the 50 docs: the list is capped at 20
        poll(
            lambda: page.inner_text("#rb-search-status") == "49 results, showing the first 20",
            what="capped result count",
        )
        assert page.locator("#rb-search-results [role=option]").count() == 20
        page.fill("#rb-search", "station")
        poll(lambda: page.inner_text("#rb-search-status") == "7 results", what="7 results")
        page.press("#rb-search", "ArrowDown")
        first = page.locator("#rb-search-results [role=option]").first
        assert first.get_attribute("aria-selected") == "true"
        assert page.get_attribute("#rb-search", "aria-activedescendant") == "rb-search-option-0"
        page.press("#rb-search", "Escape")
        assert page.locator(".rb-search-panel").is_hidden()
        page.fill("#rb-search", "zircon")
        poll(lambda: page.locator("#rb-search-results [role=option]").count() == 1, what="1")
        page.press("#rb-search", "Enter")
        poll(lambda: page.url.endswith("/claims/c1.html"), what="navigation by Enter")
        assert axe_serious(page) == []

        # Theme toggle flips data-theme and survives a reload.
        page.goto((site / "index.html").as_uri())
        assert page.get_attribute("html", "data-theme") is None
        assert page.get_attribute("#rb-theme-toggle", "aria-pressed") == "false"
        page.click("#rb-theme-toggle")
        assert page.get_attribute("html", "data-theme") == "dark"
        assert page.get_attribute("#rb-theme-toggle", "aria-pressed") == "true"
        bg = page.evaluate("getComputedStyle(document.body).backgroundColor")
        assert bg == "rgb(13, 17, 23)"
        page.reload()
        assert page.get_attribute("html", "data-theme") == "dark"
        assert page.get_attribute("#rb-theme-toggle", "aria-pressed") == "true"
        assert axe_serious(page) == []
        page.click("#rb-theme-toggle")
        page.reload()
        assert page.get_attribute("html", "data-theme") == "light"

        # Phone width: nothing wider than the viewport.
        page.set_viewport_size({"width": 360, "height": 740})
        for name in ("index.html", "claims/c1.html"):
            page.goto((site / name).as_uri())
            assert _scroll_width(page) <= 361, name
        assert axe_serious(page) == []
        assert log.problems() == []
        assert [u for u in log.requests if not u.startswith(site.as_uri())] == []


@pytest.mark.browser
def test_dark_system_preference_and_copy_button(tmp_path: Path) -> None:
    site = build_demo_site(tmp_path / "site", trust="invalid")
    with chromium_context(color_scheme="dark") as ctx:
        page = ctx.new_page()
        log = watch(page)
        page.goto((site / "claims" / "c1.html").as_uri())
        assert page.get_attribute("html", "data-theme") is None
        assert page.get_attribute("#rb-theme-toggle", "aria-pressed") == "true"
        assert page.evaluate("getComputedStyle(document.body).color") == "rgb(230, 237, 243)"
        assert page.locator(".banner-invalid").is_visible()
        page.click("#rb-theme-toggle")  # from the system's dark to an explicit light
        assert page.get_attribute("html", "data-theme") == "light"
        assert page.evaluate("getComputedStyle(document.body).color") == "rgb(31, 35, 40)"
        page.click(".rb-copy")
        poll(lambda: page.inner_text(".rb-copy") in ("Copied", "Copy failed"), what="copy feedback")
        poll(lambda: page.inner_text(".rb-copy") == "Copy", timeout=4, what="label restored")
        assert axe_serious(page) == []
        assert log.problems() == []


#: As long as a bundle's title may be (the metadata model caps it at 500).
LONG_TITLE = ("Reproduce the symbolic-regression results of the evolutionary search, " * 8)[:500]


@pytest.mark.browser
def test_a_long_title_and_crumb_take_two_lines_each(tmp_path: Path) -> None:
    """Unclamped, a 500-character title filled 12 lines of every page's header at
    1100 px and 18 at 360 px, pushing the page down; the current page's crumb,
    which repeats its heading (a claim's name), did the same below it."""
    site = build_demo_site(tmp_path / "site", title=LONG_TITLE, crumb=LONG_TITLE)
    with chromium_context(viewport={"width": 1100, "height": 800}) as ctx:
        page = ctx.new_page()
        log = watch(page)
        for width in (1100, 360):
            page.set_viewport_size({"width": width, "height": 800})
            page.goto((site / "claims" / "c1.html").as_uri())
            title = page.locator(".site-title")
            assert title.get_attribute("title") == LONG_TITLE
            assert title.text_content() == LONG_TITLE        # clamped on screen only
            line = float(title.evaluate("e => parseFloat(getComputedStyle(e).lineHeight)"))
            box = title.bounding_box()
            assert box is not None and line > 0
            assert box["height"] <= 2 * line + 1, (width, box, line)
            crumb = page.locator(".breadcrumbs li:last-child")
            assert crumb.text_content() == LONG_TITLE
            box = crumb.bounding_box()
            line = float(crumb.evaluate("e => parseFloat(getComputedStyle(e).lineHeight)"))
            assert box is not None and line > 0
            assert box["height"] <= 2 * line + 1, (width, box, line)
            assert _scroll_width(page) <= width + 1
        assert log.problems() == []
