"""Client-side rate limits (requests and tokens per minute) that slow calls down instead of tripping 429s.

`RateLimiter.reserve(tokens)` books the next slot and returns how long the
caller must wait before sending; it never sleeps itself, so the same object
serves the threads of the local engine (behind a lock) and a whole Ray cluster
(inside one actor: one limiter, not one per worker). It is the generic cell rate
algorithm: requests are spaced `60 / rpm` seconds apart (no burst); tokens flow
at `tpm / 60` a second with a burst of six seconds' worth (a request larger than
that still goes once the bucket is full). A 429 from the
server (`cool_down`) holds every caller back until its Retry-After has passed.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable
from typing import Any, Protocol

from contractstudio.runtime.models import LLMReply, LLMRequest, TransportFault

DEFAULT_COOL_DOWN = 1.0  # seconds all callers hold back after a 429 that named no Retry-After
TOKEN_BURST_S = 6.0
MAX_COOL_DOWN = 30.0  # a Retry-After holds the other rows back at most this long (the transport's max_delay by default)


class Limits(Protocol):
    """What a limited model asks of its limiter (a RateLimiter here, a Ray actor on a cluster)."""

    def reserve(self, tokens: int) -> float: ...

    def settle(self, tokens: int) -> None: ...

    def cool_down(self, seconds: float) -> None: ...


def limit_problem(name: str, value: float | None) -> str | None:
    """Why a limit (`rpm`, `tpm`) cannot be used, or None: NaN, infinity, zero or less would turn limiting off silently."""
    if value is None or (math.isfinite(value) and value > 0):
        return None
    return f"--{name} must be a finite number above 0, not {value:g}"


class RateLimiter:
    """Requests per minute and tokens per minute, as reservations; thread-safe."""

    def __init__(self, rpm: float | None = None, tpm: float | None = None, *, clock: Callable[[], float] = time.monotonic) -> None:
        problem = limit_problem("rpm", rpm) or limit_problem("tpm", tpm)
        if problem:
            raise ValueError(problem)
        self.rpm = rpm
        self.tpm = tpm
        self.clock = clock
        self._lock = threading.Lock()
        self._request_at = 0.0  # the theoretical time of the next request (GCRA's TAT)
        self._token_at = 0.0
        self._paused_until = 0.0
        self.waited_s = 0.0
        self.cool_downs = 0

    @property
    def counts_tokens(self) -> bool:
        """Whether a request's tokens matter here (--tpm)."""
        return self.tpm is not None

    def reserve(self, tokens: int = 0) -> float:
        """Book a request of about `tokens` tokens; the seconds to wait before sending it."""
        with self._lock:
            now = self.clock()
            start = max(now, self._paused_until)
            if self.rpm:
                # strictly spaced (no burst): safe under limits enforced per second as well as per minute
                start = max(start, self._request_at)
                self._request_at = start + 60.0 / self.rpm
            if self.tpm:
                rate = self.tpm / 60.0
                tolerance = TOKEN_BURST_S
                start = max(start, self._token_at - tolerance)
                self._token_at = max(self._token_at, start) + tokens / rate
            wait = max(start - now, 0.0)
            self.waited_s += wait
            return wait

    def settle(self, tokens: int) -> None:
        """Correct the token booking once the real usage is known (positive: more than estimated)."""
        if self.tpm and tokens:
            with self._lock:
                self._token_at += tokens / (self.tpm / 60.0)

    def paused_for(self) -> float:
        """Seconds left of the current cool-down (0 when none)."""
        with self._lock:
            return max(self._paused_until - self.clock(), 0.0)

    def cool_down(self, seconds: float) -> None:
        """Hold every caller back for `seconds` (a 429 said so)."""
        with self._lock:
            self.cool_downs += 1
            self._paused_until = max(self._paused_until, self.clock() + max(seconds, 0.0))


def estimate_tokens(request: LLMRequest) -> int:
    """A request's tokens before it is sent: about 4 characters a token, plus the completion bound if set."""
    chars = sum(len(str(m.get("content", ""))) for m in request.messages)
    completion = request.params.get("max_tokens")
    return chars // 4 + (int(completion) if isinstance(completion, int) else 0)


