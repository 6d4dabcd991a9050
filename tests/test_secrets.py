"""No API key anywhere it could be read back: traces, `run` output, errors, exports, logs.

The keys reach a real server on 127.0.0.1 (so they are really in use) through
the three ways a user gives one: OPENAI_API_KEY, `llm.api_key_env`, and an
Authorization header; the server then echoes them back in error bodies and
replies, the way misbehaving proxies do.
"""

from __future__ import annotations

import logging
import sys
from pathlib import Path

import pytest
from openai_server import OpenAIServer, Reply

import contractstudio as cs
from contractstudio.cli import main
from contractstudio.runtime.call_state import CallOptions, TransportRetry
from contractstudio.runtime.live import LiveModel

ROOT = Path(__file__).resolve().parent.parent
QA = ROOT / "tests" / "runtime_contracts" / "qa.contract.yaml"
INPUT = {"query": "Why vectors?", "documents": [{"id": "A1", "content": "Vector databases store embeddings."}]}
GOOD = '{"answer": "They store embeddings.", "evidence": [{"doc_id": "A1", "snippet": "store embeddings"}], "coverage_score": 0.9}'
LOW = '{"answer": "x", "evidence": [], "coverage_score": 0.2}'
ENV_KEY = "sk-envkey-7Hq2Lr9Zp4Xw1Mn6"
NAMED_KEY = "ck-named-5Tg8Yu3Io0Pa2Sd"  # does not look like a key: only registration can catch it
HEADER = "hdr-tok-9Kj4Hg7Fd2Sa1Lm"
OPTS = CallOptions(wait=False, transport=TransportRetry(tries=1, delay=0.001, max_delay=0.01))
LOGGERS = ("LiteLLM", "LiteLLM Router", "LiteLLM Proxy", "litellm", "openai", "openai._base_client", "httpx",
           "httpcore", "httpcore.http11", "httpcore.connection", "contractstudio")


@pytest.fixture(scope="module")
def server():
    with OpenAIServer() as srv:
        yield srv


@pytest.fixture
def logs(caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch):
    """Every log record of every logger a live call goes through, at DEBUG, including litellm's own."""
    # A handler still bound to an earlier test's closed capture would make `logging` print its own error
    # with the exception being handled: an artifact of the test run, not something a user meets.
    monkeypatch.setattr(logging, "raiseExceptions", False)
    streams = []
    loggers = [logging.getLogger(), *(v for v in logging.Logger.manager.loggerDict.values() if isinstance(v, logging.Logger))]
    for handler in {h for logger in loggers for h in logger.handlers}:
        if type(handler) is logging.StreamHandler and getattr(handler.stream, "closed", False):
            # litellm's own handlers keep the stderr of the test that imported it: point them at this test's
            streams.append((handler, handler.stream))
            handler.stream = sys.stderr
    for name in LOGGERS:
        caplog.set_level(logging.DEBUG, logger=name)
        logger = logging.getLogger(name)
        if not logger.propagate:  # litellm's loggers write to their own handler: capture them directly too
            logger.addHandler(caplog.handler)
    yield caplog
    for name in LOGGERS:
        logging.getLogger(name).removeHandler(caplog.handler)
    for handler, stream in streams:
        handler.stream = stream


def nowhere(text: str, *secrets: str) -> None:
    for secret in secrets:
        assert secret not in text
        assert secret[4:-4] not in text  # not even most of it


def echoes(secret: str) -> list[Reply]:
    """Replies of a server that repeats a key back: in an auth error, a 500 body, and in the model's content."""
    return [Reply(f"Incorrect API key provided: {secret}", status=500), Reply(f'{{"answer": "{secret}"'), GOOD]


# ----------------------------------------------------------------- run: stdout, stderr, --json, --trace


@pytest.mark.parametrize("as_json", [False, True])
@pytest.mark.parametrize("path", ["success", "fallback", "transport"])
def test_run_never_prints_or_traces_the_environment_key(server: OpenAIServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                         capsys: pytest.CaptureFixture[str], logs: pytest.LogCaptureFixture,
                                                         as_json: bool, path: str) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", ENV_KEY)
    replies = {"success": echoes(ENV_KEY), "fallback": [f'{{"answer": "{ENV_KEY}"', LOW, LOW],
               "transport": [Reply(f"Incorrect API key provided: {ENV_KEY}", status=401)]}[path]
    server.script(*replies)
    inp = tmp_path / "in.yaml"
    inp.write_text("query: Why vectors?\ndocuments:\n  - {id: A1, content: Vector databases store embeddings.}\n")
    trace = tmp_path / "t.jsonl"
    args = ["run", str(QA), "--input", str(inp), "--model", "openai/test-model", "--api-base", server.base_url,
            "--no-wait", "--trace", str(trace)] + (["--json"] if as_json else [])
    code = main(args)
    out, err = capsys.readouterr()
    assert code == (0 if path == "success" else 1)
    assert server.requests[0].headers["authorization"] == f"Bearer {ENV_KEY}"  # the key was really used
    nowhere(out + err + trace.read_text() + logs.text, ENV_KEY)
    if path == "transport":
        assert "***" in out  # the echoed key was there, and was redacted


