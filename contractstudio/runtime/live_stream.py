"""A live reply read as litellm streams it: each chunk's text to the engine's ReplyStream, the usage when the server
sends it, a refusal, and what an answer that was no stream at all was. runtime/live.py's `stream` and `astream` read
their chunks through a `StreamedReply`; a reply cut early is closed with `close` so the server stops decoding.
"""

from __future__ import annotations

from typing import Any

from contractstudio.runtime.models import LLMReply, TransportFault
from contractstudio.runtime.streaming import ReplyStream


def served_by(response: Any) -> dict[str, str | None]:
    """What makes a reply reproducible, where the provider says it: the model version and the system fingerprint."""
    found = {"model_version": getattr(response, "model", None), "system_fingerprint": getattr(response, "system_fingerprint", None)}
    return {k: v if isinstance(v, str) and v else None for k, v in found.items()}


class StreamedReply:
    """A streamed reply as litellm's chunks bring it: the text goes to the sink; the usage, when the server sends it."""

    __slots__ = ("chunks", "usage", "open", "refusal", "served")

    def __init__(self) -> None:
        self.served: dict[str, str | None] = {}  # the model version and fingerprint the first chunk names
        self.chunks = 0
        self.usage: Any = None
        self.open = True  # not read to its end (cut, or failed): closed, so that the server stops sending
        self.refusal: str | None = None

    def take(self, chunk: Any, sink: ReplyStream) -> bool:
        """One chunk; False: the sink stopped the reply."""
        if not self.served:
            self.served = served_by(chunk)
        usage = getattr(chunk, "usage", None)
        if usage is not None:
            self.usage = usage
        try:
            delta = chunk.choices[0].delta
        except (AttributeError, IndexError, TypeError):
            return True
        text = getattr(delta, "content", None)
        if text:
            self.chunks += 1
            return sink.take(text)
        if getattr(delta, "refusal", None):
            self.refusal = (self.refusal or "") + str(delta.refusal)
        return True

    def check(self, seen: Any) -> None:
        """A stream that brought no text, from a server whose answer was no event stream at all (an HTML page, a
        JSON body without choices): litellm reads it as an empty reply that stopped; it is a bad response, as the
        same answer to a request for a whole reply is (`seen`: the answer as our own transport saw it)."""
        if self.chunks or self.refusal or seen is None or seen.status >= 400 or b"data:" in seen.head:
            return
        raise TransportFault(f"the server answered {seen.describe()}, which is not a chat completion",
                             kind="bad_response", retryable=True, status=seen.status)

    def reply(self, sink: ReplyStream, latency: float, litellm: Any, model: str) -> LLMReply:
        """The reply as far as it came; without the server's usage (a cut reply never gets it), each chunk of text
        counts as a token (servers of the llama.cpp family send one token a chunk). Priced as litellm prices the same
        tokens of a whole reply."""
        usage = self.usage
        completion = int(getattr(usage, "completion_tokens", 0) or 0) if usage is not None else 0
        prompt = int(getattr(usage, "prompt_tokens", 0) or 0) if usage is not None else 0
        completion = completion or self.chunks
        return LLMReply(text=sink.text, prompt_tokens=prompt, completion_tokens=completion, latency_s=latency,
                        refusal=self.refusal, cost_usd=_token_cost(litellm, model, prompt, completion),
                        model_version=self.served.get("model_version"),
                        system_fingerprint=self.served.get("system_fingerprint"))


def _token_cost(litellm: Any, model: str, prompt: int, completion: int) -> float:
    """What these tokens cost by litellm's offline price map (0 when the model is not in it)."""
    try:
        paid = litellm.cost_per_token(model=model, prompt_tokens=prompt, completion_tokens=completion)
        return float(sum(paid))
    except Exception:  # noqa: BLE001 - a model missing from the offline price map costs "unknown", shown as 0
        return 0.0


def close(response: Any) -> None:
    """Close a stream litellm returned: its HTTP response goes, so the server sees the client leave."""
    inner = getattr(response, "completion_stream", None)
    close = getattr(inner, "close", None)
    if close is not None:
        try:
            close()
        except Exception:  # noqa: BLE001 - a stream that cannot be closed more is closed enough
            pass
