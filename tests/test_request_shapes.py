"""A schema in the request shape an OpenAI-compatible server takes, and a server's deterministic errors (issue 33).

Servers written here answer with the exact failure shapes of the real ones (llama-cpp-python 0.3.36's HTTP 500 for a
`response_format` it cannot validate, llama.cpp's context overflow); tests/test_real_model.py holds the same claims
against the real server.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from openai_server import OpenAIServer, Reply

import contractstudio as cs
from contractstudio.runtime.call_state import CallOptions, TransportRetry
from contractstudio.runtime.errors import ContractViolation
from contractstudio.runtime.events import StructureFallback
from contractstudio.runtime.models import ReplayModel

SENTIMENT = Path(__file__).parent.parent / "samples" / "local" / "sentiment.contract.yaml"
REVIEW = {"text": "I love this phone"}
GOOD = '{"label": "pos", "reason": "I love this phone"}'
OPTS = CallOptions(wait=False, transport=TransportRetry(tries=4, delay=0.001, max_delay=0.01))
# What llama-cpp-python 0.3.36's server answers to OpenAI's json_schema shape (its RouteErrorHandler sends the
# request model's validation error as HTTP 500), as the real server sent it (tests/test_real_model.py).
LLAMA_CPP_PYTHON_REFUSAL = ("1 validation error for CreateChatCompletionRequest\nresponse_format.type\n"
                            "  Input should be 'text' or 'json_object' [type=literal_error, input_value='json_schema', "
                            "input_type=str]")


def refusal(message: str, status: int = 500) -> Reply:
    return Reply(message, status=status)


@pytest.fixture
def server():
    with OpenAIServer() as srv:
        yield srv


def call(server: OpenAIServer, *replies: Reply | str, path: Path = SENTIMENT, options: CallOptions = OPTS) -> Any:
    """The call's result, a failed one included (the contract raises on failure: the result it carries)."""
    server.script(*replies)
    try:
        return cs.load(path).call(REVIEW, api_base=server.base_url, options=options)
    except ContractViolation as violation:
        return violation.result


def formats(server: OpenAIServer) -> list[Any]:
    return [r.body.get("response_format") for r in server.requests]


def test_a_local_server_under_auto_is_sent_the_schema_in_openais_shape_first(server: OpenAIServer) -> None:
    result = call(server, GOOD)
    assert result.successful and result.output.label == "pos"
    [sent] = formats(server)
    assert sent["type"] == "json_schema" and sent["json_schema"]["strict"] is False
    schema = sent["json_schema"]["schema"]
    assert schema["properties"]["label"]["enum"] == ["pos", "neg"] and schema["properties"]["reason"]["maxLength"] == 40
    request = result.trace.of_type("llm_request")[0]
    assert request["structured_output"] == "json_schema"
    assert "OpenAI's shape" in request["structure_shape"] and "first shape tried" in request["structure_shape"]


def test_a_500_that_names_response_format_moves_to_llama_cpp_pythons_shape_in_one_request(server: OpenAIServer) -> None:
    result = call(server, refusal(LLAMA_CPP_PYTHON_REFUSAL), GOOD)
    assert result.successful and result.attempts == 0
    first, second = formats(server)
    assert first["type"] == "json_schema"
    assert second == {"type": "json_object", "schema": first["json_schema"]["schema"]}  # the same schema, its shape
    assert not result.trace.of_type("transport_error") and not result.trace.of_type("retry_wait")  # not a retry
    [moved] = result.trace.of(StructureFallback)
    assert (moved.from_mode, moved.to_mode, moved.to_shape) == ("json_schema", "json_schema", "json_object_schema")
    assert "HTTP 500" in moved.reason and "Input should be 'text' or 'json_object'" in moved.reason
    shown = result.trace.of_type("llm_request")[1]["structure_shape"]  # the request view: the shape sent and why
    assert "llama-cpp-python's shape" in shown and "refused OpenAI's shape" in shown


def test_the_shape_a_server_took_is_asked_in_at_once_by_the_next_call(server: OpenAIServer) -> None:
    call(server, refusal(LLAMA_CPP_PYTHON_REFUSAL), GOOD)
    again = call(server, GOOD)
    assert again.successful and len(server.requests) == 1
    assert formats(server)[0]["type"] == "json_object" and "schema" in formats(server)[0]
    assert "took earlier in this session" in again.trace.of_type("llm_request")[0]["structure_shape"]
    assert not again.trace.of(StructureFallback)


def test_a_server_that_refuses_every_shape_falls_back_once_and_is_then_asked_without_a_schema(
        server: OpenAIServer) -> None:
    refused = refusal("Unknown parameter: response_format", status=400)
    result = call(server, refused, refused, GOOD)
    assert result.successful and len(server.requests) == 3
    assert [f and f["type"] for f in formats(server)] == ["json_schema", "json_object", None]
    shapes, modes = result.trace.of(StructureFallback)
    assert shapes.to_shape == "json_object_schema" and (modes.from_mode, modes.to_mode) == ("json_schema", "off")
    again = call(server, GOOD)
    assert again.successful and formats(server) == [None]  # remembered: no request is spent on a shape it refuses
    assert "refused every request shape earlier" in again.trace.of_type("llm_request")[0]["structure_shape"]


