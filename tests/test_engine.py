"""The engine with the scripted model: stages, remedies that repair, waits, fallback/raise, stepping, perf."""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path

import pytest

import contractstudio as cs
from contractstudio.runtime.call_state import CallOptions, TransportRetry, remedy_wait
from contractstudio.runtime.models import ScriptedModel, TransportFault

HERE = Path(__file__).parent / "runtime_contracts"
QA = HERE / "qa.contract.yaml"
INPUT = {"query": "Why vectors?", "documents": [{"id": "A1", "content": "Vector databases store embeddings."}]}
GOOD = '{"answer": "They store embeddings.", "evidence": [{"doc_id": "A1", "snippet": "store embeddings"}], "coverage_score": 0.9}'
LOW = '{"answer": "x", "evidence": [], "coverage_score": 0.2}'
NO_WAIT = CallOptions(wait=False)


def qa(**kw: object) -> cs.Contract:  # type: ignore[name-defined]
    return cs.load(QA, **kw)


def requests(result) -> list[list[dict[str, str]]]:
    return [e["messages"] for e in result.trace.of_type("llm_request")]


def stage_starts(result) -> list[str]:
    return [e.stage for e in result.trace.of_type("stage_start")]


def test_success_first_time_runs_every_stage_in_order() -> None:
    result = qa().call(INPUT, [GOOD], options=NO_WAIT)
    assert result.successful and result.attempts == 0 and result.llm_calls == 1
    assert result.output.answer == "They store embeddings."
    assert stage_starts(result) == ["input", "pre", "act", "generate", "post", "forward", "finalize"]
    messages = requests(result)[0]
    assert [m["role"] for m in messages] == ["system", "user"]
    assert "coverage_score (float, required, >= 0.0, <= 1.0): Coverage." in messages[0]["content"]
    assert '"selected_sentences"' in messages[1]["content"]  # the act value is what the model sees
    last = result.trace[-1]
    assert last.type == "result" and last["successful"] is True and last["llm_calls"] == 1


def test_unparseable_reply_is_repaired_with_the_reply_and_the_error() -> None:
    result = qa().call(INPUT, ["Sure! Here is the answer: {oops", GOOD], options=NO_WAIT)
    assert result.successful and result.attempts == 1 and result.llm_calls == 2
    first, repair = requests(result)
    assert repair[:2] == first  # the same task and input ...
    assert repair[2] == {"role": "assistant", "content": "Sure! Here is the answer: {oops"}  # ... the rejected reply ...
    assert "the reply is not valid JSON" in repair[3]["content"]  # ... and why
    purposes = [e["purpose"] for e in result.trace.of_type("llm_request")]
    assert purposes == ["generate", "remedy_post"]


def test_post_violation_is_repaired_and_names_the_constraint() -> None:
    result = qa().call(INPUT, [LOW, GOOD], options=NO_WAIT)
    assert result.successful and result.attempts == 1
    repair = requests(result)[1]
    assert repair[2]["content"] == LOW
    assert ("1. Coverage score 0.20 is below the minimum 0.55. "
            "(condition: output.coverage_score >= 0.55; output.coverage_score = 0.2)") in repair[3]["content"]


def test_type_errors_name_the_path_the_value_and_the_constraint() -> None:
    bad = '{"answer": "x", "evidence": [{"doc_id": 5}], "coverage_score": 1.7, "extra": true}'
    result = qa().call(INPUT, [bad, GOOD], options=NO_WAIT)
    errors = result.trace.of_type("validation_error")[0]["errors"]
    assert "output.coverage_score = 1.7: Input should be less than or equal to 1 (constraint: le=1.0)" in errors
    assert "output.evidence[0].doc_id = 5: Input should be a valid string" in errors
    assert "output.evidence[0].snippet: required field is missing" in errors
    assert ("output.extra = true: this field is not declared (constraint: extra: forbid, only the declared fields are allowed)"
            in errors)


def test_fenced_json_is_read() -> None:
    result = qa().call(INPUT, ["Here you go:\n```json\n" + GOOD + "\n```\nAnything else?"], options=NO_WAIT)
    assert result.successful and result.llm_calls == 1


