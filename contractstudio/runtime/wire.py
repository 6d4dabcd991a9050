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
from collections.abc import Iterator
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


class _DeadlineStream(httpx.SyncByteStream):
    """A response body that raises ReadTimeout once the whole request has taken longer than its deadline."""

    def __init__(self, inner: httpx.SyncByteStream, deadline: float, limit: float, seen: Seen, request: httpx.Request) -> None:
        self.inner = inner
        self.deadline = deadline
        self.limit = limit
        self.seen = seen
        self.request = request

    def __iter__(self) -> Iterator[bytes]:
        for chunk in self.inner:
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
                              stream=_DeadlineStream(stream, started + self.total, self.total, seen, request),
                              extensions=response.extensions, request=request)

    def close(self) -> None:
        self.inner.close()


def deadline_client(total: float) -> tuple[httpx.Client, DeadlineTransport]:
    """An httpx client whose every request must complete within `total` seconds."""
    transport = DeadlineTransport(total)
    return httpx.Client(transport=transport, follow_redirects=True), transport
