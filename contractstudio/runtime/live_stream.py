"""A live reply read as it streams (litellm's chunks), and closed the moment the engine's ReplyStream stops it.

The live model (live.py, the only importer of litellm) sends the request and hands the stream here; closing it
closes the HTTP response, so the server sees the client leave and stops decoding.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from contractstudio.providers import provider_of
from contractstudio.runtime.models import LLMReply
from contractstudio.runtime.streaming import ReplyStream
from contractstudio.runtime.success_logging import listened


def streaming(litellm: Any, kwargs: dict[str, Any], model: str, sink: ReplyStream | None) -> float:
    """With a sink: make a request's litellm arguments ask for a stream, and start the sink's clock. The time the
    request is sent (time.perf_counter: its latency is timed from it)."""
    if sink is None:
        return time.perf_counter()
    kwargs["stream"] = True
    if provider_of(model) == "openai":  # the usage in the last chunk (a server that does not know the option ignores it)
        kwargs["stream_options"] = {"include_usage": True}
    litellm.disable_streaming_logging = not listened(litellm)  # else litellm gives a thread a task per chunk
    sink.begin()
    return time.perf_counter()


class EmptyStream(Exception):
    """A 200 event stream that ended, cleanly or broken, without one event (keep-alive comments at most).
    llama-cpp-python answers a request it refuses after the headers (a context overflow) this way, and under load the
    connection may close before the stream's last chunk: asked again for the whole reply, the server says why (a 400
    with its reason), which is a fault judged as any other, instead of an empty reply or a broken connection retried
    as a transient one. The server closes the stream's connection as it ends it; a whole request sent on that
    connection before the close arrives is reset, so a reset of it is asked once more at once (httpx drops a reset
    connection: the next request opens a new one)."""


_ABSENT: Any = object()


def field_of(obj: Any, name: str) -> Any:
    """`getattr(obj, name, None)`, without pydantic's `__getattr__` for a name the object lacks. litellm's replies and
    chunks are pydantic models, read for names they mostly lack (a refusal, a chunk's usage): each miss built and
    caught an AttributeError, 3-8 us, several per reply and one per chunk. Read where pydantic keeps them instead: the
    fields, the extra fields, the private attributes; anything else of the class (a property) as getattr does."""
    extra = getattr(obj, "__pydantic_extra__", _ABSENT)
    if extra is _ABSENT:  # not a pydantic model
        return getattr(obj, name, None)
    found = obj.__dict__.get(name, _ABSENT)
    if found is not _ABSENT:
        return found
    if extra and name in extra:
        return extra[name]
    private = getattr(obj, "__pydantic_private__", None)
    if private and name in private:
        return private[name]
    return getattr(obj, name, None) if _class_has(type(obj), name) else None


_CLASS_HAS: dict[tuple[type, str], bool] = {}  # (class, name): whether the class itself has it (a property, a method)


def _class_has(cls: type, name: str) -> bool:
    """`hasattr(cls, name)` by the classes' own dictionaries (pydantic's metaclass answers a miss slowly), remembered."""
    found = _CLASS_HAS.get((cls, name))
    if found is None:
        found = any(name in vars(c) for c in cls.__mro__)
        if len(_CLASS_HAS) < 256:
            _CLASS_HAS[(cls, name)] = found
    return found


def served_by(response: Any) -> dict[str, str | None]:
    """What makes a reply reproducible, where the provider says it: the model version and the system fingerprint."""
    version, fingerprint = getattr(response, "model", None), getattr(response, "system_fingerprint", None)
    return {"model_version": version if isinstance(version, str) and version else None,
            "system_fingerprint": fingerprint if isinstance(fingerprint, str) and fingerprint else None}


class _Streamed:
    """A streamed reply as litellm's chunks bring it: the text goes to the sink; the usage, when the server sends it."""

    __slots__ = ("chunks", "usage", "refusal", "served", "finish_reason")

    def __init__(self) -> None:
        self.served: dict[str, str | None] = {}  # the model version and fingerprint the first chunk names
        self.chunks = 0  # chunks with text
        self.usage: Any = None
        self.refusal: str | None = None
        self.finish_reason: str | None = None  # the last chunk's (a reply cut early has none)

    def take(self, chunk: Any, sink: ReplyStream) -> bool:
        """One chunk; False: the sink stopped the reply."""
        if not self.served:
            # litellm names the requested model in a stream's chunks, not the one that answered: only the fingerprint
            self.served = {"model_version": None, "system_fingerprint": served_by(chunk)["system_fingerprint"]}
        usage = field_of(chunk, "usage")
        if usage is not None:
            self.usage = usage
        try:
            choice = chunk.choices[0]
            delta = choice.delta
        except (AttributeError, IndexError, TypeError):
            return True
        reason = getattr(choice, "finish_reason", None)
        if isinstance(reason, str) and reason:
            self.finish_reason = reason
        text = getattr(delta, "content", None)
        if text:
            self.chunks += 1
            return sink.take(text)
        refusal = field_of(delta, "refusal")
        if refusal:
            self.refusal = (self.refusal or "") + str(refusal)
        return True

    def no_event(self, seen: Any) -> bool:
        """Whether the server accepted the stream (a 200 event stream, as our transport saw it) and sent no event
        (a keep-alive comment may have come)."""
        return not (self.chunks or self.refusal or seen is None or seen.status >= 400) and b"data:" not in seen.head \
            and "event-stream" in seen.content_type

    def reply(self, sink: ReplyStream, started: float, seen: Any, litellm: Any, model: str) -> LLMReply:
        """The reply as far as it came; without the server's usage (a cut reply never gets it), each chunk of text
        counts as a token (servers of the llama.cpp family send one token a chunk). No text from an answer that was
        not a stream of events (`seen`: what our transport saw) is no reply at all (an HTML page, a whole JSON body):
        a fault, in which the live model says what the server sent."""
        if self.no_event(seen):
            raise EmptyStream  # the live model asks again for the whole reply
        if not (self.chunks or self.refusal or seen is None or seen.status >= 400 or b"data:" in seen.head):
            raise ValueError("the answer to a streamed request is not a stream of server-sent events")
        usage = self.usage
        completion = int(getattr(usage, "completion_tokens", 0) or 0) if usage is not None else 0
        prompt = int(getattr(usage, "prompt_tokens", 0) or 0) if usage is not None else 0
        completion = completion or self.chunks
        return LLMReply(text=sink.text, prompt_tokens=prompt, completion_tokens=completion,
                        cost_usd=_price(litellm, model, prompt, completion), latency_s=time.perf_counter() - started,
                        refusal=self.refusal, finish_reason=self.finish_reason, **self.served)


