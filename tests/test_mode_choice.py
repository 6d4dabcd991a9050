"""Issue 36, point 1: the structured-output mode is chosen in one place (provider_profiles.choose_mode), from one
profile per (provider, server shape); the analyzer (`check -v`, hover, CON131) and the runtime ask the same function,
so what an author is shown is what a call sends."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import FIXTURES

import contractstudio as cs
from contractstudio.analysis.check import Context, check_file
from contractstudio.analysis.loaded_contract import LoadedContract
from contractstudio.documents.contract_model import LLMSettings
from contractstudio.documents.provider_profiles import MODES, REQUESTED, Support, choose_mode, profile_for
from contractstudio.runtime.call_state import CallOptions
from contractstudio.runtime.models import ScriptedModel

AFTER = FIXTURES / "err" / "CON" / "con131_after_reply.yaml"
SERVER = "http://127.0.0.1:8000/v1"
QUESTION = {"text": "What is the capital of France?"}
ANSWER = '{"city": "Paris", "code": "FRA", "score": 0.9}'


def test_the_modes_are_written_once_and_the_contract_and_eval_take_those() -> None:
    assert MODES == ("json_schema", "json_object", "off") and REQUESTED == ("auto", *MODES)
    assert LLMSettings.model_fields["structured_output"].annotation.__args__ == REQUESTED  # type: ignore[union-attr]


@pytest.mark.parametrize(("requested", "model", "api_base", "kw", "mode"), [
    # a written response_format is sent as written: no schema, whatever was asked
    *[(r, "openai/gpt-4o-mini", None, {"written": True}, "off") for r in REQUESTED],
    ("off", "openai/gpt-4o-mini", None, {}, "off"),
    ("json_object", "mistral/mistral-small", None, {}, "json_object"),
    ("json_schema", "mistral/mistral-small", None, {}, "off"),  # no structured-output mode known at all
    ("json_schema", "gpt-3.5-turbo", None, {}, "json_schema"),  # the author's json_schema is asked whatever litellm says
    # auto by the profile alone (the analyzer)
    ("auto", "openai/gpt-4o-mini", None, {}, "json_schema"),
    ("auto", "anthropic/claude-sonnet-4-5", None, {}, "json_schema"),
    ("auto", "gpt-3.5-turbo", None, {}, "json_object"),
    ("auto", "mistral/mistral-small", None, {}, "off"),
    ("auto", "hosted_vllm/qwen", None, {}, "off"),  # litellm decides at run time: no decoder claimed
    ("auto", "openai/qwen2.5", SERVER, {}, "json_schema"),  # an OpenAI-compatible server: its own decoder
    # auto with litellm's answer (the runtime)
    ("auto", "hosted_vllm/qwen", None, {"support": Support(True, True)}, "json_schema"),
    ("auto", "hosted_vllm/qwen", None, {"support": Support(False, True)}, "json_object"),
    ("auto", "openai/gpt-4o-mini", None, {"support": Support(False, False)}, "off"),
    ("auto", "mistral/mistral-small", None, {"support": Support(True, True)}, "off"),
    ("auto", "openai/qwen2.5", SERVER, {"support": Support(False, False)}, "json_schema"),  # litellm is not asked
    ("auto", "openai/qwen2.5", SERVER, {"support": Support(False, True), "refused_shapes": True}, "json_object"),
    ("auto", "openai/qwen2.5", SERVER, {"support": Support(False, False), "refused_shapes": True}, "off"),
])
def test_choose_mode(requested: str, model: str, api_base: str | None, kw: dict, mode: str) -> None:
    assert choose_mode(requested, model, api_base, **kw).mode == mode


def test_a_schema_that_cannot_be_sent_falls_back_to_json_mode_only_where_the_model_has_it() -> None:
    assert choose_mode("auto", "anthropic/claude-sonnet-4-5", support=Support(True, False)).json_fallback is False
    assert choose_mode("auto", "anthropic/claude-sonnet-4-5", support=Support(True, True)).json_fallback is True


def _contract(tmp_path: Path, llm: str) -> Path:
    path = tmp_path / "c.contract.yaml"
    path.write_text(AFTER.read_text().replace("  model: openai/gpt-4o-mini", llm))
    return path


@pytest.mark.parametrize("llm", [
    "  model: openai/gpt-4o-mini",
    "  model: openai/gpt-4o-mini\n  response_format: {type: json_object}",
    "  model: openai/gpt-4o-mini\n  structured_output: json_object\n  response_format: {type: text}",
    "  model: openai/gpt-4o-mini\n  structured_output: 'off'",
    "  model: anthropic/claude-sonnet-4-5\n  structured_output: json_object",
    "  model: gpt-3.5-turbo",
    "  model: mistral/mistral-small\n  structured_output: json_schema",
])
def test_the_analyzer_shows_the_mode_the_runtime_sends(tmp_path: Path, llm: str) -> None:
    path = _contract(tmp_path, llm)
    doc = check_file(path, Context()).documents[0]
    assert isinstance(doc, LoadedContract) and doc.structure is not None
    shown = doc.structure.compiled.mode
    name = llm.split("model: ")[1].split("\n")[0]
    default = profile_for(name).default_mode  # a scripted model that has what the profile says the model has
    model = ScriptedModel([ANSWER], supports=(default == "json_schema", default != "off"), stands_for=name)
    result = cs.load(path).call(QUESTION, model, options=CallOptions(wait=False))
    sent = result.trace.of_type("llm_request")[0].get("structured_output") or "off"
    assert sent == shown