def _accumulating(tmp_path: Path, accumulate: bool) -> cs.Contract:  # type: ignore[name-defined]
    text = QA.read_text().replace("retry: {tries: 2,", f"accumulate_errors: {str(accumulate).lower()}\n  retry: {{tries: 3,")
    path = tmp_path / "qa.contract.yaml"
    path.write_text(text)
    return cs.load(path)


def test_accumulated_errors_are_numbered_oldest_first(tmp_path: Path) -> None:
    result = _accumulating(tmp_path, True).call(INPUT, ["not json", LOW, GOOD], options=NO_WAIT)
    assert result.successful and result.attempts == 2
    last = requests(result)[2][-1]["content"]
    assert "every error so far, oldest first" in last
    assert last.index("1. the reply is not valid JSON") < last.index("2. Coverage score 0.20")
    assert requests(result)[2][-2]["content"] == LOW  # the latest rejected reply is the one repaired


def test_without_accumulation_only_the_last_error_is_sent(tmp_path: Path) -> None:
    result = _accumulating(tmp_path, False).call(INPUT, ["not json", LOW, GOOD], options=NO_WAIT)
    last = requests(result)[2][-1]["content"]
    assert "Coverage score 0.20" in last and "not valid JSON" not in last


def test_exhausted_then_fallback_uses_the_original_input() -> None:
    result = qa().call(INPUT, [LOW, LOW, LOW], options=NO_WAIT)
    assert not result.successful and result.attempts == 2 and result.llm_calls == 3
    assert result.output.answer == "not confident: Why vectors?"
    assert result.output.coverage_score == 0.0
    assert "remedy (post) gave up after 2 attempts" in result.errors
    assert result.trace.of_type("remedy_exhausted")[0]["graceful"] is False


def test_graceful_exhaustion_fails_without_the_give_up_error(tmp_path: Path) -> None:
    path = tmp_path / "g.contract.yaml"
    path.write_text(QA.read_text().replace("max_delay: 0.05}", "max_delay: 0.05, graceful: true}"))
    result = cs.load(path).call(INPUT, [LOW, LOW, LOW], options=NO_WAIT)
    assert not result.successful and not any("gave up" in e for e in result.errors)


def test_exhausted_then_raise_carries_every_error_and_the_trace(tmp_path: Path) -> None:
    path = tmp_path / "r.contract.yaml"
    path.write_text(QA.read_text().replace("on_failure: fallback", "on_failure: raise"))
    with pytest.raises(cs.ContractViolation) as info:
        cs.load(path).call(INPUT, ["nope", LOW, LOW], options=NO_WAIT)
    err = info.value
    assert err.errors[0].startswith("the reply is not valid JSON")
    assert sum("Coverage score 0.20" in e for e in err.errors) == 2
    assert err.trace is not None and err.trace[-1].type == "result" and err.trace[-1]["raised"] is True
    assert "1. the reply is not valid JSON" in str(err)


def test_remedy_waits_follow_the_formula_and_are_shown_when_skipped() -> None:
    from contractstudio.documents.models import Retry

    R = Retry(delay=0.5, backoff=2.0, max_delay=15.0, jitter=0.1)
    assert remedy_wait(R, 1, 0.0) == 0.5
    assert remedy_wait(R, 3, 0.1) == pytest.approx(0.5 * 4 * 1.1)
    assert remedy_wait(R, 10, 0.0) == 15.0
    slept: list[float] = []
    rng = random.Random(7)
    expected = random.Random(7)
    opts = CallOptions(wait=True, rng=rng, sleep=slept.append)
    result = qa().call(INPUT, [LOW, LOW, GOOD], options=opts)
    waits = result.trace.of_type("retry_wait")
    assert [w["attempt"] for w in waits] == [1, 2]
    for i, w in enumerate(waits, 1):
        u = expected.uniform(-0.1, 0.1)
        assert w["seconds"] == pytest.approx(min(0.01 * 2 ** (i - 1) * (1 + u), 0.05))
    assert slept == [w["seconds"] for w in waits]
    skipped = qa().call(INPUT, [LOW, GOOD], options=CallOptions(wait=False, sleep=slept.append))
    assert skipped.trace.of_type("retry_wait")[0]["waited"] is False and len(slept) == 2


