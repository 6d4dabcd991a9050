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
from contractstudio.trust import config_folder, hook_folder, user_api_bases

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


def key_findings(path: Path, trusted: bool, api_bases: tuple[str, ...] = ()) -> list[Any]:
    """`check`'s findings on the file in a folder trusted or not (and the servers the user's config names, which a
    face reads and gives), less CON131 (an info on the clauses an OpenAI-compatible server's decoder cannot keep: it
    is sent the schema under auto, issue 33)."""
    context = Context(hooks=hook_folder(path.parent, trusted), api_bases=api_bases)
    return [d for d in check_file(path, context).diagnostics if d.code != "CON131"]


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


@pytest.mark.parametrize("base", ["http://localhost.evil.com:8000/v1", "http://evil-localhost:8000/v1",
                                  "http://localhost@evil.com:8000/v1", "http://127.0.0.1.evil.com:8000/v1"])
def test_a_name_that_only_looks_like_loopback_is_another_machine(tmp_path: Path, base: str,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """`*.localhost` is this machine (RFC 6761); `localhost.evil.com` or a user part named localhost is not."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-usual-variable-0000000000")
    path = contract(tmp_path, f"  api_base: {base}\n")
    host = base.split("@")[-1].removeprefix("http://").split(":")[0]
    with pytest.raises(cs.ContractError, match=r"sends its requests, and the key, to http://" + re.escape(f"{host}:8000,")):
        cs.load(path).model_for(None)
    assert [d.code for d in key_findings(path, False)] == ["CON110"]


def test_a_server_in_the_users_own_config_is_given_by_the_user(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-usual-variable-0000000000")
    path = contract(tmp_path, "  api_base: https://llm-gateway.example.com/v1\n")
    with pytest.raises(cs.ContractError):
        cs.load(path).model_for(None)
    config_folder().mkdir(parents=True, exist_ok=True)
    (config_folder() / "config.yaml").write_text("trusted_api_bases: [https://llm-gateway.example.com]\n")
    model = cs.load(path).model_for(None)  # no request is made: building the model is where the refusal would be
    assert model.api_base == "https://llm-gateway.example.com/v1"
    assert key_findings(path, False, user_api_bases()) == []
    assert pytest.raises(cs.ContractError, cs.load(contract(tmp_path, "  api_base: https://llm-gateway.example.com:8443/v1\n"))
                         .model_for, None)  # another port is another server


@pytest.mark.parametrize("base", ["http://127.0.0.1:9/v1", "http://localhost:9/v1", "http://[::1]:9/v1",
                                  "http://foo.localhost:9/v1", "http://LocalHost.:9/v1", "http://127.8.9.10:9/v1"])
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


def test_the_analyzer_never_reads_the_users_config_the_face_gives_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                       capsys: pytest.CaptureFixture[str]) -> None:
    """CON110 asks the analysis context for the servers the user named: the face reads config.yaml once, the rule never."""
    from contractstudio import user_config

    reads: list[Path] = []
    real = user_config.load_user_config
    monkeypatch.setattr(user_config, "load_user_config", lambda path: reads.append(path) or real(path))
    gateway = "https://llm-gateway.example.com"
    paths = [contract(tmp_path / str(n), "  api_base: https://llm-gateway.example.com/v1\n") for n in range(3)]
    untrusted = [Context(hooks=hook_folder(p.parent, False)) for p in paths]
    config_folder().mkdir(parents=True, exist_ok=True)
    (config_folder() / "config.yaml").write_text(f"trusted_api_bases: [{gateway}]\n")
    # what the disk says is not the analysis's business: the context says which servers the user gave
    assert [[d.code for d in check_file(p, ctx).diagnostics if d.code != "CON131"]
            for p, ctx in zip(paths, untrusted, strict=True)] == [["CON110"]] * 3
    assert reads == []
    given = Context(hooks=hook_folder(paths[0].parent, False), api_bases=(gateway,))
    assert [d.code for d in check_file(paths[0], given).diagnostics if d.code != "CON131"] == []
    # the face (here `check` of three files) reads the config once and hands it to every analysis
    assert main(["check", *map(str, paths)]) == 0
    assert "CON110" not in capsys.readouterr().out
    assert len(reads) == 1


def test_the_studio_and_the_language_server_read_the_users_config_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from contractstudio import user_config
    from contractstudio.lsp.analyses import Analyses
    from contractstudio.studio.app import StudioApp

    reads: list[Path] = []
    real = user_config.load_user_config
    monkeypatch.setattr(user_config, "load_user_config", lambda path: reads.append(path) or real(path))
    config_folder().mkdir(parents=True, exist_ok=True)
    (config_folder() / "config.yaml").write_text("trusted_api_bases: [https://llm-gateway.example.com]\n")
    path = contract(tmp_path, "  api_base: https://llm-gateway.example.com/v1\n")
    server = Analyses(lambda entry: None)
    try:
        assert [[d for d in server.analyze(str(path), path.read_text()).diagnostics if d.code != "CON131"]
            for _ in range(3)] == [[], [], []]
    finally:
        server.pool.shutdown()
    assert len(reads) == 1  # the server's, at its first analysis; not one per analysis
    studio = StudioApp([str(path.parent)])
    assert [studio.context_for(path).api_bases for _ in range(3)] == [("https://llm-gateway.example.com",)] * 3
    assert len(reads) == 2  # the studio's, at its start


def test_a_call_reads_the_users_config_only_when_its_file_names_a_server(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from contractstudio import user_config

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-usual-variable-0000000000")
    reads: list[Path] = []
    real = user_config.load_user_config
    monkeypatch.setattr(user_config, "load_user_config", lambda path: reads.append(path) or real(path))
    loaded = cs.load(contract(tmp_path, ""))
    assert len(reads) == 1  # the load's, for its analysis
    for _ in range(3):
        loaded.model_for(None)  # each call builds its model: no server of the file's to judge, nothing read
    assert len(reads) == 1
