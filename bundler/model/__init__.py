"""The review-bundle format, as pydantic models.

These models are the normative source of truth: ``docs/format.md`` describes
them and ``bundler/schema/review-bundle.schema.json`` is generated from them
(a test fails when the committed schema is stale).
"""

from bundler.model.events import (
    EVENT_MODELS,
    FORMAT_VERSION,
    ArchiveEvent,
    ClaimEvent,
    EdgeEvent,
    Evaluator,
    Event,
    EvidenceBinding,
    EvidenceNodeEvent,
    FitnessEvent,
    IndividualEvent,
    OperatorEvent,
    PayloadRef,
    RedactionEvent,
    RunEvent,
    SteeringEvent,
    StreamEvent,
    TraceRecordEvent,
    WorkflowNodeEvent,
)
from bundler.model.metadata import BundleMetadata, Manifest, ManifestEntry

__all__ = [
    "EVENT_MODELS",
    "FORMAT_VERSION",
    "ArchiveEvent",
    "BundleMetadata",
    "ClaimEvent",
    "EdgeEvent",
    "Evaluator",
    "Event",
    "EvidenceBinding",
    "EvidenceNodeEvent",
    "FitnessEvent",
    "IndividualEvent",
    "Manifest",
    "ManifestEntry",
    "OperatorEvent",
    "PayloadRef",
    "RedactionEvent",
    "RunEvent",
    "SteeringEvent",
    "StreamEvent",
    "TraceRecordEvent",
    "WorkflowNodeEvent",
]