def test_without_an_rng_each_wait_is_jittered_within_its_bounds() -> None:
    """A call given no `rng` draws its jitter from the system's randomness (nothing seeded per call, issue 36.10):
    each wait stays within delay * (1 +/- jitter), and the calls do not all wait the same."""
    contract = qa()
    waits = [contract.call(INPUT, [LOW, GOOD], options=NO_WAIT).trace.of_type("retry_wait")[0]["seconds"]
             for _ in range(20)]
    assert all(0.01 * 0.9 - 1e-12 <= w <= 0.01 * 1.1 + 1e-12 for w in waits)
    assert len(set(waits)) > 1


def test_calls_share_nothing() -> None:
    contract = qa()
    first = contract.call(INPUT, ["nope", GOOD], options=NO_WAIT)
    second = contract.call(INPUT, [GOOD], options=NO_WAIT)
    assert requests(second) == [requests(first)[0]]  # no remedy context leaks into the next call
    assert second.attempts == 0 and second.errors == []


def test_invalid_input_raises_without_calling_the_model_even_with_a_fallback() -> None:
    with pytest.raises(cs.InvalidInput) as info:
        qa().call({"query": 3}, [], options=NO_WAIT)  # no reply is scripted: no model call may happen
    assert info.value.errors == ["input.query = 3: Input should be a valid string", "input.documents: required field is missing"]
    assert info.value.trace is not None and info.value.trace[-1]["raised"] is True


def test_a_fallback_that_cannot_be_computed_fails_loudly(tmp_path: Path) -> None:
    path = tmp_path / "f.contract.yaml"  # a valid input, and a fallback that reads past the end of its list
    path.write_text(QA.read_text().replace("""answer: "'not confident: ' + input.query\"""",
                                           """answer: "'not confident: ' + input.documents[5].id\""""))
    with pytest.raises(cs.ContractViolation) as info:
        cs.load(path).call(INPUT, ["no", "no", "no"], options=NO_WAIT)
    assert not isinstance(info.value, (cs.InvalidInput, cs.InvalidOutput, cs.ConditionFailed))  # the fallback failed last
    assert info.value.errors[-1].startswith("fallback.answer: ")


def test_pre_remedy_corrects_the_input_and_forward_gets_the_original_on_failure() -> None:
    contract = cs.load(HERE / "pre_remedy.contract.yaml")
    ok = contract.call({"name": " "}, ['{"name": "Ann"}', '{"text": "Hi Ann!"}'], options=NO_WAIT)
    assert ok.successful and ok.output.text == "Hi Ann!"
    remedy = ok.trace.of_type("llm_request")[0]
    assert remedy["purpose"] == "remedy_pre" and remedy.stage == "pre"
    assert "1. The name must not be empty." in remedy["messages"][1]["content"]
    failed = contract.call({"name": " "}, ['{"name": "Ann"}', '{"text": "Hi!"}', '{"text": "Hey!"}', '{"text": "Yo"}'], options=NO_WAIT)
    assert not failed.successful
    assert failed.output.text == "Hello,  "  # the fallback saw the original input, not the corrected one


def test_call_order_pre_act_post_forward_with_trusted_hooks() -> None:
    sys.path.insert(0, str(HERE))
    import order_hooks

    order_hooks.CALLS.clear()
    contract = cs.load(HERE / "hooks.contract.yaml", trust=True)
    result = contract.call({"text": " hello "}, ['{"summary": "bad"}', '{"summary": "bad"}'], options=NO_WAIT)
    assert order_hooks.CALLS == ["pre", "act", "post", "post"]
    assert stage_starts(result)[-2:] == ["forward", "finalize"]
    assert result.output.summary == "fallback for  hello "  # forward got the original input
    assert "the summary says bad" in result.errors


def test_untrusted_hooks_are_refused_with_a_clear_message() -> None:
    contract = cs.load(HERE / "hooks.contract.yaml")
    with pytest.raises(cs.ContractError, match=r"uses Python hooks .*order_hooks:pre_check.*--trust"):
        contract.call({"text": "x"}, ['{"summary": "ok"}'], options=NO_WAIT)


