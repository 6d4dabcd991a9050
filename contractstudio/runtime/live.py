"""The live model: any litellm model, a hosted provider or an OpenAI-compatible server.

The only module that imports litellm, and only when a live call is made (or the
studio loads the client in the background), so loading, checking and offline
runs never pay for it. litellm's own retries and cache, and the OpenAI client's
hidden retries, are off in every call whatever litellm's globals say, and its global
fallbacks refused (live_owned.py): transport retries belong to the engine, which counts them and puts
each one in the trace.
"""

from __future__ import annotations

import os
import sys
import time
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from contractstudio.documents.models import LLMSettings
from contractstudio.documents.provider_profiles import Support, profile_for
from contractstudio.providers import provider_of
from contractstudio.runtime.errors import ModelError
from contractstudio.runtime.live_faults import REFUSED_RETRIES, RESET_MARKERS, RESET_RETRIES_AT_ONCE, caused_by, classify, refused
from contractstudio.runtime.live_owned import CALL_ARGUMENTS, ENGINE_ARGUMENTS, foreign_fallbacks
from contractstudio.runtime.live_stream import EmptyStream, aread_stream, field_of, read_stream, served_by, streaming
from contractstudio.runtime.models import LLMReply, LLMRequest, TransportFault
from contractstudio.runtime.streaming import ReplyStream
from contractstudio.runtime.success_logging import quiet_success_logging
from contractstudio.runtime.trace import filter_logs, redact, register_secret, register_secrets_in
from contractstudio.safe_text import register_environment
from contractstudio.trust import is_loopback, untrusted_key_routes, user_api_bases

# What the engine sets on every request; a parameter of the same name (or one that would change the
# transport: timeout, retries, fallbacks, endpoint, key) never replaces it. The file's own are refused by the analyzer.
_ENGINE_KEYS = {"model", "messages", "timeout", "api_base", "api_key", *ENGINE_ARGUMENTS, *LLMSettings.TRANSPORT_KEYS}


def _litellm() -> Any:
    """litellm, imported and set up once: local cost map, quiet logging, keys redacted in its logs (its retries are
    turned off per call, live_owned.py)."""
    global _LOGS_FILTERED
    if not _LOGS_FILTERED:
        os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"  # never fetch prices from the network
        import litellm

        litellm.suppress_debug_info = True
        quiet_success_logging(litellm)
        _no_signature_per_call()
        filter_logs()  # after the import, so every logger litellm and the OpenAI client made is there
        _LOGS_FILTERED = True
    import litellm

    return litellm


_LOGS_FILTERED = False


def _no_signature_per_call() -> None:
    """litellm's caching handler maps a call's positional arguments to names by `inspect.signature` of `completion`
    after every call, cache or not (about a tenth of a whole mocked call's CPU); the live model passes none, so the
    mapping is `{}` without asking: the same answer, and the signature is still read when there are some."""
    from litellm.caching import caching_handler

    convert = caching_handler.convert_args_to_kwargs
    if getattr(convert, "__wrapped__", None) is not None:
        return

    def convert_args_to_kwargs(original_function: Any, args: tuple[Any, ...] | None = None) -> dict[str, Any]:
        return convert(original_function, args) if args else {}

    convert_args_to_kwargs.__wrapped__ = convert  # type: ignore[attr-defined]
    caching_handler.convert_args_to_kwargs = convert_args_to_kwargs


def _cost(litellm: Any, response: Any) -> float:
    """What the reply cost by litellm's offline price map (0 when the model is not in it)."""
    hidden = field_of(response, "_hidden_params")
    if isinstance(hidden, dict) and "response_cost" in hidden:  # litellm priced it already, while answering
        return float(hidden["response_cost"] or 0.0)
    try:
        return float(litellm.completion_cost(completion_response=response) or 0.0)
    except Exception:  # noqa: BLE001 - a model missing from the offline price map costs "unknown", shown as 0
        return 0.0


