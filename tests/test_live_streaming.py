"""Live calls that stream: a reply whose prefix breaks a clause is cut at once, the HTTP stream closed, the remedy sent.

The server is written here: an OpenAI-compatible chat endpoint on 127.0.0.1 that streams its reply as server-sent
events, one token-sized piece at a time, slowly, and records how far each stream got before the client closed it and
what it was doing when each request arrived. The prefix watch is the test's own (tests/test_early_stop.py's
LabelWatch), so this holds whatever runtime/prefix_watch.py decides.
"""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from openai_server import OpenAIServer, Received, Reply
from test_early_stop import CONTRACT, DOOMED, GOOD, LABEL_ERROR, REVIEW, WATCHED

import contractstudio as cs
from contractstudio.runtime.call_state import CallOptions
from contractstudio.runtime.errors import ContractViolation
from contractstudio.runtime.events import EarlyStop, ModelReply
from contractstudio.runtime.streaming import token_pieces

PAUSE_S = 0.02  # between two pieces of a streamed reply: a slow model (the doomed reply would take seconds whole)


@dataclass
class Stream:
    """One streamed reply as the server sent it."""

    pieces: int
    sent: int = 0  # pieces written before the stream ended
    closed_by_client: bool = False
    finished: bool = False


@dataclass
class SlowServer:
    """Streams each request's reply (in order; the last one repeated) as SSE chunks, PAUSE_S apart."""

    replies: list[str]
    streams: list[Stream] = field(default_factory=list)
    bodies: list[dict[str, Any]] = field(default_factory=list)
    # at each request's arrival: how many pieces every earlier stream had sent, and whether it was still sending
    seen_on_arrival: list[list[tuple[int, bool]]] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def __post_init__(self) -> None:
        owner = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True

            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers.get("content-length") or 0)))
                with owner.lock:
                    owner.seen_on_arrival.append([(s.sent, not (s.finished or s.closed_by_client)) for s in owner.streams])
                    owner.bodies.append(body)
                    text = owner.replies[min(len(owner.bodies), len(owner.replies)) - 1]
                    stream = Stream(len(token_pieces(text)))
                    owner.streams.append(stream)
                if not body.get("stream"):
                    payload = json.dumps(_completion(text)).encode()
                    self.send_response(200)
                    self.send_header("content-type", "application/json")
                    self.send_header("content-length", str(len(payload)))
                    self.end_headers()
                    self.wfile.write(payload)
                    stream.finished = True
                    return
                self.send_response(200)
                self.send_header("content-type", "text/event-stream")
                self.send_header("transfer-encoding", "chunked")
                self.end_headers()
                try:
                    for event in _events(text):
                        self._chunk(b"data: " + event + b"\n\n")
                        stream.sent += 1
                        time.sleep(PAUSE_S)
                    self._chunk(b"data: [DONE]\n\n")
                    self._chunk(b"")
                    stream.finished = True
                except (BrokenPipeError, ConnectionResetError):
                    stream.closed_by_client = True
                    self.close_connection = True

            def _chunk(self, data: bytes) -> None:
                self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
                self.wfile.flush()

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def _completion(text: str) -> dict[str, Any]:
    return {"id": "chatcmpl-slow", "object": "chat.completion", "created": 0, "model": "slow",
            "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": text}}],
            "usage": {"prompt_tokens": 9, "completion_tokens": len(token_pieces(text)), "total_tokens": 9}}