def test_perf_stats_accumulate_and_add_up() -> None:
    contract = qa()
    result = None
    for replies in ([GOOD], [LOW, GOOD], ["x", LOW, GOOD]):
        result = contract.call(INPUT, replies, options=NO_WAIT)
    stats = result.perf_stats()
    assert stats == contract.perf_stats()
    assert stats["generate"]["count"] == 1 + 2 + 3 and stats["input"]["count"] == 3
    for name in ("input", "pre", "act", "generate", "post", "forward", "finalize"):
        e = stats[name]
        assert set(e) >= {"count", "total", "mean", "std", "min", "max", "percentage"}
        assert e["min"] <= e["mean"] <= e["max"]
    share = sum(stats[s]["percentage"] for s in stats if s not in ("llm", "total_execution"))
    assert share == pytest.approx(100.0, abs=1.0)
    assert stats["llm"]["calls"] == 6
    assert result.perf_stats(cumulative=False)["generate"]["count"] == 3
    assert "overhead" in contract.perf_table() and "total_execution" in contract.perf_table()


def test_transport_faults_are_retried_without_consuming_remedies() -> None:
    fault = TransportFault("rate limited", kind="rate_limit", retryable=True, status=429, exc_class="RateLimitError")
    model = ScriptedModel([fault, fault, LOW, GOOD])
    opts = CallOptions(wait=False, transport=TransportRetry(tries=3, delay=0.001))
    result = qa().call(INPUT, model, options=opts)
    assert result.successful and result.attempts == 1 and result.llm_calls == 2
    errors = result.trace.of_type("transport_error")
    assert [(e["status"], e["retry"], e["gave_up"]) for e in errors] == [(429, 1, False), (429, 2, False)]
    assert result.perf_stats(cumulative=False)["llm"]["transport_retries"] == 2


def test_authentication_errors_are_not_retried() -> None:
    auth = TransportFault("bad key sk-live-abcdefgh123", kind="authentication", retryable=False, status=401,
                          exc_class="AuthenticationError")
    result = qa().call(INPUT, ScriptedModel([auth, GOOD]), options=NO_WAIT)
    assert not result.successful and result.llm_calls == 0
    assert len(result.trace.of_type("transport_error")) == 1
    assert "not retried" in result.errors[0] and "sk-live" not in result.errors[0]


def test_scripted_model_running_out_is_a_clear_failure() -> None:
    result = qa().call(INPUT, [LOW], options=NO_WAIT)
    assert not result.successful
    assert any("the scripted model has 1 reply but the contract made LLM call 2" in e for e in result.errors)


def test_trace_jsonl_roundtrip_and_replay(tmp_path: Path) -> None:
    contract = qa()
    out = tmp_path / "t.jsonl"
    first = contract.call(INPUT, [LOW, GOOD], options=NO_WAIT, trace=out)
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    assert [d["seq"] for d in lines] == list(range(1, len(first.trace) + 1))
    assert {"seq", "t", "stage", "type"} <= set(lines[0])
    replayed = contract.replay(INPUT, out, options=NO_WAIT)
    assert replayed.successful and replayed.output == first.output
    assert not replayed.trace.of_type("replay_divergence")
    changed = contract.replay({**INPUT, "query": "Why graphs?"}, out, options=NO_WAIT)
    note = changed.trace.of_type("replay_divergence")[0]["message"]
    assert note.startswith("request 1 differs from the recording: message 2 (user) changed at line")
    assert "Why vectors?" in note and "Why graphs?" in note


def test_stepping_is_the_same_run_paused(tmp_path: Path) -> None:
    contract = qa()
    whole = contract.call(INPUT, [LOW, GOOD], options=NO_WAIT)
    session = contract.session(INPUT, [LOW, GOOD])
    stepped = []
    while (event := session.step()) is not None:
        stepped.append((event.stage, event.type))
    assert stepped == [(e.stage, e.type) for e in whole.trace]
    assert session.result.successful and session.result.output == whole.output


