"""Pygments, wrapped so that highlighting is class-based and themeable.

The page CSP allows inline styles, but class-based output keeps the HTML
small and lets one stylesheet (``assets/pygments.css``) follow the site's
light/dark switch.  The two styles were picked because every token colour in
them has at least 4.5:1 contrast against its own background (WCAG AA), which
the accessibility tests check.
"""

from __future__ import annotations

import fnmatch
import functools
import itertools
import posixpath
import re

from markupsafe import Markup, escape
from pygments import format as format_tokens  # type: ignore[import-untyped,unused-ignore]
from pygments.formatters import HtmlFormatter  # type: ignore[import-untyped,unused-ignore]
from pygments.lexer import Lexer  # type: ignore[import-untyped,unused-ignore]
from pygments.lexers import (  # type: ignore[import-untyped,unused-ignore]
    find_lexer_class,
    find_plugin_lexers,
    get_lexer_for_mimetype,
)
from pygments.lexers._mapping import LEXERS  # type: ignore[import-untyped,unused-ignore]
from pygments.lexers.data import JsonLexer  # type: ignore[import-untyped,unused-ignore]
from pygments.lexers.special import TextLexer  # type: ignore[import-untyped,unused-ignore]
from pygments.util import ClassNotFound  # type: ignore[import-untyped,unused-ignore]

__all__ = [
    "DARK_STYLE",
    "LIGHT_STYLE",
    "has_filename_lexer",
    "highlight_code",
    "is_json_lines",
    "is_plain_text",
    "pick_lexer",
    "plain_block",
    "pygments_css",
]

LIGHT_STYLE = "xcode"
DARK_STYLE = "github-dark"
CSS_CLASS = "highlight"

_DARK_EXPLICIT = f':root[data-theme="dark"] .{CSS_CLASS}'
_DARK_AUTO = f':root:not([data-theme="light"]) .{CSS_CLASS}'
_RULE_CLASS = re.compile(r"^ (\.\w+) \{")

#: JSON Lines: one JSON document per line.  A line cut short (a session killed while
#: writing) leaves the JSON lexer inside a string, and read as one text every line
#: after it came out inside-out, in error tokens; lexed line by line, only it does.
JSON_LINES_TYPES = frozenset({"application/x-ndjson", "application/jsonl",
                              "application/x-jsonlines", "application/jsonlines",
                              "application/json-seq"})
JSON_LINES_SUFFIXES = (".jsonl", ".ndjson", ".jsonlines")
#: A row with its newline, or the last one without: split on newlines only, so U+2028
#: and the like stay where they are.
_ROW = re.compile(r"[^\n]*\n|[^\n]+\Z")

#: Extra media types Pygments does not know under these names.
_MIME_ALIASES = {
    "application/x-python": "text/x-python",
    "text/x-toml": "application/toml",
    "application/x-toml": "application/toml",
    "text/yaml": "text/x-yaml",
    "application/yaml": "text/x-yaml",
    "application/x-yaml": "text/x-yaml",
    "application/x-sh": "application/x-sh",
    "text/x-shellscript": "application/x-sh",
}


_OPTS = {"stripnl": False, "ensurenl": True}
#: A file-name pattern that is "*" plus a literal starting with "." (``*.py``,
#: ``*.tar.gz``): whether it matches depends only on the name from its first dot.
_DOT_SUFFIX = re.compile(r"\*\.[^*?\[\]]*")


def _other_patterns() -> re.Pattern[str]:
    """Every lexer file-name pattern that is not a dot suffix, as one regex."""
    pats = {p for _mod, _name, _aliases, names, _mimes in LEXERS.values() for p in names}
    pats |= {p for cls in find_plugin_lexers() for p in cls.filenames}
    others = sorted(p for p in pats if not _DOT_SUFFIX.fullmatch(p))
    return re.compile("|".join(f"(?:{fnmatch.translate(p)})" for p in others) or "(?!)")


_OTHERS = _other_patterns()


