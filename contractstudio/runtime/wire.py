"""The HTTP transport of live calls to OpenAI-compatible servers: a total deadline, and what the server really sent.

httpx's `timeout` bounds each read, not the whole reply: a server that sends
its headers and then trickles the body a few bytes at a time, each within the
read timeout, would hold a call for as long as it likes. `DeadlineTransport`
ends any response that is not complete within the call's `timeout_s` with an
`httpx.ReadTimeout`, which the OpenAI client and litellm report as a timeout
(a transport fault the engine retries and traces).

It also keeps the status, content type and first bytes of the last response,
so a fault that litellm reports only as "Expecting value: line 1 column 1"
can say what the server answered (e.g. HTTP 200 with an HTML page).
"""

from __future__ import annotations

import threading
import time
import weakref
from collections.abc import AsyncIterator, Callable, Iterator
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

import httpx

from contractstudio.safe_text import shorten

HEAD_BYTES = 200  # of a response body, kept to explain a body that is not a completion
MAX_BODY_BYTES = 64 * 1024 * 1024  # a reply this large is not a chat completion; stop before it fills the memory


@dataclass(slots=True)
class Seen:
    """What the server answered to the last request on this thread."""

    status: int
    content_type: str
    head: bytes
    size: int = 0
    oversize: bool = False

    def describe(self) -> str:
        """e.g. `HTTP 200 (text/html): '<html><body>502 Bad Gateway...'`."""
        text = shorten(self.head.decode("utf-8", "replace").replace("\n", " ").strip(), 120)  # redacted, then cut
        if len(self.head) >= HEAD_BYTES and not text.endswith("..."):
            text += "..."  # the head itself is only the first bytes of the body
        shown = repr(text) if text else "an empty body"
        return f"HTTP {self.status} ({self.content_type or 'no content type'}): {shown}"


class _BodyCheck:
    """Checks each chunk of a response body: ReadTimeout once the whole request has taken longer than its deadline,
    a protocol error past MAX_BODY_BYTES; keeps the first bytes in `seen`."""

    def __init__(self, deadline: float, limit: float, seen: Seen, request: httpx.Request) -> None:
        self.deadline = deadline
        self.limit = limit
        self.seen = seen
        self.request = request

    def check(self, chunk: bytes) -> None:
        if len(self.seen.head) < HEAD_BYTES:
            self.seen.head += chunk[: HEAD_BYTES - len(self.seen.head)]
        self.seen.size += len(chunk)
        if self.seen.size > MAX_BODY_BYTES:
            self.seen.oversize = True
            raise httpx.RemoteProtocolError(f"the reply is larger than {MAX_BODY_BYTES:,} bytes", request=self.request)
        if time.monotonic() > self.deadline:
            raise httpx.ReadTimeout(
                f"the reply was not complete after {self.limit:g} s (the server sends its body too slowly)",
                request=self.request)


class _DeadlineStream(httpx.SyncByteStream):
    """A response body whose chunks pass its _BodyCheck."""

    def __init__(self, inner: httpx.SyncByteStream, check: _BodyCheck) -> None:
        self.inner = inner
        self.check = check

    def __iter__(self) -> Iterator[bytes]:
        for chunk in self.inner:
            self.check.check(chunk)
            yield chunk

    def close(self) -> None:
        self.inner.close()


class DeadlineTransport(httpx.BaseTransport):
    """An HTTP transport with a total deadline per request (the request's read timeout, or `total`)."""

    def __init__(self, total: float) -> None:
        self.total = total
        self.inner = httpx.HTTPTransport()
        self._local = threading.local()

    @property
    def last(self) -> Seen | None:
        """What the server answered to this thread's last request (None before any answer)."""
        return getattr(self._local, "seen", None)

    def forget(self) -> None:
        self._local.seen = None

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        started = time.monotonic()
        response = self.inner.handle_request(request)
        seen = Seen(response.status_code, response.headers.get("content-type", ""), b"")
        self._local.seen = seen
        stream: Any = response.stream
        return httpx.Response(response.status_code, headers=response.headers,
                              stream=_DeadlineStream(stream, _BodyCheck(started + self.total, self.total, seen, request)),
                              extensions=response.extensions, request=request)

    def close(self) -> None:
        self.inner.close()


# Connections kept open between requests: httpx keeps 20 by default, so at concurrency 32 a dozen connections
# were closed after each reply and opened again for the next request.
POOL = httpx.Limits(max_connections=256, max_keepalive_connections=256)


def deadline_client(total: float) -> tuple[httpx.Client, DeadlineTransport]:
    """An httpx client whose every request must complete within `total` seconds."""
    transport = DeadlineTransport(total)
    transport.inner = httpx.HTTPTransport(limits=POOL)
    return httpx.Client(transport=transport, follow_redirects=True), transport


