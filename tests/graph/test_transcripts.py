"""Which shipped artifact is the transcript a trace record cites: exactly, or by the
path's end when one artifact alone ends so."""

from __future__ import annotations

import pytest

from bundler.graph import transcripts
from bundler.graph.transcripts import (
    MAX_PARTS,
    names_by_artifact,
    path_parts,
    transcript_ties,
)

CLAUDE = "/home/dev/.claude/projects/-home-dev-app/3f1c.jsonl"


def test_path_parts_split_at_either_slash_and_drop_empty_and_dot_parts() -> None:
    assert path_parts("/a//b/./c.jsonl") == ("a", "b", "c.jsonl")
    assert path_parts(r"C:\Users\dev\s.jsonl") == ("C:", "Users", "dev", "s.jsonl")
    assert path_parts("s.jsonl") == ("s.jsonl",)
    assert path_parts("") == () and path_parts("/./") == ()
    assert path_parts("..") == ("..",)      # kept: it names another folder


@pytest.mark.parametrize(("cited", "shipped", "tied"), [
    # exactly as cited, even where another name ends more like it
    ("transcripts/s.jsonl", {"transcripts/s.jsonl": "a", "x/transcripts/s.jsonl": "b"}, "a"),
    # a tracer's absolute path, shipped under the author's folder
    (CLAUDE, {"transcripts/3f1c.jsonl": "a", "transcripts/other.jsonl": "b"}, "a"),
    (CLAUDE, {"3f1c.jsonl": "a"}, "a"),
    (r"C:\Users\dev\.codex\sessions\rollout-1.jsonl", {"codex/rollout-1.jsonl": "a"}, "a"),
    ("./transcripts/s.jsonl", {"transcripts/s.jsonl": "a"}, "a"),
    # the most trailing parts wins
    ("/x/claude/s.jsonl", {"claude/s.jsonl": "a", "codex/s.jsonl": "b"}, "a"),
    # one artifact under two names (its own and its payload's) is still one
    ("/x/s.jsonl", {"s.jsonl": "a", "logs/s.jsonl": "a"}, "a"),
    # two files that end alike: neither
    ("/x/s.jsonl", {"claude/s.jsonl": "a", "codex/s.jsonl": "b"}, None),
    # the file name must be the same; a folder alone is no tie
    ("/x/transcripts/s.jsonl", {"transcripts/t.jsonl": "a"}, None),
    ("transcripts/", {"transcripts/s.jsonl": "a"}, None),
    ("", {"s.jsonl": "a"}, None),
    ("S.JSONL", {"s.jsonl": "a"}, None),           # names are compared as written
])
def test_a_cited_name_ties_to_at_most_one_artifact(cited: str, shipped: dict[str, str],
                                                   tied: str | None) -> None:
    assert transcript_ties([cited], shipped).get(cited) == tied


def test_each_cited_name_ties_on_its_own() -> None:
    shipped = {"t/a.jsonl": "log:a", "t/b.jsonl": "log:b"}
    assert transcript_ties(["/h/a.jsonl", "t/b.jsonl", "/h/c.jsonl"], shipped) == {
        "/h/a.jsonl": "log:a", "t/b.jsonl": "log:b"}


def test_an_artifacts_own_names_come_first_then_the_rest_sorted() -> None:
    ties = {"/z/s.jsonl": "log", "s.jsonl": "log", "/a/s.jsonl": "log",
            "session": "log", "o.jsonl": "other"}
    assert names_by_artifact(ties, {"log": ("s.jsonl", "session")}) == {
        "log": ("s.jsonl", "session", "/a/s.jsonl", "/z/s.jsonl"), "other": ("o.jsonl",)}


def test_names_ending_in_a_dot_or_a_slash_still_give_their_file_name() -> None:
    assert transcript_ties(["/h/s.jsonl"], {"t/s.jsonl/.": "a"}) == {"/h/s.jsonl": "a"}
    assert transcript_ties(["/h/s.jsonl"], {"t\\s.jsonl\\": "a"}) == {"/h/s.jsonl": "a"}


def test_only_the_last_parts_are_compared() -> None:
    """Two files alike in their last ``MAX_PARTS`` parts are as alike as any two."""
    deep = "/".join(f"d{i}" for i in range(MAX_PARTS)) + "/s.jsonl"
    shipped = {f"x/{deep}": "a", f"y/{deep}": "b"}
    assert transcript_ties([f"x/{deep}"], shipped) == {f"x/{deep}": "a"}     # exact
    assert transcript_ties([f"z/x/{deep}"], shipped) == {}


def test_name_comparisons_stop_at_their_budget(monkeypatch: pytest.MonkeyPatch) -> None:
    """A log built to make every record's name meet every file's costs a bounded
    number of comparisons; past the budget, a name ties only exactly."""
    monkeypatch.setattr(transcripts, "MAX_COMPARISONS", 5)
    shipped = {f"e{j}/x{j}/s.jsonl": f"a{j}" for j in range(3)}
    shipped["e0/x0/s.jsonl.bak"] = "c"
    cited = ["/h/x0/s.jsonl", "/h/x1/s.jsonl", "/h/x2/s.jsonl", "e2/x2/s.jsonl"]
    assert transcript_ties(cited, shipped) == {
        "/h/x0/s.jsonl": "a0",            # 3 comparisons
        "e2/x2/s.jsonl": "a2"}            # exact: the budget (2 left) does not apply
    monkeypatch.setattr(transcripts, "MAX_COMPARISONS", 6)
    assert list(transcript_ties(cited, shipped)) == cited[:2] + cited[3:]


def test_names_that_several_files_end_like_are_counted_apart() -> None:
    """So the audit can say why it compared nothing for them, not that the bundle
    does not ship the file."""
    shipped = {"claude/s.jsonl": "a", "codex/s.jsonl": "b", "other/s.jsonl": "c",
               "t/u.jsonl": "d", "x/y.jsonl": "e", "z/y.jsonl": "f"}
    alike: dict[str, int] = {}
    ties = transcript_ties(["/h/s.jsonl", "/h/u.jsonl", "/h/v.jsonl", "x/y.jsonl"],
                           shipped, alike)
    assert ties == {"/h/u.jsonl": "d", "x/y.jsonl": "e"}
    assert alike == {"/h/s.jsonl": 3}
