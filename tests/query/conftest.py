"""Fixtures for the audit-query tests: the example bundles, and a tiny bundle builder.

``Mini`` writes a real bundle with :class:`BundleWriter` into a temporary
folder, so each edge case is isolated in a log of a dozen events that goes
through the same verify and index stages as any other bundle.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import pytest
from fixtures.builders import START, StepClock, make_signer

from bundler.author import BundleWriter
from bundler.graph.index import BundleIndex
from bundler.query import open_index
from bundler.verify import VerificationReport, VerifyOptions

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "example_bundles"


def demo_key() -> str:
    lines = (EXAMPLES / "demo-key.pub").read_text("utf-8").splitlines()
    return next(ln for ln in lines if ln and not ln.startswith("#"))


@pytest.fixture(scope="session")
def examples() -> Iterator[Callable[[str], BundleIndex]]:
    """Index of one example bundle by name, verified once per session (pinned)."""
    cache: dict[str, tuple[VerificationReport, BundleIndex]] = {}
    with ExitStack() as stack:
        def get(name: str) -> BundleIndex:
            if name not in cache:
                opts = VerifyOptions(trusted_keys=(demo_key(),))
                cache[name] = open_index(EXAMPLES / name, opts, stack)
                assert cache[name][0].valid, name
            return cache[name][1]
        yield get


class Mini:
    """A hand-built bundle: one run, streams ``agent``, ``judge``, ``judge2``, ``human``."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.w = BundleWriter.create(path, title="mini", signer=make_signer(), created=START,
                                     origin="test.invalid/review-bundler/query",
                                     checkpoint_every=1000, clock=StepClock())
        self.w.append("run", id="run", title="mini run", stream="agent")
        for sid, kind in (("agent", "agent"), ("judge", "evaluator"), ("judge2", "evaluator"),
                          ("human", "human")):
            self.w.append("stream", id=sid, kind=kind, name=sid, run="run")
        self.stack = ExitStack()
        self.closed = False

    def ind(self, oid: str, data: bytes | str | None = None, media: str = "text/plain",
            *, stream: str = "agent", kind: str = "table", **fields: Any) -> Any:
        if data is not None:
            raw = data.encode() if isinstance(data, str) else data
            fields["payload"] = self.w.put_payload(raw, media, oid.split(":")[-1])
        return self.w.append("individual", id=oid, kind=kind, name=oid, run="run",
                             stream=stream, **fields)

    def json(self, oid: str, obj: Any, **fields: Any) -> Any:
        return self.ind(oid, json.dumps(obj), "application/json", **fields)

    def op(self, oid: str, parents: list[str] | None = None, *, stream: str = "agent",
           op: str = "refine", **fields: Any) -> Any:
        return self.w.append("operator", id=oid, op=op, parents=parents or [], run="run",
                             stream=stream, **fields)

    def claim(self, oid: str, text: str = "a claim", *, stream: str = "agent",
              **fields: Any) -> Any:
        return self.w.append("claim", id=oid, name=oid, text=text, run="run", stream=stream,
                             **fields)

    def fit(self, oid: str, target: str, *, stream: str = "judge", name: str = "judge",
            version: str = "1", **fields: Any) -> Any:
        return self.w.append("fitness", id=oid, target=target, run="run", stream=stream,
                             evaluator={"name": name, "version": version}, **fields)

    def event(self, type_: str, oid: str, *, stream: str = "agent", **fields: Any) -> Any:
        return self.w.append(type_, id=oid, run="run", stream=stream, **fields)

    def payload_file(self, digest: str) -> Path:
        return self.path / "payloads" / "sha256" / digest.removeprefix("sha256:")

    def finish(self) -> None:
        """Close the writer (and sign the last checkpoint); files may be tampered after."""
        if not self.closed:
            self.w.close()
            self.closed = True

    def index(self) -> BundleIndex:
        return self.report_and_index()[1]

    def report_and_index(self) -> tuple[VerificationReport, BundleIndex]:
        self.finish()
        return open_index(self.path, VerifyOptions(), self.stack)


@pytest.fixture
def mini(tmp_path: Path) -> Iterator[Mini]:
    m = Mini(tmp_path / "mini")
    yield m
    m.stack.close()
