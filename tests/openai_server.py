"""A small OpenAI-compatible chat server on 127.0.0.1 for tests: scripted replies, recorded requests.

    with OpenAIServer([Reply('{"a": 1}'), Reply(status=429), Reply(delay=2.0)]) as server:
        litellm.completion(model="openai/test", api_base=server.base_url, api_key="sk-test-...", ...)
        server.requests  # every request received: path, headers, JSON body

Each request takes the next scripted reply; when they run out the last one is
repeated; or a `responder(received) -> Reply` answers each request from its
content (eval tests, where rows arrive in any order). A reply can be a normal completion, an HTTP error status, a delay
(for timeouts), an empty content, or a raw body (malformed JSON).
"""

from __future__ import annotations

import json
import socket
import struct
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Reply:
    """One scripted answer of the server."""

    content: str | None = ""
    status: int = 200
    delay: float = 0.0
    body: bytes | None = None  # sent as is instead of a completion (malformed bodies)
    headers: dict[str, str] = field(default_factory=dict)
    trickle: float = 0.0  # seconds between chunks of `chunk` bytes of the body, after the headers (a slow stream)
    chunk: int = 4
    stall: float = 0.0  # after half the body, send nothing for this long (a stream that stops mid-body)
    cut: bool = False  # send half the body, then close the connection
    reset: bool = False  # read the request, then reset the connection (RST) without answering
    # a 200 event stream with no event (a keep-alive comment), "ended" with its last chunk or "broken" (the connection
    # closed without it): how llama-cpp-python's server answers a context overflow when its error comes after the headers
    no_event: str = ""
    prompt_tokens: int = 11
    completion_tokens: int = 7
    refusal: str | None = None  # a structured request refused (OpenAI's `message.refusal`, content null)
    model: str | None = None  # the model version the server says answered (default: the model asked for)
    system_fingerprint: str | None = None  # OpenAI's backend configuration, sent when set


@dataclass
class Received:
    """One request as the server saw it."""

    path: str
    headers: dict[str, str]
    body: dict[str, Any] | None
    raw: bytes


def _completion(reply: Reply, model: str) -> bytes:
    return json.dumps({
        "id": "chatcmpl-test",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": reply.model or model,
        **({"system_fingerprint": reply.system_fingerprint} if reply.system_fingerprint else {}),
        "choices": [{"index": 0, "finish_reason": "stop", "message": {
            "role": "assistant", "content": None if reply.refusal else reply.content,
            **({"refusal": reply.refusal} if reply.refusal else {})}}],
        "usage": {"prompt_tokens": reply.prompt_tokens, "completion_tokens": reply.completion_tokens,
                  "total_tokens": reply.prompt_tokens + reply.completion_tokens},
    }).encode()


