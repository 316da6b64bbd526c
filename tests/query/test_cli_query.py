"""``review-bundler query``: listing, the three formats, exit codes and warnings."""

from __future__ import annotations

import csv
import io
import json
import shutil
from pathlib import Path

import pytest

from bundler.cli import main
from bundler.query import QUERIES

from .conftest import EXAMPLES, Mini, demo_key

GAIN = str(EXAMPLES / "unsupported-gain")


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(["query", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_list_needs_no_bundle(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = _run(capsys, "--list")
    assert code == 0 and err == ""
    lines = out.splitlines()
    assert [ln.split()[0] for ln in lines] == list(QUERIES)
    assert lines[3].split()[:2] == ["claim-trace", "CLAIM"]
    assert _run(capsys, GAIN, "--list")[1] == out


def test_table_format(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = _run(capsys, GAIN, "value-mismatch", "--trust-key", demo_key())
    assert (code, err) == (0, "")
    assert out.splitlines() == [
        "claim          final  evidence            field                     recorded  found  "
        "comparison  status",
        "-------------  -----  ------------------  ------------------------  --------  -----  "
        "----------  --------",
        "claim:gain-v1  no     ind:experiment-log  metrics.accuracy_gain_pp  4.2       1.5    "
        "equals      mismatch",
        "1 row (value-mismatch)",
        "Checked 6 bindings of 3 claims."]


def test_json_format(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _run(capsys, GAIN, "unsupported-claims", "--format", "json")
    doc = json.loads(out)
    assert code == 0 and doc["query"] == "unsupported-claims"
    assert doc["columns"] == ["claim", "final", "status", "checked_by", "revised_by", "reasons"]
    assert [r["claim"] for r in doc["rows"]] == ["claim:gain-v1", "claim:significance-v1"]
    assert doc["rows"][0]["seqs"] == [13, 17]
    assert doc["rows"][0]["why"].startswith("Claim (not final) claim:gain-v1: verdict")
    assert set(doc["rows"][0]) == {*doc["columns"], "why", "seqs"}
    assert (doc["scope"], doc["checked"]) == ("Examined 4 claims. 1 retracted claim left out.",
                                              4)
    doc = json.loads(_run(capsys, GAIN, "steering-effects", "--format", "json")[1])
    assert (doc["scope"], doc["checked"]) == ("", None)   # a query that does not count
    doc = json.loads(_run(capsys, GAIN, "value-mismatch", "--format", "json")[1])
    assert (doc["scope"], doc["checked"]) == ("Checked 6 bindings of 3 claims.", 6)


def test_csv_format(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _run(capsys, GAIN, "unsupported-claims", "--format", "csv")
    rows = list(csv.reader(io.StringIO(out)))
    assert code == 0
    assert rows[0] == ["claim", "final", "status", "checked_by", "revised_by", "reasons", "why",
                       "seqs"]
    assert rows[2][:6] == ["claim:significance-v1", "false", "unsupported",
                           "fit:significance-v1", "claim:significance-v2",
                           "verdict unsupported from claim-checker 0.4.0 (fit:significance-v1); "
                           "no evidence binding"]
    assert rows[2][7] == "15 19"


def test_fail_on_rows(capsys: pytest.CaptureFixture[str]) -> None:
    assert _run(capsys, GAIN, "value-mismatch", "--fail-on-rows")[0] == 1
    code, out, _ = _run(capsys, GAIN, "missing-evidence", "--fail-on-rows")
    assert code == 0 and out.endswith("0 rows (missing-evidence)\n"
                                      "Checked 5 pieces of evidence cited by 3 claims.\n")


def test_arguments_reach_the_query(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _run(capsys, GAIN, "introduced-by", "4.2", "--format", "json")
    assert code == 0
    assert [r["object"] for r in json.loads(out)["rows"]] == ["claim:gain-v1",
                                                             "ind:experiment-log"]


@pytest.mark.parametrize(("argv", "message"), [
    (["nope"], "unknown query 'nope'; run 'review-bundler query --list'"),
    (["claim-trace"], "query claim-trace needs an argument: claim-trace CLAIM"),
    (["near-duplicates", "extra"], "query near-duplicates takes no argument"),
    (["claim-trace", "claim:none"], "'claim:none' is not a claim in this bundle"),
    ([], "name a bundle and a query"),
])
def test_usage_errors_exit_2(capsys: pytest.CaptureFixture[str], argv: list[str],
                             message: str) -> None:
    code, out, err = _run(capsys, GAIN, *argv)
    assert code == 2 and out == ""
    assert err.startswith("review-bundler: error [RB901]: ") and message in err
    assert "Traceback" not in err


def test_unknown_query_does_not_verify(capsys: pytest.CaptureFixture[str],
                                       tmp_path: Path) -> None:
    code, _, err = _run(capsys, str(tmp_path / "no-such-bundle"), "nope")
    assert code == 2 and "unknown query" in err


def test_invalid_bundle_warns_and_answers(capsys: pytest.CaptureFixture[str],
                                          mini: Mini) -> None:
    t = mini.ind("ind:t", "k,v\na,1\n", "text/csv")
    mini.claim("claim:x", final=True, bindings=[{"evidence": "ind:t", "field": "v@k=a",
                                                 "value": 2}])
    mini.finish()
    mini.payload_file(t.payload.digest).write_bytes(b"k,v\na,2\n")   # corrupt: not read
    code, out, err = _run(capsys, str(mini.path), "value-mismatch")
    assert code == 0
    assert err.startswith(f"review-bundler: warning: {mini.path} is INVALID (")
    assert len(err.splitlines()) == 1
    assert "unverifiable" in out


def test_strict_refuses_a_bundle_with_warnings(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = _run(capsys, GAIN, "value-mismatch", "--strict")
    assert code == 1 and out == "" and "[RB903]" in err and "RB307" in err
    assert _run(capsys, GAIN, "value-mismatch", "--strict", "--trust-key", demo_key())[0] == 0


def test_zipped_bundle_reads_payloads(capsys: pytest.CaptureFixture[str],
                                      tmp_path: Path) -> None:
    archive = shutil.make_archive(str(tmp_path / "gain"), "zip", EXAMPLES, "unsupported-gain")
    code, out, _ = _run(capsys, archive, "value-mismatch", "--format", "json")
    assert code == 0
    assert [(r["recorded"], r["found"]) for r in json.loads(out)["rows"]] == [(4.2, 1.5)]


def test_csv_text_cells_are_inert_in_a_spreadsheet() -> None:
    """A text cell a spreadsheet would evaluate (=, +, -, @, tab, CR first) is written
    with a leading quote; numbers, booleans and ordinary text are written as they are."""
    from bundler.query.format import to_csv
    from bundler.query.model import QueryResult, QueryRow

    hostile = ['=HYPERLINK("http://x.invalid","open")', "+1", "-2", "@SUM(A1)", "\tx", "\rx"]
    cols = (*(f"c{i}" for i in range(len(hostile))), "n", "f", "b", "list", "plain")
    values: dict[str, object] = {f"c{i}": v for i, v in enumerate(hostile)}
    values.update(n=-3, f=-0.5, b=True, list=["=1+1", "x"], plain="CO peaks at 08:00")
    out = to_csv(QueryResult("demo", cols, (QueryRow(values, "=why", (4,)),)))
    row = list(csv.reader(io.StringIO(out, newline="")))[1]
    assert row[:len(hostile)] == ["'" + v for v in hostile]
    assert row[len(hostile):] == ["-3", "-0.5", "true", "'=1+1; x", "CO peaks at 08:00",
                                  "'=why", "4"]