def _filename_key(filename: str) -> str:
    """What Pygments' choice of lexer for ``filename`` depends on, as a name it
    chooses the same lexer for.

    Pygments matches the base name against every lexer's patterns (about 930
    fnmatch calls, 1.3 ms) and, without code to analyse, ranks the matches by
    pattern and priority alone.  A dot-suffix pattern can only match from a '.'
    of the name on, so when no other pattern matches the name or its part from
    the first '.', that part decides the answer: ``run_17.py`` and
    ``run_18.py`` both look up ``.py``.
    """
    base = posixpath.basename(filename)
    dot = base.find(".")
    if dot <= 0 or _OTHERS.match(base) or _OTHERS.match(base[dot:]):
        return base
    return base[dot:]


#: A lexer as Pygments' file-name table names it (a built-in lexer's name, or a plugin's class).
_LexerRef = str | type
#: Patterns in Pygments' order: (position, lexer, pattern).
_Entry = tuple[int, _LexerRef, str]


@functools.cache
def _pattern_table() -> tuple[dict[str, list[_Entry]], dict[str, list[_Entry]],
                              list[tuple[re.Pattern[str], _Entry]]]:
    """Every file-name pattern of every lexer, indexed by how it can match.

    Pygments' ``find_lexer_class_for_filename`` compiles a regular expression for
    each of its ~930 patterns on its first call in a process (30 ms, paid again
    by every forked render worker).  Nearly all are ``*`` plus a literal, which
    matches exactly the names that end with the literal, or a plain literal,
    which matches only itself: those become dict lookups, and only the dozen
    others are compiled.
    """
    suffixes: dict[str, list[_Entry]] = {}
    exact: dict[str, list[_Entry]] = {}
    others: list[tuple[re.Pattern[str], _Entry]] = []
    owners: list[tuple[_LexerRef, tuple[str, ...]]] = [
        (name, tuple(names)) for _mod, name, _aliases, names, _mimes in LEXERS.values()]
    owners += [(cls, tuple(cls.filenames)) for cls in find_plugin_lexers()]
    position = 0
    for owner, patterns in owners:
        for pattern in patterns:
            entry = (position, owner, pattern)
            position += 1
            if not any(c in pattern for c in "*?["):
                exact.setdefault(pattern, []).append(entry)
            elif pattern[0] == "*" and not any(c in pattern[1:] for c in "*?["):
                suffixes.setdefault(pattern[1:], []).append(entry)
            else:
                others.append((re.compile(fnmatch.translate(pattern)), entry))
    return suffixes, exact, others


@functools.lru_cache(maxsize=4096)
def _class_for_name(name: str) -> type[Lexer] | None:
    """What ``find_lexer_class_for_filename(name)`` returns, from :func:`_pattern_table`:
    the same matches in the same order, rated as Pygments rates them (priority, a
    bonus for a pattern without ``*``, then the class name; the last one wins)."""
    fn = posixpath.basename(name)
    suffixes, exact, others = _pattern_table()
    found = [e for i in range(len(fn) + 1) for e in suffixes.get(fn[i:], ())]
    found += exact.get(fn, ())
    found += [e for rx, e in others if rx.match(fn)]
    if not found:
        return None
    matches: list[tuple[type[Lexer], str]] = []
    for _pos, owner, pattern in sorted(found, key=lambda e: e[0]):
        cls = find_lexer_class(owner) if isinstance(owner, str) else owner
        if cls is not None:
            matches.append((cls, pattern))
    matches.sort(key=lambda m: (m[0].priority + (0.5 if "*" not in m[1] else 0),
                                m[0].__name__))
    return matches[-1][0] if matches else None


def lexer_class_for_filename(filename: str) -> type[Lexer] | None:
    """Pygments' ``find_lexer_class_for_filename``, memoised by :func:`_filename_key`."""
    return _class_for_name(_filename_key(filename))


@functools.lru_cache(maxsize=1024)
def _class_for_mimetype(media_type: str) -> type[Lexer] | None:
    try:
        return type(get_lexer_for_mimetype(media_type))
    except ClassNotFound:
        return None


