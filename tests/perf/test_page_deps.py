"""Pages carried over on their recorded reads must be exactly what a cold build makes.

Each scenario appends a few events that reach back into the log (a verdict on
an old claim, an edge between old objects, a redaction of an old payload,
...) and checks three things:

* the rebuilt site equals a cold build of the grown bundle, file for file;
* every page carried over on its reads would have had the same fingerprint
  had it been made (a stricter check than equal bytes: same inputs);
* the shortcut was really taken (most object pages carried over), and the
  pages that the appended events touch were not carried over.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from bundler.author import BundleWriter
from bundler.graph.index import BundleIndex, build_index
from bundler.model.events import ClaimEvent, IndividualEvent
from bundler.output.deps_file import deps_path, encode_read
from bundler.render import chunks
from bundler.render import page_deps as page_deps_mod
from bundler.render.chunks import RenderJob
from bundler.render.pages import artifacts as artifacts_mod
from bundler.render.pages.plan import PageTask
from bundler.render.urls import artifact_href, claim_href, event_page
from bundler.synth import generate
from bundler.verify import VerifyOptions, verify_bundle
from bundler.verify.result import PayloadState

from .conftest import SEED, build, reopen, tree


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return generate(tmp_path_factory.mktemp("deps") / "b1k", events=1000, seed=SEED)


@dataclass
class Old:
    """Objects of the base bundle that the scenarios reach back to."""

    run: str
    stream: str
    claim: ClaimEvent            # has evidence and bindings
    artifact: IndividualEvent    # not a claim, with a verified payload, cited by a claim
    other: IndividualEvent       # another plain artifact
    evidence_node: str
    workflow_node: str
    trace: str
    trace_seq: int
    transcript: str              # the one the trace record quotes (not shipped)
    #: the last artifact with a payload named as ``other`` is (its name or its payload's):
    #: the transcript a record citing that name ties to (``ind-20`` for ``ind-12``)
    ships_other_name: str


def _old(bundle: Path) -> Old:
    with ExitStack() as stack:
        report = verify_bundle(bundle, VerifyOptions(), stack=stack)
        idx: BundleIndex = build_index(report.bundle)
        claim = next(c for c in idx.claims.values() if c.evidence and c.bindings)
        plain = [i for i in idx.individuals.values() if not isinstance(i, ClaimEvent)]
        art = next(i for i in plain if i.payload is not None and i.id in idx.cited_by
                   and idx.payload_state(i) is PayloadState.VERIFIED)
        other = next(i for i in plain if i.id != art.id and i.id not in idx.cited_by)
        trace = next(iter(idx.trace_records.values()))
        assert trace.source.transcript not in idx.transcript_artifacts
        return Old(run=idx.runs[0].id, stream=claim.stream, claim=claim, artifact=art,
                   other=other, evidence_node=next(iter(idx.evidence_nodes)),
                   workflow_node=next(iter(idx.workflow_nodes)),
                   trace=trace.id, trace_seq=trace.seq, transcript=trace.source.transcript,
                   ships_other_name=[i.id for i in plain if i.payload is not None and
                                     other.name in (i.name, i.payload.name)][-1])


def _grown(base: Path, dst: Path, touch: Callable[[BundleWriter, Old], None]) -> Path:
    with reopen(base, dst) as w:
        touch(w, _old(base))
    return dst


def _fit(w: BundleWriter, o: Old, target: str, **kw: object) -> None:
    w.append("fitness", id=f"t-fit-{target}", run=o.run, stream=o.stream, target=target,
             evaluator={"name": "late-checker", "version": "2"}, **kw)


def _verdict_on_claim(w: BundleWriter, o: Old) -> None:
    _fit(w, o, o.claim.id, verdict="contradicted", note="checked again")


def _fitness_on_artifact(w: BundleWriter, o: Old) -> None:
    _fit(w, o, o.artifact.id, passed=False, score=0.1, metric="acc")


def _claim_cites_old(w: BundleWriter, o: Old) -> None:
    w.append("claim", id="t-claim", run=o.run, stream=o.stream, name="late claim",
             text="A late claim about an old artifact.", evidence=[o.other.id],
             bindings=[{"evidence": o.other.id, "field": "x", "value": 1}])


def _operator_uses_old(w: BundleWriter, o: Old) -> None:
    w.append("operator", id="t-op", run=o.run, stream=o.stream, op="mutate",
             parents=[o.other.id, o.artifact.id])
    w.append("individual", id="t-child", run=o.run, stream=o.stream, kind="program",
             name="late child", produced_by="t-op")


def _supersedes_old(w: BundleWriter, o: Old) -> None:
    w.append("individual", id="t-v2", run=o.run, stream=o.stream, kind=o.other.kind,
             name=o.other.name, version=o.other.version + 1, supersedes=o.other.id)


def _derived_claims(w: BundleWriter, o: Old) -> None:
    c = o.claim
    w.append("claim", id="t-same", run=o.run, stream=o.stream, name=c.name, text=c.text,
             evidence=c.evidence, bindings=[b.model_dump(mode="json") for b in c.bindings],
             derived_from=[c.id])
    w.append("claim", id="t-edited", run=o.run, stream=o.stream, name=c.name,
             text=c.text + " (edited)", evidence=c.evidence, derived_from=[c.id])


def _edge_between_old(w: BundleWriter, o: Old) -> None:
    w.append("edge", id="t-edge", run=o.run, stream=o.stream, relation="supports",
             source=o.other.id, target=o.claim.id, provenance="inferred",
             inferred_by="late-tracer", confidence=0.7, rationale="looks related")


def _archive_old(w: BundleWriter, o: Old) -> None:
    w.append("archive", id="t-arch", run=o.run, stream=o.stream, archive="late-archive",
             action="add", member=o.artifact.id, reason="kept late")


def _redact_old(w: BundleWriter, o: Old) -> None:
    assert o.artifact.payload is not None
    w.redact(o.artifact.payload.digest, reason="found a secret late", authority="sec",
             run=o.run, stream=o.stream)


def _group_old(w: BundleWriter, o: Old) -> None:
    w.append("evidence_node", id="t-node", run=o.run, stream=o.stream, node_type="artifact",
             category="result", label="late grouping", records=[o.trace],
             individual=o.other.id)
    w.append("workflow_node", id="t-wf", run=o.run, stream=o.stream, phase="validate",
             label="late phase", members=["t-node", o.evidence_node])


def _record_quotes_old(w: BundleWriter, o: Old) -> None:
    """A trace record quoting line 1 of a transcript named as the old artifact is: the
    last artifact shipping a file so named (perhaps a later one) is its transcript."""
    assert o.other.name
    w.append("trace_record", id="t-quote", run=o.run, stream=o.stream, raw="{}",
             source={"transcript": o.other.name, "line": 1}, record_kind="message")


def _ship_quoted_transcript(w: BundleWriter, o: Old) -> None:
    """The transcript an old trace record quotes, shipped at last: the record's log page
    links to it now."""
    ref = w.put_payload(b"{}\n", "application/x-ndjson", o.transcript)
    w.append("individual", id="t-transcript", run=o.run, stream=o.stream, kind="transcript",
             name="late transcript", payload=ref.model_dump(exclude_defaults=True))


SCENARIOS: dict[str, Callable[[BundleWriter, Old], None]] = {
    "verdict-on-claim": _verdict_on_claim,
    "fitness-on-artifact": _fitness_on_artifact,
    "claim-cites-old": _claim_cites_old,
    "operator-uses-old": _operator_uses_old,
    "supersedes-old": _supersedes_old,
    "derived-claims": _derived_claims,
    "edge-between-old": _edge_between_old,
    "archive-old": _archive_old,
    "redact-old": _redact_old,
    "group-old": _group_old,
    "record-quotes-old": _record_quotes_old,
    "ship-quoted-transcript": _ship_quoted_transcript,
}

#: Pages each scenario must make again (not carry over on their reads).
TOUCHED: dict[str, Callable[[Old], list[str]]] = {
    "verdict-on-claim": lambda o: [claim_href(o.claim.id)],
    "fitness-on-artifact": lambda o: [artifact_href(o.artifact.id)],
    "claim-cites-old": lambda o: [artifact_href(o.other.id)],
    "operator-uses-old": lambda o: [artifact_href(o.other.id), artifact_href(o.artifact.id)],
    "supersedes-old": lambda o: [artifact_href(o.other.id)],
    "derived-claims": lambda o: [claim_href(o.claim.id)],
    "edge-between-old": lambda o: [claim_href(o.claim.id)],
    "archive-old": lambda o: [artifact_href(o.artifact.id)],
    "redact-old": lambda o: [artifact_href(o.artifact.id)],
    "group-old": lambda o: [],
    "record-quotes-old": lambda o: [artifact_href(o.ships_other_name)],
    "ship-quoted-transcript": lambda o: [event_page(o.trace_seq)],
}


class Carried:
    """Every page carried over on its reads, each checked against making it anyway."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.paths: list[str] = []
        self.made: list[str] = []
        self.mismatched: list[str] = []
        real_unchanged = page_deps_mod.PageDeps.unchanged
        real_make = chunks.make_page
        carried = self

        def unchanged(deps: page_deps_mod.PageDeps, task: PageTask) -> object:
            record = real_unchanged(deps, task)
            if record is not None:
                carried.paths.append(task.path)
                job = _JOBS[-1]
                page = real_make(deps.ctx, task)
                fp, _ = chunks._fingerprint(job, page)
                if fp != record.fingerprint:
                    carried.mismatched.append(task.path)
            return record

        def making(ctx: object, task: PageTask) -> object:
            carried.made.append(task.path)
            return real_make(ctx, task)  # type: ignore[arg-type]

        monkeypatch.setattr(page_deps_mod.PageDeps, "unchanged", unchanged)
        monkeypatch.setattr(chunks, "make_page", making)


