"""`eval --judge --sweep` (issue 39.2): a condition's numeric threshold moved over the labelled rows, the trade-off
table checked against counts made by hand, the threshold an objective chooses, and the quick fix that writes it."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from test_eval_judge import LABELLED, SAMPLE, ten_rows

from contractstudio.analysis.check import check_text
from contractstudio.cli import main
from contractstudio.editing.text import apply_edits
from contractstudio.editing.thresholds import find_threshold, threshold_action


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_the_sweep_table_matches_the_hand_counts(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """ten_rows: coverage 0.2 x4 (bad), 0.4 x2 (good), 0.7 x1 (bad), 0.9 x3 (good); `coverage >= t` passes a row.
    t = 0.2: every row passes: false passes 4 + 1 = 5, false fails 0
    t = 0.4: 0.2s fail (right), the rest pass: false passes 1 (the 0.7), false fails 0      <- balanced: 1 mistake
    t = 0.55 (now): 0.4s fail (wrong): false fails 2, false passes 1
    t = 0.7: the same rows as 0.55: false fails 2, false passes 1
    t = 0.9: 0.7 fails too (right): false fails 2, false passes 0                         <- fewest false passes
    """
    data = ten_rows(tmp_path)
    code, out, err = run(capsys, "eval", str(SAMPLE), "--data", str(data), "--judge", "--quiet", "--json",
                         "--sweep", "coverage_floor")
    assert code == 0, err
    s = json.loads(out)["summary"]["sweep"]
    assert [(r["threshold"], r["false_fails"], r["false_passes"]) for r in s["table"]] == [
        (0.2, 0, 5), (0.4, 0, 1), (0.55, 2, 1), (0.7, 2, 1), (0.9, 2, 0)]
    assert s["chosen"] == 0.4 and s["current"] == 0.55 and s["rows"] == 10
    code, out, _ = run(capsys, "eval", str(SAMPLE), "--data", str(data), "--judge", "--quiet", "--json",
                       "--sweep", "coverage_floor", "--objective", "fewest-false-passes")
    assert json.loads(out)["summary"]["sweep"]["chosen"] == 0.9
    code, out, _ = run(capsys, "eval", str(SAMPLE), "--data", str(data), "--judge", "--quiet",
                       "--sweep", "coverage_floor")
    assert "        0.4            0             1      90.0%   <- chosen" in out
    assert "       0.55            2             1      70.0%   (now)" in out
    assert ("chosen by balanced: output.coverage_score >= 0.4 (now 0.55): false fails 2 -> 0, false passes 1 -> 1"
            in out)


def test_write_threshold_changes_only_the_number(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    contract = tmp_path / "qa.contract.yaml"
    shutil.copy(SAMPLE, contract)
    before = contract.read_text()
    code, out, err = run(capsys, "eval", str(contract), "--data", str(LABELLED), "--judge", "--quiet",
                         "--sweep", "evidence_for_high_coverage@when", "--write-threshold")
    assert code == 0, err
    assert "written: Set the threshold of evidence_for_high_coverage to 0.6 (was 0.8)" in out
    assert contract.read_text() == before.replace("when: output.coverage_score >= 0.8", "when: output.coverage_score >= 0.6")


def test_the_quick_fix_finds_the_number_in_a_quoted_expression_and_a_reversed_comparison() -> None:
    text = SAMPLE.read_text().replace("assert: output.coverage_score >= 0.55", "assert: \"0.55 <= output.coverage_score\"")
    found = find_threshold("0.55 <= output.coverage_score")
    assert found is not None and found.op == ">=" and found.subject == "output.coverage_score" and found.value == 0.55
    action = threshold_action(check_text(text, "qa.contract.yaml"), "coverage_floor", 0.4)
    assert action is not None
    assert apply_edits(text, action.edits) == text.replace('"0.55 <= output.coverage_score"', '"0.4 <= output.coverage_score"')
    assert find_threshold("output.a >= 1 and output.b < 2") is None  # two numbers: which one is meant is not known


def test_what_cannot_be_swept_is_said(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    data = str(ten_rows(tmp_path))
    code, _, err = run(capsys, "eval", str(SAMPLE), "--data", data, "--judge", "--quiet", "--sweep", "answer_present")
    assert code == 2 and "its condition has no single numeric threshold to move" in err
    code, _, err = run(capsys, "eval", str(SAMPLE), "--data", data, "--judge", "--quiet", "--sweep", "coverage")
    assert code == 2 and "--sweep coverage: not a post condition of the contract" in err
    code, _, err = run(capsys, "eval", str(SAMPLE), "--data", data, "--scripted", "--sweep", "coverage_floor")
    assert code == 2 and "give --judge" in err
    code, _, err = run(capsys, "eval", str(SAMPLE), "--data", data, "--judge", "--sweep", "coverage_floor", "--objective", "x")
    assert code == 2 and "--objective is balanced" in err
