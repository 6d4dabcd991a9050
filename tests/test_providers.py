"""A model's provider is decided once (issue 36.6): the key's usual variable (trust.py), the structured-output profile
(documents/provider_profiles.py) and the live model's own client for an OpenAI-compatible server (runtime/live.py)
all ask `contractstudio.providers.provider_of`, so they cannot disagree about a model."""

from __future__ import annotations

from pathlib import Path

import pytest

from contractstudio.analysis.check import Context, check_file
from contractstudio.documents.provider_profiles import profile_for
from contractstudio.providers import provider_of
from contractstudio.runtime.live import LiveModel, _litellm
from contractstudio.trust import hook_folder, untrusted_key_routes, usual_key_variables

FINE_TUNED = "ft:gpt-4o-mini-2024-07-18:acme::9xYz"  # OpenAI's name for a fine-tuned model: sent to OpenAI, as litellm does


@pytest.mark.parametrize(("model", "provider"), [
    ("openai/gpt-4o", "openai"), ("OpenAI/gpt-4o", "openai"), ("hosted_vllm/qwen", "hosted_vllm"), ("azure/my-deploy", "azure"),
    ("gpt-4o-mini", "openai"), ("o3-mini", "openai"), ("chatgpt-4o-latest", "openai"), (FINE_TUNED, "openai"),
    ("claude-3-5-haiku-latest", "anthropic"), ("gemini-1.5-pro", "gemini"), ("mistral-large-latest", "mistral"),
    ("command-r", "cohere"), ("my-local-model", ""), ("", ""), (None, ""),
])
def test_the_provider_of_a_model_is_its_prefix_or_its_family(model: str | None, provider: str) -> None:
    assert provider_of(model) == provider


def test_a_fine_tuned_openai_model_is_openais_everywhere(tmp_path: Path) -> None:
    """Before, trust.py did not know `ft:gpt-...` (CON110 for the usual OPENAI_API_KEY) and the profile said `none`."""
    assert usual_key_variables(FINE_TUNED) == ("OPENAI_API_KEY",)
    assert untrusted_key_routes(FINE_TUNED, None, "OPENAI_API_KEY") == []
    assert profile_for(FINE_TUNED).name == "openai" and profile_for(FINE_TUNED).strict
    path = tmp_path / "ft.contract.yaml"
    qa = (Path(__file__).resolve().parent / "runtime_contracts" / "qa.contract.yaml").read_text()
    path.write_text(qa.replace("llm:\n  model: openai/test-model\n", f"llm:\n  model: {FINE_TUNED}\n  api_key_env: OPENAI_API_KEY\n"))
    assert FINE_TUNED in path.read_text()
    assert [d.code for d in check_file(path, Context(hooks=hook_folder(tmp_path, False))).diagnostics] == []


@pytest.mark.parametrize("model", ["openai/test-model", "gpt-4o-mini", FINE_TUNED, "hosted_vllm/qwen", "mistral-large-latest"])
def test_the_three_callers_agree_with_the_one_answer(model: str) -> None:
    openai = provider_of(model) == "openai"
    assert ("OPENAI_API_KEY" in usual_key_variables(model)) == openai
    assert (profile_for(model).name == "openai") == openai
    server = LiveModel(model, api_base="http://127.0.0.1:9/v1", api_key="sk-test-0000")
    # our own deadline client is built for a model OpenAI's protocol serves, litellm's kept for any other
    assert (server._openai_wire(_litellm(), {"api_key": "sk-test-0000"}) is not None) == openai
