"""Asking the model: one LLM call with its transport retries, as events (a request the debugger may edit, the reply)."""

from __future__ import annotations

import time
from collections.abc import Callable, Generator
from typing import Any

from contractstudio.runtime.call_state import CallState
from contractstudio.runtime.errors import ModelError, SchemaUnwritable
from contractstudio.runtime.events import (
    EarlyStop,
    Event,
    ModelFailure,
    ModelReply,
    ModelRequest,
    ReplayDivergence,
    RetryWait,
    Row,
    StructureFallback,
    TransportFailure,
)
from contractstudio.runtime.messages import clip
from contractstudio.runtime.models import LLMReply, LLMRequest, TransportFault
from contractstudio.runtime.streaming import ReplyStream
from contractstudio.runtime.structured import (
    Structure,
    answered,
    fall_back,
    fallback_reason,
    next_shape,
    structure_for,
)
from contractstudio.runtime.trace import redact

Events = Generator["Row | Event | ModelCall | Pause", Any, Any]  # events for the caller; calls and waits for the driver

# A reply's text in the trace keeps this many characters: every real reply whole (replay needs it), a runaway
# reply of megabytes cut with a marker; `text_chars` keeps its real length.
TRACE_TEXT_LIMIT = 200_000


class ModelCall:
    """What the engine asks its driver to do, not an event: get this request's reply from the model.

    The driver sends the reply back into the engine, or throws what the model raised; the session does it with
    `model.complete`, an async driver (eval's local engine) awaits `model.acomplete`. So the engine's code is the
    same however the call is made, and a session never pauses at one (the caller only sees events).
    """

    __slots__ = ("model", "request", "stream")

    def __init__(self, model: Any, request: LLMRequest, stream: ReplyStream | None = None) -> None:
        self.model = model
        self.request = request
        self.stream = stream  # ask the model to stream its reply into this (model.stream / astream), else complete


class Pause:
    """What the engine asks its driver to do, not an event: wait `seconds` (a remedy's or a transport retry's wait)."""

    __slots__ = ("seconds",)

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds


async def pause(sleep: Callable[[float], None], seconds: float) -> None:
    """Wait on an event loop: `asyncio.sleep`, unless `sleep` is not time.sleep (a test recording the waits)."""
    if sleep is time.sleep:
        import asyncio

        await asyncio.sleep(seconds)
    else:
        sleep(seconds)


def edited(sent: Any, key: str) -> Any:
    """What the caller sent back in place of `key` (an edited reply, messages or errors), or None."""
    return sent.get(key) if isinstance(sent, dict) else None


def kept_whole(text: str) -> bool:
    """Whether the trace keeps a reply of this text whole (else cut, and its parsed output not stored twice)."""
    return len(text) <= TRACE_TEXT_LIMIT


def kept_text(text: str) -> tuple[str, int | None, bool]:
    """A reply's (text, text_chars, truncated) as the trace keeps them: whole, or cut at TRACE_TEXT_LIMIT with its
    real length."""
    if len(text) <= TRACE_TEXT_LIMIT:  # kept_whole, without a second call per reply
        return text, None, False
    return clip(text, TRACE_TEXT_LIMIT), len(text), True


