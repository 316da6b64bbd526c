"""Stage 1, load: open a bundle container safely and stream its event log."""

from bundler.load.events import RawEvent, iter_event_lines
from bundler.load.limits import Limits
from bundler.load.source import BundleSource, open_bundle

__all__ = ["BundleSource", "Limits", "RawEvent", "iter_event_lines", "open_bundle"]
