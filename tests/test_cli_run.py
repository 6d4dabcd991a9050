"""`contractstudio run` and `contractstudio test` as a user sees them: output, files, exit codes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from openai_server import OpenAIServer

from contractstudio.cli import main

HERE = Path(__file__).parent / "runtime_contracts"
QA = HERE / "qa.contract.yaml"
INPUT = {"query": "Why vectors?", "documents": [{"id": "A1", "content": "Vector databases store embeddings."}]}
GOOD = '{"answer": "They store embeddings.", "evidence": [{"doc_id": "A1", "snippet": "store embeddings"}], "coverage_score": 0.9}'
LOW = '{"answer": "x", "evidence": [], "coverage_score": 0.2}'
KEY = "sk-test-cli-1234567890abcdef"


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_run_a_scenario_shows_progress_and_a_summary(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "run", str(QA), "--scenario", "remedied-after-low-coverage", "--no-wait")
    assert code == 0
    assert "qa: scripted:remedied-after-low-coverage" in out
    assert "x Coverage score 0.20 is below the minimum 0.55." in out
    assert "remedy #1" in out and "remedy wait 0.01 s (not waited: --no-wait)" in out
    assert "successful: 2 LLM call(s), 1 remedy attempt(s)" in out
    assert "total_execution" in out and "overhead" in out


def test_run_json_against_a_live_server_with_trace_then_replay(capsys: pytest.CaptureFixture[str], tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    inp = tmp_path / "in.json"
    inp.write_text(json.dumps(INPUT))
    trace = tmp_path / "t.jsonl"
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    with OpenAIServer([LOW, GOOD]) as server:
        code, out, _ = run(capsys, "run", str(QA), "--input", str(inp), "--model", "openai/test-model",
                           "--api-base", server.base_url, "--json", "--no-wait", "--trace", str(trace))
        assert server.requests[0].headers["authorization"] == f"Bearer {KEY}"
    assert code == 0
    data = json.loads(out)
    assert data["successful"] is True and data["llm_calls"] == 2 and data["remedy_attempts"] == 1
    assert data["output"]["coverage_score"] == 0.9 and data["trace"] == str(trace)
    assert set(data["perf"]) >= {"generate", "post", "overhead", "llm"}
    assert KEY not in trace.read_text()
    code, out, _ = run(capsys, "run", str(QA), "--input", str(inp), "--replay", str(trace), "--json", "--no-wait")
    assert code == 0 and json.loads(out)["output"] == data["output"]


def test_run_exits_1_when_the_contract_fails_or_raises(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, out, _ = run(capsys, "run", str(QA), "--scenario", "falls-back", "--no-wait")
    assert code == 1 and "FAILED (fallback returned)" in out and '"answer": "not confident: q"' in out
    raising = tmp_path / "r.contract.yaml"
    raising.write_text(QA.read_text().replace("on_failure: fallback", "on_failure: raise"))
    code, out, _ = run(capsys, "run", str(raising), "--scenario", "falls-back", "--no-wait", "--json")
    data = json.loads(out)
    assert code == 1 and data["raised"] is True and data["output"] is None and len(data["errors"]) == 4


def test_run_usage_errors(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    assert run(capsys, "run", str(tmp_path / "nope.yaml"), "--scenario", "x")[0] == 2
    code, _, err = run(capsys, "run", str(QA))
    assert code == 2 and "an input is needed" in err
    code, _, err = run(capsys, "run", str(QA), "--scenario", "nope")
    assert code == 2 and "has no scenario 'nope' (scenarios: first-time, remedied-after-low-coverage, falls-back)" in err
    bad = tmp_path / "bad.yaml"
    bad.write_text("query: [unclosed\n")
    code, _, err = run(capsys, "run", str(QA), "--input", str(bad))
    assert code == 2 and f"{bad}:2:1: the input is not valid YAML or JSON" in err
    code, _, err = run(capsys, "run", str(QA), "--input", str(bad), "--replay", str(tmp_path / "none.jsonl"))
    assert code == 2


def test_run_refuses_untrusted_hooks(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    inp = tmp_path / "in.yaml"
    inp.write_text("text: hello\n")
    code, _, err = run(capsys, "run", str(HERE / "hooks.contract.yaml"), "--input", str(inp), "--model", "openai/x")
    assert code == 1 and "run only in a trusted workspace" in err and "--trust" in err
    assert "Traceback" not in err


def test_test_command_runs_every_scenario(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, out, _ = run(capsys, "test", str(QA))
    assert code == 0
    assert f"{QA}::qa::first-time PASSED" in out
    assert out.strip().splitlines()[-1] == "3 passed, 0 failed"
    broken = tmp_path / "b.contract.yaml"
    broken.write_text(QA.read_text().replace("expect: {successful: true, llm_calls: 2}", "expect: {successful: true, llm_calls: 2, output: {answer: y}}"))
    code, out, _ = run(capsys, "test", str(broken), str(QA))
    assert code == 1
    assert f"{broken}::qa::remedied-after-low-coverage FAILED" in out
    assert "    output.answer: expected 'y', got 'x'" in out
    assert out.strip().splitlines()[-1] == "5 passed, 1 failed"
    code, out, _ = run(capsys, "test", str(QA), "-k", "falls")
    assert out.strip().splitlines()[-1] == "1 passed, 0 failed"


def test_run_reads_the_input_from_stdin(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    import io

    monkeypatch.setattr("sys.stdin", io.StringIO(json.dumps(INPUT)))
    code, out, _ = run(capsys, "run", str(QA), "--input", "-", "--replay",
                       str(Path(__file__).resolve().parent.parent / "samples" / "traces" / "multidoc_qa.answered-first-time.jsonl"),
                       "--json", "--no-wait")
    data = json.loads(out)
    assert code == 0 and data["llm_calls"] == 1  # the input came from stdin, the reply from the recording
    assert data["output"]["evidence"][0]["doc_id"] == "B2"


def test_pipeline_events_share_the_trace_format(tmp_path: Path) -> None:
    from contractstudio.runtime.trace import Trace

    events = [{"seq": 0, "t": 0.0, "stage": "pipeline", "type": "step_start", "step": "route"}]
    path = tmp_path / "p.jsonl"
    Trace.from_dicts(events).write(path)
    assert Trace.read(path)[0]["step"] == "route"