def ask(st: CallState, stage: str, messages: list[dict[str, str]], purpose: str, attempt: int,
         errors: list[str] | None = None, *, of_output: bool = False) -> Events:
    """One LLM call with transport retries; returns the reply, or None when the call failed for good.

    A remedy request also records the `errors` it tells the model, as they were sent. A request for the output
    (`of_output`) is streamed when its clauses can be decided on a prefix, and cut at the first one broken (the
    reply's `stopped`).
    """
    model = st.model
    own_params = model.request_params() if hasattr(model, "request_params") else {"model": model.name}
    told = None if errors is None else list(errors)
    retry = 0
    try:
        structure = structure_for(st, purpose)
    except SchemaUnwritable as err:  # the output type's schema cannot be written here: the call fails, saying why
        row = st.emit(ModelFailure, stage, str(err))
        if st.watched:
            yield row
        st.fail([f"structured output: {err}"])
        return None
    if purpose == "generate" and attempt == 0 and (why := structure.unsent):  # said once, at the call's first request
        made: Event = st.emit_event(StructureFallback(stage=stage, from_mode="json_schema", to_mode=structure.mode, reason=why))
        if st.watched:
            yield made
    while True:
        st.asked = structure
        params = _with_structure(own_params, structure)
        shown_mode = structure.mode if structure.mode != "off" or (st.structure_fell_back and purpose != "remedy_pre") else None
        # (attempt, purpose, model, messages, params, transport_retry, errors, edited, structured_output, structure_shape)
        request = st.emit(ModelRequest, stage, attempt, purpose, model.name, messages, params, retry, told, False, shown_mode,
                          redact(structure.note) if structure.note else None)
        sent = (yield request) if st.watched else None
        if sent is not None:  # an edit (only a stepping session sends one)
            edited_messages = edited(sent, "messages")
            if edited_messages is not None:
                messages = list(edited_messages)
                shown = st.trace.event_of(request)  # built: the session that sent the edit stepped to it
                assert isinstance(shown, ModelRequest)
                shown.messages = messages  # the trace keeps what was really sent
                shown.edited = True
            edited_reply = edited(sent, "reply")
            if edited_reply is not None:
                reply = LLMReply(text=str(edited_reply))
                st.llm_calls += 1
                st.llm["calls"] += 1  # counted like any reply (a recorded trace counts its llm_response too)
                row = st.emit(ModelReply, stage, attempt, *kept_text(reply.text), 0, 0, 0.0, 0.0, True)
                if st.watched:
                    yield row
                return reply
        stream = _stream_for(st, structure.mode if of_output else None)
        started = st.clock()
        try:
            reply = yield ModelCall(model, LLMRequest(messages, params, purpose, attempt), stream)
        except TransportFault as fault:
            shaped = next_shape(st, structure, status=fault.status, message=str(fault))
            if shaped is not None:  # the server refused this shape of the schema: the next one, in one request
                made = st.emit_event(StructureFallback(stage=stage, from_mode=structure.mode, to_mode=shaped.mode,
                                                       reason=redact(shaped.note or ""), to_shape=shaped.shape))
                if st.watched:
                    yield made
                structure = shaped
                continue
            why = None if st.structure_fell_back else fallback_reason(structure, status=fault.status, message=str(fault),
                                                                      refused=False)
            if why is not None:
                structure = yield from _fall_back(st, stage, structure, why)
                continue
            retry += 1
            too_long = st.options.transport.too_long(fault.retry_after) if fault.retryable else None
            tries = st.options.transport.tries if fault.most_retries is None else min(fault.most_retries, st.options.transport.tries)
            gives_up = not fault.retryable or retry > tries or too_long is not None
            made = st.emit_event(TransportFailure(stage=stage, exception=fault.exc_class, kind=fault.kind, status=fault.status,
                                                  message=str(fault), retry=retry, retryable=fault.retryable, gave_up=gives_up))
            if st.watched:
                yield made
            if gives_up:
                why = (f"{too_long}: not retried" if too_long else "not retried" if not fault.retryable
                       else f"after {retry - 1} retr{'y' if retry == 2 else 'ies'}")
                st.fail([redact(f"transport: {fault.exc_class}" + (f" (HTTP {fault.status})" if fault.status else "")
                                + f": {fault} ({why})")])
                return None
            st.llm["transport_retries"] += 1
            seconds = 0.0 if retry <= fault.at_once else st.options.transport.wait(retry, fault.retry_after)
            row = st.emit(RetryWait, stage, "transport", retry, None, seconds, st.options.wait)
            if st.watched:
                yield row
            if st.options.wait and seconds > 0:
                yield Pause(seconds)
                st.llm["waited_s"] += seconds
            continue
        except ModelError as err:
            row = st.emit(ModelFailure, stage, str(err))
            if st.watched:
                yield row
            st.fail([f"model: {err}"])
            return None
        latency = st.clock() - started
        st.llm_calls += 1
        llm = st.llm
        llm["calls"] += 1
        llm["prompt_tokens"] += reply.prompt_tokens
        llm["completion_tokens"] += reply.completion_tokens
        llm["cost_usd"] += reply.cost_usd
        llm["latency_s"] += latency
        if reply.note:
            row = st.emit(ReplayDivergence, stage, reply.note)
            if st.watched:
                yield row
        chunk_ends = chunk_s = None
        if stream is not None and stream.ends:
            chunk_ends, chunk_s = stream.ends, [round(t, 6) for t in stream.times]
            llm["first_token_s"] += chunk_s[0]
            llm["streamed"] += 1
        # (attempt, text, text_chars, truncated, prompt_tokens, completion_tokens, cost_usd, latency_s, edited,
        #  chunk_ends, chunk_s, model_version, system_fingerprint, finish_reason)
        row = st.emit(ModelReply, stage, attempt, *kept_text(reply.text), reply.prompt_tokens, reply.completion_tokens,
                      reply.cost_usd, latency, False, chunk_ends, chunk_s, reply.model_version, reply.system_fingerprint,
                      reply.finish_reason)
        if st.watched:
            yield row
        if stream is not None and stream.stopped is not None:
            reply.stopped = stopped = stream.stopped
            llm["early_stops"] += 1
            made = st.emit_event(EarlyStop(stage=stage, attempt=attempt, clause=str(stopped.clause), message=str(stopped.message),
                                           position=int(stopped.position), chars=len(reply.text), tokens=reply.completion_tokens,
                                           seconds=round(stream.times[-1], 6), saved_tokens=stream.rest_tokens,
                                           saved_s=stream.rest_s))
            if st.watched:
                yield made
        if not reply.refusal:
            if structure.shape is not None:  # a shape the server took (only an OpenAI-compatible server is asked in one)
                answered(st, structure)
            return reply
        why = None if st.structure_fell_back else fallback_reason(structure, status=None, message=reply.refusal,
                                                                  refused=True)
        if why is not None:
            structure = yield from _fall_back(st, stage, structure, why)
            continue
        return reply