class LimitedModel:
    """A live model whose calls wait for the limiter's slot; a 429 makes every caller cool down."""

    def __init__(self, inner: Any, limits: Limits, sleep: Callable[[float], None] = time.sleep, *, wait: bool = True,
                 longest_cool_down: float = MAX_COOL_DOWN) -> None:
        self.inner = inner
        # a limiter with no --tpm: a request's tokens are neither estimated nor settled (a hub's always are)
        self.counts_tokens = getattr(limits, "counts_tokens", True)
        self.limits = limits
        self.sleep = sleep
        self.wait = wait  # False (--no-wait): the limiter still books and counts, nothing is slept
        self.longest_cool_down = longest_cool_down
        self.waited_s = 0.0

    @property
    def name(self) -> str:
        return str(self.inner.name)

    def prepare(self) -> None:
        prepare = getattr(self.inner, "prepare", None)
        if prepare is not None:
            prepare()

    def request_params(self) -> dict[str, Any]:
        return dict(self.inner.request_params())

    def complete(self, request: LLMRequest) -> LLMReply:
        estimate, wait = self._book(request)
        if wait:
            self.sleep(wait)
        try:
            reply: LLMReply = self.inner.complete(request)
        except TransportFault as fault:
            self._refused(fault)
            raise
        return self._settled(estimate, reply)

    async def acomplete(self, request: LLMRequest) -> LLMReply:
        """`complete` on an event loop: the limiter's wait and the inner model's reply are awaited."""
        from contractstudio.runtime.asking import pause

        estimate, wait = self._book(request)
        if wait:
            await pause(self.sleep, wait)
        asking = getattr(self.inner, "acomplete", None)
        try:
            reply: LLMReply = await asking(request) if asking is not None else self.inner.complete(request)
        except TransportFault as fault:
            self._refused(fault)
            raise
        return self._settled(estimate, reply)

    @property
    def streams(self) -> bool:
        return bool(getattr(self.inner, "streams", False))

    def stream(self, request: LLMRequest, sink: Any) -> LLMReply:
        """`complete`, streamed into `sink` (runtime/streaming.py)."""
        estimate, wait = self._book(request)
        if wait:
            self.sleep(wait)
        try:
            reply: LLMReply = self.inner.stream(request, sink)
        except TransportFault as fault:
            self._refused(fault)
            raise
        return self._settled(estimate, reply)

    async def astream(self, request: LLMRequest, sink: Any) -> LLMReply:
        """`stream` on an event loop."""
        from contractstudio.runtime.asking import pause

        estimate, wait = self._book(request)
        if wait:
            await pause(self.sleep, wait)
        streaming = getattr(self.inner, "astream", None)
        try:
            reply: LLMReply = await streaming(request, sink) if streaming is not None else self.inner.stream(request, sink)
        except TransportFault as fault:
            self._refused(fault)
            raise
        return self._settled(estimate, reply)

    def _book(self, request: LLMRequest) -> tuple[int, float]:
        """(the request's estimated tokens, the seconds to wait before sending it: 0 under --no-wait)."""
        estimate = estimate_tokens(request) if self.counts_tokens else 0
        wait = self.limits.reserve(estimate)
        if wait > 0 and self.wait:
            self.waited_s += wait
            return estimate, wait
        return estimate, 0.0

    def _refused(self, fault: TransportFault) -> None:
        if fault.kind == "rate_limit":
            # the server's word holds every row back, but never longer than one transport wait (NaN: the default)
            asked = fault.retry_after if fault.retry_after is not None and fault.retry_after >= 0 else DEFAULT_COOL_DOWN
            self.limits.cool_down(min(asked, self.longest_cool_down))

    def _settled(self, estimate: int, reply: LLMReply) -> LLMReply:
        used = reply.prompt_tokens + reply.completion_tokens
        if used and self.counts_tokens:
            self.limits.settle(used - estimate)
        return reply