_JOBS: list[RenderJob] = []


@pytest.fixture()
def carried(monkeypatch: pytest.MonkeyPatch) -> Iterator[Carried]:
    """In-process builds only (``jobs=1``): the checks run where the pages are made."""
    real_post_init = RenderJob.__post_init__

    def post_init(job: RenderJob) -> None:
        _JOBS.append(job)
        real_post_init(job)

    monkeypatch.setattr(RenderJob, "__post_init__", post_init)
    yield Carried(monkeypatch)
    _JOBS.clear()


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_grown_log_touching_old_objects_matches_a_cold_build(
        name: str, base: Path, tmp_path: Path, carried: Carried) -> None:
    grown = _grown(base, tmp_path / "grown", SCENARIOS[name])
    site = tmp_path / "site"
    build(base, site)
    assert deps_path(site).is_file()
    carried.paths.clear()
    carried.made.clear()
    warm = build(grown, site)
    fresh = tmp_path / "fresh"
    build(grown, fresh, incremental=False)
    assert tree(site) == tree(fresh)
    assert carried.mismatched == []
    # the shortcut is taken for most object pages ...
    assert len(carried.paths) > warm.pages / 2
    # ... and not for the pages these events change
    touched = TOUCHED[name](_old(base))
    assert touched == [p for p in touched if p in carried.made]
    assert not set(touched) & set(carried.paths)


