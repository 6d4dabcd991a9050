"""`contractstudio run` and `contractstudio test` as a user sees them: output, files, exit codes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from openai_server import OpenAIServer

from contractstudio.cli import main

HERE = Path(__file__).parent / "runtime_contracts"
SAMPLES = Path(__file__).resolve().parent.parent / "samples"
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
    broken.write_text(QA.read_text().replace("expect: {successful: true, llm_calls: 2}",
                                             "expect: {successful: true, llm_calls: 2, output: {answer: y}}"))
    code, out, _ = run(capsys, "test", str(broken), str(QA))
    assert code == 1
    assert f"{broken}::qa::remedied-after-low-coverage FAILED" in out
    assert "    output.answer: expected 'y', got 'x'" in out
    assert out.strip().splitlines()[-1] == "5 passed, 1 failed"
    code, out, _ = run(capsys, "test", str(QA), "-k", "falls")
    assert out.strip().splitlines()[-1] == "1 passed, 0 failed"


def test_expect_output_matches_inside_lists(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """Issue 21.14: an object inside a list is matched as a subset too, element by element, like one outside a list."""
    def scenario(output: str) -> Path:
        path = tmp_path / "l.contract.yaml"
        path.write_text(QA.read_text().replace("expect: {successful: true, llm_calls: 2}",
                                               f"expect: {{successful: true, llm_calls: 2, output: {output}}}"))
        return path
    code, out, _ = run(capsys, "test", str(scenario("{evidence: [{doc_id: A1}]}")), "-k", "remedied")
    assert code == 0 and out.strip().splitlines()[-1] == "1 passed, 0 failed"
    code, out, _ = run(capsys, "test", str(scenario("{evidence: [{doc_id: B2}]}")), "-k", "remedied")
    assert code == 1 and "    output.evidence[0].doc_id: expected 'B2', got 'A1'" in out
    code, out, _ = run(capsys, "test", str(scenario("{evidence: [{doc_id: A1}, {doc_id: A1}]}")), "-k", "remedied")
    assert code == 1 and "    output.evidence: expected a list of 2 item(s), got 1" in out


def test_json_given_where_a_file_is_expected_says_how_to_pass_it(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys, "run", str(SAMPLES / "multidoc_qa.contract.yaml"), "--input", '{"query": "x"}')
    assert code == 2
    assert "no such file: {\"query\": \"x\"}" in err
    assert "--input takes a file (or - for stdin), not JSON itself: echo '{...}' | contractstudio run CONTRACT --input -" in err


def test_run_reads_the_input_from_stdin(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    import io

    given = {"query": "What do vector databases store?",
             "documents": [{"id": "B2", "content": "Vector databases store embeddings. They answer queries quickly."}]}
    monkeypatch.setattr("sys.stdin", io.StringIO(json.dumps(given)))
    trace = tmp_path / "t.jsonl"
    code, out, _ = run(capsys, "run", str(SAMPLES / "multidoc_qa.contract.yaml"), "--input", "-", "--replay",
                       str(SAMPLES / "traces" / "multidoc_qa.answered-first-time.jsonl"), "--json", "--no-wait", "--trace", str(trace))
    data = json.loads(out)
    assert code == 0 and data["llm_calls"] == 1  # the input came from stdin, the reply from the recording
    assert data["output"]["evidence"][0]["doc_id"] == "B2"
    assert json.loads(trace.read_text().splitlines()[0])["value"] == given


def test_pipeline_events_share_the_trace_format(tmp_path: Path) -> None:
    from contractstudio.runtime.trace import Trace

    events = [{"seq": 0, "t": 0.0, "stage": "pipeline", "type": "step_start", "step": "route"}]
    path = tmp_path / "p.jsonl"
    Trace.from_dicts(events).write(path)
    assert Trace.read(path)[0]["step"] == "route"


# Output paths checked before the call; a failed trace never hides the result (issue 9.10) -------------------------


def test_a_trace_into_a_missing_folder_is_refused_before_the_call(capsys: pytest.CaptureFixture[str], tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    inp = tmp_path / "in.json"
    inp.write_text(json.dumps(INPUT))
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    with OpenAIServer([GOOD]) as server:
        code, out, err = run(capsys, "run", str(QA), "--input", str(inp), "--model", "openai/test-model",
                             "--api-base", server.base_url, "--trace", str(tmp_path / "missing" / "t.jsonl"))
        assert server.requests == []  # nothing was paid for
    assert code == 2 and "cannot write the trace" in err and "does not exist" in err and "internal error" not in err


def test_a_trace_that_cannot_be_written_never_hides_the_result(capsys: pytest.CaptureFixture[str], tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    from contractstudio.runtime.trace import Trace

    def disk_full(self: Trace, path: object, **_: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(Trace, "write", disk_full)
    code, out, err = run(capsys, "run", str(QA), "--scenario", "first-time", "--no-wait", "--trace", str(tmp_path / "t.jsonl"))
    assert "successful: 1 LLM call(s)" in out and '"answer"' in out  # the result is shown
    assert code == 1 and "the trace was not written" in err and "No space left on device" in err
    code, out, err = run(capsys, "run", str(QA), "--scenario", "first-time", "--no-wait", "--json", "--trace", str(tmp_path / "t.jsonl"))
    data = json.loads(out)
    assert code == 1 and data["successful"] is True and data["trace"] is None and "No space left" in data["trace_error"]


# Contradicting options (issue 9.13) -------------------------------------------------------------------------------


def test_contradicting_options_are_refused(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    inp = tmp_path / "in.json"
    inp.write_text(json.dumps(INPUT))
    trace = SAMPLES / "traces" / "multidoc_qa.answered-first-time.jsonl"
    code, _, err = run(capsys, "run", str(QA), "--scenario", "first-time", "--replay", str(trace))
    assert code == 2 and "--replay and --scenario both give the model's replies" in err
    code, _, err = run(capsys, "run", str(QA), "--input", str(inp), "--replay", str(trace))
    assert code == 2 and "was recorded for the contract 'multidoc_qa', not for 'qa'" in err


def test_harmless_combinations_are_noted(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, out, err = run(capsys, "run", str(QA), "--scenario", "first-time", "--model", "openai/gpt-4o", "--no-wait")
    assert code == 0 and "successful" in out
    assert "note: --model is not used: the replies come from the scenario's scripted replies" in err
    inp = tmp_path / "in.json"
    inp.write_text(json.dumps({**INPUT, "query": "Another question?"}))
    code, out, err = run(capsys, "run", str(QA), "--scenario", "first-time", "--input", str(inp), "--no-wait", "--json")
    assert code == 0 and json.loads(out)["successful"] is True
    assert "note: --input replaces the input of scenario 'first-time'; its scripted replies are used" in err


def test_test_with_no_scenario_to_run_fails(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    empty = tmp_path / "none.contract.yaml"
    empty.write_text("\n".join(line for line in QA.read_text().split("scenarios:")[0].splitlines()) + "\n")
    code, out, _ = run(capsys, "test", str(empty))
    assert code == 1 and out.strip().splitlines()[-1] == "no scenarios ran: the files hold no scenarios"
    code, out, _ = run(capsys, "test", str(QA), "-k", "no-such-scenario")
    assert code == 1 and out.strip().splitlines()[-1] == "no scenarios ran: -k 'no-such-scenario' selected none of 3"


@pytest.mark.parametrize("token", ["NaN", "Infinity", "-Infinity"])
def test_replay_refuses_a_trace_line_holding_a_non_finite_number_with_its_position(
        capsys: pytest.CaptureFixture[str], tmp_path: Path, token: str) -> None:
    recorded = SAMPLES / "traces" / "multidoc_qa.answered-first-time.jsonl"
    lines = recorded.read_text().splitlines()
    lines[2] = lines[2].replace('"seq": 3', f'"seq": 3, "cost": {token}', 1)
    trace = tmp_path / "t.jsonl"
    trace.write_text("\n".join(lines) + "\n")
    code, _, err = run(capsys, "run", str(SAMPLES / "multidoc_qa.contract.yaml"), "--replay", str(trace), "--no-wait")
    assert code == 2 and f"t.jsonl:3: not a JSON line: {token} is not a JSON number" in err


@pytest.mark.parametrize("source", [QA, SAMPLES / "local" / "sentiment.contract.yaml"], ids=["with-scenarios", "without"])
def test_a_recorded_call_saved_as_a_scenario_is_replayed_offline_by_test(capsys: pytest.CaptureFixture[str], tmp_path: Path,
                                                                         source: Path) -> None:
    # a call recorded in a trace (here from scripted replies; tests/test_real_model_cli.py records a live one), run
    # again from its trace with --save-scenario: the scenario `test` then replays offline
    contract = tmp_path / source.name
    contract.write_text(source.read_text())
    sentiment = "sentiment" in source.name
    replies = tmp_path / "replies.jsonl"
    replies.write_text("\n".join(json.dumps(r) for r in (['{"label": "pos", "reason": "loves it"}'] if sentiment else [LOW, GOOD])))
    inp = tmp_path / "in.json"
    inp.write_text(json.dumps({"text": "I love this phone"} if sentiment else INPUT))
    trace = tmp_path / "call.jsonl"
    code, out, err = run(capsys, "run", str(contract), "--input", str(inp), "--replies", str(replies), "--no-wait",
                         "--trace", str(trace))
    assert code == 0, out + err
    code, out, err = run(capsys, "run", str(contract), "--replay", str(trace), "--no-wait", "--save-scenario", "kept-call")
    assert code == 0, out + err
    assert f"scenario 'kept-call' added to {contract}" in out
    assert contract.read_text().startswith(source.read_text())  # every character as written, the scenario after it
    code, out, err = run(capsys, "test", str(contract), "-k", "kept-call")
    assert code == 0, out + err
    assert "::kept-call PASSED" in out and "1 passed, 0 failed" in out
    contract.write_text(contract.read_text().replace("coverage_score: 0.9", "coverage_score: 0.8")
                        .replace("reason: loves it", "reason: hates it"))
    code, out, _ = run(capsys, "test", str(contract), "-k", "kept-call")  # the scenario holds what the call gave
    assert code == 1 and "kept-call FAILED" in out
    code, out, err = run(capsys, "run", str(contract), "--input", str(inp), "--scenario", "kept-call",
                         "--save-scenario", "again")
    assert code == 2 and "scripted already" in err


def test_saving_a_scenario_under_a_name_taken_keeps_the_file_and_says_so(capsys: pytest.CaptureFixture[str],
                                                                         tmp_path: Path) -> None:
    contract = tmp_path / QA.name
    contract.write_text(QA.read_text())
    trace = tmp_path / "t.jsonl"
    code, _, _ = run(capsys, "run", str(contract), "--scenario", "remedied-after-low-coverage", "--no-wait", "--trace", str(trace))
    assert code == 0
    code, out, err = run(capsys, "run", str(contract), "--replay", str(trace), "--save-scenario", "remedied-after-low-coverage")
    assert code == 1 and "successful" in out
    assert "the scenario was not saved" in err and "has a scenario named 'remedied-after-low-coverage' already" in err
    assert contract.read_text() == QA.read_text()