# What the server answered to the requests of one async call: a list the call puts in its context before it
# asks (litellm builds the request in a thread with a copy of the context and may await in other tasks; a copy
# of the context holds the same list, so what the transport appends reaches the call).
_ANSWERS: ContextVar[list[Seen] | None] = ContextVar("contractstudio_answers", default=None)


class _AsyncDeadlineStream(httpx.AsyncByteStream):
    """The async twin of _DeadlineStream."""

    def __init__(self, inner: Any, check: _BodyCheck) -> None:
        self.inner = inner
        self.check = check

    async def __aiter__(self) -> AsyncIterator[bytes]:
        async for chunk in self.inner:
            self.check.check(chunk)
            yield chunk

    async def aclose(self) -> None:
        await self.inner.aclose()


class AsyncDeadlineTransport(httpx.AsyncBaseTransport):
    """DeadlineTransport for an event loop: the same total deadline and record of what the server answered."""

    def __init__(self, total: float, inner: httpx.AsyncBaseTransport | None = None) -> None:
        self.total = total
        self.inner = inner or httpx.AsyncHTTPTransport(limits=POOL)

    @staticmethod
    def watch() -> list[Seen]:
        """Start recording the answers to this call's requests (in the calling task's context); the list they go to."""
        answers: list[Seen] = []
        _ANSWERS.set(answers)
        return answers

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        started = time.monotonic()
        response = await self.inner.handle_async_request(request)
        seen = Seen(response.status_code, response.headers.get("content-type", ""), b"")
        answers = _ANSWERS.get()
        if answers is not None:
            answers.append(seen)
        return httpx.Response(response.status_code, headers=response.headers,
                              stream=_AsyncDeadlineStream(response.stream, _BodyCheck(started + self.total, self.total, seen, request)),
                              extensions=response.extensions, request=request)

    async def aclose(self) -> None:
        await self.inner.aclose()


def async_deadline_client(total: float, inner: httpx.AsyncBaseTransport | None = None,
                          ) -> tuple[httpx.AsyncClient, AsyncDeadlineTransport]:
    """An async httpx client whose every request must complete within `total` seconds (bound to one event loop),
    sent by `inner` (httpx's own transport when None)."""
    transport = AsyncDeadlineTransport(total, inner)
    return httpx.AsyncClient(transport=transport, follow_redirects=True), transport


# OpenAI clients with a deadline transport, shared by the calls to one endpoint: building one costs about
# 20 ms (an SSL context), more than many local models take to answer. Bounded; an evicted client is left
# to the garbage collector, since a call in another thread may still be using it.
_WIRES: dict[tuple[str | None, str, float], tuple[Any, Any]] = {}
_WIRE_LIMIT = 16
_WIRES_LOCK = threading.Lock()


def client_for(api_base: str | None, key: str, timeout_s: float) -> tuple[Any, Any]:
    """The (openai client, DeadlineTransport) for an endpoint, key and timeout."""
    found = _WIRES.get((api_base, key, timeout_s))
    if found is None:
        import openai

        with _WIRES_LOCK:  # the studio calls from worker threads
            found = _WIRES.get((api_base, key, timeout_s))
            if found is None:
                http, transport = deadline_client(timeout_s)
                client = openai.OpenAI(api_key=key, base_url=api_base or None, max_retries=0, timeout=timeout_s,
                                       http_client=http)
                found = (client, transport)
                if len(_WIRES) >= _WIRE_LIMIT:
                    _WIRES.pop(next(iter(_WIRES)))
                _WIRES[(api_base, key, timeout_s)] = found
    return found


# The async clients of each event loop (an httpx.AsyncClient's connections belong to the loop that opened them)
_LOOP_WIRES: weakref.WeakKeyDictionary[Any, dict[tuple[str | None, str, float], tuple[Any, Any]]] = weakref.WeakKeyDictionary()


def loop_client_for(api_base: str | None, key: str, timeout_s: float,
                    sender: Callable[[], httpx.AsyncBaseTransport | None] = lambda: None) -> tuple[Any, Any]:
    """The (openai async client, AsyncDeadlineTransport) for an endpoint, key and timeout on the running loop;
    `sender` makes the transport that really sends (once per loop)."""
    import asyncio

    loop = asyncio.get_running_loop()
    with _WIRES_LOCK:
        wires = _LOOP_WIRES.setdefault(loop, {})
        found = wires.get((api_base, key, timeout_s))
        if found is None:
            import openai

            http, transport = async_deadline_client(timeout_s, sender())
            client = openai.AsyncOpenAI(api_key=key, base_url=api_base or None, max_retries=0, timeout=timeout_s,
                                        http_client=http)
            found = wires[(api_base, key, timeout_s)] = (client, transport)
    return found


async def close_loop_clients() -> None:
    """Close the async clients of the running loop (before the loop ends: their connections belong to it)."""
    import asyncio

    with _WIRES_LOCK:
        wires = _LOOP_WIRES.pop(asyncio.get_running_loop(), {})
    for client, _transport in wires.values():
        await client.close()
