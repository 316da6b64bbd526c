"""The committed JSON Schema, generated from the pydantic models.

``python -m bundler.schema`` rewrites ``review-bundle.schema.json``; a test fails
when the committed file differs from what the models generate.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pydantic import TypeAdapter

from bundler.model.events import Event
from bundler.model.metadata import BundleMetadata, Manifest

SCHEMA_PATH = Path(__file__).with_name("review-bundle.schema.json")


def schema_obj() -> dict[str, Any]:
    events = TypeAdapter(Event).json_schema(mode="validation")
    defs: dict[str, Any] = events.pop("$defs", {})
    defs["BundleMetadata"] = BundleMetadata.model_json_schema()
    defs["Manifest"] = Manifest.model_json_schema()
    for extra in ("BundleMetadata", "Manifest"):
        defs.update(defs[extra].pop("$defs", {}))
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": "urn:review-bundler:schema:review-bundle/1",
        "title": "review-bundle/1 event (one line of events.jsonl)",
        "description": "Each line of events.jsonl is one of these events, written in RFC 8785 "
                       "canonical form. bundle.json follows $defs/BundleMetadata and "
                       "manifest.json follows $defs/Manifest.",
        **events,
        "$defs": dict(sorted(defs.items())),
    }


def schema_json() -> str:
    return json.dumps(schema_obj(), indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def write_schema(path: Path = SCHEMA_PATH) -> Path:
    path.write_text(schema_json(), encoding="utf-8")
    return path