def test_a_replay_sends_the_shape_its_recording_sent(server: OpenAIServer) -> None:
    recorded = call(server, refusal(LLAMA_CPP_PYTHON_REFUSAL), GOOD)
    replayed = cs.load(SENTIMENT).call(REVIEW, ReplayModel(recorded.trace, strict=True), options=OPTS)
    assert replayed.successful  # strict: a request that differs from the recording would have failed it
    assert replayed.trace.of_type("llm_request")[-1]["params"]["response_format"]["type"] == "json_object"


def test_openai_itself_is_never_asked_in_another_shape(server: OpenAIServer, monkeypatch: pytest.MonkeyPatch,
                                                       tmp_path: Path) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)  # OpenAI's endpoint, as litellm resolves it, on loopback
    hosted = tmp_path / "hosted.contract.yaml"
    hosted.write_text(SENTIMENT.read_text().replace("  api_base: http://127.0.0.1:8080/v1\n", ""))
    server.script(refusal("Invalid schema for response_format 'Verdict'", status=400), GOOD)
    result = cs.load(hosted).call(REVIEW, "openai/gpt-4o-mini", api_key="sk-test-0000", options=OPTS)
    assert result.successful
    assert [f and f["type"] for f in formats(server)] == ["json_schema", "json_object"]  # the mode's own fallback
    assert not any(e.to_shape for e in result.trace.of(StructureFallback))


# ----------------------------------------------------------------- deterministic errors are not transient

INVALID = [
    pytest.param(500, LLAMA_CPP_PYTHON_REFUSAL.replace("response_format.type", "top_k"), id="validation-500"),
    pytest.param(500, "Requested tokens (2400) exceed context window of 2048", id="llama-cpp-python-overflow"),
    pytest.param(400, "request (4476 tokens) exceeds the available context size (4096 tokens)", id="llama.cpp-overflow"),
    pytest.param(503, "Unrecognized request argument supplied: foo", id="unknown-argument-503"),
]


@pytest.mark.parametrize(("status", "message"), INVALID)
def test_an_error_saying_the_request_is_invalid_fails_at_once_with_the_servers_reason(
        server: OpenAIServer, tmp_path: Path, status: int, message: str) -> None:
    off = tmp_path / "off.contract.yaml"
    off.write_text(SENTIMENT.read_text().replace("  temperature: 0\n", "  temperature: 0\n  structured_output: \"off\"\n"))
    result = call(server, refusal(message, status=status), GOOD, path=off)
    assert not result.successful and len(server.requests) == 1  # sent once: the same request gets the same answer
    [failure] = result.trace.of_type("transport_error")
    assert failure["retryable"] is False and failure["status"] == status
    [error] = result.errors
    assert "not retried" in error and message.split("\n")[0][:40] in error


def test_a_server_error_that_says_nothing_of_the_request_is_still_retried(server: OpenAIServer) -> None:
    result = call(server, refusal("the model crashed while decoding"), GOOD)
    assert result.successful and len(server.requests) == 2
    assert result.trace.of_type("transport_error")[0]["retryable"] is True


def test_the_trace_line_of_a_shape_move_reads_back_as_written(server: OpenAIServer, tmp_path: Path) -> None:
    result = call(server, refusal(LLAMA_CPP_PYTHON_REFUSAL), GOOD)
    saved = tmp_path / "call.trace.jsonl"
    result.trace.write(saved)
    lines = [json.loads(line) for line in saved.read_text().splitlines()]
    [moved] = [line for line in lines if line["type"] == "structure_fallback"]
    assert moved["to_shape"] == "json_object_schema"
    assert [line.get("structure_shape", "")[:20] for line in lines if line["type"] == "llm_request"] == [
        "OpenAI's shape {\"typ", "llama-cpp-python's s"]


def test_the_debuggers_request_view_and_run_show_the_shape_sent_and_why(server: OpenAIServer) -> None:
    from rich.console import Console

    from contractstudio.commands.run import describe
    from contractstudio.studio.widgets.events import event_line, event_view

    result = call(server, refusal(LLAMA_CPP_PYTHON_REFUSAL), GOOD)
    events = list(result.trace)
    console = Console(width=400, record=True)
    console.print(event_view(result.trace.of_type("llm_request")[1], events))
    shown = console.export_text()
    assert "request shape: llama-cpp-python's shape" in shown and "refused OpenAI's shape" in shown
    assert '"type": "json_object"' in shown and '"schema"' in shown  # the exact response_format under it
    [moved] = result.trace.of(StructureFallback)
    assert "(json_object_schema shape)" in event_line(moved, set()).plain
    printed = [line for event in result.trace for line in describe(event)]  # what `contractstudio run` prints
    assert any(line.startswith("    ! structured output json_schema -> json_schema (json_object_schema shape): ")
               for line in printed)