def prepare_live_client() -> None:
    """Import litellm and the OpenAI client's resources now (what `LiveModel.prepare` needs): the studio does it in
    the background, so no call, and no session being set up on the UI thread, waits for either import."""
    _litellm()
    import openai.resources  # noqa: F401 - a second or more on a loaded machine


def _build_reply_models(litellm: Any) -> None:
    """Build the reply models of litellm and the OpenAI client now. pydantic leaves them unbuilt at import and the
    first reply builds them, but so does every call of a first burst that comes before one finished: an eval's
    first 32 calls in each fresh worker process built them 32 times over (about a second of CPU per worker)."""
    from openai.types.chat import ChatCompletion, ChatCompletionMessage
    from openai.types.chat.chat_completion import Choice

    litellm.ModelResponse()  # its choices and message too
    litellm.Usage()
    for model in (ChatCompletionMessage, Choice, ChatCompletion):
        model.model_rebuild()


def live_client_ready() -> bool:
    """Whether litellm and the OpenAI client's resources are imported and set up (a live call starts without waiting)."""
    return _LOGS_FILTERED and "openai.resources" in sys.modules


def _litellm_sender() -> Any:
    """The async transport litellm itself sends with (aiohttp by default: about a third less CPU per call than
    httpx's own), so a call through our deadline client costs what a bare `litellm.acompletion` does."""
    from litellm.llms.custom_httpx.http_handler import AsyncHTTPHandler

    return AsyncHTTPHandler._create_async_transport()  # noqa: SLF001 - tests/test_private_internals.py says why


# Providers (of a prefixed model string) whose key litellm's `validate_environment` finds by exactly these
# variables being in the environment: when they are, nothing is missing and litellm need not be asked per request.
_KEY_FOUND_BY = {"openai": ("OPENAI_API_KEY",)}