def _sse(reply: Reply, body: dict[str, Any]) -> bytes:
    """The completion as OpenAI streams it (`stream: true`): server-sent events, a few characters of text each, the
    finish reason, the usage when `stream_options.include_usage` asks for it, then `[DONE]`."""
    model = reply.model or body.get("model", "test-model")
    served = {"system_fingerprint": reply.system_fingerprint} if reply.system_fingerprint else {}

    def event(choices: list[dict[str, Any]], **more: Any) -> bytes:
        chunk = {"id": "chatcmpl-test", "object": "chat.completion.chunk", "created": int(time.time()), "model": model,
                 **served, "choices": choices, **more}
        return b"data: " + json.dumps(chunk).encode() + b"\n\n"

    events = [event([{"index": 0, "delta": {"role": "assistant", "content": ""}, "finish_reason": None}])]
    if reply.refusal:
        events.append(event([{"index": 0, "delta": {"refusal": reply.refusal}, "finish_reason": None}]))
    text = reply.content or ""
    size = max(8, len(text) // 64)  # a few characters a chunk, as a model's tokens; at most 64 chunks of a huge reply
    events += [event([{"index": 0, "delta": {"content": text[i:i + size]}, "finish_reason": None}])
               for i in range(0, len(text), size)]
    events.append(event([{"index": 0, "delta": {}, "finish_reason": "stop"}]))
    if (body.get("stream_options") or {}).get("include_usage"):
        events.append(event([], usage={"prompt_tokens": reply.prompt_tokens, "completion_tokens": reply.completion_tokens,
                                       "total_tokens": reply.prompt_tokens + reply.completion_tokens}))
    return b"".join(events) + b"data: [DONE]\n\n"


class _Listening(ThreadingHTTPServer):
    # socketserver listens with a backlog of 5: of a burst of 32 new connections (eval at concurrency 32) the
    # kernel kept 6 until the server accepted them and dropped the rest, which clients saw as resets and waits
    request_queue_size = 128


class OpenAIServer:
    """A threaded HTTP server answering /v1/chat/completions with scripted replies."""

    # what a completion and an error look like on this server's API (the Anthropic server overrides both)
    @staticmethod
    def answer(reply: Reply, body: dict[str, Any] | None) -> bytes:
        return _completion(reply, (body or {}).get("model", "test-model"))

    @staticmethod
    def streamed(reply: Reply, body: dict[str, Any]) -> tuple[bytes, str]:
        """A completion asked with `stream: true`: its body and content type."""
        return _sse(reply, body), "text/event-stream"

    def payload(self, reply: Reply, body: dict[str, Any] | None) -> tuple[bytes, str]:
        """The body of a successful answer, streamed when the request asked for a stream."""
        if body and body.get("stream"):
            return self.streamed(reply, body)
        return self.answer(reply, body), "application/json"

    @staticmethod
    def error(reply: Reply) -> bytes:
        return json.dumps({"error": {"message": reply.content or f"scripted status {reply.status}",
                                     "type": "scripted", "code": reply.status}}).encode()

    def __init__(self, replies: list[Reply | str] | None = None, responder: Callable[[Received], Reply | str] | None = None,
                 ) -> None:
        self.replies: list[Reply] = [r if isinstance(r, Reply) else Reply(r) for r in (replies or [])]
        self.responder = responder
        self.requests: list[Received] = []
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    def script(self, *replies: Reply | str) -> None:
        """Replace the scripted replies (and forget the requests received)."""
        with self._lock:
            self.replies = [r if isinstance(r, Reply) else Reply(r) for r in replies]
            self.requests = []

    def _next(self, received: Received) -> Reply:
        if self.responder is not None:
            with self._lock:
                self.requests.append(received)
            answer = self.responder(received)
            return answer if isinstance(answer, Reply) else Reply(answer)
        with self._lock:
            index = len(self.requests)
            self.requests.append(received)
            if not self.replies:
                return Reply(status=500, content="no scripted reply")
            return self.replies[min(index, len(self.replies) - 1)]

    @property
    def port(self) -> int:
        assert self._server is not None
        return self._server.server_address[1]

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def listen(self) -> OpenAIServer:
        """Bind and listen on a free loopback port without accepting yet (`start` accepts)."""
        owner = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True  # headers and body go out at once: no 40 ms delayed-ACK stall per request

            def log_message(self, *args: Any) -> None:  # keep test output clean
                pass

            def do_GET(self) -> None:
                self._send(200, json.dumps({"object": "list", "data": [{"id": "test-model", "object": "model"}]}).encode())

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                raw = self.rfile.read(length) if length else b""
                try:
                    body = json.loads(raw) if raw else None
                except json.JSONDecodeError:
                    body = None
                received = Received(self.path, {k.lower(): v for k, v in self.headers.items()}, body, raw)
                reply = owner._next(received)
                if reply.delay:
                    time.sleep(reply.delay)
                if reply.reset:  # SO_LINGER 0: closing sends RST, as a server dropping an overloaded connection does
                    self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                    self.close_connection = True
                    self.connection.close()
                    return
                if reply.no_event:
                    self.send_response(200)
                    self.send_header("content-type", "text/event-stream")
                    self.send_header("transfer-encoding", "chunked")
                    self.end_headers()
                    self.wfile.write(b"e\r\n: keep-alive\n\n\r\n")  # a comment: no event
                    if reply.no_event == "ended":
                        self.wfile.write(b"0\r\n\r\n")
                    self.wfile.flush()
                    self.close_connection = reply.no_event == "broken"
                elif reply.cut:
                    payload, kind = owner.payload(reply, body)
                    self.send_response(200)
                    self.send_header("content-type", kind)
                    self.send_header("content-length", str(len(payload)))
                    self.end_headers()
                    self.wfile.write(payload[: len(payload) // 2])
                    self.wfile.flush()
                    self.close_connection = True
                elif reply.trickle or reply.stall:
                    if reply.body is not None:
                        payload, kind = reply.body, "application/json"
                    else:
                        payload, kind = owner.payload(reply, body)
                    self._send(reply.status, payload, {"content-type": kind, **reply.headers}, trickle=reply.trickle,
                               chunk=reply.chunk, stall=reply.stall)
                elif reply.body is not None:
                    self._send(reply.status, reply.body, reply.headers)
                elif reply.status != 200:
                    self._send(reply.status, owner.error(reply), reply.headers)
                else:
                    payload, kind = owner.payload(reply, body)
                    self._send(200, payload, {"content-type": kind, **reply.headers})

            def _send(self, status: int, payload: bytes, headers: dict[str, str] | None = None, *,
                      trickle: float = 0.0, chunk: int = 4, stall: float = 0.0) -> None:
                try:
                    self.send_response(status)
                    self.send_header("content-type", (headers or {}).get("content-type", "application/json"))
                    self.send_header("content-length", str(len(payload)))
                    for k, v in (headers or {}).items():
                        if k.lower() != "content-type":
                            self.send_header(k, v)
                    self.end_headers()
                    if stall:
                        half = len(payload) // 2
                        self.wfile.write(payload[:half])
                        self.wfile.flush()
                        time.sleep(stall)
                        self.wfile.write(payload[half:])
                    elif trickle:
                        for i in range(0, len(payload), chunk):
                            self.wfile.write(payload[i:i + chunk])
                            self.wfile.flush()
                            time.sleep(trickle)
                    else:
                        self.wfile.write(payload)
                except (BrokenPipeError, ConnectionResetError):  # the client gave up (a timeout test)
                    pass

        self._server = _Listening(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        return self

    def start(self) -> OpenAIServer:
        """Listen and answer, each request in its own thread."""
        if self._server is None:
            self.listen()
        assert self._server is not None
        server = self._server
        self._thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            if self._thread is not None:  # shutdown waits for serve_forever: only when it runs
                self._server.shutdown()
                self._thread = None
            self._server.server_close()
            self._server = None

    def __enter__(self) -> OpenAIServer:
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()


def refused_port() -> int:
    """A loopback port nothing listens on (bound, then released)."""
    import socket

    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port
