"""LLM faults beyond the runtime issue's list, at the engine against a real server on 127.0.0.1 (litellm as the client).

Slow streams (a trickled body, a body that stops half way), valid JSON of the
wrong shape, runaway replies of megabytes, and 200 replies that are not a
completion at all: no crash, no hang, and the trace says what happened.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from openai_server import OpenAIServer, Reply

import contractstudio as cs
from contractstudio.runtime.asking import TRACE_TEXT_LIMIT
from contractstudio.runtime.call_state import CallOptions, TransportRetry
from contractstudio.runtime.messages import REMEDY_REPLY_LIMIT

QA = Path(__file__).parent / "runtime_contracts" / "qa.contract.yaml"
INPUT = {"query": "Why vectors?", "documents": [{"id": "A1", "content": "Vector databases store embeddings."}]}
GOOD = '{"answer": "They store embeddings.", "evidence": [{"doc_id": "A1", "snippet": "store embeddings"}], "coverage_score": 0.9}'
KEY = "sk-test-faults-5a4b3c2d1e0f"
OPTS = CallOptions(wait=False, transport=TransportRetry(tries=2, delay=0.001, max_delay=0.01))
DEEP = "the reply nests arrays/objects more than 200 levels deep; no output type needs that"
TIMEOUT = 0.3  # seconds: the slow-stream tests end within a few of these, never at the server's pace


@pytest.fixture(scope="module")
def server():
    with OpenAIServer() as srv:
        yield srv


def call(server: OpenAIServer, *replies: Reply | str, timeout: float = 5.0):
    server.script(*replies)
    contract = cs.load(QA)
    contract.doc.llm.timeout_s = timeout
    return contract.call(INPUT, "openai/test-model", api_base=server.base_url, api_key=KEY, options=OPTS)


# ----------------------------------------------------------------- slow streams


@pytest.mark.timeout(30)
def test_a_trickled_body_ends_in_a_traced_timeout_that_is_retried(server: OpenAIServer) -> None:
    # 4 bytes every 50 ms: each read is well within the timeout, the whole body would take about 6 s
    result = call(server, Reply(GOOD, trickle=0.05), GOOD, timeout=TIMEOUT)
    assert result.successful and result.attempts == 0 and result.llm_calls == 1
    [error] = result.trace.of_type("transport_error")
    assert (error["kind"], error["exception"], error["retryable"], error["gave_up"]) == ("timeout", "Timeout", True, False)
    assert error["message"].startswith("the server answered HTTP 200, but the whole reply did not arrive within 0.3 s: "
                                       "it sent the body too slowly or stopped (")
    assert result.trace.of_type("retry_wait")[0]["kind"] == "transport"


@pytest.mark.timeout(30)
def test_a_server_that_always_trickles_fails_the_call_after_the_transport_retries(server: OpenAIServer) -> None:
    result = call(server, Reply(GOOD, trickle=0.05), timeout=TIMEOUT)
    assert not result.successful and result.llm_calls == 0 and result.attempts == 0
    errors = result.trace.of_type("transport_error")
    assert [e["kind"] for e in errors] == ["timeout"] * 3 and errors[-1]["gave_up"]
    assert result.errors[-1].startswith("transport: Timeout") and "after 2 retries" in result.errors[-1]
    assert result.output.answer == "not confident: Why vectors?"  # the fallback


@pytest.mark.timeout(30)
def test_a_body_that_stops_half_way_ends_in_a_traced_timeout(server: OpenAIServer) -> None:
    result = call(server, Reply(GOOD, stall=10.0), GOOD, timeout=TIMEOUT)
    assert result.successful and result.attempts == 0
    [error] = result.trace.of_type("transport_error")
    assert error["kind"] == "timeout" and error["status"] is None


def test_a_connection_closed_half_way_through_the_body_is_retried_and_explained(server: OpenAIServer) -> None:
    result = call(server, Reply(GOOD, cut=True), GOOD)
    assert result.successful and result.attempts == 0
    [error] = result.trace.of_type("transport_error")
    assert error["kind"] == "connection" and error["retryable"]
    assert error["message"].startswith("the server answered HTTP 200 but the connection ended before the whole reply arrived (")


# ----------------------------------------------------------------- valid JSON of the wrong shape

WRONG_SHAPES = {
    "array": ('[{"answer": "x"}]', ['output = [{"answer": "x"}]: expected a JSON object (Answer), got a JSON array']),
    "string": ('"They store embeddings."', ['output = "They store embeddings.": expected a JSON object (Answer), got a string']),
    "number": ("42", ["output = 42: expected a JSON object (Answer), got a number"]),
    "null": ("null", ["output = null: expected a JSON object (Answer), got null"]),
    "field types": ('{"answer": 3, "evidence": {"doc_id": "A1"}, "coverage_score": "high"}', [
        "output.answer = 3: Input should be a valid string",
        'output.evidence = {"doc_id": "A1"}: Input should be a valid list',
        'output.coverage_score = "high": Input should be a valid number, unable to parse string as a number']),
    "nested types": ('{"answer": "x", "evidence": [{"doc_id": ["A1"], "snippet": null}], "coverage_score": 0.9}', [
        'output.evidence[0].doc_id = ["A1"]: Input should be a valid string',
        "output.evidence[0].snippet = null: Input should be a valid string"]),
    "constraint": ('{"answer": "x", "evidence": [], "coverage_score": 7}', [
        "output.coverage_score = 7: Input should be less than or equal to 1 (constraint: le=1.0)"]),
    "extra field": (GOOD[:-1] + ', "confidence": "high"}', [
        'output.confidence = "high": this field is not declared (constraint: extra: forbid, only the declared fields are allowed)']),
    "NaN": ('{"answer": "x", "evidence": [], "coverage_score": NaN}', [
        "the reply is not valid JSON: NaN is not a JSON number (write a number, or null) at line 1, column 51"]),
    "deeply nested": ("[" * 50_000 + "]" * 50_000, [DEEP]),
    "deep in a field": ('{"answer": ' + '{"a": ' * 3000 + "1" + "}" * 3000 + ', "evidence": [], "coverage_score": 0.9}', [DEEP]),
    # deep enough to break pydantic's serializer (about 255), shallow enough for Python's JSON reader
    "deep in an extra field": ('{"answer": "x", "evidence": [], "coverage_score": 0.9, "x": ' + "[" * 400 + "]" * 400 + "}", [DEEP]),
}


@pytest.mark.parametrize("case", list(WRONG_SHAPES))
def test_valid_json_of_the_wrong_shape_goes_to_remedy_with_the_path_and_the_constraint(server: OpenAIServer, case: str) -> None:
    reply, expected = WRONG_SHAPES[case]
    result = call(server, reply, GOOD)
    assert result.successful and result.attempts == 1 and len(server.requests) == 2
    [rejected] = result.trace.of_type("validation_error")
    assert (rejected["where"], rejected["errors"]) == ("type", expected)
    assert result.trace.of_type("llm_request")[1]["purpose"] == "remedy_post"
    ask = server.requests[1].body["messages"][-1]["content"]
    for text in expected:
        assert text in ask  # the model is told the same path and constraint


def test_thousands_of_bad_items_give_a_bounded_error_list(server: OpenAIServer) -> None:
    items = ",".join(['{"doc_id": 1}'] * 5000)
    result = call(server, f'{{"answer": "x", "evidence": [{items}], "coverage_score": 0.9}}', GOOD)
    assert result.successful and result.attempts == 1
    errors = result.trace.of_type("validation_error")[0]["errors"]
    assert len(errors) == 21 and errors[0] == "output.evidence[0].doc_id = 1: Input should be a valid string"
    assert errors[-1] == "... and 9980 more errors (only the first 20 are listed)"
    assert len(json.dumps(server.requests[1].body)) < 100_000  # the remedy request stays small


# ----------------------------------------------------------------- runaway replies


def test_a_reply_of_megabytes_is_bounded_in_the_trace_and_in_the_remedy(server: OpenAIServer, tmp_path: Path) -> None:
    huge = '{"answer": "' + "blah " * 600_000 + '", "evidence": [], "coverage_score": 2}'  # 3 MB, and out of range
    result = call(server, huge, GOOD)
    assert result.successful and result.attempts == 1
    response = result.trace.of_type("llm_response")[0]
    assert response["truncated"] is True and response["text_chars"] == len(huge)
    assert response["text"].startswith(huge[:1000]) and len(response["text"]) < TRACE_TEXT_LIMIT + 200
    assert response["text"].endswith(f"[... truncated by contractstudio: the reply has {len(huge):,} characters; "
                                     f"only the first {TRACE_TEXT_LIMIT:,} are shown]")
    assert [p["attempt"] for p in result.trace.of_type("parsed")] == [1]  # the rejected reply has no parsed output
    echoed = server.requests[1].body["messages"][-2]
    assert echoed["role"] == "assistant" and len(echoed["content"]) < REMEDY_REPLY_LIMIT + 200
    assert echoed["content"].endswith(f"only the first {REMEDY_REPLY_LIMIT:,} are shown]")
    assert "output.coverage_score = 2: Input should be less than or equal to 1" in server.requests[1].body["messages"][-1]["content"]
    out = tmp_path / "huge.jsonl"
    result.trace.write(out)
    assert out.stat().st_size < 600_000


def test_a_huge_valid_reply_is_returned_whole_and_traced_bounded(server: OpenAIServer) -> None:
    answer = "word " * 100_000
    reply = json.dumps({"answer": answer, "evidence": [{"doc_id": "A1", "snippet": "s"}], "coverage_score": 0.9})
    result = call(server, reply)
    assert result.successful and result.output.answer == answer  # the caller gets everything
    [parsed] = result.trace.of_type("parsed")
    assert parsed["output"] is None and parsed["omitted"] is True and parsed["text_chars"] == len(reply)
    assert result.trace.of_type("llm_response")[0]["truncated"] is True


# ----------------------------------------------------------------- 200 replies that are not a completion

NOT_A_COMPLETION = {
    "html page": (Reply(body=b"<html><body><h1>502 Bad Gateway</h1></body></html>", headers={"content-type": "text/html"}),
                  "HTTP 200 (text/html): '<html><body><h1>502 Bad Gateway</h1></body></html>'"),
    "empty body": (Reply(body=b""), "HTTP 200 (application/json): an empty body"),
    "plain text": (Reply(body=b"OK", headers={"content-type": "text/plain"}), "HTTP 200 (text/plain): 'OK'"),
    "json without choices": (Reply(body=b'{"id": "x", "object": "chat.completion"}'),
                             """HTTP 200 (application/json): '{"id": "x", "object": "chat.completion"}'"""),
    "choices null": (Reply(body=b'{"choices": null}'), """HTTP 200 (application/json): '{"choices": null}'"""),
}


@pytest.mark.parametrize("case", list(NOT_A_COMPLETION))
def test_a_200_that_is_not_a_completion_is_a_traced_transport_fault(server: OpenAIServer, case: str) -> None:
    reply, seen = NOT_A_COMPLETION[case]
    result = call(server, reply, GOOD)
    assert result.successful and result.attempts == 0 and len(server.requests) == 2
    [error] = result.trace.of_type("transport_error")
    assert (error["kind"], error["status"], error["retryable"]) == ("bad_response", 200, True)
    assert error["message"] == f"the server answered {seen}, which is not a chat completion"


def test_a_body_too_large_to_be_a_reply_is_not_read_to_the_end(server: OpenAIServer, monkeypatch: pytest.MonkeyPatch) -> None:
    from contractstudio.runtime import wire

    monkeypatch.setattr(wire, "MAX_BODY_BYTES", 100_000)  # 64 MB in production; the same path, a smaller test
    result = call(server, Reply(body=b'{"choices": [' + b" " * 2_000_000 + b"]}"), GOOD)
    assert result.successful and result.attempts == 0
    [error] = result.trace.of_type("transport_error")
    assert (error["kind"], error["status"], error["retryable"]) == ("bad_response", 200, True)
    assert error["message"] == ("the server answered HTTP 200 with a body larger than 100,000 bytes, "
                                "which is not a chat completion; it was not read further")


def test_a_server_that_only_sends_html_fails_the_call_saying_so(server: OpenAIServer) -> None:
    page = Reply(body=b"<!DOCTYPE html><title>Login</title>" + b"x" * 5000, headers={"content-type": "text/html"})
    result = call(server, page)
    assert not result.successful and len(server.requests) == 3
    assert "the server answered HTTP 200 (text/html): '<!DOCTYPE html><title>Login</title>xxx" in result.errors[-1]
    assert "after 2 retries" in result.errors[-1]
    assert KEY not in result.trace.to_jsonl()


def test_deep_nesting_from_a_scripted_model_never_crashes_the_engine() -> None:
    contract = cs.load(QA)
    result = contract.call(INPUT, ["{" * 100_000, '{"a": ' * 2000 + "}" * 2000, GOOD], options=OPTS)
    assert result.successful and result.attempts == 2


@pytest.mark.parametrize("depth", [199, 201, 260, 900])
def test_deep_values_in_an_any_field_are_returned_or_remedied_never_a_crash(tmp_path: Path, depth: int) -> None:
    # pydantic cannot serialize values nested about 255 deep: the engine must refuse them before it tries
    path = tmp_path / "any.contract.yaml"
    path.write_text(QA.read_text().replace(
        "      coverage_score: {type: float, ge: 0.0, le: 1.0, description: Coverage.}",
        "      coverage_score: {type: float, ge: 0.0, le: 1.0, description: Coverage.}\n"
        "      data: {type: any, default: null, description: Anything.}"))
    deep = '{"answer": "x", "evidence": [], "coverage_score": 0.9, "data": ' + "[" * depth + "]" * depth + "}"
    result = cs.load(path).call(INPUT, [deep, GOOD], options=OPTS)
    assert result.successful
    if depth + 1 <= 200:
        assert result.attempts == 0 and result.output_data["data"] is not None
    else:
        assert result.attempts == 1 and result.errors == [DEEP]
    result.trace.to_jsonl()


def test_the_trace_of_any_reply_is_strict_json(server: OpenAIServer) -> None:
    result = call(server, '{"answer": "x", "evidence": [], "coverage_score": Infinity}', GOOD)
    assert result.successful and result.attempts == 1
    for line in result.trace.to_jsonl().splitlines():
        json.loads(line, parse_constant=lambda name: pytest.fail(f"{name} in the trace"))


# ----------------------------------------------------------------- any JSON at all

from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

_SCALARS = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=30)
_JSON = st.recursive(_SCALARS, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(
    st.sampled_from(["answer", "evidence", "coverage_score", "doc_id", "snippet", "extra", ""]) | st.text(max_size=8),
    inner, max_size=5), max_leaves=30)
_NEAR = st.fixed_dictionaries({"answer": _JSON, "evidence": _JSON, "coverage_score": _JSON}, optional={"extra": _JSON})


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_JSON | _NEAR, min_size=1, max_size=3))
def test_any_json_replies_end_in_a_result_with_a_strict_json_trace(replies: list) -> None:
    contract = cs.load(QA)
    texts = [json.dumps(r) for r in replies] + [GOOD] * 3
    result = contract.call(INPUT, texts, options=OPTS)
    assert result.successful or result.output.answer == "not confident: Why vectors?"
    text = result.trace.to_jsonl()
    assert len(text.splitlines()) == len(result.trace)  # one line per event, for any line-splitting reader
    for line in text.splitlines():
        json.loads(line, parse_constant=lambda name: pytest.fail(f"{name} in the trace"))
    for event in result.trace.of_type("validation_error"):
        assert 1 <= len(event["errors"]) <= 21 and all(len(e) < 400 for e in event["errors"])


@pytest.mark.parametrize("depth", [260, 5000])
def test_an_input_nested_too_deep_fails_the_call_with_a_message(tmp_path: Path, depth: int) -> None:
    path = tmp_path / "any_in.contract.yaml"
    path.write_text(QA.read_text().replace(
        "      max_snippets: {type: \"int | None\", default: 3, ge: 1, le: 10, description: Max snippets.}",
        "      max_snippets: {type: \"int | None\", default: 3, ge: 1, le: 10, description: Max snippets.}\n"
        "      extra: {type: any, default: null, description: Anything.}"))
    deep: list = []
    inner = deep
    for _ in range(depth):
        inner.append([])
        inner = inner[0]
    with pytest.raises(cs.InvalidInput) as err:  # the caller's error: refused before any model call
        cs.load(path).call({**INPUT, "extra": deep}, [GOOD], options=OPTS)
    assert err.value.errors[0] == "input: the value nests arrays/objects more than 200 levels deep; it is not recorded"
    assert err.value.trace is not None and not err.value.trace.of_type("llm_request")
    assert len(err.value.trace.to_jsonl()) < 20_000
