"""``ref_link`` must render exactly what the ``link`` macro it replaced did."""

from __future__ import annotations

from pathlib import Path

import jinja2
import pytest

from bundler.render.environment import make_environment, ref_id, ref_link
from bundler.render.pages.base import Ref

#: The macro as it was, rendered by the same environment settings.
OLD_MACRO = """{% macro link(r) -%}
{% if r.href %}<a href="{{ r.href }}" class="ref kind-{{ r.kind }}">{{ r.label }}</a>{% else %}\
<span class="ref ref-missing" title="{{ r.id }}">{{ r.label }}{% if r.kind == "missing" %} \
(not in the log){% endif %}</span>{% endif %}
{%- endmacro %}{{ link(r) }}"""

REFS = [
    Ref("c1", "Claim <b>&</b> \"one\"", "claim", "../claims/c1.html", "supported"),
    Ref("x'1", "gone & <away>", "missing", None),
    Ref("a2", "no page", "individual", None),
    Ref("a3", "", "individual", ""),
    Ref("a4", "odd href", "kind\"x", 'a.html?x="1"&y=<2>'),
]


@pytest.mark.parametrize("ref", REFS)
def test_ref_link_equals_the_old_macro(ref: Ref) -> None:
    env = make_environment(None)
    old = env.from_string(OLD_MACRO).render(r=ref)
    assert str(ref_link(ref)) == old
    assert str(ref_link(ref.__dict__)) == old    # a mapping works as Jinja's getattr would
    assert env.from_string('{% from "_macros.html" import link %}{{ link(r) }}').render(r=ref) \
        == old


def test_a_theme_can_still_override_link(tmp_path: Path) -> None:
    (tmp_path / "_macros.html").write_text(
        "{% macro link(r) %}[{{ r.label }}]{% endmacro %}", encoding="utf-8")
    env = make_environment(tmp_path)
    out = env.from_string('{% from "_macros.html" import link %}{{ link(r) }}').render(r=REFS[0])
    assert out == "[Claim &lt;b&gt;&amp;&lt;/b&gt; &#34;one&#34;]"


def test_dict_lookup_shortcut_keeps_jinja_semantics() -> None:
    """``d.items`` is still the method, a missing key is still undefined (strict:
    an error), other objects still go through Jinja's own lookup."""
    env = make_environment(None)
    d = {"items": "shadowed", "name": "<x>", "n": 2}
    out = env.from_string("{{ d.name }} {{ d.n }} {{ d['items'] }} "
                          "{{ d.items() | list | length }} {{ r.label }}").render(d=d, r=REFS[0])
    assert out == "&lt;x&gt; 2 shadowed 3 Claim &lt;b&gt;&amp;&lt;/b&gt; &#34;one&#34;"
    with pytest.raises(jinja2.UndefinedError):
        env.from_string("{{ d.missing }}").render(d=d)
    plain = jinja2.Environment(undefined=jinja2.StrictUndefined)
    for name in ("name", "items", "get", "__class__", "missing", "n"):
        ours = env.getattr(d, name)
        theirs = plain.getattr(d, name)
        assert type(ours) is type(theirs) and (isinstance(ours, jinja2.Undefined) or
                                               ours == theirs), name


@pytest.mark.parametrize(("ref", "shown"), [
    (Ref("c1", "Claim <b>&</b> \"one\"", "claim", "../claims/c1.html"),
     ' <span class="muted ref-id">c1</span>'),
    (Ref("x'1", "x'1", "missing", None), ""),                  # the label is the id
    (Ref("a<2>", "c0", "individual", "a.html"), ' <span class="muted ref-id">a&lt;2&gt;</span>'),
])
def test_ref_id_shows_the_id_only_when_the_label_is_not_it(ref: Ref, shown: str) -> None:
    assert str(ref_id(ref)) == shown
    assert str(ref_id(ref.__dict__)) == shown


def test_capped_ref_lists_tell_apart_members_named_alike() -> None:
    """Two archive members both labelled "c0" must not read as one object."""
    env = make_environment(None)
    refs = [Ref("ind-1", "c0", "individual", "a1.html"), Ref("ind-2", "c0", "individual",
                                                               "a2.html")]
    out = env.from_string('{% from "_macros.html" import ref_list %}{{ ref_list(r) }}').render(
        r=refs)
    assert out.count(">c0</a>") == 2
    assert 'ref-id">ind-1</span>' in out and 'ref-id">ind-2</span>' in out
