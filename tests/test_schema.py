"""The committed JSON Schema and the committed example bundles agree with the event models."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from bundler.integrity.canonical import parse_canonical
from bundler.model.events import EVENT_MODELS
from bundler.model.metadata import BundleMetadata, Manifest
from bundler.schema import SCHEMA_PATH, schema_json

REPO = Path(__file__).resolve().parent.parent
FORMAT_EXAMPLE = REPO / "docs" / "examples" / "format-example"


def _schema() -> dict[str, Any]:
    obj = json.loads(SCHEMA_PATH.read_text("utf-8"))
    assert isinstance(obj, dict)
    return obj


def test_committed_schema_is_current() -> None:
    assert SCHEMA_PATH.read_text("utf-8") == schema_json(), (
        f"{SCHEMA_PATH.relative_to(REPO)} is stale: run .venv/bin/python -m bundler.schema")


def test_schema_has_a_definition_per_event_type() -> None:
    schema = _schema()
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    defs = schema["$defs"]
    refs = sorted(item["$ref"] for item in schema["anyOf"])
    expected = sorted(f"#/$defs/{model.__name__}" for model in EVENT_MODELS.values())
    assert refs == expected
    for etype, model in EVENT_MODELS.items():
        definition = defs[model.__name__]
        assert definition["properties"]["type"]["const"] == etype
        assert definition["additionalProperties"] is False
        required = set(definition["required"])
        assert {"seq", "prev", "type", "id", "time", "run", "stream"} <= required
        assert set(definition["properties"]) == set(model.model_fields)
    for side in (BundleMetadata, Manifest):
        assert set(defs[side.__name__]["properties"]) == set(side.model_fields)


def _refs(node: Any) -> list[str]:
    if isinstance(node, dict):
        own = [node["$ref"]] if isinstance(node.get("$ref"), str) else []
        return own + [r for v in node.values() for r in _refs(v)]
    if isinstance(node, list):
        return [r for v in node for r in _refs(v)]
    return []


def test_every_ref_in_the_schema_resolves() -> None:
    schema = _schema()
    refs = set(_refs(schema))
    assert "#/$defs/PayloadRef" in refs and "#/$defs/EvidenceBinding" in refs
    for ref in sorted(refs):
        assert ref.startswith("#/$defs/") and ref.removeprefix("#/$defs/") in schema["$defs"], \
            f"dangling or external $ref {ref}"


def _bundles() -> list[Path]:
    found = sorted(p.parent for p in (REPO / "example_bundles").glob("*/events.jsonl"))
    return [FORMAT_EXAMPLE, *found]


def test_every_committed_example_event_validates() -> None:
    checked = 0
    for bundle in _bundles():
        rel = bundle.relative_to(REPO)
        lines = (bundle / "events.jsonl").read_bytes().split(b"\n")
        assert lines[-1] == b"", f"{rel}/events.jsonl does not end with a newline"
        for number, line in enumerate(lines[:-1], 1):
            obj = parse_canonical(line)
            assert isinstance(obj, dict), f"{rel}:{number} is not an object"
            model = EVENT_MODELS[obj["type"]]
            event = model.model_validate(obj)
            assert event.seq == number - 1, f"{rel}:{number} has seq {event.seq}"
            checked += 1
        BundleMetadata.model_validate_json((bundle / "bundle.json").read_bytes())
        Manifest.model_validate_json((bundle / "manifest.json").read_bytes())
    assert checked >= 5  # the format example alone has five events
