"""A thin MkDocs plugin: build review sites into an MkDocs site.

    plugins:
      - search
      - review-bundler:
          bundles:
            - bundle: bundles/run-42          # relative to mkdocs.yml
              dest: reviews/run-42           # inside site_dir
              trust_keys: [keys/lab.pub]
              strict: true

Each review site is built by the same pipeline as ``review-bundler build``
into ``site_dir/dest`` after MkDocs has written its own pages, so the two
never share templates or assets (the review site keeps its CSP and works
from file://).  Link to it from a page with a plain relative link such as
``[Run 42 review](reviews/run-42/index.html)``.  Copying an already built
site into ``docs/`` works too, with MkDocs and with Zensical, without this
plugin (DESIGN-NOTES §7).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from mkdocs.config import config_options as c
from mkdocs.config.base import Config
from mkdocs.exceptions import PluginError
from mkdocs.plugins import BasePlugin

from bundler.errors import BundlerError


class _BundleItem(Config):  # type: ignore[no-untyped-call]
    bundle = c.Type(str)
    dest = c.Type(str)
    trust_keys = c.ListOfItems(c.Type(str), default=[])
    strict = c.Type(bool, default=False)


class ReviewBundleConfig(Config):  # type: ignore[no-untyped-call]
    bundles = c.ListOfItems(c.SubConfig(_BundleItem), default=[])


class ReviewBundlePlugin(BasePlugin[ReviewBundleConfig]):  # type: ignore[no-untyped-call]
    def on_post_build(self, *, config: Any) -> None:
        from bundler.cli import _read_trust_keys
        from bundler.render.site import BuildOptions, build_site

        base = Path(config.config_file_path).parent
        site_dir = Path(config.site_dir)
        for item in self.config.bundles:
            dest = (site_dir / item.dest).resolve()
            if not dest.is_relative_to(site_dir.resolve()) or dest == site_dir.resolve():
                raise PluginError(f"review-bundler: dest {item.dest!r} must be a folder "
                                  "inside site_dir")
            keys = _read_trust_keys([str(base / k) if (base / k).is_file() else k
                                     for k in item.trust_keys])
            try:
                result = build_site(base / item.bundle, BuildOptions(
                    output=dest, trusted_keys=keys, strict=item.strict))
            except BundlerError as exc:
                raise PluginError(f"review-bundler: {item.bundle}: [{exc.code}] "
                                  f"{exc.message}") from exc
            if item.strict and not result.verdict.ok(strict=True):
                raise PluginError(f"review-bundler: {item.bundle} failed strict verification")
