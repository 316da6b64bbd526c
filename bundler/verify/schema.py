"""Turn a parsed JSON object into a typed event, or a precise diagnostic."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pydantic import ValidationError
from pydantic_core import SchemaValidator

from bundler.diagnostics import DiagnosticSink, Location
from bundler.model.events import EVENT_MODELS, EventBase, error_message, parse_time


def _evaluator_problem(obj: dict[str, Any]) -> str | None:
    """Invariant 4 gets its own code, so check it before generic schema errors."""
    ev = obj.get("evaluator")
    missing = []
    if not isinstance(ev, dict) or not isinstance(ev.get("version"), str) or not ev["version"]:
        missing.append("evaluator.version")
    if not isinstance(ev, dict) or not isinstance(ev.get("name"), str) or not ev["name"]:
        missing.append("evaluator.name")
    if not isinstance(obj.get("target"), str) or not obj["target"]:
        missing.append("target (the individual judged)")
    return ", ".join(missing) or None


def _validators() -> dict[str, Callable[[Any], Any]]:
    """The compiled validator of each model, called directly.

    ``Model.model_validate(obj)`` does exactly this after checking its keyword
    arguments, which costs a tenth of validating a typical event.
    """
    out: dict[str, Callable[[Any], Any]] = {}
    for etype, model in EVENT_MODELS.items():
        validator = model.__pydantic_validator__
        out[etype] = validator.validate_python if isinstance(validator, SchemaValidator) \
            else model.model_validate
    return out


_VALIDATE = _validators()


def check_event(obj: dict[str, Any]) -> EventBase | tuple[str, str]:
    """The typed event, or ``(code, message)`` of the one diagnostic that rejects it.

    Nothing is emitted here, so the caller builds a ``Location`` only for a
    finding.
    """
    etype = obj.get("type")
    validate = _VALIDATE.get(etype) if isinstance(etype, str) else None
    if validate is None:
        known = ", ".join(sorted(EVENT_MODELS))
        return "RB200", f"unknown event type {etype!r} (known: {known})"
    if etype == "fitness" and (problem := _evaluator_problem(obj)):
        return "RB504", f"fitness record is missing {problem}"
    try:
        ev: EventBase = validate(obj)
    except ValidationError as exc:
        return "RB201", f"{etype} event: {_short(exc)}"
    return ev


def validate_event(obj: dict[str, Any], sink: DiagnosticSink, loc: Location) -> EventBase | None:
    result = check_event(obj)
    if isinstance(result, tuple):
        sink.emit(result[0], result[1], loc)
        return None
    return result


def _short(exc: ValidationError) -> str:
    parts = []
    for err in exc.errors()[:5]:
        where = ".".join(str(p) for p in err["loc"]) or "event"
        parts.append(f"{where}: {error_message(err)}")
    more = exc.error_count() - len(parts)
    return "; ".join(parts) + (f" (+{more} more)" if more > 0 else "")


class TimeOrder:
    """Warn (RB205) when an event's time is earlier than the latest time before it.

    Times are compared as instants, but two UTC times written alike (same
    length, ``Z``, at most microseconds) compare as strings, which is the same
    order and spares a datetime parse per event.  Longer fractions always go
    through :func:`parse_time`, which compares them at microsecond precision.
    """

    __slots__ = ("_latest_parsed", "latest")

    def __init__(self) -> None:
        self.latest: str | None = None
        self._latest_parsed: Any = None

    def earlier(self, time: str) -> str | None:
        """Record ``time`` (already schema-valid); return the later time it comes after."""
        latest = self.latest
        if latest is None:
            self.latest = time
            return None
        if len(time) == len(latest) and len(time) <= 27 and time[-1] == "Z" == latest[-1]:
            if time < latest:
                return latest
            if time > latest:
                self.latest, self._latest_parsed = time, None
            return None
        if self._latest_parsed is None:
            self._latest_parsed = parse_time(latest)
        parsed = parse_time(time)
        if parsed < self._latest_parsed:
            return latest
        self.latest, self._latest_parsed = time, parsed
        return None
