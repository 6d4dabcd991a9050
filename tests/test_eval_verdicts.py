"""What `eval` says when it fails, as a user hits it (issue 34.16): a reason on stderr for every exit 1,
no record dropped without a word, and --resume naming the contract a results file belongs to."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from contractstudio.cli import main

ROOT = Path(__file__).resolve().parent.parent
QA = ROOT / "tests" / "runtime_contracts" / "qa.contract.yaml"
SAMPLE = ROOT / "samples" / "multidoc_qa.contract.yaml"
ROWS = ROOT / "samples" / "eval" / "multidoc_qa.rows.jsonl"
GOOD = '{"answer": "ok", "evidence": [{"doc_id": "A1", "snippet": "s"}], "coverage_score": 0.9}'
DOCS = [{"id": "A1", "content": "text"}]


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_a_scripted_run_whose_rows_carry_no_replies_exits_1_and_says_why(capsys: pytest.CaptureFixture[str],
                                                                        tmp_path: Path) -> None:
    """The README: exit 1 when no row ran. Three rows that could not run are three rows that did not run."""
    data = tmp_path / "rows.jsonl"
    data.write_text("".join(json.dumps({"query": q, "documents": DOCS}) + "\n" for q in ("a", "b", "c")))
    code, out, err = run(capsys, "eval", str(QA), "--data", str(data), "--scripted")
    assert code == 1
    assert "could not run: 3" in out
    assert "contractstudio: eval failed: no row ran: all 3 could not run" in err
    assert "replies" in err  # the first row's reason: scripted rows need their replies


def test_fail_under_says_why_it_fails(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys, "eval", str(SAMPLE), "--data", str(ROWS), "--scripted", "--fail-under", "0.9")
    assert code == 1
    assert ("contractstudio: eval failed: the success rate 87.5% [75.3, 94.1] is not surely at or above --fail-under 90.0%: "
            "the lower bound of its 95% interval, 75.3%, is under it") in err


def test_a_csv_record_of_empty_cells_is_a_bad_row_not_dropped(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    data = tmp_path / "rows.csv"
    docs = json.dumps(DOCS).replace('"', '""')
    data.write_text(f'query,documents\nwhy,"{docs}"\n""\n\nhow,"{docs}"\n')
    from contractstudio.evaluation.dataset import BadRow, Row, read_rows

    seen = list(read_rows(data))
    assert [type(r) for r in seen] == [Row, BadRow, Row]  # the blank line is nothing; the record "" is a row
    assert seen[1].number == 2 and "every cell is empty" in seen[1].message
    code, out, err = run(capsys, "eval", str(QA), "--data", str(data), "--json")
    assert "row 2: the record has cells, but every cell is empty" in err


def test_resume_with_the_results_of_another_contract_names_both(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    data = tmp_path / "rows.jsonl"
    data.write_text(json.dumps({"input": {"query": "q", "documents": DOCS}, "replies": [GOOD]}) + "\n")
    out_file = tmp_path / "results.jsonl"
    assert run(capsys, "eval", str(QA), "--data", str(data), "--scripted", "--out", str(out_file))[0] == 0
    other = tmp_path / "other.contract.yaml"
    other.write_text(QA.read_text().replace("name: qa", "name: other_qa", 1))
    code, _, err = run(capsys, "eval", str(other), "--data", str(data), "--scripted", "--out", str(out_file), "--resume")
    assert code == 2
    assert "holds results of contract 'qa', not of 'other_qa'" in err
    assert "a different version of" not in err
    edited = tmp_path / "qa.contract.yaml"  # the same contract, edited: that is a different version
    edited.write_text(QA.read_text() + "\n# edited\n")
    code, _, err = run(capsys, "eval", str(edited), "--data", str(data), "--scripted", "--out", str(out_file), "--resume")
    assert code == 2 and "a different version of contract 'qa'" in err