def test_breakpoints_pause_at_stage_starts() -> None:
    session = qa().session(INPUT, [LOW, GOOD], breakpoints={"post"})
    first = session.continue_()
    assert (first.stage, first.type, first["attempt"]) == ("post", "stage_start", 0)
    second = session.continue_()
    assert (second.stage, second["attempt"]) == ("post", 1)
    assert session.continue_() is None and session.result.successful


def test_the_studio_can_edit_the_reply_and_the_error_text() -> None:
    session = qa().session(INPUT, [LOW, "unused"])
    while (event := session.step()) is not None:
        if event.type == "validation_error":
            session.edit_errors(["Please cite the document A1."])
        elif event.type == "llm_request" and event["purpose"] == "remedy_post":
            assert event["messages"][-1]["content"].count("Please cite the document A1.") == 1
            session.edit_reply(GOOD)
    result = session.result
    assert result.successful and result.output.coverage_score == 0.9
    assert result.trace.of_type("llm_response")[-1]["edited"] is True
    with pytest.raises(RuntimeError):
        session.edit_reply("x")


def test_load_refuses_a_file_with_errors(tmp_path: Path) -> None:
    path = tmp_path / "bad.contract.yaml"
    path.write_text(QA.read_text().replace("output: Answer\n", ""))
    with pytest.raises(cs.ContractError) as info:
        cs.load(path)
    assert info.value.diagnostics and any(d.code == "SCH101" for d in info.value.diagnostics)
    assert "SCH101 missing required key 'output'" in str(info.value)


SAMPLES = Path(__file__).resolve().parent.parent / "samples"


@pytest.mark.parametrize("trace", sorted((SAMPLES / "traces").glob("*.jsonl")), ids=lambda p: p.name)
def test_sample_traces_replay_without_divergence(trace: Path) -> None:
    from contractstudio.runtime.trace import Trace

    recorded = Trace.read(trace)
    start = recorded[0]
    assert start.type == "stage_start" and start.stage == "input"
    contract = cs.load(SAMPLES / f"{start['contract']}.contract.yaml")
    from contractstudio.runtime.models import ReplayModel

    # a divergence means the engine's messages changed: regenerate (samples/traces/README.md)
    result = contract.session(start["value"], ReplayModel(trace, strict=True)).run(raise_on_violation=False)
    assert result.trace[-1]["raised"] == recorded[-1]["raised"]
    assert result.trace[-1]["output"] == recorded[-1]["output"]
    assert result.llm_calls == recorded[-1]["llm_calls"]