def test_lineage_graph_threshold_crossed_by_one_artifact(
        base: Path, tmp_path: Path, carried: Carried,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Whether artifacts get lineage graphs depends on how many there are: one read
    for every artifact page, which one appended artifact can flip."""
    with ExitStack() as stack:
        idx = build_index(verify_bundle(base, VerifyOptions(), stack=stack).bundle)
        n = sum(1 for i in idx.individuals.values() if not isinstance(i, ClaimEvent))
    monkeypatch.setattr(artifacts_mod, "LINEAGE_GRAPH_ARTIFACTS", n)
    grown = _grown(base, tmp_path / "grown", _supersedes_old)
    site = tmp_path / "site"
    build(base, site)
    build(grown, site)
    fresh = tmp_path / "fresh"
    build(grown, fresh, incremental=False)
    assert tree(site) == tree(fresh)
    assert carried.mismatched == []
    assert not any(p.startswith("artifacts/") for p in carried.paths)


def test_forked_workers_carry_pages_over_too(base: Path, tmp_path: Path) -> None:
    grown = _grown(base, tmp_path / "grown", _verdict_on_claim)
    site = tmp_path / "site"
    build(base, site, jobs=2)
    warm = build(grown, site, jobs=2)
    fresh = tmp_path / "fresh"
    build(grown, fresh, incremental=False)
    assert tree(site) == tree(fresh)
    assert warm.reused > warm.pages / 2


def test_event_log_page_is_made_again_when_the_log_grows_past_it(
        base: Path, tmp_path: Path, carried: Carried) -> None:
    """1,000 events fill two log pages exactly: an appended event adds a third, and
    the second gains a "next" link."""
    grown = _grown(base, tmp_path / "grown", _archive_old)
    site = tmp_path / "site"
    build(base, site)
    build(grown, site)
    assert "events/page-0001.html" in carried.paths
    assert "events/page-0002.html" in carried.made
    fresh = tmp_path / "fresh"
    build(grown, fresh, incremental=False)
    assert tree(site) == tree(fresh)


@pytest.mark.parametrize("whole", [True, False])
def test_damaged_deps_record_only_costs_the_shortcut(
        whole: bool, base: Path, tmp_path: Path, carried: Carried) -> None:
    """A damaged file means no records at all; a damaged line, none for its page."""
    grown = _grown(base, tmp_path / "grown", _verdict_on_claim)
    site = tmp_path / "site"
    build(base, site)
    path = deps_path(site)
    head, _, rest = path.read_text().partition("\n")
    first, _, others = rest.partition("\n")
    damaged = first.partition("\t")[0]
    if whole:
        path.write_text("garbage\n" + rest)
    else:
        path.write_text(f"{head}\n{first[:-20]}\n{others}")
    build(grown, site)
    assert carried.paths == [] if whole else (damaged not in carried.paths and carried.paths)
    fresh = tmp_path / "fresh"
    build(grown, fresh, incremental=False)
    assert tree(site) == tree(fresh)


def test_records_of_carried_pages_serve_the_next_build_too(
        base: Path, tmp_path: Path, carried: Carried) -> None:
    once = _grown(base, tmp_path / "once", _archive_old)
    twice = _grown(once, tmp_path / "twice", _fitness_on_artifact)
    site = tmp_path / "site"
    build(base, site)
    first = build(once, site)
    carried.paths.clear()
    build(twice, site)
    assert len(carried.paths) > first.pages / 2
    fresh = tmp_path / "fresh"
    build(twice, fresh, incremental=False)
    assert tree(site) == tree(fresh)
    assert carried.mismatched == []


def test_refs_and_nodes_read_only_what_their_token_covers(base: Path) -> None:
    """``PageDeps`` values a ref or graph node read by the object's event, a claim's
    status and an artifact's payload record; making one must read nothing else (a
    label or state drawn from another object would go unseen)."""
    from bundler.graph.paths import _node
    from bundler.graph.tracking import recording
    from bundler.render.pages.base import BuildContext
    from bundler.render.urls import Linker

    with ExitStack() as stack:
        report = verify_bundle(base, VerifyOptions(), stack=stack)
        idx = build_index(report.bundle)
        ctx = BuildContext(report, idx, Linker(idx))
        oids = [*idx.by_id, "ext:elsewhere", "never-there"]
        kinds = {type(idx.by_id[o]).__name__ for o in idx.by_id}
        assert {"ClaimEvent", "IndividualEvent", "FitnessEvent", "OperatorEvent"} <= kinds
        for oid in oids:
            ev = idx.by_id.get(oid)
            allowed = {("by_id", oid), ("status", oid)}
            if isinstance(ev, IndividualEvent) and ev.payload is not None:
                allowed.add(("payloads", ev.payload.digest))
            for make in (lambda o=oid: ctx._ref(o, 2), lambda o=oid: _node(idx, o)):
                ctx._refs.clear()
                with recording() as reads:
                    make()
                assert reads <= allowed, (oid, reads - allowed)


def test_a_ref_records_the_same_read_whether_made_or_remembered(base: Path) -> None:
    """``BuildContext.ref`` skips :func:`query` for a ref it already made; a page that
    takes the remembered ref must still record the read ``("ref", oid)`` and nothing
    else, exactly as the page that made it (else a rebuild would miss a change)."""
    from bundler.graph.tracking import recording
    from bundler.render.pages.base import BuildContext
    from bundler.render.urls import Linker

    with ExitStack() as stack:
        report = verify_bundle(base, VerifyOptions(), stack=stack)
        idx = build_index(report.bundle)
        ctx = BuildContext(report, idx, Linker(idx))
        for oid in [*idx.by_id, "never-there"]:
            made = []
            for _ in range(2):                  # made, then remembered
                with recording() as reads:
                    made.append(ctx.ref(oid, "claims/x.html"))
                assert reads == {("ref", oid)}, oid
            assert made[0] is made[1]
            assert ctx.ref(oid, "index.html").href != made[0].href or made[0].href is None


def test_a_rebuild_analyses_only_new_texts_for_near_duplicates(
        base: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """near-duplicates takes the features of texts it saw in the last build from the
    site's text store; the page is still the one a cold build makes."""
    from bundler.query import duplicates

    analysed: list[bytes] = []
    real = duplicates._analyse

    def counting(data: bytes, tokens: object) -> object:
        analysed.append(data)
        return real(data, tokens)       # type: ignore[arg-type]

    def new_text(w: BundleWriter, o: Old) -> None:
        payload = w.put_payload(b"def late(x):\n    return x * 3\n", "text/x-python")
        w.append("individual", id="t-text", run=o.run, stream=o.stream, kind="program",
                 name="late text", payload=payload.model_dump(mode="json"))

    monkeypatch.setattr(duplicates, "_analyse", counting)
    grown = _grown(base, tmp_path / "grown", new_text)
    site = tmp_path / "site"
    build(base, site)
    first = len(analysed)
    analysed.clear()
    build(grown, site)
    assert first >= 20
    assert analysed == [b"def late(x):\n    return x * 3\n"]
    fresh = tmp_path / "fresh"
    build(grown, fresh, incremental=False)
    assert tree(site) == tree(fresh)


