"""What a failed live request was: a litellm exception judged as a transport fault (its kind, whether retrying can
help, how often), by its class, its status and the server's own words, looking through the causes litellm wraps.

runtime/live.py asks `classify` for every failed request, whole or streamed; the words it adds about what the server
really sent (runtime/wire.py's `Seen`) stay there, where the request's transport is known.
"""

from __future__ import annotations

import re
from typing import Any

from contractstudio.runtime.models import TransportFault


def retry_after(err: Exception) -> float | None:
    """The server's Retry-After, in seconds, when it sent one (litellm keeps the headers in several places)."""
    response = getattr(err, "response", None)
    for headers in (getattr(err, "litellm_response_headers", None), getattr(err, "headers", None), getattr(response, "headers", None)):
        try:
            value = headers.get("retry-after") if headers else None
            if value is not None:
                seconds = float(value)
                return 0.0 if seconds < 0 else seconds  # NaN and inf stay as sent: too long to honour
        except (AttributeError, TypeError, ValueError):
            continue
    return None


def classify(err: Exception, litellm: Any) -> TransportFault:
    """A litellm exception as a transport fault: what kind, and whether retrying can help (not when the server's
    answer says the request itself is invalid, whatever its status)."""
    return invalid_request(_by_class(met_error(err, litellm), litellm))


def _by_class(err: Exception, litellm: Any) -> TransportFault:
    """A litellm exception as a transport fault, by its class and status."""
    status = getattr(err, "status_code", None)
    status = status if isinstance(status, int) else None
    name = type(err).__name__
    # Some litellm routes (ollama_chat, for one) put a whole Python traceback of their own into the message:
    # the user gets the error's words, never a stack of litellm's internals.
    text = str(err).split("Traceback (most recent call last):", 1)[0].strip() or name
    table: list[tuple[str, str, bool]] = [
        ("AuthenticationError", "authentication", False),
        ("PermissionDeniedError", "authentication", False),
        ("RateLimitError", "rate_limit", True),
        ("Timeout", "timeout", True),
        ("APIConnectionError", "connection", True),
        ("InternalServerError", "server", True),
        ("ServiceUnavailableError", "server", True),
        ("BadGatewayError", "server", True),
    ]
    lowered = text.lower()
    if any(marker in lowered for marker in ("missing credentials", "api_key client option", "no api key")):
        # litellm reports a key that was never given as a 500; retrying cannot help
        return TransportFault(text, kind="authentication", retryable=False, status=None, exc_class=name)
    for cls_name, kind, retryable in table:
        cls = getattr(litellm, cls_name, None)
        if cls is not None and isinstance(err, cls):
            if kind == "server" and "connection error" in lowered:
                kind, status = "connection", None  # litellm reports a refused connection as a 500; no HTTP status came back
            return TransportFault(text, kind=kind, retryable=retryable, status=status, exc_class=name, retry_after=retry_after(err))
    if status is not None and (status >= 500 or status == 429):
        return TransportFault(text, kind="server" if status >= 500 else "rate_limit", retryable=True, status=status, exc_class=name)
    return TransportFault(text, kind="request", retryable=False, status=status, exc_class=name)


# Words of a server's answer that say the request itself is invalid, whatever its status (llama-cpp-python answers a
# field it cannot validate with HTTP 500): sent again, it gets the same answer. pydantic's and FastAPI's validation
# errors, OpenAI's and vLLM's unknown parameters, and the context overflows of OpenAI, llama.cpp and vLLM.
_INVALID_REQUEST = re.compile(
    r"validation errors? for|\binput should be\b|\bfield required\b|extra inputs are not permitted|"
    r"unrecognized request argument|unknown (?:parameter|field|argument)|unsupported parameter|"
    r"maximum context length|context window|context length|exceeds? (?:the )?(?:available )?context|"
    r"requested tokens \(\d+\) exceed", re.I)


def invalid_request(fault: TransportFault) -> TransportFault:
    """The fault as the server's own reason says it: a 4xx or 5xx that says the request itself was invalid is
    `request`, not retried (a deterministic answer is not transient)."""
    if fault.status is not None and fault.status >= 400 and fault.kind != "authentication" \
            and _INVALID_REQUEST.search(str(fault)):
        fault.kind, fault.retryable = "request", False
    return fault


# A refused connection to this machine is retried once, after the first backoff (a server starting up), not four times.
REFUSED_RETRIES = 1


# A connection the server reset (or had closed while idle in the pool) is retried at once, once, on a fresh
# connection: an overloaded listen queue drops connections, and a wait of its own says nothing about the server.
RESET_RETRIES_AT_ONCE = 1
RESET_MARKERS = ("connection reset", "server disconnected without sending a response")


def refused(err: BaseException) -> bool:
    """Whether the connection was refused (nothing listens at the port), looking through the exception's causes."""
    return caused_by(err, ConnectionRefusedError, ("connection refused",))


def met_error(err: Exception, litellm: Any) -> Exception:
    """The error a request really met. In the middle of a stream litellm wraps it in a MidStreamFallbackError
    (a "service unavailable", 503, whatever happened) and reports a read timeout as a connection error: a stream is
    judged as the same fault would be without it."""
    wrapper = getattr(getattr(litellm, "exceptions", None), "MidStreamFallbackError", None)
    if wrapper is not None and isinstance(err, wrapper) and isinstance(getattr(err, "original_exception", None), Exception):
        err = err.original_exception
    timeout = getattr(litellm, "Timeout", None)
    if timeout is not None and not isinstance(err, timeout) and caused_by(err, _httpx_timeout(), ()):
        try:
            return timeout(message=str(err), model="", llm_provider="")
        except Exception:  # noqa: BLE001 - a litellm whose Timeout takes other arguments: judged as it came
            return err
    return err


def _httpx_timeout() -> type[BaseException]:
    import httpx  # litellm's own transport: imported with it

    return httpx.TimeoutException


def caused_by(err: BaseException, kind: type[BaseException], markers: tuple[str, ...]) -> bool:
    """Whether `err` or one of its causes is a `kind` or says one of `markers`."""
    seen: set[int] = set()
    current: BaseException | None = err
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        text = str(current).lower()
        if isinstance(current, kind) or any(marker in text for marker in markers):
            return True
        current = current.__cause__ or current.__context__
    return False