def test_offline_runs_never_import_litellm() -> None:
    import subprocess

    code = (
        "import sys, contractstudio as cs\n"
        f"c = cs.load({str(QA)!r})\n"
        f"r = c.call({INPUT!r}, [{GOOD!r}], wait=False)\n"
        "assert r.successful\n"
        "print(sorted(m for m in ('litellm', 'openai', 'textual') if m in sys.modules))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_valid_json_of_the_wrong_shape_is_remedied() -> None:
    result = qa().call(INPUT, ['[{"answer": "x"}]', '"just a string"', GOOD], options=NO_WAIT)
    assert result.successful and result.attempts == 2
    assert result.errors[0] == 'output = [{"answer": "x"}]: expected a JSON object (Answer), got a JSON array'
    assert result.errors[1] == 'output = "just a string": expected a JSON object (Answer), got a string'


def test_edited_messages_are_what_the_trace_records() -> None:
    session = qa().session(INPUT, [GOOD])
    while (event := session.step()) is not None:
        if event.type == "llm_request":
            session.edit_messages([{"role": "user", "content": "edited"}])
    request = session.result.trace.of_type("llm_request")[0]
    assert request["messages"] == [{"role": "user", "content": "edited"}] and request["edited"] is True


def test_a_missing_key_is_an_authentication_fault_not_a_server_error() -> None:
    from contractstudio.runtime.live_faults import classify

    class InternalServerError(Exception):
        status_code = 500

    FakeLitellm = type("FakeLitellm", (), {"InternalServerError": InternalServerError})

    fault = classify(InternalServerError("OpenAIException - Missing credentials. Please pass an `api_key`"), FakeLitellm)
    assert (fault.kind, fault.retryable, fault.status) == ("authentication", False, None)
    refused = classify(InternalServerError("OpenAIException - Connection error."), FakeLitellm)
    assert (refused.kind, refused.retryable, refused.status) == ("connection", True, None)
    server = classify(InternalServerError("boom"), FakeLitellm)
    assert (server.kind, server.retryable, server.status) == ("server", True, 500)


_REPLIES = [GOOD, LOW, "", "null", "[]", "{", '{"answer": 1}', "```json\n" + GOOD + "\n```", "```\n{}\n```",
            '{"answer": "x", "evidence": [], "coverage_score": NaN}',
            '{"answer": "x", "evidence": [{"doc_id": "A1", "snippet": "s"}], "coverage_score": 1e309}', "\x00\ufeff{}", GOOD[:-1]]


def test_any_replies_end_in_a_result_never_a_crash() -> None:
    from hypothesis import given, settings
    from hypothesis import strategies as st

    contract = qa()

    @settings(max_examples=150, deadline=None, database=None)
    @given(st.lists(st.one_of(st.sampled_from(_REPLIES), st.text(max_size=80)), min_size=0, max_size=4))
    def run(replies: list[str]) -> None:
        result = contract.call(INPUT, replies, options=NO_WAIT)
        assert result.llm_calls <= 3 and result.trace[-1].type == "result"
        assert result.successful == (result.output is not None and result.output.coverage_score >= 0.55)
        json.dumps(result.trace.to_dicts())  # every event stays writable

    run()


def test_without_post_remedy_a_rejected_reply_fails_the_contract(tmp_path: Path) -> None:
    path = tmp_path / "np.contract.yaml"
    text = QA.read_text().split("scenarios:")[0]  # its scenarios expect remedies
    path.write_text(text.replace("remedy:\n", "remedy:\n  post: false\n"))
    result = cs.load(path).call(INPUT, [LOW, GOOD], options=NO_WAIT)
    assert not result.successful and result.llm_calls == 1 and result.attempts == 0
    assert result.output.answer == "not confident: Why vectors?"


MANY_ERRORS = '{"answer": "x", "evidence": [{"doc_id": 5}], "coverage_score": 1.7}'


def test_without_accumulation_the_heading_does_not_claim_every_error_so_far(tmp_path: Path) -> None:
    result = _accumulating(tmp_path, False).call(INPUT, ["not json", MANY_ERRORS, GOOD], options=NO_WAIT)
    last = requests(result)[2][-1]["content"]
    assert "2. " in last and "not valid JSON" not in last  # several errors, all from the last attempt
    assert "## Why it was rejected\n" in last and "every error so far" not in last


def test_with_accumulation_the_heading_says_every_error_so_far_from_the_first_remedy(tmp_path: Path) -> None:
    result = _accumulating(tmp_path, True).call(INPUT, [LOW, GOOD], options=NO_WAIT)
    first_remedy = requests(result)[1][-1]["content"]
    assert "## Why it was rejected (every error so far, oldest first)\n1. Coverage score 0.20" in first_remedy


def _pre_remedy(tmp_path: Path, accumulate: bool) -> cs.Contract:  # type: ignore[name-defined]
    text = (HERE / "pre_remedy.contract.yaml").read_text()
    path = tmp_path / "pre.contract.yaml"
    path.write_text(text.replace("accumulate_errors: true", f"accumulate_errors: {str(accumulate).lower()}")
                    .replace("tries: 2", "tries: 3"))
    return cs.load(path)


@pytest.mark.parametrize("accumulate", [True, False])
def test_the_pre_remedy_loop_follows_accumulate_errors(tmp_path: Path, accumulate: bool) -> None:
    replies = ['{"name": 7}', '{"name": "Ann"}', '{"text": "Hi Ann!"}']
    result = _pre_remedy(tmp_path, accumulate).call({"name": " "}, replies, options=NO_WAIT)
    assert result.successful
    second = [e for e in result.trace.of_type("llm_request") if e["purpose"] == "remedy_pre"][1]["messages"][-1]["content"]
    assert "input.name = 7: Input should be a valid string" in second
    assert ("The name must not be empty." in second) is accumulate  # the first attempt's error, only when accumulating
    assert ("every error so far, oldest first" in second) is accumulate
