"""Structured outputs as the providers receive them: the request bodies a local OpenAI-compatible server and a local
server of the Anthropic Messages API shape record, with litellm as the client (loopback only, no key needed).

The contract's output type has clauses every provider enforces (types, an enum, required fields), clauses some
providers cannot express (a length bound, a pattern, number bounds) and a cross-field post-condition no provider
can: what the decoder cannot enforce must not be sent, and must still be checked after the reply.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from anthropic_server import AnthropicServer
from openai_server import OpenAIServer, Reply

import contractstudio as cs
from contractstudio.documents.structured_outputs import compile_schema
from contractstudio.runtime.call_state import CallOptions, TransportRetry
from contractstudio.runtime.events import StructureFallback
from contractstudio.runtime.models import ReplayModel

TRIAGE = Path(__file__).parent / "runtime_contracts" / "structured.contract.yaml"
TICKET = {"text": "I cannot log in since this morning."}
GOOD = '{"summary": "Cannot log in", "code": "LOG-12", "priority": 1, "area": "login", "confidence": 0.9, "note": "VIP"}'
NO_NOTE = '{"summary": "Cannot log in", "code": "LOG-12", "priority": 1, "area": "login", "confidence": 0.9}'
OPTS = CallOptions(wait=False, transport=TransportRetry(tries=1, delay=0.001, max_delay=0.01))
OPENAI = "openai/gpt-4o-mini"
ANTHROPIC = "anthropic/claude-sonnet-4-20250514"
# What each provider does not accept, by its own documentation (provider_profiles.py names the sources).
NOT_FOR_OPENAI_STRICT = {"minLength", "maxLength"}
NOT_FOR_ANTHROPIC = {"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf", "minLength", "maxLength"}


@pytest.fixture(scope="module")
def openai_server():
    with OpenAIServer() as srv:
        yield srv


@pytest.fixture
def openai_endpoint(openai_server: OpenAIServer, monkeypatch: pytest.MonkeyPatch) -> OpenAIServer:
    """OpenAI's own endpoint, as litellm resolves it without an api_base, pointed at the local server."""
    monkeypatch.setenv("OPENAI_BASE_URL", openai_server.base_url)
    return openai_server


@pytest.fixture(scope="module")
def anthropic_server():
    with AnthropicServer() as srv:
        yield srv


def keywords(schema: Any) -> set[str]:
    """Every key used anywhere in a schema (property names included: the contract's are not keywords)."""
    found: set[str] = set()
    if isinstance(schema, dict):
        for key, value in schema.items():
            found.add(key)
            found |= keywords(value)
    elif isinstance(schema, list):
        for value in schema:
            found |= keywords(value)
    return found


def call(server: OpenAIServer, model: str, *replies: Reply | str, path: Path = TRIAGE, key: str = "sk-test-0000",
         api_base: bool = True) -> Any:
    """The contract called through litellm: at the server's `api_base`, or (False) at the provider's own endpoint."""
    server.script(*replies)
    return cs.load(path).call(TICKET, model, api_base=server.base_url if api_base else None, api_key=key, options=OPTS)


def ask_openai(server: OpenAIServer, *replies: Reply | str, model: str = OPENAI, path: Path = TRIAGE) -> Any:
    return call(server, model, *replies, path=path, api_base=False)


def with_llm(tmp_path: Path, line: str) -> Path:
    path = tmp_path / "triage.contract.yaml"
    path.write_text(TRIAGE.read_text().replace("llm:\n", f"llm:\n  {line}\n"))
    return path


def test_an_openai_model_receives_its_output_type_as_a_strict_json_schema(openai_endpoint: OpenAIServer) -> None:
    result = ask_openai(openai_endpoint, GOOD)
    assert result.successful and result.output.note == "VIP"
    [received] = openai_endpoint.requests
    sent = received.body["response_format"]
    assert sent["type"] == "json_schema" and sent["json_schema"]["name"] == "Triage" and sent["json_schema"]["strict"] is True
    schema = sent["json_schema"]["schema"]
    assert schema["additionalProperties"] is False and set(schema["required"]) == set(schema["properties"])  # strict's rules
    assert schema["properties"]["area"]["enum"] == ["billing", "login", "other"]  # what the decoder enforces is sent
    assert schema["properties"]["priority"]["minimum"] == 1 and schema["properties"]["code"]["pattern"]
    assert not keywords(schema) & NOT_FOR_OPENAI_STRICT
    request = result.trace.of_type("llm_request")[0]
    assert request["structured_output"] == "json_schema" and request["params"]["response_format"] == sent  # the trace: exactly it
    compiled = compile_schema(cs.load(TRIAGE).plan.output.json_schema(), OPENAI)
    assert schema == compiled.schema
    removed = {c.keyword for c in compiled.enforced_by("after_reply")}
    assert removed == {"maxLength"} and not keywords(schema) & removed  # nothing the compiler took out reached OpenAI


