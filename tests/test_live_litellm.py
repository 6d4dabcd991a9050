"""How live calls use litellm: its success logging runs only when someone listens; the cost is litellm's own price.

Against the local OpenAI-compatible server (tests/openai_server.py): no network, no real key.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from openai_server import OpenAIServer

import contractstudio as cs
from contractstudio.runtime.call_state import CallOptions
from contractstudio.runtime.events import ModelReply

QA = Path(__file__).parent / "runtime_contracts" / "qa.contract.yaml"
INPUT = {"query": "Why vectors?", "documents": [{"id": "A1", "content": "Vector databases store embeddings."}]}
GOOD = '{"answer": "They store embeddings.", "evidence": [{"doc_id": "A1", "snippet": "store embeddings"}], "coverage_score": 0.9}'
KEY = "sk-test-9f8e7d6c5b4a39281706"


@pytest.fixture(scope="module")
def server():
    with OpenAIServer([GOOD]) as srv:
        yield srv


def call(server: OpenAIServer, model: str = "openai/test-model", *, streamed: bool = True,
         options: CallOptions | None = None) -> Any:
    """A call whose reply streams (its output has clauses decided on a prefix), or comes whole (nothing watches)."""
    if options is None:
        options = CallOptions(wait=False) if streamed else CallOptions(wait=False, watch_for=None)
    return cs.load(QA).call(INPUT, model, api_base=server.base_url, api_key=KEY, options=options)


# What litellm hands its thread pool to log a call: a whole reply's success handler, or a stream's per-chunk logging
LOGGING = {"success_handler", "run_success_logging_and_cache_storage"}


def _record_background(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """litellm's thread pool (as litellm.utils and its stream reader both use it), recording what it is handed."""
    import litellm
    from litellm.litellm_core_utils import streaming_handler

    handed: list[str] = []

    class Recorder:
        def submit(self, fn: Any, *args: Any, **kwargs: Any) -> None:
            handed.extend(getattr(f, "__name__", "?") for f in (fn, *args[:1]) if callable(f))

    monkeypatch.setattr(litellm.utils.executor, "executor", Recorder())  # the pool behind our gate of each
    monkeypatch.setattr(streaming_handler.executor, "executor", Recorder())
    return handed


