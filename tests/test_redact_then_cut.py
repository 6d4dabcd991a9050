"""Redact first, then cut: wherever text is shortened (run's reply preview and transport messages, the
trace's reply text, what the server sent, values quoted in error messages), a key echoed by a
server is masked whole before the cut, so no part of it is left. The key reaches a real server on
127.0.0.1 and comes back in replies and bodies, the way misbehaving proxies echo credentials."""

from __future__ import annotations

from pathlib import Path

import pytest
from openai_server import OpenAIServer, Reply

from contractstudio.cli import main
from contractstudio.runtime.call_state import CallOptions, TransportRetry
from contractstudio.runtime.live import LiveModel
from contractstudio.safe_text import register_secret, shorten

QA = Path(__file__).resolve().parent / "runtime_contracts" / "qa.contract.yaml"
KEY = "ck-echoed-5Tg8Yu3Io0Pa2Sd7Qw"  # no well-known shape: only knowing it is in use can mask it
OPTS = CallOptions(wait=False, transport=TransportRetry(tries=1, delay=0.001, max_delay=0.01))
GOOD = '{"answer": "They store embeddings.", "evidence": [{"doc_id": "A1", "snippet": "store embeddings"}], "coverage_score": 0.9}'


@pytest.fixture(scope="module")
def server():
    with OpenAIServer() as srv:
        yield srv


def no_piece_of(text: str, secret: str = KEY, size: int = 8) -> None:
    """Not even 8 characters in a row of the secret (a cut key would leave its start)."""
    pieces = [secret[i:i + size] for i in range(len(secret) - size + 1)]
    leaked = [p for p in pieces if p in text]
    assert not leaked, f"part of the key is shown: {leaked[:3]}"


def test_run_reply_preview_is_redacted_before_it_is_cut(server: OpenAIServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    # the preview keeps 70 characters: the key starts at 49 and would be cut after 21 of its 27
    echo = '{"answer": "' + "x" * 37 + KEY + '", "evidence": [], "coverage_score": 0.1}'
    server.script(echo, Reply(status=500, content="y" * 25 + f" rejected key {KEY} for this model"), GOOD)
    inp = tmp_path / "in.yaml"
    inp.write_text("query: Why vectors?\ndocuments:\n  - {id: A1, content: Vector databases store embeddings.}\n")
    code = main(["run", str(QA), "--input", str(inp), "--model", "openai/test-model", "--api-base", server.base_url, "--no-wait"])
    out, err = capsys.readouterr()
    assert code == 0 and server.requests[0].headers["authorization"] == f"Bearer {KEY}"
    assert "<- " in out and "***" in out
    no_piece_of(out + err)


def test_a_reply_cut_for_the_trace_keeps_no_part_of_a_key(server: OpenAIServer, monkeypatch: pytest.MonkeyPatch) -> None:
    import contractstudio.runtime.asking as asking

    monkeypatch.setattr(asking, "TRACE_TEXT_LIMIT", 60)  # the trace keeps 60 characters of a longer reply
    model = LiveModel("openai/test-model", api_base=server.base_url, api_key=KEY)
    server.script("z" * 50 + KEY + "z" * 40, GOOD)
    import contractstudio as cs

    result = cs.load(QA).call({"query": "q", "documents": [{"id": "A1", "content": "t"}]}, model, options=OPTS)
    assert result.trace.of_type("llm_response")[0]["truncated"]
    no_piece_of(result.trace.to_jsonl())


def test_what_a_server_sent_is_redacted_before_it_is_cut(server: OpenAIServer) -> None:
    # an HTML page instead of a completion: the message quotes its first characters
    model = LiveModel("openai/test-model", api_base=server.base_url, api_key=KEY)
    body = ("<html>" + "p" * 100 + KEY + "</html>").encode()
    server.script(Reply(body=body, headers={"Content-Type": "text/html"}))
    from contractstudio.runtime.models import LLMRequest, TransportFault

    with pytest.raises(TransportFault) as info:
        model.complete(LLMRequest([{"role": "user", "content": "hi"}], {}))
    assert "HTTP 200" in str(info.value)
    no_piece_of(str(info.value))


def test_values_quoted_in_validation_errors_are_redacted_before_they_are_cut() -> None:
    from contractstudio.runtime.validation import _short

    register_secret(KEY)
    no_piece_of(_short({"answer": "a" * 50 + KEY}))
    assert shorten("abc " + KEY + " def", 12) == "abc *** def"
    assert shorten("a" * 20 + KEY, 30) == "a" * 20 + "***"


def test_the_outline_detail_of_a_value_is_redacted_before_it_is_cut() -> None:
    from contractstudio.analysis.check import check_text
    from contractstudio.editing.outline import document_symbols

    token = "ghp_" + "0123456789abcdefghijABCDEFGHIJ0123456789"  # a GitHub token's shape, cut at 60 characters
    text = QA.read_text().replace("prompt: Answer the question from the documents.", f"prompt: {'p' * 49} {token}")
    [root] = document_symbols(check_text(text, "t.contract.yaml"))
    prompt = next(s for s in root.children if s.name == "prompt")
    no_piece_of(prompt.detail or "", token)
