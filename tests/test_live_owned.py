"""litellm's process-wide settings do not change what one live call does: retries, fallbacks and cached replies are
the engine's, which counts, traces and budgets each request (docs/runtime.md, "Who owns a live call").

A user (or another library in the process) may set `litellm.num_retries` or `litellm.cache` after the live model's
set-up; each call through the run (synchronous), the awaited path eval takes, and streamed replies of both, against a
test server on 127.0.0.1, must still send exactly one request per engine attempt, and say what the server answered.
`litellm.model_fallbacks`, which no call argument overrides, is refused before anything is sent. litellm's own retry
helpers need `tenacity`, which is not installed here: they are replaced by recorders, so a call that would retry
hidden where tenacity is installed fails here too.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from openai_server import OpenAIServer, Reply
from test_early_stop import CONTRACT as VERDICT
from test_early_stop import GOOD as GOOD_VERDICT
from test_early_stop import REVIEW, label_watch

import contractstudio as cs
from contractstudio.runtime.call_state import CallOptions, TransportRetry
from contractstudio.runtime.live import prepare_live_client
from contractstudio.runtime.session import Session

QA = Path(__file__).parent / "runtime_contracts" / "qa.contract.yaml"
INPUT = {"query": "Why vectors?", "documents": [{"id": "A1", "content": "Vector databases store embeddings."}]}
GOOD = '{"answer": "They store embeddings.", "evidence": [{"doc_id": "A1", "snippet": "store embeddings"}], "coverage_score": 0.9}'
KEY = "sk-test-owned-5e4d3c2b1a09f8e7"
TRANSPORT = TransportRetry(tries=2, delay=0.001, max_delay=0.01)  # three requests at most: the first and two retries
MODEL = "openai/test-model"


@pytest.fixture(scope="module")
def server() -> Iterator[OpenAIServer]:
    with OpenAIServer() as srv:
        yield srv


@pytest.fixture
def litellm(monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """litellm after the live model's set-up, its retry helpers recorded instead of run (the test's globals are
    restored by monkeypatch)."""
    prepare_live_client()
    import litellm as module

    entered: list[str] = []

    def recorder(name: str) -> Callable[..., Any]:
        def helper(*args: Any, **kwargs: Any) -> Any:
            entered.append(name)
            raise RuntimeError(f"litellm's {name} was entered: a hidden retry where tenacity is installed")

        async def ahelper(*args: Any, **kwargs: Any) -> Any:
            return helper(*args, **kwargs)

        return ahelper if name.startswith("a") else helper

    for name in ("completion_with_retries", "acompletion_with_retries"):
        monkeypatch.setattr(module, name, recorder(name))
    module.hidden_retries_entered = entered
    yield module
    del module.hidden_retries_entered


def _qa(server: OpenAIServer, awaited: bool) -> Any:
    contract = cs.load(QA)
    options = CallOptions(wait=False, transport=TRANSPORT, watch_for=None)  # read whole: nobody watches its chunks
    if not awaited:
        return contract.call(INPUT, MODEL, api_base=server.base_url, api_key=KEY, options=options)
    session = Session(contract.plan, INPUT, contract.model_for(MODEL, api_base=server.base_url, api_key=KEY), options)
    return asyncio.run(session.arun())


def _verdict(server: OpenAIServer, awaited: bool, tmp_path: Path) -> Any:
    """The verdict contract, watched: its replies are asked as streams."""
    path = tmp_path / "verdict.contract.yaml"
    path.write_text(VERDICT)
    contract = cs.load(path)
    options = CallOptions(wait=False, transport=TRANSPORT, watch_for=label_watch)
    model = contract.model_for(MODEL, api_base=server.base_url, api_key=KEY)
    session = Session(contract.plan, REVIEW, model, options)
    return asyncio.run(session.arun(raise_on_violation=False)) if awaited else session.run(raise_on_violation=False)


PATHS = [("run", False, False), ("awaited", True, False), ("streamed run", False, True), ("streamed awaited", True, True)]


def _call(server: OpenAIServer, awaited: bool, streamed: bool, tmp_path: Path) -> Any:
    return _verdict(server, awaited, tmp_path) if streamed else _qa(server, awaited)


def _assert_one_request_per_attempt_each_the_server_s_500(server: OpenAIServer, result: Any, litellm: Any,
                                                            streamed: bool) -> None:
    assert litellm.hidden_retries_entered == []
    assert not result.successful
    faults = result.trace.of_type("transport_error")
    assert [(f["kind"], f["status"], f["exception"]) for f in faults] == [("server", 500, "InternalServerError")] * 3
    assert all("500" in f["message"] and "tenacity" not in f["message"] for f in faults)
    assert faults[-1]["gave_up"] and "after 2 retries" in result.errors[-1]
    assert len(server.requests) == len(result.trace.of_type("llm_request")) == 3  # the first try and the engine's 2
    assert all(r.body["model"] == "test-model" for r in server.requests)
    assert all(bool(r.body.get("stream")) is streamed for r in server.requests)
    assert not any({"num_retries", "retry_policy", "caching"} & set(r.body) for r in server.requests)  # litellm's own


@pytest.mark.parametrize(("path", "awaited", "streamed"), PATHS, ids=[p for p, _, _ in PATHS])
def test_a_global_num_retries_brings_back_no_hidden_retry(server: OpenAIServer, litellm: Any, monkeypatch: pytest.MonkeyPatch,
                                                         tmp_path: Path, path: str, awaited: bool, streamed: bool) -> None:
    monkeypatch.setattr(litellm, "num_retries", 2)  # after the live model's set-up, which had set it to 0
    server.script(Reply(status=500))
    result = _call(server, awaited, streamed, tmp_path)
    _assert_one_request_per_attempt_each_the_server_s_500(server, result, litellm, streamed)


@pytest.mark.parametrize(("path", "awaited", "streamed"), PATHS, ids=[p for p, _, _ in PATHS])
def test_global_fallbacks_are_refused_before_anything_is_sent(server: OpenAIServer, litellm: Any,
                                                             monkeypatch: pytest.MonkeyPatch, tmp_path: Path, path: str,
                                                             awaited: bool, streamed: bool) -> None:
    monkeypatch.setattr(litellm, "model_fallbacks", ["openai/other-model"])  # no call argument turns it off
    server.script(Reply(status=500))
    result = _call(server, awaited, streamed, tmp_path)
    assert not result.successful and server.requests == []
    assert "litellm.model_fallbacks is set" in result.errors[-1] and "nothing was sent" in result.errors[-1]


@pytest.mark.parametrize(("path", "awaited", "streamed"), PATHS, ids=[p for p, _, _ in PATHS])
def test_a_global_cache_answers_no_request_of_the_engine(server: OpenAIServer, litellm: Any, monkeypatch: pytest.MonkeyPatch,
                                                        tmp_path: Path, path: str, awaited: bool, streamed: bool) -> None:
    from litellm.caching.caching import Cache

    monkeypatch.setattr(litellm, "cache", Cache(type="local"))
    server.script(GOOD_VERDICT if streamed else GOOD)
    results = [_call(server, awaited, streamed, tmp_path) for _ in range(2)]  # the same request twice
    assert all(r.successful and r.llm_calls == 1 for r in results)
    assert len(server.requests) == 2  # each one sent: a reply the server did not send is not the engine's to count


def test_a_global_request_timeout_does_not_replace_the_engine_s(server: OpenAIServer, litellm: Any,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(litellm, "request_timeout", 0.05)
    server.script(Reply(GOOD, delay=0.3))  # well within the contract's timeout_s
    result = _qa(server, awaited=False)
    assert result.successful and len(server.requests) == 1 and not result.trace.of_type("transport_error")
