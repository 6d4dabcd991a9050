"""The engine against a real OpenAI-compatible HTTP server on 127.0.0.1, with litellm as the client.

Every fault of the runtime issue: bad replies remedied, 429/500/503, timeouts,
a refused connection, truncated JSON, empty content, a malformed body, a bad
key; and the API key never reaches the trace.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from openai_server import OpenAIServer, Reply, refused_port

import contractstudio as cs
from contractstudio.runtime.call_state import CallOptions, TransportRetry

QA = Path(__file__).parent / "runtime_contracts" / "qa.contract.yaml"
INPUT = {"query": "Why vectors?", "documents": [{"id": "A1", "content": "Vector databases store embeddings."}]}
GOOD = '{"answer": "They store embeddings.", "evidence": [{"doc_id": "A1", "snippet": "store embeddings"}], "coverage_score": 0.9}'
LOW = '{"answer": "x", "evidence": [], "coverage_score": 0.2}'
KEY = "sk-test-9f8e7d6c5b4a39281706"
OPTS = CallOptions(wait=False, transport=TransportRetry(tries=2, delay=0.001, max_delay=0.01))


@pytest.fixture(scope="module")
def server():
    with OpenAIServer() as srv:
        yield srv


def call(server: OpenAIServer, *replies: Reply | str, path: Path = QA, timeout: float | None = None):
    server.script(*replies)
    contract = cs.load(path)
    if timeout is not None:
        contract.doc.llm.timeout_s = timeout
    return contract.call(INPUT, "openai/test-model", api_base=server.base_url, api_key=KEY, options=OPTS)


def assert_no_key(result) -> None:
    text = result.trace.to_jsonl()
    assert KEY not in text and KEY not in " ".join(result.errors) and KEY not in repr(result)


def test_success_first_time_sends_exactly_the_traced_messages(server: OpenAIServer) -> None:
    result = call(server, GOOD)
    assert result.successful and result.llm_calls == 1 and result.attempts == 0
    assert result.output.evidence[0].doc_id == "A1"
    [received] = server.requests
    assert received.path == "/v1/chat/completions"
    assert received.body["messages"] == result.trace.of_type("llm_request")[0]["messages"]
    assert received.headers["authorization"] == f"Bearer {KEY}"  # the key reached the server ...
    assert_no_key(result)  # ... and nowhere else
    response = result.trace.of_type("llm_response")[0]
    assert (response["prompt_tokens"], response["completion_tokens"]) == (11, 7)
    stats = result.perf_stats(cumulative=False)
    assert stats["llm"]["calls"] == 1 and stats["llm"]["prompt_tokens"] == 11


def test_unparseable_reply_then_repaired(server: OpenAIServer) -> None:
    result = call(server, "I think the answer is vectors.", GOOD)
    assert result.successful and result.attempts == 1 and len(server.requests) == 2
    repair = server.requests[1].body["messages"]
    assert repair[-2] == {"role": "assistant", "content": "I think the answer is vectors."}
    assert "the reply is not valid JSON" in repair[-1]["content"]


def test_post_violation_then_repaired(server: OpenAIServer) -> None:
    result = call(server, LOW, GOOD)
    assert result.successful and result.attempts == 1
    assert "Coverage score 0.20 is below the minimum 0.55." in server.requests[1].body["messages"][-1]["content"]


def test_errors_accumulated(server: OpenAIServer, tmp_path: Path) -> None:
    path = tmp_path / "acc.contract.yaml"
    path.write_text(QA.read_text().replace("retry: {tries: 2,", "accumulate_errors: true\n  retry: {tries: 2,"))
    result = call(server, "{", LOW, GOOD, path=path)
    assert result.successful and result.attempts == 2
    last = server.requests[2].body["messages"][-1]["content"]
    assert "1. the reply is not valid JSON" in last and "2. Coverage score 0.20" in last


def test_exhausted_then_fallback(server: OpenAIServer) -> None:
    result = call(server, LOW, LOW, LOW)
    assert not result.successful and result.output.answer == "not confident: Why vectors?"
    assert len(server.requests) == 3


def test_exhausted_then_raise(server: OpenAIServer, tmp_path: Path) -> None:
    path = tmp_path / "raise.contract.yaml"
    path.write_text(QA.read_text().replace("on_failure: fallback", "on_failure: raise"))
    with pytest.raises(cs.ContractViolation) as info:
        call(server, LOW, LOW, LOW, path=path)
    assert len(info.value.errors) == 4 and KEY not in info.value.trace.to_jsonl()


@pytest.mark.parametrize(("status", "exc"), [(429, "RateLimitError"), (500, "InternalServerError"), (503, "ServiceUnavailableError")])
def test_transport_status_retried_without_using_a_remedy(server: OpenAIServer, status: int, exc: str) -> None:
    result = call(server, Reply(status=status), GOOD)
    assert result.successful and result.attempts == 0 and result.llm_calls == 1
    assert len(server.requests) == 2  # no hidden client retries: one failed request, one retry
    [error] = result.trace.of_type("transport_error")
    assert (error["status"], error["exception"], error["retry"]) == (status, exc, 1)
    assert result.trace.of_type("retry_wait")[0]["kind"] == "transport"
    assert result.perf_stats(cumulative=False)["llm"]["transport_retries"] == 1


def test_transport_retries_exhausted_fail_the_call(server: OpenAIServer) -> None:
    result = call(server, Reply(status=500))
    assert not result.successful and len(server.requests) == 3  # the first try and two retries
    assert "after 2 retries" in result.errors[-1] and result.output.coverage_score == 0.0


def test_timeout_then_success(server: OpenAIServer) -> None:
    result = call(server, Reply(GOOD, delay=1.0), GOOD, timeout=0.2)
    assert result.successful and result.attempts == 0
    [error] = result.trace.of_type("transport_error")
    assert error["kind"] == "timeout" and error["exception"] == "Timeout"
    assert error["message"].startswith("no answer from the server within 0.2 s (")


def test_refused_connection_is_retried_once_then_fails() -> None:
    contract = cs.load(QA)
    result = contract.call(INPUT, "openai/test-model", api_base=f"http://127.0.0.1:{refused_port()}/v1", api_key=KEY, options=OPTS)
    assert not result.successful and result.llm_calls == 0
    errors = result.trace.of_type("transport_error")
    assert [e["kind"] for e in errors] == ["connection"] * 2 and errors[-1]["gave_up"]  # loopback refused: one retry
    assert_no_key(result)


def test_a_reset_connection_is_retried_at_once_then_as_the_backoff_says(server: OpenAIServer) -> None:
    # a reset (an overloaded server dropping a connection) says nothing about the server's health: a fresh
    # connection is tried at once; a second reset in a row waits like any other transport fault
    result = call(server, Reply(reset=True), Reply(reset=True), GOOD)
    assert result.successful and result.llm_calls == 1 and len(server.requests) == 3
    assert [e["kind"] for e in result.trace.of_type("transport_error")] == ["connection", "connection"]
    waits = result.trace.of_type("retry_wait")
    assert [w["seconds"] for w in waits] == [0.0, OPTS.transport.wait(2)]


def test_the_test_server_keeps_a_burst_of_32_connections_before_it_accepts_any() -> None:
    import select
    import socket

    server = OpenAIServer().listen()  # listening, not accepting: every connection waits in the kernel's queue
    clients = [socket.socket() for _ in range(32)]
    try:
        for client in clients:
            client.setblocking(False)
            client.connect_ex(("127.0.0.1", server.port))
        pending = list(clients)
        for _ in range(20):  # a connection the queue has no room for stays pending (its SYN is dropped)
            _, ready, _ = select.select([], pending, [], 0.1)
            pending = [c for c in pending if c not in ready]
            if not pending:
                break
        assert not pending
        assert all(c.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR) == 0 for c in clients)
    finally:
        for client in clients:
            client.close()
        server.stop()


def test_truncated_json_is_remedied(server: OpenAIServer) -> None:
    result = call(server, GOOD[:40], GOOD)
    assert result.successful and result.attempts == 1
    assert "the JSON ends early" in result.errors[0]


def test_empty_content_is_remedied(server: OpenAIServer) -> None:
    result = call(server, Reply(""), Reply(None), GOOD)
    assert result.successful and result.attempts == 2
    assert result.errors[:2] == ["the reply is empty: expected one JSON object"] * 2


def test_malformed_body_is_a_transport_fault(server: OpenAIServer) -> None:
    result = call(server, Reply(body=b'{"choices": [tru'), GOOD)
    assert result.successful and result.attempts == 0
    assert result.trace.of_type("transport_error")[0]["retry"] == 1


def test_authentication_error_is_not_retried_and_the_key_is_redacted(server: OpenAIServer) -> None:
    result = call(server, Reply(f"Incorrect API key provided: {KEY}", status=401), GOOD)
    assert not result.successful and len(server.requests) == 1
    [error] = result.trace.of_type("transport_error")
    assert error["exception"] == "AuthenticationError" and error["retryable"] is False
    assert_no_key(result)
    assert "***" in result.errors[0]


def test_perf_stats_and_call_order_over_live_calls(server: OpenAIServer) -> None:
    server.script(LOW, GOOD, GOOD)
    contract = cs.load(QA)
    for _ in range(2):
        contract.call(INPUT, "openai/test-model", api_base=server.base_url, api_key=KEY, options=OPTS)
    stats = contract.perf_stats()
    for name in ("input", "pre", "act", "generate", "post", "forward", "finalize", "overhead"):
        assert stats[name]["min"] <= stats[name]["mean"] <= stats[name]["max"]
    # the model's latency belongs to generate, not to overhead
    assert stats["generate"]["total"] >= stats["llm"]["latency_s"] * 0.99
    share = sum(v["percentage"] for k, v in stats.items() if k not in ("llm", "total_execution"))
    assert share == pytest.approx(100.0, abs=1.0)


def test_written_trace_never_holds_the_key(server: OpenAIServer, tmp_path: Path) -> None:
    server.script(LOW, GOOD)
    out = tmp_path / "live.jsonl"
    contract = cs.load(QA)
    contract.call(INPUT, "openai/test-model", api_base=server.base_url, api_key=KEY, options=OPTS, trace=out)
    text = out.read_text()
    assert KEY not in text
    request = json.loads(next(line for line in text.splitlines() if '"llm_request"' in line))
    assert request["params"]["api_base"] == server.base_url and "api_key" not in request["params"]


def test_retry_after_from_the_server_sets_the_transport_wait(server: OpenAIServer) -> None:
    result = call(server, Reply(status=429, headers={"retry-after": "0.002"}), GOOD)
    assert result.successful
    assert result.trace.of_type("retry_wait")[0]["seconds"] == pytest.approx(0.002)


def test_the_sample_runs_against_the_server_from_the_command_line(server: OpenAIServer, tmp_path: Path,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    from contractstudio.cli import main

    sample = Path(__file__).resolve().parent.parent / "samples" / "multidoc_qa.contract.yaml"
    inp = tmp_path / "in.yaml"
    inp.write_text("query: Why vectors?\ndocuments:\n  - {id: A1, content: Vector databases store embeddings.}\n")
    server.script(GOOD)
    code = main(["run", str(sample), "--input", str(inp), "--model", "openai/local-model", "--api-base", server.base_url])
    out = capsys.readouterr().out
    assert code == 0 and "multidoc_qa: openai/local-model" in out and "successful: 1 LLM call(s)" in out
    body = server.requests[0].body
    assert body["model"] == "local-model"
    assert (body["temperature"], body["max_tokens"]) == (0, 800)  # the file's llm: block reaches the server
