"""The one loader, the one chooser and the one reader of a trace's start (issue 23.3), as each face uses them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import contractstudio as cs
from contractstudio.analysis.check import Context
from contractstudio.cli import main
from contractstudio.runtime import loading

HERE = Path(__file__).parent / "runtime_contracts"
QA = HERE / "qa.contract.yaml"
SAMPLES = Path(__file__).resolve().parent.parent / "samples"
RECORDED = SAMPLES / "traces" / "multidoc_qa.answered-first-time.jsonl"  # recorded for the contract 'multidoc_qa'
GOOD = '{"answer": "They store embeddings.", "evidence": [{"doc_id": "A1", "snippet": "store embeddings"}], "coverage_score": 0.9}'
INPUT = {"query": "Why vectors?", "documents": [{"id": "A1", "content": "Vector databases store embeddings."}]}


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def seen(monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    """The files the one loader was asked for, whoever asked (it still loads them)."""
    asked: list[Path] = []
    real = loading.load_file

    def spy(path: str | Path, **kw: Any) -> loading.LoadedFile:
        asked.append(Path(path))
        return real(path, **kw)

    monkeypatch.setattr(loading, "load_file", spy)
    return asked


def test_run_eval_the_ray_workers_rows_the_studio_and_the_api_load_through_the_one_loader(
        seen: list[Path], capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    from contractstudio.evaluation.options import EvalConfig
    from contractstudio.evaluation.rows import EvalJob, RowRunner
    from contractstudio.studio.calls import runnable_contracts

    code, out, _ = run(capsys, "run", str(QA), "--scenario", "first-time", "--no-wait", "--json")
    assert code == 0 and json.loads(out)["successful"] is True and seen == [QA]

    data = tmp_path / "rows.jsonl"
    data.write_text(json.dumps({"id": "r1", "input": INPUT, "replies": [GOOD]}) + "\n")
    code, out, _ = run(capsys, "eval", str(QA), "--data", str(data), "--scripted", "--json")
    assert code == 0 and json.loads(out)["summary"]["successful"] == 1 and seen[-1] == QA

    seen.clear()  # a Ray worker builds its RowRunner from the job (the contract's text travels, not the path)
    RowRunner(EvalJob.of(EvalConfig(target=QA, data=data, mode="scripted"), QA.read_text()))
    assert seen == [QA]

    seen.clear()
    contracts, note = runnable_contracts([QA], lambda p: p.read_text(), lambda p: Context())
    assert [(p, d.name) for p, d in contracts] == [(QA, "qa")] and note == "" and seen == [QA]

    seen.clear()
    assert cs.load(QA).name == "qa" and seen == [QA]


def test_the_studio_lists_a_file_the_loader_refuses_as_not_runnable(tmp_path: Path) -> None:
    from contractstudio.studio.calls import runnable_contracts

    broken = tmp_path / "broken.contract.yaml"
    broken.write_text(QA.read_text().replace("output: Answer", "output: Nope", 1))
    contracts, note = runnable_contracts([broken, QA], lambda p: p.read_text(), lambda p: Context())
    assert [d.name for _, d in contracts] == ["qa"]
    assert note == "not runnable until their errors are fixed (F2): broken.contract.yaml"


def test_a_refused_file_is_said_with_its_findings_by_run_and_by_eval(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    broken = tmp_path / "broken.contract.yaml"
    broken.write_text(QA.read_text().replace("output: Answer", "output: Nope", 1))
    data = tmp_path / "rows.jsonl"
    data.write_text(json.dumps({"id": "r1", "input": INPUT, "replies": [GOOD]}) + "\n")
    for argv in (["run", str(broken), "--scenario", "first-time"], ["eval", str(broken), "--data", str(data), "--scripted"]):
        code, _, err = run(capsys, *argv)
        assert code == 1 and f"{broken}: 1 error; fix them before running" in err and "REF201 output type 'Nope' is not declared" in err


# The chooser's errors, as a user sees them ------------------------------------------------------------------------


@pytest.fixture
def two_contracts(tmp_path: Path) -> Path:
    """A file holding 'qa', then 'multidoc_qa' whose only scenario is 'second-only'."""
    text = QA.read_text()
    second = text.replace("name: qa\n", "name: multidoc_qa\n", 1).replace("- name: first-time", "- name: second-only", 1)
    path = tmp_path / "two.contract.yaml"
    path.write_text(text + "---\n" + second)
    return path


def test_run_chooses_the_contract_holding_the_scenario(two_contracts: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "run", str(two_contracts), "--scenario", "second-only", "--no-wait")
    assert code == 0 and out.startswith("multidoc_qa: scripted:second-only")
    code, out, _ = run(capsys, "run", str(two_contracts), "--scenario", "first-time", "--no-wait")
    assert code == 0 and out.startswith("qa: scripted:first-time")


def test_run_chooses_the_contract_a_replayed_trace_was_recorded_for(two_contracts: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "run", str(two_contracts), "--replay", str(RECORDED), "--no-wait")
    assert out.startswith("multidoc_qa: replay:") and code in (0, 1)  # the call ran: its verdict is the replay's
    code, _, err = run(capsys, "run", str(QA), "--replay", str(RECORDED), "--no-wait")
    assert code == 2 and f"{RECORDED} was recorded for the contract 'multidoc_qa', not for 'qa' in {QA}" in err


def test_run_says_which_scenarios_there_are_when_none_is_named_so(two_contracts: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys, "run", str(two_contracts), "--scenario", "nope")
    assert code == 2 and "contract 'qa' has no scenario 'nope' (scenarios: first-time, remedied-after-low-coverage" in err


def test_run_says_a_file_without_a_contract_has_none(capsys: pytest.CaptureFixture[str]) -> None:
    tools = SAMPLES / "notes.tools.yaml"
    code, _, err = run(capsys, "run", str(tools), "--scenario", "x")
    assert code == 2 and f"contractstudio: error: {tools}: the file holds no kind: contract document" in err


def test_a_replayed_file_that_is_not_a_trace_is_a_usage_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    listed = tmp_path / "list.jsonl"
    listed.write_text("[1, 2]\n")
    code, _, err = run(capsys, "run", str(QA), "--replay", str(listed))
    assert code == 2 and f"{listed} is not a trace: {listed}:1: an event must be a JSON object" in err


def test_the_api_names_the_documents_there_are_when_a_name_is_not_found(two_contracts: Path) -> None:
    with pytest.raises(cs.ContractError, match=r"no document named 'nope' \(found: 'qa', 'multidoc_qa'\)"):
        cs.load(two_contracts, "nope")
    assert cs.load(two_contracts, "multidoc_qa").doc.scenarios[0].name == "second-only"


# The one reader of a trace's start -------------------------------------------------------------------------------


def test_a_traces_start_is_read_from_its_first_line_only(tmp_path: Path) -> None:
    from contractstudio.runtime.trace import recorded_start
    from contractstudio.studio.calls import input_value, traces_of

    trace = tmp_path / "t.jsonl"
    lines = RECORDED.read_text().splitlines()
    trace.write_text("\n".join([lines[0], "not json at all", *lines[2:]]) + "\n")
    start = recorded_start(trace)
    assert start is not None and start.contract == "multidoc_qa" and start.value["query"] == "Why are vector databases useful?"
    doc = cs.load(SAMPLES / "multidoc_qa.contract.yaml").doc
    assert traces_of(doc, [trace]) == [trace]  # the studio lists it by the same reading
    assert input_value(doc, f"trace:{trace}", None) == start.value


def test_a_replayed_trace_with_bytes_that_are_not_text_after_its_start_is_refused_in_checks_words(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    trace = tmp_path / "t.jsonl"
    lines = RECORDED.read_bytes().splitlines(keepends=True)
    trace.write_bytes(b"".join([lines[0], b"\xc0\x80\n", *lines[1:]]))
    code, _, err = run(capsys, "run", str(SAMPLES / "multidoc_qa.contract.yaml"), "--replay", str(trace), "--no-wait")
    assert code == 2 and f"{trace}: the file is not UTF-8 text" in err and "codec" not in err