def _stream_for(st: CallState, mode: str | None) -> ReplyStream | None:
    """The stream a request's reply comes in, or None (a whole reply): only a model that streams, and only when
    something watches the chunks: the output's clauses decided on a prefix (`mode`: the structure asked for, when
    the request is for the output), or a listener (the debugger showing the reply grow)."""
    options = st.options
    if options.on_chunk is None and (mode is None or options.watch_for is None):
        return None  # nothing watches: the model is not asked (a live model looks its provider's profile up)
    model = st.model
    if not getattr(model, "streams", False):
        return None
    streams_in = getattr(model, "streams_in", None)
    if mode is not None and streams_in is not None and not streams_in(mode):
        return None
    watch = options.watch_for(st.plan, mode) if mode is not None and options.watch_for is not None else None
    if watch is None and options.on_chunk is None:
        return None
    return ReplyStream(watch, options.on_chunk, st.clock)


def _with_structure(params: dict[str, Any], structure: Structure) -> dict[str, Any]:
    """The request's parameters with the structure's `response_format` (a `response_format` the author wrote wins)."""
    if structure.response_format is None or "response_format" in params:
        return params
    return {**params, "response_format": structure.response_format}


def _fall_back(st: CallState, stage: str, structure: Structure, why: str) -> Events:
    """Leave the structure the provider refused for the next mode, once per call, in the trace; the new structure."""
    st.structure_fell_back = True
    after = fall_back(st, structure)
    made = st.emit_event(StructureFallback(stage=stage, from_mode=structure.mode, to_mode=after.mode, reason=redact(why)))
    if st.watched:
        yield made
    return after