def test_an_optional_field_sent_as_required_and_nullable_comes_back_as_the_contracts_default(
        openai_endpoint: OpenAIServer) -> None:
    result = ask_openai(openai_endpoint, GOOD.replace('"VIP"', "null"))
    schema = openai_endpoint.requests[0].body["response_format"]["json_schema"]["schema"]
    assert "note" in schema["required"] and {"type": "null"} in schema["properties"]["note"]["anyOf"]
    assert result.successful and result.attempts == 0
    assert result.output.note == ""  # the contract's own type: `note: str`, default ""


def test_a_keyword_the_provider_cannot_enforce_is_still_checked_after_the_reply(openai_endpoint: OpenAIServer) -> None:
    too_long = GOOD.replace("Cannot log in", "The customer cannot log in since this morning, on any device")
    result = ask_openai(openai_endpoint, too_long, GOOD)
    assert result.successful and result.attempts == 1
    first, remedy = openai_endpoint.requests
    assert "String should have at most 40 characters" in remedy.body["messages"][-1]["content"]
    assert remedy.body["response_format"] == first.body["response_format"]  # the remedy asks in the same mode


def test_a_cross_field_condition_stays_a_post_condition(openai_endpoint: OpenAIServer) -> None:
    result = ask_openai(openai_endpoint, GOOD.replace('"priority": 1', '"priority": 4'), GOOD)
    assert result.successful and result.attempts == 1
    assert "A login ticket is urgent (priority 1 or 2), not 4." in openai_endpoint.requests[1].body["messages"][-1]["content"]


def test_an_openai_model_without_response_schemas_gets_json_mode(openai_endpoint: OpenAIServer) -> None:
    result = ask_openai(openai_endpoint, GOOD, model="openai/gpt-3.5-turbo")
    assert result.successful
    assert openai_endpoint.requests[0].body["response_format"] == {"type": "json_object"}
    assert result.trace.of_type("llm_request")[0]["structured_output"] == "json_object"


def test_an_openai_compatible_server_gets_a_non_strict_schema_without_what_guided_decoding_cannot_do(
        openai_server: OpenAIServer) -> None:
    result = call(openai_server, OPENAI, GOOD)  # openai/... at an api_base that is not OpenAI's: vLLM, llama.cpp, Ollama
    assert result.successful
    sent = openai_server.requests[0].body["response_format"]
    assert sent["type"] == "json_schema" and sent["json_schema"]["strict"] is False
    properties = sent["json_schema"]["schema"]["properties"]
    assert properties["priority"]["maximum"] == 5 and properties["summary"]["maxLength"] == 40  # a grammar enforces these
    assert not keywords(properties["confidence"]) & {"minimum", "maximum"}  # llama.cpp bounds integers only
    assert "note" not in sent["json_schema"]["schema"]["required"]  # optional stays optional: nothing to map back


def test_a_local_model_litellm_does_not_know_gets_its_servers_decoder_under_auto(openai_server: OpenAIServer) -> None:
    # an OpenAI-compatible server enforces the schema itself, whatever litellm knows of the model's name (issue 33)
    result = call(openai_server, "openai/test-model", GOOD)
    assert result.successful and openai_server.requests[0].body["response_format"]["type"] == "json_schema"
    assert result.trace.of_type("llm_request")[0]["structured_output"] == "json_schema"


def test_a_hosted_model_litellm_does_not_know_gets_the_prompt_alone_as_before(openai_endpoint: OpenAIServer) -> None:
    result = ask_openai(openai_endpoint, GOOD, model="openai/test-model")
    assert result.successful and "response_format" not in openai_endpoint.requests[0].body
    assert "structured_output" not in result.trace.of_type("llm_request")[0].data


def test_structured_output_json_schema_asks_a_model_litellm_does_not_know(openai_server: OpenAIServer, tmp_path: Path) -> None:
    result = call(openai_server, "openai/my-local-model", GOOD, path=with_llm(tmp_path, "structured_output: json_schema"))
    assert result.successful
    assert openai_server.requests[0].body["response_format"]["type"] == "json_schema"