def _price(litellm: Any, model: str, prompt: int, completion: int) -> float:
    """What these tokens cost by litellm's offline price map (0 when the model is not in it)."""
    try:
        paid = litellm.cost_per_token(model=model, prompt_tokens=prompt, completion_tokens=completion)
        return float(sum(paid))
    except Exception:  # noqa: BLE001 - a model missing from the offline price map costs "unknown", shown as 0
        return 0.0


def read_stream(response: Any, sink: ReplyStream, started: float, seen: Callable[[], Any], litellm: Any,
                model: str) -> LLMReply:
    """Read litellm's stream into `sink` until it ends or `sink` stops it (then the stream is closed at once);
    `seen`: what the server answered, as our transport saw it (None: another transport)."""
    streamed = _Streamed()
    whole = False
    try:
        for chunk in response:
            if not streamed.take(chunk, sink):
                break
        else:
            whole = True
    except Exception:
        if streamed.no_event(seen()):
            raise EmptyStream from None  # broken before its first event: the whole reply says why
        raise
    finally:
        if not whole:  # cut, or failed: closed, so that the server stops sending
            _close(response)
    return streamed.reply(sink, started, seen(), litellm, model)


async def aread_stream(response: Any, sink: ReplyStream, started: float, seen: Callable[[], Any], litellm: Any,
                       model: str) -> LLMReply:
    """`read_stream` on an event loop."""
    streamed = _Streamed()
    whole = False
    try:
        async for chunk in response:
            if not streamed.take(chunk, sink):
                break
        else:
            whole = True
    except Exception:
        if streamed.no_event(seen()):
            raise EmptyStream from None
        raise
    finally:
        if not whole:
            await response.aclose()
    return streamed.reply(sink, started, seen(), litellm, model)


def _close(response: Any) -> None:
    """Close a stream litellm returned: its HTTP response goes, so the server sees the client leave."""
    inner = getattr(response, "completion_stream", None)
    close = getattr(inner, "close", None)
    if close is not None:
        try:
            close()
        except Exception:  # noqa: BLE001 - a stream that cannot be closed more is closed enough
            pass
