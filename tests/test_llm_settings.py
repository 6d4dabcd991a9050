"""The `llm:` block: a typo is an error with a did-you-mean (it would send requests elsewhere), keys
that would change the transport are errors, the documented provider parameters pass through, and
the engine's own settings always win over a parameter of the same meaning (tests against the local
server on 127.0.0.1)."""

from __future__ import annotations

from pathlib import Path

import pytest
from openai_server import OpenAIServer, Reply

import contractstudio as cs
from contractstudio.analysis.check import check_text
from contractstudio.cli import main
from contractstudio.runtime.live import LiveModel
from contractstudio.runtime.models import LLMRequest, TransportFault

QA = Path(__file__).resolve().parent / "runtime_contracts" / "qa.contract.yaml"
KEY = "sk-test-llm-settings-0000000000"


def with_llm(extra: str) -> str:
    return QA.read_text().replace("llm:\n  model: openai/test-model\n", "llm:\n  model: openai/test-model\n" + extra)


def found(text: str) -> list[tuple[str, str, str, str | None]]:
    return [(d.code, d.severity, d.message, d.hint) for d in check_text(text, "t.contract.yaml").diagnostics]


@pytest.fixture(scope="module")
def server():
    with OpenAIServer() as srv:
        yield srv


def test_a_typo_in_llm_is_an_error_with_did_you_mean(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    text = with_llm("  xapi_base: http://127.0.0.1:8000/v1\n")
    assert found(text) == [("SCH102", "error", "unknown key 'xapi_base' in llm", "did you mean 'api_base'?")]
    path = tmp_path / "typo.contract.yaml"
    path.write_text(text)
    with pytest.raises(cs.ContractError, match="xapi_base"):
        cs.load(path)  # never run with the key going to the provider's public endpoint
    assert main(["check", str(path)]) == 1
    assert "did you mean 'api_base'?" in capsys.readouterr().out


@pytest.mark.parametrize("key, hint", [("timeout: 600", "timeout_s"), ("request_timeout: 600", "timeout_s"),
                                       ("num_retries: 3", "retries belong to the engine"),
                                       ("max_retries: 3", "retries belong to the engine"), ("stream: true", "whole"),
                                       ("base_url: http://127.0.0.1:9/v1", "api_base")])
def test_keys_that_would_change_the_transport_are_errors(key: str, hint: str) -> None:
    [(code, severity, message, why)] = found(with_llm(f"  {key}\n"))
    assert (code, severity) == ("SCH102", "error") and "would change how the engine talks to the model" in message
    assert why is not None and hint in why


def test_documented_provider_parameters_pass_through_to_the_request(server: OpenAIServer, tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    text = with_llm(f"  api_base: {server.base_url}\n  top_p: 0.5\n  seed: 7\n  stop: ['END']\n"
                    "  extra_body: {metadata: {team: research}}\n")
    # CON131 (info): a local server's model is sent the schema under auto, and this type has clauses it cannot keep
    assert [f for f in found(text) if f[0] != "CON131"] == []
    path = tmp_path / "params.contract.yaml"
    path.write_text(text)
    server.script('{"answer": "a", "evidence": [], "coverage_score": 0.9}')
    cs.load(path).call({"query": "q", "documents": [{"id": "A1", "content": "t"}]}, wait=False)
    body = server.requests[0].body
    assert (body["top_p"], body["seed"], body["stop"], body["metadata"]) == (0.5, 7, ["END"], {"team": "research"})


@pytest.mark.timeout(40)
def test_the_engine_timeout_wins_over_a_timeout_parameter(server: OpenAIServer) -> None:
    # a server that never answers in time: `timeout: 600` must not hold the call past timeout_s
    model = LiveModel("openai/test-model", api_base=server.base_url, api_key=KEY, timeout_s=1, params={"timeout": 600})
    model.prepare()
    server.script(Reply("{}", delay=120))
    with pytest.raises(TransportFault) as info:
        model.complete(LLMRequest([{"role": "user", "content": "hi"}], {}))
    assert info.value.kind == "timeout" and "within 1 s" in str(info.value)
    assert "timeout" not in model.request_params() and model.request_params()["timeout_s"] == 1


@pytest.mark.parametrize("param", ["num_retries", "max_retries"])
def test_retry_parameters_bring_back_no_hidden_retries(server: OpenAIServer, param: str) -> None:
    model = LiveModel("openai/test-model", api_base=server.base_url, api_key=KEY, params={param: 3})
    server.script(Reply(status=500))
    with pytest.raises(TransportFault) as info:
        model.complete(LLMRequest([{"role": "user", "content": "hi"}], {}))
    assert info.value.kind == "server" and info.value.retryable  # the engine's to retry, and to trace
    assert len(server.requests) == 1