def pick_lexer(filename: str | None, media_type: str) -> Lexer:
    """Lexer by file name, then media type, then plain text.

    ``stripnl=False`` keeps leading blank lines: the viewer shows the bytes as
    they are, not a tidied version.  Lookups are memoised (they scan every
    lexer Pygments has); each call still gets a fresh lexer instance.
    """
    if filename:
        cls = lexer_class_for_filename(filename)
        if cls is not None:
            return cls(**_OPTS)
    mt = media_type.split(";")[0].strip().lower()
    for candidate in (mt, _MIME_ALIASES.get(mt)):
        if candidate:
            found = _class_for_mimetype(candidate)
            if found is not None:
                return found(**_OPTS)
    return TextLexer(**_OPTS)


def has_filename_lexer(filename: str) -> bool:
    """Does Pygments recognise this file name (e.g. ``train.py``, ``Makefile``)?"""
    return lexer_class_for_filename(filename) is not None


def is_plain_text(lexer: Lexer) -> bool:
    return isinstance(lexer, TextLexer)


def highlight_code(text: str, filename: str | None, media_type: str) -> Markup:
    """``<div class="highlight"><pre>…</pre></div>`` with token classes only.

    Pygments escapes every token it emits, so the result is safe to embed.
    """
    formatter = HtmlFormatter(cssclass=CSS_CLASS, nowrap=False, noclasses=False)
    lexer = pick_lexer(filename, media_type)
    if isinstance(lexer, JsonLexer) and is_json_lines(filename, media_type) and text:
        tokens = itertools.chain.from_iterable(
            lexer.get_tokens(row) for row in _ROW.findall(text))
    else:
        tokens = lexer.get_tokens(text)
    return Markup(format_tokens(tokens, formatter))


def is_json_lines(filename: str | None, media_type: str) -> bool:
    """Is this payload JSON Lines (by media type, else by the file name's suffix)?"""
    return media_type.split(";")[0].strip().lower() in JSON_LINES_TYPES or \
        (filename or "").lower().endswith(JSON_LINES_SUFFIXES)


def plain_block(text: str) -> Markup:
    """The same wrapper as ``highlight_code`` without tokens (plain text, huge files)."""
    body = str(escape(text))
    if not body.endswith("\n"):
        body += "\n"
    return Markup(f'<div class="{CSS_CLASS}"><pre>{body}</pre></div>\n')


def _rules(style: str, prefix: str) -> list[str]:
    fmt = HtmlFormatter(style=style, cssclass=CSS_CLASS)
    return list(fmt.get_background_style_defs(prefix)) + list(fmt.get_token_style_defs(prefix))


def _classes(rules: list[str], prefix: str) -> set[str]:
    """Token classes (``.k``, ``.s2`` ...) the rules colour, minus the prefix."""
    return {m.group(1) for r in rules if r.startswith(prefix)
            and (m := _RULE_CLASS.match(r[len(prefix):]))}


def _dark_rules(prefix: str) -> list[str]:
    """Dark rules, plus resets for token classes only the light style colours.

    Without the resets a light-only colour (say, dark green on white) would
    survive into dark mode and become unreadable.
    """
    light = _classes(_rules(LIGHT_STYLE, prefix), prefix)
    dark = _rules(DARK_STYLE, prefix)
    resets = [f"{prefix} {cls} {{ color: inherit; background-color: transparent; "
              "font-weight: inherit; font-style: inherit; border: none }"
              for cls in sorted(light - _classes(dark, prefix))]
    return resets + dark


def pygments_css() -> str:
    """The whole ``assets/pygments.css``: light rules, then dark ones (deterministic)."""
    light_prefix = f".{CSS_CLASS}"
    out = [f"/* Generated by review-bundler from Pygments styles {LIGHT_STYLE!r} (light) and "
           f"{DARK_STYLE!r} (dark). Do not edit. */",
           f"{light_prefix} {{ color: #000000; }}"]
    out += _rules(LIGHT_STYLE, light_prefix)
    out.append("")
    out += _dark_rules(_DARK_EXPLICIT)
    out.append("")
    out.append("@media (prefers-color-scheme: dark) {")
    out += ["  " + r for r in _dark_rules(_DARK_AUTO)]
    out.append("}")
    return "\n".join(out) + "\n"
