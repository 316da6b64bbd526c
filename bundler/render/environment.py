"""Templates and theme resolution: a fallback loader chain, as in mkdocs.

Lookup order: the user's ``--theme`` folder, then ``themes/default`` (page
chrome and assets), then ``bundler/templates`` (page bodies).  A theme can
therefore override the layout, any page body, or any asset by relative path.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import jinja2
import jinja2.bccache
from jinja2.utils import htmlsafe_json_dumps
from markupsafe import Markup, escape

from bundler.errors import UsageError
from bundler.shown import on_page

PACKAGE_DIR = Path(__file__).resolve().parent.parent
TEMPLATES_DIR = PACKAGE_DIR / "templates"


def default_theme_dir() -> Path:
    """``themes/default`` beside the package (source checkout or editable install),
    else the copy a wheel installs as data files under ``sys.prefix``."""
    for candidate in (PACKAGE_DIR.parent / "themes" / "default",
                      Path(sys.prefix) / "share" / "review-bundler" / "themes" / "default"):
        if (candidate / "layout.html").is_file():
            return candidate
    raise UsageError("the default theme (themes/default) is missing from this installation")


def theme_dirs(user_theme: Path | None) -> list[Path]:
    dirs = []
    if user_theme is not None:
        if not user_theme.is_dir():
            raise UsageError(f"--theme {user_theme}: not a folder")
        dirs.append(user_theme)
    dirs.append(default_theme_dir())
    return dirs


#: Names a plain dict has as attributes (``items``, ``get``, ``__class__`` ...).
_DICT_ATTRS = frozenset(dir(dict))


class _Environment(jinja2.Environment):
    """Jinja with a faster ``x.name`` for page contexts, which are plain dicts.

    Jinja tries ``getattr`` first and the key only after an ``AttributeError``;
    an exception per lookup made dict access about twice as slow as attribute
    access, and the event log does twenty per row.  For a plain dict and a name
    that is not a dict attribute that ``getattr`` always fails, so looking the
    key up directly gives the same value (or the same undefined) sooner.
    """

    def getattr(self, obj: Any, attribute: str) -> Any:
        if type(obj) is not dict or attribute in _DICT_ATTRS:
            # jinja2.Environment.getattr (3.1), inlined: super() costs a third of it
            try:
                return getattr(obj, attribute)
            except AttributeError:
                pass
        try:
            return obj[attribute]
        except (TypeError, LookupError, AttributeError):
            return self.undefined(obj=obj, name=attribute)


class _BytecodeCache(jinja2.FileSystemBytecodeCache):
    """Jinja's bytecode cache, where failing to store only costs the compiling.

    Jinja already treats a missing cache file as a miss, but raises when it cannot write
    one, and a build must not fail on a cache: the folder can go while a build runs (a
    full disk, a cleaner of the cache folder)."""

    def dump_bytecode(self, bucket: jinja2.bccache.Bucket) -> None:
        with contextlib.suppress(OSError):
            super().dump_bytecode(bucket)


def make_environment(user_theme: Path | None,
                     compiled: Path | None = None) -> jinja2.Environment:
    """``compiled``: a folder for compiled templates (Jinja's bytecode cache), so a build
    does not compile every template again (about 0.15 s); it must be private to this
    code and these options, as Jinja keys it by template name, path and source only."""
    loaders: list[jinja2.BaseLoader] = [jinja2.FileSystemLoader(str(d)) for d in
                                        theme_dirs(user_theme)]
    loaders.append(jinja2.FileSystemLoader(str(TEMPLATES_DIR)))
    cache = None
    if compiled is not None:
        try:
            compiled.mkdir(parents=True, exist_ok=True)
            cache = _BytecodeCache(str(compiled))
        except OSError:
            cache = None            # an unwritable cache folder only costs the compiling
    env = _Environment(
        loader=jinja2.ChoiceLoader(loaders),
        finalize=on_page,
        bytecode_cache=cache,
        # autoescape=True, not select_autoescape(): it would skip *.html.j2 (DESIGN-NOTES §5)
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["short"] = lambda h, n=12: str(h)[:n]
    env.filters["thousands"] = lambda n: f"{n:,}"
    env.filters["bytes"] = human_bytes
    env.globals["Markup"] = Markup
    env.globals["ref_link"] = ref_link
    env.globals["ref_id"] = ref_id
    env.filters["json_preview"] = json_preview
    return env


def json_preview(value: Any, limit: int) -> dict[str, Any]:
    """``value`` as the ``tojson(indent=2)`` filter writes it, cut at ``limit`` characters
    (``cut`` says whether it was).  That JSON holds no ``< > & '``, so any prefix of it
    is safe HTML."""
    text = str(htmlsafe_json_dumps(value, indent=2, sort_keys=True))
    return {"text": Markup(text[:limit]), "cut": len(text) > limit}


def ref_link(r: Any) -> Markup:
    """What the ``link`` macro of ``_macros.html`` renders for a ref, as Python.

    A site renders tens of thousands of links (every row of the event log has
    some); a Jinja macro call costs several times this function.  The macro
    is now ``{% set link = ref_link %}``, so a theme can still override it.
    """
    get = r.get if isinstance(r, Mapping) else r.__getattribute__
    href, label = get("href"), escape(get("label"))
    if href:
        return Markup(f'<a href="{escape(href)}" class="ref kind-{escape(get("kind"))}">'
                      f"{label}</a>")
    missing = " (not in the log)" if get("kind") == "missing" else ""
    return Markup(f'<span class="ref ref-missing" title="{escape(get("id"))}">{label}{missing}'
                  "</span>")


def ref_id(r: Any) -> Markup:
    """The id shown after a ref's link when its label is not the id, or nothing.

    Labels repeat: an archive may hold a hundred members named "c0", and a thousand
    operators may be labelled "mutate".  The whole lists (:mod:`bundler.render.pages.lists`)
    show the id beside such a label, so the capped lists that lead to them do too.
    """
    get = r.get if isinstance(r, Mapping) else r.__getattribute__
    oid = get("id")
    if oid == get("label"):
        return Markup("")
    return Markup(f' <span class="muted ref-id">{escape(oid)}</span>')


def human_bytes(n: int) -> str:
    size = float(n)
    for unit in ("bytes", "KiB", "MiB", "GiB"):
        if size < 1024 or unit == "GiB":
            return f"{int(size):,} {unit}" if unit == "bytes" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{n} bytes"


def theme_assets(user_theme: Path | None) -> Iterator[tuple[str, Path]]:
    """(relative path under assets/, source file), user theme files winning, sorted."""
    chosen: dict[str, Path] = {}
    for d in reversed(theme_dirs(user_theme)):
        assets = d / "assets"
        if not assets.is_dir():
            continue
        for p in assets.rglob("*"):
            if p.is_file() and not p.is_symlink():
                chosen[p.relative_to(assets).as_posix()] = p
    for rel in sorted(chosen):
        yield rel, chosen[rel]
