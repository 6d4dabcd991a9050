"""`eval` against hostile files (issue 18 points 9-11, issue 21 point 7): a dataset row, a results file or a
recorded trace path that is out to crash, exhaust or mislead the run is refused with a message, never exit 3."""

from __future__ import annotations

import json
import tracemalloc
from pathlib import Path

import pytest

from contractstudio.cli import main

ROOT = Path(__file__).resolve().parent.parent
QA = ROOT / "tests" / "runtime_contracts" / "qa.contract.yaml"
GOOD = '{"answer": "ok", "evidence": [{"doc_id": "A1", "snippet": "s"}], "coverage_score": 0.9}'


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def qa_row(query: str, replies: list[str] | None = None) -> str:
    return json.dumps({"id": query, "input": {"query": query, "documents": [{"id": "A1", "content": "text"}]},
                       "replies": replies if replies is not None else [GOOD]})


def dataset(tmp_path: Path, *lines: str) -> Path:
    data = tmp_path / "rows.jsonl"
    data.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return data


# 18.10: one row kills the eval


def test_a_lone_surrogate_in_a_row_is_a_bad_row_and_resume_gets_past_it(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    lone = '{"id": "s", "input": {"query": "\\ud800", "documents": []}, "replies": ["x"]}'
    data = dataset(tmp_path, qa_row("q1"), lone, qa_row("q3"))
    out_file = tmp_path / "r.jsonl"
    code, out, err = run(capsys, "eval", str(QA), "--data", str(data), "--scripted", "--out", str(out_file), "--json")
    assert code == 0, err
    assert "row 2: not a JSON value: a string holds a lone surrogate (\\ud800), which is not text" in err
    assert json.loads(out)["summary"]["rows"] == 2
    code, out, err = run(capsys, "eval", str(QA), "--data", str(data), "--scripted", "--out", str(out_file), "--resume", "--json")
    assert code == 0, err
    assert json.loads(out)["summary"]["rows"] == 2


def test_a_surrogate_pair_is_still_text(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    data = dataset(tmp_path, qa_row(b"smile \\ud83d\\ude00".decode("unicode_escape")))
    code, out, err = run(capsys, "eval", str(QA), "--data", str(data), "--scripted", "--json")
    assert code == 0 and json.loads(out)["summary"]["rows"] == 1


def test_an_overlong_line_is_capped_while_it_is_read(capsys: pytest.CaptureFixture[str], tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    from contractstudio.evaluation import dataset as ds

    monkeypatch.setattr(ds, "MAX_ROW_BYTES", 1 << 20)
    huge = '{"query": "' + "x" * (40 << 20) + '"}'
    data = dataset(tmp_path, qa_row("q1"), huge, qa_row("q3"))
    tracemalloc.start()
    try:
        code, out, err = run(capsys, "eval", str(QA), "--data", str(data), "--scripted", "--json")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert code == 0, err
    assert "row 2: the line is longer than 1,048,576 " in err
    assert json.loads(out)["summary"]["rows"] == 2
    assert peak < 16 << 20  # the 40 MB line was never held whole (a cap-sized piece at most)


def test_a_reply_with_a_lone_surrogate_is_a_failed_attempt_not_a_crash(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    bad = '{"answer": "\\udc80", "evidence": [{"doc_id": "A1", "snippet": "s"}], "coverage_score": 0.9}'
    data = dataset(tmp_path, qa_row("q1", [bad, GOOD]))
    out_file = tmp_path / "r.jsonl"
    code, out, err = run(capsys, "eval", str(QA), "--data", str(data), "--scripted", "--out", str(out_file), "--json")
    assert code == 0, err
    record = json.loads(out_file.read_text())
    assert record["outcome"] == "remedied"
    message = record["failures"][0]["failed"][0]["message"]
    assert message == "the reply is not valid JSON text: a string holds a lone surrogate (\\udc80), which is not text"