@pytest.mark.parametrize("streamed", [True, False], ids=["streamed", "whole"])
def test_without_a_callback_litellm_does_not_log_each_call_in_the_background(server: OpenAIServer, streamed: bool,
                                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    call(server)  # litellm imported and set up
    import litellm

    handed = _record_background(monkeypatch)
    assert call(server, streamed=streamed).successful
    assert not LOGGING & set(handed)
    monkeypatch.setattr(litellm, "success_callback", [lambda *a: None])  # someone listens: handed over again
    assert call(server, streamed=streamed).successful
    assert LOGGING & set(handed)


@pytest.mark.parametrize("streamed", [True, False], ids=["streamed", "whole"])
def test_litellms_own_cache_entry_without_a_cache_is_nobody_listening(server: OpenAIServer, streamed: bool,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    # Importing litellm's Vertex context caching (any Gemini call) builds a `Cache` of its own, which adds "cache" to
    # the success callbacks for good; with no `litellm.cache` set that entry does nothing, and it made every later
    # call of the process hand its success logging to the background again (seen as an order-dependent failure).
    call(server)
    import litellm

    handed = _record_background(monkeypatch)
    monkeypatch.setattr(litellm, "success_callback", ["cache"])
    monkeypatch.setattr(litellm, "_async_success_callback", ["cache"])
    monkeypatch.setattr(litellm, "cache", None)
    assert call(server, streamed=streamed).successful
    assert not LOGGING & set(handed)
    monkeypatch.setattr(litellm, "cache", litellm.Cache(type="local"))  # a cache the user set reads every reply
    assert call(server, streamed=streamed).successful
    assert LOGGING & set(handed)


@contextmanager
def _litellms_log() -> Iterator[list[str]]:
    """What litellm's loggers say meanwhile, at every level (its success handler catches and logs its own errors)."""
    import logging

    logged: list[str] = []

    class Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            logged.append(f"{record.name} {record.levelname}: {record.getMessage()[:300]}")

    handler, loggers = Keep(level=logging.DEBUG), [logging.getLogger(n) for n in ("LiteLLM", "LiteLLM Router", "LiteLLM Proxy")]
    levels = [lg.level for lg in loggers]
    for lg in loggers:
        lg.addHandler(handler)
        lg.setLevel(logging.DEBUG)
    try:
        yield logged
    finally:
        for lg, level in zip(loggers, levels, strict=True):
            lg.removeHandler(handler)
            lg.setLevel(level)


def _litellm_state(litellm: Any, logged: list[str]) -> str:
    pool = litellm.utils.executor
    inner = getattr(pool, "executor", pool)
    return "\n".join([
        f"litellm module is sys.modules' own: {litellm is sys.modules.get('litellm')}",
        f"callbacks: success {litellm.success_callback!r}, async {litellm._async_success_callback!r}, "
        f"input {litellm.input_callback!r}, callbacks {litellm.callbacks!r}, cache {litellm.cache!r}",
        f"pool: {type(pool).__name__} over {type(inner).__name__}, shut down {getattr(inner, '_shutdown', '?')}, "
        f"queued {getattr(getattr(inner, '_work_queue', None), 'qsize', lambda: '?')()}, "
        f"threads {len(getattr(inner, '_threads', ()))}; live threads {threading.active_count()}",
        "litellm logged:", *logged[-40:]])


@pytest.mark.parametrize("streamed", [True, False], ids=["streamed", "whole"])
def test_a_success_callback_the_user_sets_still_sees_every_call(server: OpenAIServer, streamed: bool,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    call(server)
    import litellm

    seen = threading.Event()
    replies: list[Any] = []

    def on_success(kwargs: Any, response: Any, start: Any, end: Any) -> None:
        # a stream's callback is also called with its chunks (litellm's way); the whole reply comes once it ended
        if hasattr(response.choices[0], "message"):
            replies.append(response)
            seen.set()

    monkeypatch.setattr(litellm, "success_callback", [on_success])
    # litellm sets its callbacks up once per process, at the first call that finds any (`litellm.utils.callback_list`),
    # and runs a function callback only if one was among them then: after an earlier test's `litellm.cache` (whose
    # "cache" entry was the first), a function set later is never called, with or without contractstudio. This test
    # is about the live model's own success logging, so litellm's set-up is the one a fresh process makes.
    monkeypatch.setattr(litellm.utils, "callback_list", [])
    with _litellms_log() as logged:
        result = call(server, streamed=streamed)
        called = seen.wait(60)  # litellm logs on its own thread pool: a loaded machine takes seconds
    # this failed once under xdist (never alone): say what litellm logged and held, to find what an earlier test left
    assert called and result.successful, _litellm_state(litellm, logged)
    assert replies[0].choices[0].message.content == GOOD


@pytest.mark.parametrize("streamed", [True, False], ids=["streamed", "whole"])
def test_the_cost_is_litellms_price_of_the_reply(server: OpenAIServer, streamed: bool) -> None:
    import litellm

    # OpenAI's strict schema replies come whole (a refusal would be lost in a stream): JSON mode streams
    options = CallOptions(wait=False, structured_output="json_object") if streamed else CallOptions(wait=False, watch_for=None)
    result = call(server, "openai/gpt-4o-mini", options=options)  # a model in litellm's offline price map
    [reply] = result.trace.of(ModelReply)
    assert (reply.chunk_ends is not None) is streamed
    prompt, completion = litellm.cost_per_token(model="openai/gpt-4o-mini", prompt_tokens=reply.prompt_tokens,
                                                completion_tokens=reply.completion_tokens)
    price = prompt + completion
    assert reply.cost_usd > 0 and reply.cost_usd == pytest.approx(price)
    unpriced = call(server, options=options).trace.of(ModelReply)[0]  # a model with no price costs 0, never an error
    assert unpriced.cost_usd == 0.0


def test_a_live_model_that_runs_many_calls_sets_itself_up_once(server: OpenAIServer, monkeypatch: pytest.MonkeyPatch) -> None:
    # every session prepares its model; an eval's 2,000 sessions share one, and built litellm's reply objects
    # again for each (about 0.2 ms of a row's CPU)
    from contractstudio.runtime import live
    from contractstudio.runtime.session import Session

    built: list[int] = []
    real = live._build_reply_models
    monkeypatch.setattr(live, "_build_reply_models", lambda litellm: (built.append(1), real(litellm)))
    contract = cs.load(QA)
    model = contract.model_for("openai/test-model", api_base=server.base_url)
    results = [Session(contract.plan, INPUT, model, CallOptions(wait=False)).run() for _ in range(3)]
    assert [r.successful for r in results] == [True] * 3
    assert len(built) == 1


def acall(server: OpenAIServer) -> Any:
    """One call on an event loop, as eval makes it (litellm.acompletion)."""
    import asyncio

    from contractstudio.runtime.asking import LLMRequest
    from contractstudio.runtime.live import LiveModel

    model = LiveModel("openai/test-model", api_base=server.base_url, api_key=KEY)
    model.prepare()
    return asyncio.run(model.acomplete(LLMRequest([{"role": "user", "content": "hello"}], model.request_params())))


def test_without_a_callback_litellm_does_not_queue_async_success_logging(server: OpenAIServer,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    # litellm queues an async success handler after each awaited call, to build a logging payload nobody reads
    # when no callback is set (a few percent of eval's CPU a row), and drops it unawaited when the loop ends
    # ("coroutine 'Logging.async_success_handler' was never awaited", printed by eval).
    acall(server)  # litellm imported and set up
    from litellm.litellm_core_utils.logging_worker import GLOBAL_LOGGING_WORKER

    queued: list[str] = []

    def recorded(coroutine: Any) -> None:
        queued.append(coroutine.__qualname__)
        coroutine.close()

    monkeypatch.setattr(GLOBAL_LOGGING_WORKER, "enqueue", recorded)
    assert acall(server).text == GOOD
    assert "Logging.async_success_handler" not in queued
    import litellm

    monkeypatch.setattr(litellm, "_async_success_callback", [lambda *a: None])  # someone listens: queued again
    assert acall(server).text == GOOD
    assert "Logging.async_success_handler" in queued


@pytest.mark.parametrize("key", [None, "", "sk-test-0000000000000000"])
@pytest.mark.parametrize("model", ["openai/gpt-4o-mini", "gpt-4o-mini", "anthropic/claude-3-5-haiku-latest"])
def test_the_key_check_without_asking_litellm_says_what_litellm_says(model: str, key: str | None,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """A request's key check skips litellm's provider lookup when the provider's key is in the environment (issue
    36.10): whatever it skips, the answer is the one litellm's own check gives, key set, empty or not set."""
    import litellm

    from contractstudio.runtime.live import LiveModel

    for name in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    if key is not None:
        monkeypatch.setenv("OPENAI_API_KEY" if "claude" not in model else "ANTHROPIC_API_KEY", key)
    found = litellm.validate_environment(model)
    litellms = found.get("keys_in_environment") or not found.get("missing_keys")
    problem = LiveModel(model).missing_key(litellm)
    assert (problem is None) == bool(litellms)
    if problem is not None:
        assert problem.startswith(found["missing_keys"][0])


@pytest.mark.parametrize("streamed", [True, False], ids=["streamed", "whole"])
def test_a_reply_names_the_model_version_and_fingerprint_the_server_gives(streamed: bool) -> None:
    from openai_server import Reply

    with OpenAIServer([Reply(GOOD, model="test-model-2026-01-01", system_fingerprint="fp_7")]) as server:
        [reply] = call(server, streamed=streamed).trace.of(ModelReply)
    assert reply.system_fingerprint == "fp_7" and bool(reply.chunk_ends) is streamed
    # a whole reply names the model that answered; litellm labels a stream's chunks with the requested one
    assert reply.model_version == (None if streamed else "test-model-2026-01-01")


@pytest.mark.parametrize("refused", [False, True], ids=["answered", "refused"])
def test_a_reply_s_fields_are_read_as_getattr_reads_them(refused: bool) -> None:
    """The live model reads litellm's replies and chunks where pydantic keeps their fields, not through its slow
    `__getattr__` for a missing name (issue 36.10): whole or streamed, answered or refused, every name it reads (and
    some it does not) reads as `getattr(obj, name, None)` does."""
    import litellm
    from openai_server import Reply

    from contractstudio.runtime.live_stream import field_of

    names = ("usage", "_hidden_params", "refusal", "provider_specific_fields", "content", "model", "system_fingerprint",
             "finish_reason", "delta", "message", "choices", "role", "not_a_field", "_not_private", "model_dump", "json")
    reply = Reply(refusal="I can't help with that.") if refused else Reply(GOOD, model="m-1", system_fingerprint="fp_1")
    with OpenAIServer([reply] * 2) as server:
        asked = {"model": "openai/test-model", "api_base": server.base_url, "api_key": KEY,
                 "messages": [{"role": "user", "content": "hi"}]}
        whole = litellm.completion(**asked)
        chunks = list(litellm.completion(**asked, stream=True, stream_options={"include_usage": True}))
    mock = litellm.completion(model="openai/gpt-4o-mini", messages=asked["messages"], mock_response=GOOD, api_key=KEY)
    objects = [whole, whole.choices[0], whole.choices[0].message, whole.usage, mock, mock.choices[0].message,
               *chunks, *(c.choices[0] for c in chunks if c.choices), *(c.choices[0].delta for c in chunks if c.choices),
               threading.Event()]
    for obj in objects:
        for name in names:
            assert field_of(obj, name) == getattr(obj, name, None), (type(obj).__name__, name)
    assert any(field_of(o, "refusal") or (field_of(o, "provider_specific_fields") or {}).get("refusal") for o in objects) is refused


def test_a_live_call_has_litellm_price_and_check_nothing_a_bare_call_does_not(monkeypatch: pytest.MonkeyPatch) -> None:
    """What keeps a live call's work over litellm's own small (issue 36.10): litellm prices a reply while answering
    (its `_hidden_params`), so the live model does not ask `completion_cost` again; and for an `openai/` model with
    its key set the key check is the variable's presence, so `validate_environment` (a provider lookup) is not asked."""
    import litellm

    from contractstudio.runtime.live import LiveModel

    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    asked: list[str] = []

    def recording(name: str) -> Any:
        real = getattr(litellm, name)

        def recorded(*args: Any, **kwargs: Any) -> Any:
            asked.append(name)
            return real(*args, **kwargs)
        return recorded

    for name in ("completion_cost", "validate_environment"):
        monkeypatch.setattr(litellm, name, recording(name))
    model = LiveModel("openai/gpt-4o-mini")
    model.params = {"mock_response": GOOD}  # litellm answers in process; not a parameter a file or caller may set
    result = cs.load(QA).call(INPUT, model, options=CallOptions(wait=False, watch_for=None))
    [reply] = result.trace.of(ModelReply)
    assert result.successful and asked == []
    prompt, completion = litellm.cost_per_token(model="openai/gpt-4o-mini", prompt_tokens=reply.prompt_tokens,
                                                completion_tokens=reply.completion_tokens)
    assert reply.cost_usd > 0 and reply.cost_usd == pytest.approx(prompt + completion)


def test_litellm_s_caching_handler_names_positional_arguments_as_before_and_a_live_call_reads_no_signature(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """litellm maps a call's positional arguments to names after every call by `inspect.signature` of `completion`,
    cache or not (issue 36.10: about a tenth of a mocked call's CPU); the live model's calls pass none, so the answer
    is `{}` without the signature, and every other answer is litellm's own."""
    import inspect

    import litellm
    from litellm.caching import caching_handler

    from contractstudio.runtime.live import LiveModel, prepare_live_client

    prepare_live_client()
    mapped = caching_handler.convert_args_to_kwargs
    original = getattr(mapped, "__wrapped__", mapped)  # litellm's own
    for args in ((), None, ("openai/gpt-4o-mini",), ("openai/gpt-4o-mini", [{"role": "user", "content": "hi"}])):
        assert mapped(litellm.completion, args) == original(litellm.completion, args)
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    signatures: list[Any] = []
    read = inspect.signature

    def reading(fn: Any, *args: Any, **kwargs: Any) -> Any:
        signatures.append(fn)
        return read(fn, *args, **kwargs)

    monkeypatch.setattr(inspect, "signature", reading)
    model = LiveModel("openai/gpt-4o-mini")
    model.params = {"mock_response": GOOD}
    result = cs.load(QA).call(INPUT, model, options=CallOptions(wait=False, watch_for=None))
    assert result.successful and signatures == []


def test_a_cache_the_user_sets_still_stores_a_live_reply_but_never_answers_the_engine_s_request(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """litellm still stores a reply in a cache the user set (its caching handler, with the mapping of positional
    arguments the live model skips, is otherwise litellm's own); but a repeated request is sent, not answered from
    it: each request the engine counts and traces is one the provider answered (runtime/live_owned.py)."""
    import litellm

    from contractstudio.runtime.live import LiveModel

    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    monkeypatch.setattr(litellm, "cache", litellm.Cache(type="local"))
    model = LiveModel("openai/gpt-4o-mini")
    model.params = {"mock_response": GOOD}
    first = cs.load(QA).call(INPUT, model, options=CallOptions(wait=False, watch_for=None))
    stored = [str(v) for v in litellm.cache.cache.cache_dict.values()]
    assert any("0.9" in v for v in stored)
    model.params = {"mock_response": GOOD.replace("0.9", "0.8")}  # a fresh answer says 0.8; the cached one 0.9
    again = cs.load(QA).call(INPUT, model, options=CallOptions(wait=False, watch_for=None))
    assert first.successful and again.successful
    assert (first.output.coverage_score, again.output.coverage_score) == (0.9, 0.8)
