"""Where a key goes is treated as code: a key read from a variable other than the provider's usual one,
or sent to an `api_base` that is neither loopback nor given by the user (--api-base, trusted_api_bases in
their config), needs a trusted folder. Untrusted, the call is refused before any request, so the local
server on 127.0.0.1 never sees the key; the analyzer flags the same things (CON110)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from openai_server import OpenAIServer

import contractstudio as cs
from contractstudio.analysis.check import Context, check_file
from contractstudio.cli import main
from contractstudio.trust import config_folder, hook_folder

QA = Path(__file__).resolve().parent / "runtime_contracts" / "qa.contract.yaml"
TOKEN = "ghp_" + "R3p0T0k3nN0tF0rY0u5e11ing4ppl35ee"  # a fake GitHub token, built so the file holds none
GOOD = '{"answer": "They store embeddings.", "evidence": [{"doc_id": "A1", "snippet": "store embeddings"}], "coverage_score": 0.9}'


@pytest.fixture(scope="module")
def server():
    with OpenAIServer() as srv:
        yield srv


def contract(tmp_path: Path, llm: str) -> Path:
    path = tmp_path / "cloned" / "exfil.contract.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(QA.read_text().replace("llm:\n  model: openai/test-model\n", f"llm:\n  model: openai/test-model\n{llm}"))
    return path


def key_findings(path: Path, trusted: bool) -> list[Any]:
    """`check`'s findings on the file in a folder trusted or not, less CON131 (an info on the clauses an
    OpenAI-compatible server's decoder cannot keep: it is sent the schema under auto, issue 33)."""
    return [d for d in check_file(path, Context(hooks=hook_folder(path.parent, trusted))).diagnostics if d.code != "CON131"]


def run(path: Path, *extra: str) -> int:
    inp = path.parent / "in.json"
    inp.write_text('{"query": "Why vectors?", "documents": [{"id": "A1", "content": "Vector databases store embeddings."}]}')
    return main(["run", str(path), "--input", str(inp), "--no-wait", *extra])


def test_an_untrusted_file_never_sends_a_key_from_an_unusual_variable(server: OpenAIServer, tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch,
                                                                      capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("GITHUB_TOKEN", TOKEN)
    path = contract(tmp_path, f"  api_base: {server.base_url}\n  api_key_env: GITHUB_TOKEN\n")
    server.script(GOOD)
    assert run(path) == 1
    err = capsys.readouterr().err
    assert "GITHUB_TOKEN" in err and "trusted folder" in err and "OPENAI_API_KEY" in err
    assert server.requests == []  # refused before any request: the token never left
    assert [d.code for d in key_findings(path, False)] == ["CON110"]
    assert run(path, "--trust") == 0  # the user's decision: now it is sent
    assert server.requests[0].headers["authorization"] == f"Bearer {TOKEN}"
    assert TOKEN not in capsys.readouterr().out


def test_an_untrusted_file_never_sends_a_key_to_a_server_only_it_names(server: OpenAIServer, tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch,
                                                                       capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-usual-variable-0000000000")
    path = contract(tmp_path, "  api_base: https://collector.example.net/v1\n")
    assert run(path) == 1  # refused before any connection is tried
    err = capsys.readouterr().err
    assert "https://collector.example.net" in err and "trusted folder" in err and "--api-base" in err
    with pytest.raises(cs.ContractError, match="collector.example.net"):
        cs.load(path).model_for(None)
    server.script(GOOD)
    assert run(path, "--api-base", server.base_url) == 0  # the user chose the server: the file's is not used
    assert len(server.requests) == 1
    [warning] = key_findings(path, False)
    assert warning.code == "CON110" and warning.severity == "warning"
    assert key_findings(path, True) == []


def test_a_server_in_the_users_own_config_is_given_by_the_user(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-usual-variable-0000000000")
    path = contract(tmp_path, "  api_base: https://llm-gateway.example.com/v1\n")
    with pytest.raises(cs.ContractError):
        cs.load(path).model_for(None)
    config_folder().mkdir(parents=True, exist_ok=True)
    (config_folder() / "config.yaml").write_text("trusted_api_bases: [https://llm-gateway.example.com]\n")
    model = cs.load(path).model_for(None)  # no request is made: building the model is where the refusal would be
    assert model.api_base == "https://llm-gateway.example.com/v1"
    assert key_findings(path, False) == []
    assert pytest.raises(cs.ContractError, cs.load(contract(tmp_path, "  api_base: https://llm-gateway.example.com:8443/v1\n"))
                         .model_for, None)  # another port is another server


@pytest.mark.parametrize("base", ["http://127.0.0.1:9/v1", "http://localhost:9/v1", "http://[::1]:9/v1"])
def test_loopback_servers_and_usual_variables_need_no_trust(tmp_path: Path, base: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-usual-variable-0000000000")
    path = contract(tmp_path, f"  api_base: {base}\n  api_key_env: OPENAI_API_KEY\n")
    assert cs.load(path).model_for(None).api_base == base
    assert key_findings(path, False) == []


@pytest.mark.parametrize(("base", "host"), [("http://10.0.0.5:8000/v1", "10.0.0.5"), ("http://192.168.1.20:8000/v1", "192.168.1.20"),
                                            ("http://[fc00::1]:8000/v1", "[fc00::1]")])
def test_a_server_on_a_private_network_is_not_this_machine(tmp_path: Path, base: str, host: str,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """A private address (10.x, 192.168.x, fc00::) is another machine on the network: the key goes there only if trusted."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-usual-variable-0000000000")
    path = contract(tmp_path, f"  api_base: {base}\n")
    with pytest.raises(cs.ContractError, match=r"sends its requests, and the key, to http://" + re.escape(f"{host}:8000,")):
        cs.load(path).model_for(None)
    found = key_findings(path, False)
    line = path.read_text().splitlines().index(f"  api_base: {base}") + 1
    assert [(d.code, d.line) for d in found if d.code == "CON110"] == [("CON110", line)]
    assert cs.load(path).model_for(None, api_base=base).api_base == base  # given by the user (--api-base): no trust needed
