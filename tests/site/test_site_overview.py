"""The overview's claim lists say what they hold.

Claims that need attention (contradicted, unsupported, unverified, waiting
for human review) are listed first under their own heading and the rest under
"Other claims".  When none needs attention the overview says so, and the list
is "All claims": "Other claims" under no first list read as if a list were
missing.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

from fixtures.builders import START, StepClock, make_signer
from site_helpers import BuiltSite, build

from bundler.author import BundleWriter

_SECTION = re.compile(r'<section aria-labelledby="claims-h">(.*?)</section>', re.S)
_H3 = re.compile(r"<h3>(.*?)</h3>")
_NONE = "No claim needs attention"


def _claims_section(built: BuiltSite) -> str:
    found = _SECTION.search((built.site / "index.html").read_text(encoding="utf-8"))
    assert found is not None
    return found.group(1)


def _statuses(section: str, heading: str) -> list[str]:
    """The status badges of the list under ``heading``."""
    after = section.split(f"<h3>{heading}</h3>", 1)[1].split("</ul>", 1)[0]
    return re.findall(r'class="status status-([a-z_]+)"', after)


def test_with_nothing_to_attend_to_the_overview_says_so(
        site_of: Callable[[str], BuiltSite]) -> None:
    section = _claims_section(site_of("air-quality"))
    assert _H3.findall(section) == ["All claims"]
    assert _NONE in section
    assert _statuses(section, "All claims") == ["supported"] * 7


def test_claims_that_need_attention_come_first_and_the_rest_are_the_others(
        site_of: Callable[[str], BuiltSite]) -> None:
    section = _claims_section(site_of("unsupported-gain"))
    assert _H3.findall(section) == ["Needs attention", "Other claims"]
    assert _NONE not in section
    attention = _statuses(section, "Needs attention")
    assert attention and not {"supported", "retracted"} & set(attention)
    others = _statuses(section, "Other claims")
    assert others and set(others) <= {"supported", "retracted"}


def test_with_no_finding_the_overview_says_so_and_names_what_had_nothing_to_check(
        tmp_path: Path) -> None:
    """A record of one run and its stream: no query finds anything, and the ones with
    nothing to examine are named, since "no findings" alone reads as if they passed."""
    with BundleWriter.create(tmp_path / "bundle", title="Quiet", signer=make_signer(),
                             origin="test.invalid/quiet", created=START,
                             clock=StepClock()) as w:
        w.append("run", id="run-1", stream="agent-1", title="A run", objective="Nothing")
        w.append("stream", id="agent-1", run="run-1", kind="agent", name="agent")
    built = build(tmp_path / "bundle", tmp_path / "site")
    overview = (built.output / "index.html").read_text(encoding="utf-8")
    section = overview[overview.index('id="audit-h"'):overview.index("All audit queries")]
    assert "<li>" not in section
    assert "<p>No audit query found anything.</p>" in section
    # the six queries that count what they examined, with no claim, evaluation or
    # trace record to examine
    assert re.findall(r'<a href="audit/([a-z-]+)\.html">\1</a>', section) == [
        "unsupported-claims", "missing-evidence", "value-mismatch",
        "accepted-without-independent-evaluator", "evaluator-disagreement",
        "transcript-mismatch"]
