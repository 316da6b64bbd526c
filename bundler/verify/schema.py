"""Turn a parsed JSON object into a typed event, or a precise diagnostic."""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError

from bundler.diagnostics import DiagnosticSink, Location
from bundler.model.events import EVENT_MODELS, EventBase


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


def validate_event(obj: dict[str, Any], sink: DiagnosticSink, loc: Location) -> EventBase | None:
    etype = obj.get("type")
    model = EVENT_MODELS.get(etype) if isinstance(etype, str) else None
    if model is None:
        known = ", ".join(sorted(EVENT_MODELS))
        sink.emit("RB200", f"unknown event type {etype!r} (known: {known})", loc)
        return None
    if etype == "fitness" and (problem := _evaluator_problem(obj)):
        sink.emit("RB504", f"fitness record is missing {problem}", loc)
        return None
    try:
        return model.model_validate(obj)
    except ValidationError as exc:
        sink.emit("RB201", f"{etype} event: {_short(exc)}", loc)
        return None


def _short(exc: ValidationError) -> str:
    parts = []
    for err in exc.errors()[:5]:
        where = ".".join(str(p) for p in err["loc"]) or "event"
        parts.append(f"{where}: {err['msg']}")
    more = exc.error_count() - len(parts)
    return "; ".join(parts) + (f" (+{more} more)" if more > 0 else "")