@dataclass(slots=True)
class LiveModel:
    """Any litellm model: a hosted provider, or an OpenAI-compatible server at `api_base`."""

    model: str
    api_base: str | None = None
    api_key: str | None = field(default=None, repr=False)
    timeout_s: float = 30.0
    params: dict[str, Any] = field(default_factory=dict)
    _ready: bool = field(default=False, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        # the engine's settings win: a parameter may not change the timeout, the retries, the endpoint or the key
        self.params = {k: v for k, v in self.params.items() if k not in _ENGINE_KEYS}
        register_secret(self.api_key)
        register_secrets_in(self.params)  # e.g. extra_headers: {Authorization: Bearer ...}
        register_environment()  # keys litellm may pick up itself are redacted too

    @property
    def name(self) -> str:
        return self.model

    def prepare(self) -> None:
        """Import litellm now, so its one-time import is not timed as the model's latency; and build the client
        of an OpenAI-compatible server, so a fresh process's first request is not sent late (an eval worker's
        first requests would then reach the server together, however far apart --rpm booked them).

        Once per model: every session prepares its model, and an eval's thousands of sessions share one."""
        if self._ready:
            return
        litellm = _litellm()
        import openai.resources  # noqa: F401 - the OpenAI client imports these on its first call: a second or more

        if self.api_base:
            self._openai_wire(litellm, self._key_kwargs())
        _build_reply_models(litellm)
        self._ready = True

    def _key_kwargs(self) -> dict[str, Any]:
        """The key a request is sent with: the model's own, else (for a local server) a placeholder when none is set."""
        if self.api_key:
            return {"api_key": self.api_key}
        if self.api_base and self.model.startswith("openai/") and not os.environ.get("OPENAI_API_KEY"):
            return {"api_key": "no-key"}  # OpenAI-compatible local servers need none, the client insists on one
        return {}

    def _openai_wire(self, litellm: Any, kwargs: dict[str, Any], *, on_loop: bool = False) -> Any:
        """For an OpenAI-compatible server at `api_base`: our own client, whose transport bounds the whole reply in time.

        Other providers keep litellm's own HTTP client (their reads are bounded, a trickled body is not).
        """
        if not self.api_base:
            return None
        key = kwargs.get("api_key") or os.environ.get("OPENAI_API_KEY")
        if provider_of(self.model) != "openai" or not key:
            # without a key, litellm's own "missing credentials" error says it best; without an api_base,
            # litellm resolves the endpoint (OPENAI_API_BASE, litellm.api_base, ...) and keeps its own client
            return None
        from contractstudio.runtime.wire import client_for, loop_client_for

        if on_loop:
            client, transport = loop_client_for(self.api_base, key, self.timeout_s, _litellm_sender)
        else:
            client, transport = client_for(self.api_base, key, self.timeout_s)
            transport.forget()
        kwargs["client"] = client
        return transport

    def missing_key(self, litellm: Any) -> str | None:
        """Why no request can be sent: the provider's key variable is not set (litellm knows which), or None.

        Without it litellm sends nothing and reports an `InternalServerError`; an `api_base` (a local server) needs no key.
        """
        if self.api_key or self.api_base:
            return None
        variables = _key_variables(self.model)
        if variables and all(name in os.environ for name in variables):
            return None  # litellm's own check for this provider is exactly these (its provider lookup costs ~13 us)
        try:
            found = litellm.validate_environment(self.model)
        except Exception:  # noqa: BLE001 - an unknown provider is litellm's to report, in the call itself
            return None
        missing = [k for k in found.get("missing_keys") or [] if str(k).endswith(("_KEY", "_TOKEN"))]
        if found.get("keys_in_environment") or not missing:
            return None
        return (f"{' and '.join(missing)} {'is' if len(missing) == 1 else 'are'} not set: {self.model} needs its API key "
                "there (or llm.api_key_env naming another variable, or --api-base for a local server); nothing was sent")

    def request_params(self) -> dict[str, Any]:
        """The parameters recorded in the trace (no key, ever)."""
        out: dict[str, Any] = {"model": self.model, "timeout_s": self.timeout_s, **self.params}
        if self.api_base:
            out["api_base"] = self.api_base
        return out

    def _kwargs(self, litellm: Any, request: LLMRequest) -> dict[str, Any]:
        """litellm's arguments for this request (the key included; never traced)."""
        kwargs: dict[str, Any] = {**self.params, "model": self.model, "messages": request.messages, "timeout": self.timeout_s,
                                  **CALL_ARGUMENTS}
        wanted = request.params.get("response_format")  # the structure the engine asks for (runtime/structured.py),
        if wanted is not None and "response_format" not in kwargs:  # unless the contract wrote its own
            kwargs["response_format"] = wanted
        if self.api_base:
            kwargs["api_base"] = self.api_base
        if problem := foreign_fallbacks(litellm):
            raise ModelError(problem)
        if self.api_key or self.api_base:  # nothing can be missing (missing_key)
            kwargs.update(self._key_kwargs())
            return kwargs
        problem = self.missing_key(litellm)
        if problem:
            raise ModelError(problem)
        return kwargs

    def complete(self, request: LLMRequest, sink: ReplyStream | None = None) -> LLMReply:
        """The reply; with a `sink`, streamed into it, cut (the HTTP stream closed) when it says so (live_stream.py)."""
        litellm = _litellm()
        kwargs = self._kwargs(litellm, request)
        transport = self._openai_wire(litellm, kwargs)
        started = streaming(litellm, kwargs, self.model, sink)
        try:
            response = litellm.completion(**kwargs)
            if sink is not None:
                return read_stream(response, sink, started, lambda: transport.last if transport is not None else None,
                                   litellm, self.model)
        except EmptyStream:
            try:
                return self.complete(request)
            except TransportFault as fault:
                if not fault.at_once:
                    raise
                return self.complete(request)  # sent on the stream's connection as the server closed it: EmptyStream
        except Exception as err:  # noqa: BLE001 - every provider failure becomes a classified fault
            raise self._fault(litellm, err, transport is not None, transport.last if transport is not None else None) from None
        return self._reply(litellm, response, time.perf_counter() - started)

    async def acomplete(self, request: LLMRequest, sink: ReplyStream | None = None) -> LLMReply:
        """`complete` on an event loop (litellm.acompletion): the same request, reply and faults."""
        litellm = _litellm()
        kwargs = self._kwargs(litellm, request)
        transport = self._openai_wire(litellm, kwargs, on_loop=True)
        answers = transport.watch() if transport is not None else []
        started = streaming(litellm, kwargs, self.model, sink)
        try:
            response = await litellm.acompletion(**kwargs)
            if sink is not None:
                return await aread_stream(response, sink, started, lambda: answers[-1] if answers else None, litellm,
                                          self.model)
        except EmptyStream:
            try:
                return await self.acomplete(request)
            except TransportFault as fault:
                if not fault.at_once:
                    raise
                return await self.acomplete(request)
        except Exception as err:  # noqa: BLE001 - every provider failure becomes a classified fault
            raise self._fault(litellm, err, transport is not None, answers[-1] if answers else None) from None
        return self._reply(litellm, response, time.perf_counter() - started)

    @property
    def streams(self) -> bool:
        """Whether replies can stream from this model (its provider's profile says; the engine asks for a stream only
        when something watches the chunks: runtime/streaming.py)."""
        return profile_for(self.model, self.api_base).streams

    def streams_in(self, mode: str) -> bool:
        """Whether a reply asked in this structure mode can stream (not where a refusal would be lost in the stream)."""
        return mode not in profile_for(self.model, self.api_base).whole_in
    stream, astream = complete, acomplete

    def _fault(self, litellm: Any, err: Exception, own_wire: bool, seen: Any) -> TransportFault:
        """What a failed request was, said as plainly as what the server really sent allows (`seen`: its last answer)."""
        fault = classify(err, litellm)
        if fault.kind == "connection" and seen is not None and not seen.oversize:
            fault.args = (redact(f"the server answered HTTP {seen.status} but the connection ended before the "
                                 f"whole reply arrived ({seen.size:,} bytes read): {fault}"),)
        elif fault.kind == "connection" and self.api_base and is_loopback(self.api_base) and refused(err):
            # this machine answered at once that no server listens there: retrying for 15 s will not start one
            fault.args = (redact(f"nothing is listening at {self.api_base} (connection refused): start the server "
                                 f"or check the port: {fault}"),)
            fault.most_retries = REFUSED_RETRIES
        elif fault.kind == "connection" and self.api_base:
            fault.args = (redact(f"cannot reach {self.api_base}: {fault}"),)
        if fault.kind == "connection" and caused_by(err, ConnectionResetError, RESET_MARKERS):
            fault.at_once = RESET_RETRIES_AT_ONCE
        if seen is not None and seen.oversize:
            from contractstudio.runtime import wire

            fault.args = (f"the server answered HTTP {seen.status} with a body larger than "
                          f"{wire.MAX_BODY_BYTES:,} bytes, which is not a chat completion; it was not read further",)
            fault.status, fault.kind, fault.retryable = seen.status, "bad_response", True
        elif fault.kind == "timeout":
            fault.status = None  # litellm says 408; no server sent it
            if seen is None and own_wire:
                fault.args = (redact(f"no answer from the server within {self.timeout_s:g} s ({fault})"),)
            elif seen is not None:
                fault.args = (redact(f"the server answered HTTP {seen.status}, but the whole reply did not arrive within "
                                     f"{self.timeout_s:g} s: it sent the body too slowly or stopped ({fault})"),)
        elif seen is not None and seen.status < 400 and fault.kind in ("server", "request"):
            # litellm says "500: Expecting value"; the server really answered 200 with something else
            fault.args = (redact(f"the server answered {seen.describe()}, which is not a chat completion"),)
            fault.status, fault.kind, fault.retryable = seen.status, "bad_response", True
        return fault

    @staticmethod
    def _reply(litellm: Any, response: Any, latency: float) -> LLMReply:
        """The reply litellm returned, each of its fields read once (they are pydantic's: each read has a price)."""
        try:
            choice = response.choices[0]
        except (AttributeError, IndexError, TypeError):
            choice = None
        message = getattr(choice, "message", None)
        usage = field_of(response, "usage")
        reason = getattr(choice, "finish_reason", None)
        return LLMReply(text=getattr(message, "content", None) or "", prompt_tokens=int(getattr(usage, "prompt_tokens", 0) or 0),
                        completion_tokens=int(getattr(usage, "completion_tokens", 0) or 0), cost_usd=_cost(litellm, response),
                        latency_s=latency, refusal=_refusal(message),
                        finish_reason=reason if isinstance(reason, str) and reason else None, **served_by(response))

    def structure_support(self) -> Support:
        """(response schemas, JSON mode) by litellm's capability data; neither for a model litellm does not know."""
        return _structure_support(_litellm(), self.model)


@lru_cache(maxsize=64)
def _key_variables(model: str) -> tuple[str, ...] | None:
    """The variables whose presence is litellm's whole key check for this model (a prefixed name only), or None."""
    return _KEY_FOUND_BY.get(provider_of(model)) if "/" in model else None


def _refusal(message: Any) -> str | None:
    """The provider's refusal of a structured request (OpenAI's `message.refusal`) in a reply's message, or None."""
    refusal = field_of(message, "refusal")
    if not refusal:
        extra = field_of(message, "provider_specific_fields")  # where litellm keeps it for OpenAI models
        refusal = extra.get("refusal") if isinstance(extra, dict) else None
    return str(refusal) if refusal else None


@lru_cache(maxsize=64)  # the answer itself, not a tuple to make one from: asked at every `auto` call
def _structure_support(litellm: Any, model: str) -> Support:
    try:
        litellm.get_model_info(model)  # raises for a model litellm has no data on (a local server's own name)
    except Exception:  # noqa: BLE001 - unknown: the prompt alone, as before (structured_output: json_schema asks anyway)
        return Support()
    try:
        schema = bool(litellm.supports_response_schema(model=model))
        json_mode = "response_format" in (litellm.get_supported_openai_params(model=model) or [])
    except Exception:  # noqa: BLE001 - capability data that cannot be read is no capability
        return Support()
    return Support(schema, json_mode)


def live_model(settings: Any, model: str | None = None, api_base: str | None = None, api_key: str | None = None, *,
               trusted: bool = False, owner: str = "the contract") -> LiveModel:
    """A live model from a contract's `llm:` block, with the caller's overrides (the command line's, which the user gave).

    Where a key goes is treated as code: a key read from a variable other than the provider's usual one, or sent to
    an `api_base` of the file's that is neither loopback nor a server the user named, needs a trusted folder; the
    refusal comes before any request, so an untrusted file never sends a key.
    """
    model_name = model or getattr(settings, "model", None)
    if not model_name:
        raise ModelError("no model: the file's llm: block has no model; pass --model (or model=...)")
    key = api_key
    env = getattr(settings, "api_key_env", None)
    if not trusted:
        file_base = None if api_base else getattr(settings, "api_base", None)
        given = user_api_bases() if file_base and not is_loopback(file_base) else ()  # the config read only when asked
        routes = untrusted_key_routes(model_name, file_base, None if api_key else env, given=given)
        if routes:
            from contractstudio.runtime.errors import UntrustedKeyRoute

            raise UntrustedKeyRoute(
                f"{owner}: its llm: block {' and '.join(why for _, why in routes)}; a key goes where a file says only in a "
                "trusted folder (pass --trust, or trust=True to cs.load; or choose the server yourself with --api-base, "
                "or list it under trusted_api_bases in your config.yaml)")
    if key is None and env:
        key = os.environ.get(env)
        if not key:
            raise ModelError(f"llm.api_key_env names {env}, but that environment variable is not set")
    params: dict[str, Any] = dict(getattr(settings, "provider_params", None) or {})
    return LiveModel(model=model_name, api_base=api_base or getattr(settings, "api_base", None), api_key=key,
                     timeout_s=float(getattr(settings, "timeout_s", 30) or 30), params=params)