def test_a_long_value_enters_each_page_digest_as_its_hash(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A value that grows with the bundle (every evaluation of a benchmark input) is
    hashed once per process, not again for every page that read it, and a change
    anywhere in it still changes the digest."""
    values = {"long": "e" * 100_000, "short": "s"}
    deps = page_deps_mod.PageDeps.__new__(page_deps_mod.PageDeps)
    deps._memo = {}
    monkeypatch.setattr(deps, "token", lambda read: values[read[1]])
    hashed: list[int] = []
    real = page_deps_mod.hashlib.sha256

    def sha256(data: bytes) -> Any:
        hashed.append(len(data))
        return real(data)

    monkeypatch.setattr(page_deps_mod.hashlib, "sha256", sha256)
    reads = tuple(sorted(encode_read(("by_id", k)) for k in values))
    first = deps.digest(reads)
    assert deps.digest(reads) == first          # the second page: memo, short inputs only
    assert sorted(hashed) == [68, 68, 100_000]  # the value once; each page digest 68 bytes
    values["long"] = "e" * 99_999 + "f"
    deps._memo.clear()
    assert deps.digest(reads) != first
    values["long"] = "e" * 100_000
    values["short"] = "t"
    deps._memo.clear()
    assert deps.digest(reads) != first


@pytest.fixture()
def short_lists(monkeypatch: pytest.MonkeyPatch) -> set[str]:
    """Every cut list cut after its first item, so the 1k bundle has whole-list pages
    (they exist only for lists longer than an object page shows); their file names."""
    from dataclasses import replace

    from bundler.render.pages import lists as lists_mod

    monkeypatch.setattr(lists_mod, "LISTS", {k: replace(spec, shown=1)
                                             for k, spec in lists_mod.LISTS.items()})
    monkeypatch.setattr(lists_mod, "ARCHIVE_LISTS", {k: replace(spec, shown=1) for k, spec
                                                     in lists_mod.ARCHIVE_LISTS.items()})
    return {name for _, name in lists_mod.LISTS} | set(lists_mod.ARCHIVE_LISTS)


def _list_pages(site: Path, names: set[str]) -> set[str]:
    """The whole-list pages of ``site``: ``<folder>/<object>/<list>.html``."""
    return {p for p in tree(site)
            if p.count("/") >= 2 and p.rsplit("/", 1)[1].removesuffix(".html") in names}


def test_whole_list_pages_are_carried_over_on_their_reads(
        base: Path, tmp_path: Path, carried: Carried, short_lists: set[str]) -> None:
    """An operator that uses an artifact whose users already fill a list page makes that
    page again; the other list pages are carried over, and the site is the one a cold
    build makes."""
    with ExitStack() as stack:
        idx = build_index(verify_bundle(base, VerifyOptions(), stack=stack).bundle)
        target = next(i for i in idx.individuals.values()
                      if not isinstance(i, ClaimEvent) and len(idx.used_by.get(i.id, [])) >= 2)

    def use(w: BundleWriter, o: Old) -> None:
        w.append("operator", id="t-op", run=o.run, stream=o.stream, op="late-mutate",
                 parents=[target.id])

    grown = _grown(base, tmp_path / "grown", use)
    site = tmp_path / "site"
    build(base, site)
    before = _list_pages(site, short_lists)
    touched = artifact_href(target.id).removesuffix(".html") + "/used-by.html"
    assert touched in before and len(before) > 50
    assert {p for p in before if p.startswith("lineage/")}    # archives' lists too
    carried.paths.clear()
    carried.made.clear()
    build(grown, site)
    fresh = tmp_path / "fresh"
    build(grown, fresh, incremental=False)
    assert tree(site) == tree(fresh)
    assert carried.mismatched == []
    assert touched in carried.made and touched not in carried.paths
    assert "t-op" in (site / touched).read_text()
    # every other list page of the old site was carried over on its reads
    assert sorted(before - set(carried.paths)) == [touched]