def test_a_key_named_by_api_key_env_is_used_and_never_shown(server: OpenAIServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                            capsys: pytest.CaptureFixture[str], logs: pytest.LogCaptureFixture) -> None:
    monkeypatch.setenv("CS_TEST_LLM_CREDENTIAL", NAMED_KEY)
    contract_path = tmp_path / "named.contract.yaml"
    contract_path.write_text(QA.read_text().replace("llm:\n  model: openai/test-model",
                                                    f"llm:\n  model: openai/test-model\n  api_base: {server.base_url}\n"
                                                    "  api_key_env: CS_TEST_LLM_CREDENTIAL"))
    inp = tmp_path / "in.json"
    inp.write_text('{"query": "Why vectors?", "documents": [{"id": "A1", "content": "Vector databases store embeddings."}]}')
    for as_json in (False, True):
        server.script(*echoes(NAMED_KEY))
        trace = tmp_path / f"t{as_json}.jsonl"
        # a variable that is not the provider's usual one: the user trusts the folder (contractstudio.trust)
        code = main(["run", str(contract_path), "--input", str(inp), "--no-wait", "--trust", "--trace", str(trace)]
                    + (["--json"] if as_json else []))
        out, err = capsys.readouterr()
        assert code == 0 and server.requests[0].headers["authorization"] == f"Bearer {NAMED_KEY}"
        nowhere(out + err + trace.read_text() + logs.text, NAMED_KEY)
    exported = tmp_path / "exported.yaml"
    assert main(["export", str(contract_path), "-o", str(exported)]) == 0
    assert "api_key_env: CS_TEST_LLM_CREDENTIAL" in exported.read_text()
    nowhere(exported.read_text() + "".join(capsys.readouterr()), NAMED_KEY)


# ----------------------------------------------------------------- the Python API: headers, violations, reprs


def test_an_authorization_header_never_leaves_the_request(server: OpenAIServer, tmp_path: Path, logs: pytest.LogCaptureFixture) -> None:
    raising = tmp_path / "raise.contract.yaml"
    raising.write_text(QA.read_text().replace("on_failure: fallback", "on_failure: raise"))
    contract = cs.load(raising)
    model = LiveModel("openai/test-model", api_base=server.base_url, api_key="sk-placeholder-unused-000",
                      params={"extra_headers": {"Authorization": f"Bearer {HEADER}", "X-Api-Key": HEADER}})
    server.script(Reply(f"token {HEADER} is not valid here", status=500), f'{{"answer": "{HEADER}"', LOW, f"Bearer {HEADER}")
    with pytest.raises(cs.ContractViolation) as info:
        contract.call(INPUT, model, options=OPTS)
    assert server.requests[0].headers["authorization"] == f"Bearer {HEADER}"
    violation = info.value
    trace = violation.trace.to_jsonl()
    assert '"Authorization": "***"' in trace  # the parameters are traced, the value is not
    nowhere(str(violation) + repr(violation) + " ".join(violation.errors) + trace + repr(violation.result) + logs.text, HEADER)
    out = tmp_path / "t.jsonl"
    violation.trace.write(out)
    nowhere(out.read_text(), HEADER)


def test_the_result_of_a_failed_call_shows_no_key(server: OpenAIServer, logs: pytest.LogCaptureFixture) -> None:
    contract = cs.load(QA)
    server.script(Reply(f"Incorrect API key provided: {ENV_KEY}", status=401))
    result = contract.call(INPUT, "openai/test-model", api_base=server.base_url, api_key=ENV_KEY, options=OPTS)
    assert not result.successful and "***" in result.errors[0]
    nowhere(" ".join(result.errors) + repr(result) + result.trace.to_jsonl() + logs.text, ENV_KEY)


# ----------------------------------------------------------------- files with a literal key: load, check, export


@pytest.mark.parametrize("line", [f'  api_key: "{ENV_KEY}"', f'  extra_headers: {{Authorization: "Bearer {HEADER}"}}'])
def test_a_literal_key_in_a_file_is_refused_without_being_repeated(tmp_path: Path, capsys: pytest.CaptureFixture[str], line: str) -> None:
    path = tmp_path / "literal.contract.yaml"
    path.write_text(QA.read_text().replace("llm:\n", f"llm:\n{line}\n"))
    with pytest.raises(cs.ContractError) as info:
        cs.load(path)
    assert "YML007" in str(info.value)
    nowhere(str(info.value) + repr(info.value), ENV_KEY, HEADER)
    assert main(["export", str(path)]) == 1
    out, err = capsys.readouterr()
    assert out == "" and "YML007" in err and "*****" in err  # the excerpt is shown, the key starred out
    nowhere(out + err, ENV_KEY, HEADER)
    assert main(["check", str(path)]) == 1
    out, err = capsys.readouterr()
    nowhere(out + err, ENV_KEY, HEADER)


def test_a_crash_report_carries_no_key(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    import contractstudio.commands.check as check_command
    from contractstudio.runtime.trace import register_secret

    register_secret(NAMED_KEY)  # a key in use in this process (as a LiveModel registers it)

    def crash(args: object) -> int:
        raise RuntimeError(f"unexpected: {NAMED_KEY} and Bearer {HEADER}")

    monkeypatch.setattr(check_command, "run", crash)
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    assert main(["check", str(QA)]) == 3
    err = capsys.readouterr().err
    [report] = tmp_path.glob("contractstudio-crash-*.txt")
    assert "RuntimeError" in report.read_text()
    nowhere(err + report.read_text(), NAMED_KEY, HEADER)
