"""Where replies come from: what every model takes and gives, a scenario's scripted replies, a recorded trace.

The live model (litellm) is runtime/live.py, the only module that imports litellm.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from contractstudio.runtime.errors import ModelError, ReplayDivergence
from contractstudio.runtime.events import ModelReply, ModelRequest
from contractstudio.runtime.streaming import ReplyStream, stream_pieces, token_pieces
from contractstudio.runtime.structured import shape_of
from contractstudio.runtime.trace import Trace, redact


@dataclass(slots=True)
class LLMRequest:
    """One request: the exact messages and the parameters sent (never the key)."""

    messages: list[dict[str, str]]
    params: dict[str, Any]
    purpose: str = "generate"
    attempt: int = 0


@dataclass(slots=True)
class LLMReply:
    """One reply: the raw text and what it cost."""

    text: str
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float = 0.0
    latency_s: float = 0.0
    note: str | None = None  # e.g. why a replayed request differs from the recording
    refusal: str | None = None  # the provider's refusal of a structured request (OpenAI's `message.refusal`)
    stopped: Any = None  # a streamed reply cut early: the violation its prefix showed (streaming.EarlyStopped)
    model_version: str | None = None  # the model that answered, as the provider names it (`gpt-4o-mini-2024-07-18`)
    system_fingerprint: str | None = None  # the provider's backend configuration (OpenAI's `system_fingerprint`)
    finish_reason: str | None = None  # why the model stopped, as the server says it (`stop`, `length`, ...)


class TransportFault(Exception):
    """The request did not get a reply: rate limit, timeout, connection, 5xx, authentication, ..."""

    def __init__(self, message: str, *, kind: str, retryable: bool, status: int | None = None,
                 exc_class: str = "", retry_after: float | None = None, most_retries: int | None = None,
                 at_once: int = 0) -> None:
        super().__init__(redact(message))
        self.kind = kind
        self.retryable = retryable
        self.status = status
        self.exc_class = exc_class or type(self).__name__
        self.retry_after = retry_after
        self.most_retries = most_retries  # fewer retries than the call's own when more cannot help (None: the call's)
        self.at_once = at_once  # the first `at_once` retries of the call go without a wait (a reset connection)


class Model(Protocol):
    """Anything that turns a request into a reply.

    A model that can stream also has `streams` (True when its next reply can come in chunks) and
    `stream(request, sink) -> LLMReply`, which gives each chunk to `sink.take` and stops as soon as it answers False
    (runtime/streaming.py); an async one `astream` too. The engine streams only when something watches the chunks.
    """

    @property
    def name(self) -> str: ...

    def complete(self, request: LLMRequest) -> LLMReply: ...


class ScriptedModel:
    """A scenario's replies, one per LLM call, offline. A TransportFault in the list is raised instead.

    `streamed`: each reply streams in pieces the size of a model's tokens, so a clause decided on a prefix stops it
    early, offline (a scenario's `stream: true`).
    """

    def __init__(self, replies: list[str | TransportFault], name: str = "scripted", *,
                 supports: tuple[bool, bool] = (False, False), stands_for: str | None = None,
                 streamed: bool = False) -> None:
        self.replies = list(replies)
        self.name = name
        self.used = 0
        self.supports = supports  # (response schemas, JSON mode) the scripted model stands for: none, by default
        self.stands_for = stands_for  # the model whose provider a structured schema is compiled for (None: `name`)
        self.streamed = streamed

    @property
    def streams(self) -> bool:
        """Whether its replies come in chunks."""
        return self.streamed

    def structure_support(self) -> tuple[bool, bool]:
        """What structure the model it stands for supports (runtime/structured.py asks)."""
        return self.supports

    def request_params(self) -> dict[str, Any]:
        """The parameters recorded in the trace: its name, and the model it stands for (a replay compiles for it)."""
        return {"model": self.name, **({"stands_for": self.stands_for} if self.stands_for else {})}

    def stream(self, request: LLMRequest, sink: ReplyStream) -> LLMReply:
        """The next reply in token-sized pieces, until `sink` stops it (a piece counts as a completion token)."""
        whole = self.complete(request).text
        sink.begin()
        text, sent = stream_pieces(token_pieces(whole), sink)
        return LLMReply(text=text, completion_tokens=sent)

    def complete(self, request: LLMRequest) -> LLMReply:
        if self.used >= len(self.replies):
            raise ModelError(
                f"the scripted model{'' if self.name == 'scripted' else ' ' + self.name} has {len(self.replies)} "
                f"repl{'y' if len(self.replies) == 1 else 'ies'} "
                f"but the contract made LLM call {self.used + 1} ({request.purpose})"
            )
        reply = self.replies[self.used]
        self.used += 1
        if isinstance(reply, TransportFault):
            raise reply
        return LLMReply(text=reply)

    def rewind(self) -> None:
        """Give the replies from the first again (a restarted call)."""
        self.used = 0


def _first_difference(a: str, b: str) -> int:
    n = min(len(a), len(b))
    for i in range(n):
        if a[i] != b[i]:
            return i
    return n


def _excerpt(text: str, at: int) -> str:
    start = max(at - 30, 0)
    piece = text[start:at + 30].replace("\n", "\\n")
    return ("..." if start else "") + piece + ("..." if at + 30 < len(text) else "")


def explain_difference(recorded: list[dict[str, Any]], sent: list[dict[str, Any]]) -> str | None:
    """Which message of a request differs from the recorded one, and where; None when they are equal."""
    for i, (old, new) in enumerate(zip(recorded, sent, strict=False), 1):
        if old.get("role") != new.get("role"):
            return f"message {i} changed role: recorded {old.get('role')!r}, now {new.get('role')!r}"
        # a recording is redacted: compare (and quote) what is sent the same way, before any excerpt is cut
        a, b = redact(str(old.get("content", ""))), redact(str(new.get("content", "")))
        if a != b:
            at = _first_difference(a, b)
            line = a.count("\n", 0, at) + 1
            return (f"message {i} ({new.get('role')}) changed at line {line}, character {at + 1}: "
                    f"recorded {_excerpt(a, at)!r}, now {_excerpt(b, at)!r}")
    if len(recorded) != len(sent):
        return f"the request has {len(sent)} messages, the recording {len(recorded)}"
    return None


def _structure_difference(recorded: dict[str, Any], sent: dict[str, Any]) -> str | None:
    """How the `response_format` sent differs from the recorded one (the output type changed since), or None."""
    old, new = recorded.get("response_format"), sent.get("response_format")
    if old == new:
        return None
    a, b = json.dumps(old, sort_keys=True), json.dumps(new, sort_keys=True)
    at = _first_difference(a, b)
    return f"the response_format changed at character {at + 1}: recorded {_excerpt(a, at)!r}, now {_excerpt(b, at)!r}"


class ReplayModel:
    """The replies recorded in a trace, in order; a request that differs from the recording is explained."""

    def __init__(self, trace: Trace | str | Path, *, strict: bool = False) -> None:
        self.source = str(trace) if not isinstance(trace, Trace) else "trace"
        if not isinstance(trace, Trace):
            trace = Trace.read(trace)
        self.name = f"replay:{Path(self.source).name}"
        self.strict = strict
        self.pairs: list[tuple[ModelRequest, ModelReply]] = []
        pending: ModelRequest | None = None
        for ev in trace:
            if isinstance(ev, ModelRequest):
                pending = ev
            elif isinstance(ev, ModelReply) and pending is not None:
                self.pairs.append((pending, ev))
                pending = None
        self.used = 0

    def rewind(self) -> None:
        """Give the recorded replies from the first again (a restarted call)."""
        self.used = 0

    def pinned_structure(self) -> tuple[str, str, str | None, str | None] | None:
        """The structure mode, model, api_base and request shape the next recorded request asked with (a replay asks
        the same)."""
        if self.used >= len(self.pairs):
            return None
        recorded = self.pairs[self.used][0]
        api_base, stood_for = recorded.params.get("api_base"), recorded.params.get("stands_for")
        return (recorded.structured_output or "off", stood_for if isinstance(stood_for, str) else recorded.model,
                api_base if isinstance(api_base, str) else None, shape_of(recorded.params.get("response_format")))

    @property
    def streams(self) -> bool:
        """Whether the next recorded reply was streamed (it is replayed in the same chunks, at the same times)."""
        return self.used < len(self.pairs) and bool(self.pairs[self.used][1].chunk_ends)

    def stream(self, request: LLMRequest, sink: ReplyStream) -> LLMReply:
        """The next recorded reply in its recorded chunks and times, until `sink` stops it."""
        reply = self.complete(request)
        recorded = self.pairs[self.used - 1][1]
        ends, times = recorded.chunk_ends or [], recorded.chunk_s
        pieces = [reply.text[start:end] for start, end in zip([0, *ends], ends, strict=False)]
        if ends and ends[-1] < len(reply.text):
            pieces.append(reply.text[ends[-1]:])
        if times is None or len(times) != len(pieces):
            times = None
        sink.begin()
        text, sent = stream_pieces(pieces, sink, times)
        if sent == len(pieces):
            return reply
        share = sent / len(pieces)  # the recorded usage, in proportion to what was sent before the stop
        return LLMReply(text=text, prompt_tokens=reply.prompt_tokens, completion_tokens=round(reply.completion_tokens * share),
                        cost_usd=reply.cost_usd * share, note=reply.note)

    def complete(self, request: LLMRequest) -> LLMReply:
        if self.used >= len(self.pairs):
            raise ModelError(f"the recorded trace has {len(self.pairs)} replies but the contract made LLM call {self.used + 1}")
        recorded, response = self.pairs[self.used]
        self.used += 1
        diff = "; ".join(d for d in (explain_difference(recorded.messages, request.messages),
                                     _structure_difference(recorded.params, request.params)) if d) or None
        note = f"request {self.used} differs from the recording: {diff}" if diff else None
        if note and self.strict:
            raise ReplayDivergence(note)
        return LLMReply(text=response.text, prompt_tokens=response.prompt_tokens, completion_tokens=response.completion_tokens,
                        cost_usd=response.cost_usd, note=note)
