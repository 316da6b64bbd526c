"""Stage 5, write: the only code that touches the output folder."""

from bundler.output.writer import SITE_MARKER, SiteWriter

__all__ = ["SITE_MARKER", "SiteWriter"]