@pytest.mark.parametrize("line", ['structured_output: "off"', "response_format: {type: text}"])
def test_off_or_a_response_format_of_the_authors_sends_no_schema(openai_endpoint: OpenAIServer, tmp_path: Path, line: str) -> None:
    result = ask_openai(openai_endpoint, GOOD, path=with_llm(tmp_path, line))
    assert result.successful
    sent = openai_endpoint.requests[0].body.get("response_format")
    assert sent == ({"type": "text"} if "response_format" in line else None)  # the author's own, as written


def test_a_400_about_the_schema_falls_back_to_json_mode_once_and_the_trace_says_so(openai_endpoint: OpenAIServer) -> None:
    refused = Reply("Invalid schema for response_format 'Triage': bad keyword", status=400)
    result = ask_openai(openai_endpoint, refused, GOOD)
    assert result.successful and result.attempts == 0
    first, second = (r.body.get("response_format") for r in openai_endpoint.requests)
    assert first["type"] == "json_schema" and second == {"type": "json_object"}
    [fallback] = result.trace.of(StructureFallback)
    assert (fallback.from_mode, fallback.to_mode) == ("json_schema", "json_object")
    assert "HTTP 400" in fallback.reason and "Invalid schema" in fallback.reason
    assert [r["structured_output"] for r in result.trace.of_type("llm_request")] == ["json_schema", "json_object"]


def test_a_fallback_goes_to_json_mode_only_when_the_model_has_it(openai_server: OpenAIServer, tmp_path: Path) -> None:
    """A schema written for a model litellm knows nothing of (a local server): refused, the call asks with the prompt
    alone ('off'), never in a JSON mode the model was never said to have (issue 32, a surviving mutant)."""
    refused = Reply("Invalid schema for response_format 'Triage': bad keyword", status=400)
    # a local server is asked in each schema shape it may take (issue 33) before the mode falls back
    result = call(openai_server, "openai/my-local-model", refused, refused, GOOD,
                  path=with_llm(tmp_path, "structured_output: json_schema"))
    assert result.successful and result.attempts == 0
    *shapes, last = (r.body for r in openai_server.requests)
    assert [b["response_format"]["type"] for b in shapes] == ["json_schema", "json_object"]
    assert "response_format" not in last
    fallback = result.trace.of(StructureFallback)[-1]
    assert (fallback.from_mode, fallback.to_mode) == ("json_schema", "off")


def test_the_fallback_happens_once_per_call(openai_endpoint: OpenAIServer) -> None:
    refused = Reply("Invalid schema for response_format 'Triage'", status=400)
    result = ask_openai(openai_endpoint, refused, refused)
    assert not result.successful and len(openai_endpoint.requests) == 2
    assert len(result.trace.of(StructureFallback)) == 1
    assert any("HTTP 400" in e for e in result.errors)  # the second 400 is reported as any request error


def test_a_400_about_something_else_is_not_a_fallback(openai_endpoint: OpenAIServer) -> None:
    result = ask_openai(openai_endpoint, Reply("max_tokens is too large", status=400))
    assert not result.successful and len(openai_endpoint.requests) == 1 and not result.trace.of(StructureFallback)


def test_a_refusal_falls_back_to_the_next_mode(openai_endpoint: OpenAIServer) -> None:
    result = ask_openai(openai_endpoint, Reply(refusal="I can't help with that."), GOOD)
    assert result.successful and result.llm_calls == 2
    assert openai_endpoint.requests[1].body["response_format"] == {"type": "json_object"}
    [fallback] = result.trace.of(StructureFallback)
    assert "refused" in fallback.reason and "I can't help with that." in fallback.reason


def test_an_anthropic_model_receives_the_schema_as_a_forced_tool_without_what_it_cannot_enforce(
        anthropic_server: AnthropicServer) -> None:
    result = call(anthropic_server, ANTHROPIC, NO_NOTE, key="sk-ant-test-0000")
    [received] = anthropic_server.requests
    assert received.path == "/v1/messages" and "response_format" not in received.body  # litellm translated it
    [tool] = received.body["tools"]
    assert received.body["tool_choice"] == {"type": "tool", "name": tool["name"]}
    schema = tool["input_schema"]
    assert schema["properties"]["area"]["enum"] == ["billing", "login", "other"]
    assert schema["properties"]["code"]["pattern"] == "^[A-Z]{3}-[0-9]+$"  # a simple pattern Anthropic enforces
    assert not keywords(schema) & NOT_FOR_ANTHROPIC
    sent = result.trace.of_type("llm_request")[0]["params"]["response_format"]["json_schema"]["schema"]
    assert schema["properties"] == sent["properties"] and schema["required"] == sent["required"]  # what the engine sent
    assert result.successful and result.output.code == "LOG-12"  # the tool_use input became the reply