def _events(text: str) -> Iterator[bytes]:
    for piece in token_pieces(text):
        yield json.dumps({"id": "chatcmpl-slow", "object": "chat.completion.chunk", "created": 0, "model": "slow",
                          "choices": [{"index": 0, "delta": {"content": piece}, "finish_reason": None}]}).encode()
    yield json.dumps({"id": "chatcmpl-slow", "object": "chat.completion.chunk", "created": 0, "model": "slow",
                      "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}).encode()


@pytest.fixture
def slow() -> Iterator[SlowServer]:
    server = SlowServer([DOOMED, GOOD])
    yield server
    server.close()


@pytest.fixture
def verdict(tmp_path: Path) -> Any:
    path = tmp_path / "verdict.contract.yaml"
    path.write_text(CONTRACT)
    return cs.load(path)


def _live(server: SlowServer) -> dict[str, Any]:
    return {"model": "openai/slow", "api_base": server.base_url}


def _wait_for(condition: Any) -> None:
    """The server's handler thread notices a closed stream at its next write: wait for it to say so."""
    for _ in range(500):
        if condition():
            return
        time.sleep(0.01)


def _assert_cut_at_once(result: Any, slow: SlowServer) -> None:
    assert result.successful and result.output.label == "pos" and result.attempts == 1
    stop = next(e for e in result.trace if isinstance(e, EarlyStop))
    assert stop.clause == "output.label" and stop.message == LABEL_ERROR
    first = next(e for e in result.trace if isinstance(e, ModelReply))
    assert DOOMED.startswith(first.text) and first.chunk_ends and first.chunk_ends[-1] == len(first.text)
    assert stop.tokens == len(first.chunk_ends)
    doomed = slow.streams[0]
    _wait_for(lambda: doomed.closed_by_client or doomed.finished)
    # the server's stream was closed by the client a few pieces after the violating one, long before its end ...
    assert doomed.closed_by_client and not doomed.finished
    assert doomed.sent <= stop.tokens + 3 < doomed.pieces // 4
    # ... and the remedy request arrived while the doomed stream had most of its reply still to send
    (earlier,) = slow.seen_on_arrival[1]
    assert earlier[0] <= stop.tokens + 3
    assert slow.bodies[0]["stream"] is True and slow.bodies[1]["stream"] is True
    repair = slow.bodies[1]["messages"]
    assert repair[2] == {"role": "assistant", "content": first.text} and LABEL_ERROR in repair[3]["content"]


def test_a_live_reply_is_cut_at_its_violating_chunk_and_the_remedy_sent_at_once(verdict: Any, slow: SlowServer) -> None:
    result = verdict.call(REVIEW, options=WATCHED, **_live(slow))
    _assert_cut_at_once(result, slow)


def test_the_same_on_an_event_loop(verdict: Any, slow: SlowServer) -> None:
    from contractstudio.runtime.session import Session

    session = Session(verdict.plan, REVIEW, verdict.model_for(**_live(slow)), WATCHED)
    result = asyncio.run(session.arun())
    _assert_cut_at_once(result, slow)


def test_a_call_nobody_watches_is_not_streamed(verdict: Any, slow: SlowServer) -> None:
    result = verdict.call(REVIEW, options=CallOptions(wait=False, watch_for=None), **_live(slow))
    assert result.successful and result.attempts == 1
    assert [b.get("stream") for b in slow.bodies] == [None, None]
    first = next(e for e in result.trace if isinstance(e, ModelReply))
    assert first.text == DOOMED and first.chunk_ends is None


def test_the_debugger_sees_a_live_reply_grow_with_its_first_tokens_time(verdict: Any, slow: SlowServer) -> None:
    slow.replies = [GOOD]
    grown: list[str] = []
    options = CallOptions(wait=False, watch_for=None, on_chunk=lambda stream: grown.append(stream.text))
    session = verdict.session(REVIEW, options=options, **_live(slow))
    while not isinstance(session.step(), ModelReply):
        pass
    reply = session.last
    assert reply.text == GOOD and grown[-1] == GOOD and len(grown) == len(token_pieces(GOOD))
    assert reply.chunk_ends == [len(g) for g in grown]
    assert reply.chunk_s is not None and 0 < reply.chunk_s[0] <= reply.chunk_s[-1] <= reply.latency_s
    assert session.perf_stats()["llm"]["first_token_s"] == reply.chunk_s[0]


@pytest.mark.parametrize("on_loop", [False, True], ids=["thread", "event-loop"])
def test_a_stream_broken_before_its_first_event_is_asked_again_whole_and_its_reason_kept(verdict: Any,
                                                                                         on_loop: bool) -> None:
    # llama-cpp-python, on a context overflow: 200 and event-stream headers, then the connection closed without an
    # event. A transport retry of the stream would only repeat that; the whole request gets the server's reason.
    overflow = "This model's maximum context length is 2048 tokens. However, you requested 3220 tokens."

    def answer(received: Received) -> Reply:
        return Reply(no_event="broken") if (received.body or {}).get("stream") else Reply(overflow, status=400)

    with OpenAIServer(responder=answer) as server:
        live = {"model": "openai/local", "api_base": server.base_url}
        with pytest.raises(ContractViolation) as failed:
            if on_loop:
                from contractstudio.runtime.session import Session

                asyncio.run(Session(verdict.plan, REVIEW, verdict.model_for(**live), WATCHED).arun())
            else:
                verdict.call(REVIEW, options=WATCHED, **live)
    result = failed.value.result
    asked = [(r.body or {}).get("stream") for r in server.requests]
    assert not result.successful
    assert asked == [True, None]  # the stream once, then the whole reply once: no transport retry
    [failure] = result.trace.of_type("transport_error")
    assert failure["retryable"] is False and failure["status"] == 400
    assert "maximum context length" in result.errors[0] and "not retried" in result.errors[0]


def test_the_whole_request_after_an_empty_stream_is_asked_again_at_once_when_its_connection_was_reset(verdict: Any) -> None:
    # The server closes the empty stream's connection as it ends it: the whole request, sent on that pooled
    # connection as the close arrives, is reset. Asked again at once it reaches the server on a new one.
    overflow = "This model's maximum context length is 2048 tokens. However, you requested 3220 tokens."
    with OpenAIServer([Reply(no_event="ended"), Reply(reset=True), Reply(overflow, status=400)]) as server, \
            pytest.raises(ContractViolation) as failed:
        verdict.call(REVIEW, options=WATCHED, model="openai/local", api_base=server.base_url)
    assert [(r.body or {}).get("stream") for r in server.requests] == [True, None, None]
    [failure] = failed.value.result.trace.of_type("transport_error")  # the server's answer, not the reset
    assert failure["status"] == 400 and "maximum context length" in failed.value.result.errors[0]
