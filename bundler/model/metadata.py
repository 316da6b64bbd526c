"""The bundle's two JSON side files: ``bundle.json`` and ``manifest.json``."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from bundler.model.events import DIGEST_PATTERN, parse_time

MANIFEST_VERSION = "review-bundle-manifest/1"


class BundleMetadata(BaseModel):
    """``bundle.json``: what the bundle says about itself (all of it untrusted)."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)

    #: Required: a reader must reject versions it does not know (RB204).
    format: Literal["review-bundle/1"]
    title: str = Field(max_length=500)
    description: str = Field(default="", max_length=50_000, description="Markdown")
    created: str = Field(description="RFC 3339 creation time")

    @field_validator("created")
    @classmethod
    def _created(cls, v: str) -> str:
        parse_time(v)
        return v
    origin: str = Field(min_length=1, max_length=500, description=(
        "checkpoint origin line; identifies this log"))
    keys: list[str] = Field(default_factory=list, description=(
        "verification keys the signer declares (C2SP note verifier key text)"))
    checkpoint_interval: int = Field(default=0, ge=0)
    generator: str = Field(default="", max_length=200)


class ManifestEntry(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)

    digest: str = Field(pattern=DIGEST_PATTERN)
    size: int = Field(ge=0)
    media_type: str = Field(min_length=1, max_length=200)
    path: str = Field(description="relative path inside the bundle, under payloads/")
    state: Literal["present", "redacted"] = "present"
    salted: bool = False


class Manifest(BaseModel):
    """``manifest.json``: the payload manifest, sorted by digest."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)

    format: Literal["review-bundle-manifest/1"]
    payloads: list[ManifestEntry] = Field(default_factory=list)
