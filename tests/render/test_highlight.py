"""The memoised lexer lookup must choose exactly what Pygments chooses, and JSON Lines
are coloured row by row."""

from __future__ import annotations

import html
import re

import pytest
from pygments.lexers import find_lexer_class_for_filename  # type: ignore[import-untyped,unused-ignore]
from pygments.lexers._mapping import LEXERS  # type: ignore[import-untyped,unused-ignore]
from pygments.lexers.python import PythonLexer  # type: ignore[import-untyped,unused-ignore]

from bundler.render import highlight as hl


def _names() -> list[str]:
    """Names built from every Pygments pattern, with prefixes and suffixes that
    could trip a by-extension memo (``x.bash_y`` must not look up ``.bash_y``)."""
    names = ["Makefile.py", "a.py", ".py", "..py", "a..py", "x.tar.gz", "README", "a.bash_x",
             ".bash_x", "a.b.c.d", "dir/run_1.py", "Makefile", "x.Makefile", "a.[ch]",
             "A.PY", "makefile", "x.H", "CMakeLists.txt", ".bashrc", "a.php5", "Kconfig-x",
             "a.1", "a.10", "", ".", "*", "*.py", "a?py"]
    for pattern in sorted({p for v in LEXERS.values() for p in v[3]}):
        lit = re.sub(r"\[(.)[^\]]*\]", r"\1", pattern.replace("*", "x").replace("?", "q"))
        for pre in ("", "a", "run_1", "a.b", ".", "x.bash_", "dir/"):
            names += [pre + lit, pre + lit + ".py", lit + "." + pre]
    return names


def test_lexer_class_matches_pygments_for_every_pattern() -> None:
    """Our table of patterns (suffix and literal lookups, a few regexes) must give
    Pygments' own answer, including its tie-breaks by priority and class name."""
    for name in _names():
        assert hl.lexer_class_for_filename(name) is find_lexer_class_for_filename(name), name


def test_lookups_share_a_key_by_dot_suffix() -> None:
    assert hl._filename_key("dir/run_17.py") == hl._filename_key("run_18.py") == ".py"
    assert hl._filename_key("Makefile.am") == "Makefile.am"   # 'Makefile.*' decides
    assert hl._filename_key("x.bash_x") == "x.bash_x"         # '.bash_*' would match '.bash_x'


def test_pick_lexer_gives_fresh_instances_with_our_options() -> None:
    a, b = hl.pick_lexer("a.py", "text/plain"), hl.pick_lexer("b.py", "text/plain")
    assert isinstance(a, PythonLexer) and a is not b
    assert a.stripnl is False and a.ensurenl is True
    assert type(hl.pick_lexer(None, "application/x-yaml")).__name__ == "YamlLexer"
    assert hl.is_plain_text(hl.pick_lexer("data.unknownext", "application/octet-stream"))
    assert hl.has_filename_lexer("train.py") and not hl.has_filename_lexer("data.unknownext")


_TORN = '{"uuid":"a","content":[{"typ\n{"uuid":"b","cwd":"/home/agent"}\n{"n":1}\n'


def _text_of(markup: str) -> str:
    return html.unescape(re.sub(r"<[^>]+>", "", markup))


@pytest.mark.parametrize(("name", "media_type"), [
    ("session.jsonl", "application/x-ndjson"), ("session.ndjson", "application/octet-stream"),
    (None, "application/jsonl"), ("log.JSONL", "application/json"),
])
def test_a_torn_json_lines_row_spoils_no_row_after_it(name: str | None, media_type: str) -> None:
    """A transcript line cut short inside a string (a session killed while writing)
    used to turn every later line inside-out: keys read as strings, the rest as
    error tokens.  Each JSON Lines row is lexed on its own."""
    out = str(hl.highlight_code(_TORN, name, media_type))
    first, rest = out.split("\n", 1)
    assert 'class="err"' in first       # the torn row itself is an error...
    assert 'class="err"' not in rest    # ...and only it
    assert rest.count('<span class="nt">') == 3, rest     # "uuid", "cwd", "n" are keys
    assert _text_of(out) == _TORN + "\n"    # every character shown (the "\n" ends the <pre>)


def test_json_that_is_not_lines_is_lexed_whole() -> None:
    """A plain JSON document may break a value over lines; it keeps one lexer pass."""
    assert not hl.is_json_lines("data.json", "application/json")
    text = '{"a":\n  "b"}\n'
    assert str(hl.highlight_code(text, "data.json", "application/json")).count(
        'class="nt"') == 1


def test_json_lines_keep_every_character_as_one_pass_would() -> None:
    text = '{"a":1}\r\n\n{"b":"\u2028x"}\n{"c":"\x1b"}'
    by_line = str(hl.highlight_code(text, "s.jsonl", "application/x-ndjson"))
    whole = str(hl.highlight_code(text, "s.json", "application/json"))
    assert _text_of(by_line) == _text_of(whole)