def test_an_anthropic_model_with_native_structured_outputs_receives_output_format_without_what_it_cannot_enforce(
        anthropic_server: AnthropicServer) -> None:
    result = call(anthropic_server, "anthropic/claude-sonnet-4-5", NO_NOTE, key="sk-ant-test-0000")
    [received] = anthropic_server.requests
    assert "tools" not in received.body and received.headers["anthropic-beta"] == "structured-outputs-2025-11-13"
    output_format = received.body["output_format"]
    assert output_format["type"] == "json_schema" and output_format["schema"]["additionalProperties"] is False
    assert not keywords(output_format["schema"]) & NOT_FOR_ANTHROPIC
    sent = result.trace.of_type("llm_request")[0]["params"]["response_format"]["json_schema"]["schema"]
    assert output_format["schema"] == sent  # what the engine compiled reached Anthropic as it was
    assert result.successful and result.output.area == "login"  # the reply is a text block of JSON


def test_an_anthropic_reply_breaking_a_bound_it_cannot_enforce_is_remedied(anthropic_server: AnthropicServer) -> None:
    result = call(anthropic_server, ANTHROPIC, NO_NOTE.replace('"confidence": 0.9', '"confidence": 1.5'), NO_NOTE,
                  key="sk-ant-test-0000")
    assert result.successful and result.attempts == 1
    assert "Input should be less than or equal to 1" in json.dumps(anthropic_server.requests[1].body["messages"])


def test_a_replay_sends_the_mode_and_schema_the_trace_recorded(openai_endpoint: OpenAIServer, tmp_path: Path) -> None:
    recorded = ask_openai(openai_endpoint, GOOD)
    replayed = cs.load(TRIAGE).call(TICKET, ReplayModel(recorded.trace, strict=True), options=OPTS)
    assert replayed.successful
    again, before = replayed.trace.of_type("llm_request")[0], recorded.trace.of_type("llm_request")[0]
    assert again["structured_output"] == "json_schema" and again["params"]["response_format"] == before["params"]["response_format"]
    changed = tmp_path / "changed.contract.yaml"  # the output type changed since the recording: the replay says where
    changed.write_text(TRIAGE.read_text().replace("max_length: 40, description: One line.", "description: One short line."))
    result = cs.load(changed).call(TICKET, ReplayModel(recorded.trace), options=OPTS)
    [divergence] = result.trace.of_type("replay_divergence")
    assert "the response_format changed" in divergence["message"] and "One short line." in divergence["message"]


# vLLM and Ollama (guided decoding): what litellm's own routes for them send to a server on loopback.
NOT_FOR_GUIDED = {"uniqueItems", "multipleOf", "format"}
VLLM = "hosted_vllm/my-model"
OLLAMA = "ollama_chat/llama3.1"


def ollama_reply(content: str) -> Reply:
    """An answer in the Ollama /api/chat shape (litellm's ollama_chat route reads `message`, not `choices`)."""
    return Reply(body=json.dumps({"model": "llama3.1", "created_at": "2026-01-01T00:00:00Z", "done": True,
                                  "message": {"role": "assistant", "content": content}, "done_reason": "stop",
                                  "prompt_eval_count": 11, "eval_count": 7}).encode())


def assert_guided(schema: dict[str, Any]) -> None:
    """The guided profile's rules on the schema a vLLM or Ollama server received."""
    properties = schema["properties"]
    assert properties["priority"]["minimum"] == 1 and properties["priority"]["maximum"] == 5  # integer bounds: a grammar
    assert properties["summary"]["maxLength"] == 40 and properties["code"]["pattern"] == "^[A-Z]{3}-[0-9]+$"
    assert not keywords(properties["confidence"]) & {"minimum", "maximum"}  # bounds on a number: checked after the reply
    assert not keywords(schema) & NOT_FOR_GUIDED and "additionalProperties" not in schema
    assert "note" not in schema["required"]  # optional stays optional: nothing to map back


def test_a_vllm_model_receives_a_non_strict_response_format_without_what_guided_decoding_cannot_do(
        openai_server: OpenAIServer, tmp_path: Path) -> None:
    result = call(openai_server, VLLM, GOOD, path=with_llm(tmp_path, "structured_output: json_schema"))
    assert result.successful and result.output.note == "VIP"
    [received] = openai_server.requests
    assert received.path == "/v1/chat/completions" and received.body["model"] == "my-model"
    sent = received.body["response_format"]
    assert sent["type"] == "json_schema" and sent["json_schema"]["strict"] is False
    assert_guided(sent["json_schema"]["schema"])
    assert result.trace.of_type("llm_request")[0]["params"]["response_format"] == sent  # the trace: exactly it
    assert not {"tools", "tool_choice", "format", "guided_json"} & set(received.body)  # one way to ask, not two


def test_a_vllm_model_litellm_has_no_capability_data_for_gets_the_prompt_alone_under_auto(
        openai_server: OpenAIServer) -> None:
    result = call(openai_server, VLLM, GOOD)
    assert result.successful and "response_format" not in openai_server.requests[0].body


def test_an_ollama_model_receives_the_schema_as_ollamas_format_without_what_guided_decoding_cannot_do(
        openai_server: OpenAIServer, tmp_path: Path) -> None:
    openai_server.script(ollama_reply(NO_NOTE))
    result = cs.load(with_llm(tmp_path, "structured_output: json_schema")).call(
        TICKET, OLLAMA, api_base=openai_server.base_url.removesuffix("/v1"), options=OPTS)
    [received] = openai_server.requests
    assert received.path == "/api/chat" and received.body["model"] == "llama3.1"  # Ollama's own API, not /v1
    assert "response_format" not in received.body and "tools" not in received.body  # litellm translated it
    assert_guided(received.body["format"])
    sent = result.trace.of_type("llm_request")[0]["params"]["response_format"]["json_schema"]["schema"]
    assert received.body["format"] == sent  # what the engine compiled reached Ollama as it was
    assert result.successful and result.output.area == "login" and result.output.note == ""


def gemini_reply(content: str) -> Reply:
    """An answer in the Gemini generateContent shape (litellm's gemini route reads `candidates`)."""
    return Reply(body=json.dumps({"candidates": [{"content": {"role": "model", "parts": [{"text": content}]},
                                                  "finishReason": "STOP", "index": 0}],
                                  "usageMetadata": {"promptTokenCount": 11, "candidatesTokenCount": 7,
                                                    "totalTokenCount": 18}}).encode())


def test_a_gemini_model_receives_its_schema_in_the_generation_config_as_the_engine_compiled_it(
        openai_server: OpenAIServer) -> None:
    openai_server.script(gemini_reply(NO_NOTE))
    result = cs.load(TRIAGE).call(TICKET, "gemini/gemini-2.0-flash", api_base=openai_server.base_url.removesuffix("/v1"),
                                  api_key="test-key-0000", options=OPTS)
    [received] = openai_server.requests
    assert received.path.split("?")[0] == "/models/gemini-2.0-flash:generateContent"  # Gemini's own API shape
    config = received.body["generationConfig"]
    assert config["response_mime_type"] == "application/json" and "response_format" not in received.body
    sent = result.trace.of_type("llm_request")[0]["params"]["response_format"]["json_schema"]["schema"]
    schema = config["response_json_schema"]
    assert schema["properties"] == sent["properties"] and schema["required"] == sent["required"]
    removed = {c.keyword for c in compile_schema(cs.load(TRIAGE).plan.output.json_schema(), "gemini/gemini-2.0-flash")
               .enforced_by("after_reply")}
    assert removed and not keywords(schema["properties"]) & removed  # what Gemini cannot enforce was not sent
    assert result.successful and result.output.code == "LOG-12"


def test_a_providers_error_text_never_carries_a_python_traceback(openai_server: OpenAIServer, tmp_path: Path) -> None:
    # litellm's ollama_chat route puts a whole Python traceback into its error when a reply has the wrong shape;
    # the user saw it in the call's errors (and `run` printed it).
    for _ in range(6):
        openai_server.script(Reply(body=b'{"unexpected": "shape"}'))
    result = cs.load(with_llm(tmp_path, "structured_output: json_schema")).call(
        TICKET, OLLAMA, api_base=openai_server.base_url.removesuffix("/v1"), options=OPTS)
    said = "\n".join(result.errors)
    assert not result.successful and said
    assert "Traceback" not in said and 'File "' not in said and "site-packages" not in said
