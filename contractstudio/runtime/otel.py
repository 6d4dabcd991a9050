"""OpenTelemetry spans of every contracted call, derived from its finished trace: one observer, never in the engine.

The engine emits one event stream (runtime/events.py); `Trace.to_dicts()` is that stream redacted, the same lines a
trace file holds. When a call ends (runtime/session.py) or a pipeline run ends (runtime/pipeline_runner.py) and
exporting is on, this module turns those lines into spans after the fact, each at the time its events say:

    contract NAME            the call: contractstudio.contract, .outcome, .attempts, .remedies, .fallback, ...
      stage STAGE            one per stage (per attempt), its failed conditions as span events
        chat MODEL           one per model request, GenAI semantic conventions (gen_ai.*), SpanKind CLIENT

Exporting is on when the standard variables say so (OTEL_EXPORTER_OTLP_ENDPOINT / ..._TRACES_ENDPOINT, not
OTEL_SDK_DISABLED, not OTEL_TRACES_EXPORTER=none), when `--otlp URL` called `configure`, or when the application
installed a tracer provider of its own (a library user's Phoenix or Logfire set-up). Otherwise nothing here imports
opentelemetry and a call pays one check. Prompts, replies, the input and the whole trace (what `contractstudio
import-spans` reads back) go out only when OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT is true, redacted as a
trace file is (they are the trace's own lines).
"""

from __future__ import annotations

import json
import os
import sys
import threading
import time
from collections.abc import Iterable, Mapping
from typing import Any

ENDPOINT_VARIABLES = ("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_ENDPOINT")
CONTENT_VARIABLE = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"
PREFIX = "contractstudio."
TRACE_ATTRIBUTE = "contractstudio.trace"  # the call's trace as JSON Lines (content capture only): what import reads
SCOPE = "contractstudio"

_provider: Any = None  # the TracerProvider spans go to (ours, made lazily, or one handed to `configure`)
_configured: bool | None = None  # None: the environment not read yet
_making = threading.Lock()  # the provider is made once, whichever thread's call ends first (a Ray actor runs rows on several)


def _env_on() -> bool:
    env = os.environ
    if env.get("OTEL_SDK_DISABLED", "").strip().lower() == "true":
        return False
    if env.get("OTEL_TRACES_EXPORTER", "").strip().lower() == "none":
        return False
    return any(env.get(name, "").strip() for name in ENDPOINT_VARIABLES)


def configure(endpoint: str | None = None, *, provider: Any = None) -> None:
    """Export to an OTLP/HTTP endpoint (`--otlp URL`: set as OTEL_EXPORTER_OTLP_ENDPOINT, so eval's worker processes
    and Ray's workers export too), or to a TracerProvider made by the caller (the tests' in-memory exporter)."""
    global _provider, _configured
    if endpoint is not None:
        os.environ["OTEL_EXPORTER_OTLP_ENDPOINT"] = endpoint
    _provider = provider
    _configured = True if provider is not None else None


def reset() -> None:
    """Forget the configuration (read the environment again at the next call)."""
    global _provider, _configured
    _provider, _configured = None, None


def active() -> bool:
    """Whether a finished call becomes spans: the cheap check every call makes (no import when off)."""
    global _configured
    if _configured is None:
        _configured = _env_on()
    if _configured:
        return True
    api = sys.modules.get("opentelemetry.trace")  # the application's own tracer provider, if it imported the API
    return api is not None and type(api.get_tracer_provider()).__name__ not in ("ProxyTracerProvider", "NoOpTracerProvider")


def flush(timeout_ms: int = 30_000) -> bool:
    """Send every span made so far (a short-lived process's last call); True when the provider had nothing left."""
    if _provider is None:
        return True
    return bool(_provider.force_flush(timeout_ms))


def capture_content() -> bool:
    return os.environ.get(CONTENT_VARIABLE, "").strip().lower() in ("true", "1", "yes")


def _tracer() -> Any:
    global _provider
    from opentelemetry import trace as api

    if _provider is None and _configured:
        with _making:  # two threads making one each: the spans of the one replaced would never be flushed
            if _provider is None:
                from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
                from opentelemetry.sdk.resources import Resource
                from opentelemetry.sdk.trace import TracerProvider
                from opentelemetry.sdk.trace.export import BatchSpanProcessor

                resource = Resource.create({"service.name": os.environ.get("OTEL_SERVICE_NAME") or "contractstudio"})
                made = TracerProvider(resource=resource)
                made.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))  # reads OTEL_EXPORTER_OTLP_* itself
                _provider = made
    provider = _provider if _provider is not None else api.get_tracer_provider()
    cached = _TRACERS.get(id(provider))
    if cached is None or cached[0] is not provider:
        from contractstudio import __version__

        cached = _TRACERS[id(provider)] = (provider, provider.get_tracer(SCOPE, __version__))
    return cached[1]


_TRACERS: dict[int, tuple[Any, Any]] = {}  # each provider's tracer, made once


def export_call(lines: list[dict[str, Any]], duration_s: float, end_ns: int | None = None) -> None:
    """The spans of one finished call from its trace lines (`Trace.to_dicts()`); never raises into the caller."""
    try:
        _export_call(lines, duration_s, time.time_ns() if end_ns is None else end_ns)
    except Exception as err:  # noqa: BLE001 - telemetry must never fail the call it describes
        _warn(err)


def export_pipeline(name: str, events: list[dict[str, Any]], duration_s: float, state: Any = None,
                    replies: list[Any] | None = None, error: str | None = None) -> None:
    """The spans of one pipeline run: the run, and a span per step (its route, or its error); with content capture,
    its first state and its model calls' replies too (a dataset row of it)."""
    try:
        _export_pipeline(name, events, duration_s, time.time_ns(), error, state, replies or [])
    except Exception as err:  # noqa: BLE001 - as above
        _warn(err)


def _warn(err: Exception) -> None:
    from contractstudio.safe_text import redact_text

    print(redact_text(f"contractstudio: spans not exported: {type(err).__name__}: {err}"), file=sys.stderr)


# ------------------------------------------------------------------ attributes


def _attributes(data: Mapping[str, Any], keys: Iterable[str], prefix: str = PREFIX) -> dict[str, Any]:
    """Scalar values of `data` as span attributes (`prefix + key`); None, nested values and the rest left out."""
    out: dict[str, Any] = {}
    for key in keys:
        value = data.get(key)
        if isinstance(value, (bool, int, float, str)):
            out[prefix + key] = value
    return out


_PARAMS = {"temperature": "gen_ai.request.temperature", "max_tokens": "gen_ai.request.max_tokens",
           "top_p": "gen_ai.request.top_p", "seed": "gen_ai.request.seed", "stop": "gen_ai.request.stop_sequences",
           "frequency_penalty": "gen_ai.request.frequency_penalty", "presence_penalty": "gen_ai.request.presence_penalty"}


def _model_attributes(request: Mapping[str, Any]) -> dict[str, Any]:
    from contractstudio.providers import provider_of

    model = str(request.get("model") or "")
    out: dict[str, Any] = {"gen_ai.operation.name": "chat", "gen_ai.request.model": model}
    if provider := provider_of(model):
        out["gen_ai.provider.name"] = provider
    params = request.get("params") or {}
    for key, name in _PARAMS.items():
        value = params.get(key) if isinstance(params, dict) else None
        if isinstance(value, (bool, int, float, str)):
            out[name] = value
        elif isinstance(value, list) and all(isinstance(v, str) for v in value):
            out[name] = value
    if request.get("structured_output") not in (None, "off"):
        out["gen_ai.output.type"] = "json"
    out.update(_attributes(request, ("attempt", "purpose", "structured_output", "structure_shape", "edited",
                                     "transport_retry")))
    return out


def _reply_attributes(reply: Mapping[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {"gen_ai.usage.input_tokens": int(reply.get("prompt_tokens") or 0),
           "gen_ai.usage.output_tokens": int(reply.get("completion_tokens") or 0)}
    finish = reply.get("finish_reason")  # recorded by a model that reports it
    if isinstance(finish, str):
        out["gen_ai.response.finish_reasons"] = [finish]
    out.update(_attributes(reply, ("cost_usd", "latency_s", "truncated", "text_chars", "edited")))
    return out


def _messages_in(messages: Any) -> str:
    """gen_ai.input.messages: the request's messages in the conventions' parts shape, as JSON text."""
    shaped = [{"role": m.get("role"), "parts": [{"type": "text", "content": m.get("content")}]}
              for m in messages or () if isinstance(m, dict)]
    return json.dumps(shaped, ensure_ascii=False)


def _messages_out(text: Any, finish: Any = None) -> str:
    message: dict[str, Any] = {"role": "assistant", "parts": [{"type": "text", "content": text}]}
    if isinstance(finish, str):
        message["finish_reason"] = finish
    return json.dumps([message], ensure_ascii=False)


# ------------------------------------------------------------------ spans of a call

# Events of these types become span events (their scalar data as attributes) on the span open when they happened;
# a type this module does not know (a later version's, such as early stopping) does too, under its own name.
_QUIET = frozenset({"stage_start", "stage_end", "llm_request", "llm_response", "parsed", "act_value", "result"})
_AFTER_REPLY = frozenset({"early_stop", "replay_divergence"})  # events of the request whose reply just came


def _export_call(lines: list[dict[str, Any]], duration_s: float, end_ns: int) -> None:
    from opentelemetry.trace import SpanKind, Status, StatusCode, set_span_in_context

    if not lines:
        return
    tracer = _tracer()
    content = capture_content()
    start_ns = end_ns - int(max(duration_s, 0.0) * 1e9)
    at = lambda d: start_ns + int(float(d.get("t") or 0.0) * 1e9)  # noqa: E731 - an event's wall time
    first = lines[0]
    contract = str(first.get("contract") or "call")
    result: dict[str, Any] = next((d for d in reversed(lines) if d.get("type") == "result"), {})
    forward: dict[str, Any] = next((d for d in reversed(lines) if d.get("type") == "forward"), {})
    requests = [d for d in lines if d.get("type") == "llm_request"]
    fallback = forward.get("used") == "fallback"
    successful = bool(result.get("successful"))
    attrs: dict[str, Any] = {
        "contractstudio.contract": contract, "contractstudio.outcome": _outcome(successful, fallback, result),
        "contractstudio.attempts": int(result.get("remedy_attempts") or 0),
        "contractstudio.remedies": sum(1 for d in requests if str(d.get("purpose", "")).startswith("remedy")
                                       and not d.get("transport_retry")),
        "contractstudio.fallback": fallback, "contractstudio.llm_calls": int(result.get("llm_calls") or 0)}
    if isinstance(first.get("model"), str):
        attrs["gen_ai.request.model"] = first["model"]
    modes = sorted({str(d["structured_output"]) for d in requests if d.get("structured_output")})
    if modes:
        attrs["contractstudio.structured_output"] = modes
    if forward.get("used"):
        attrs["contractstudio.forward"] = str(forward["used"])
    if result.get("errors") and not successful:  # a remedied call's errors are its stages' events
        attrs["contractstudio.errors"] = [str(e) for e in result["errors"]]
    if content:
        attrs["contractstudio.input"] = json.dumps(first.get("value"), ensure_ascii=False)
        attrs["contractstudio.output"] = json.dumps(result.get("output"), ensure_ascii=False)
        attrs[TRACE_ATTRIBUTE] = "".join(json.dumps(d, ensure_ascii=False) + "\n" for d in lines)
    call = tracer.start_span(f"contract {contract}", start_time=start_ns, attributes=attrs)
    if not successful:
        call.set_status(Status(StatusCode.ERROR, "; ".join(attrs.get("contractstudio.errors", ()))[:500] or "failed"))
    call_context = set_span_in_context(call)
    stage: Any = None
    stage_context = call_context
    model: Any = None
    replied: int | None = None  # the model span's end once its reply came (an early stop after it still belongs to it)
    for d in lines:
        kind = d.get("type")
        if replied is not None and kind not in _AFTER_REPLY:
            model.end(end_time=replied)
            model = replied = None
        if kind == "stage_start":
            stage = tracer.start_span(f"stage {d.get('stage')}", context=call_context, start_time=at(d),
                                      attributes={"contractstudio.stage": str(d.get("stage")),
                                                  **_attributes(d, ("attempt",))})
            stage_context = set_span_in_context(stage)
        elif kind == "stage_end" and stage is not None:
            stage.set_attribute("contractstudio.ok", bool(d.get("ok")))
            if not d.get("ok"):
                stage.set_status(Status(StatusCode.ERROR))
            stage.end(end_time=at(d))
            stage, stage_context = None, call_context
        elif kind == "llm_request":
            if model is not None:
                model.end(end_time=at(d))
            model_attrs = _model_attributes(d)
            if content:
                model_attrs["gen_ai.input.messages"] = _messages_in(d.get("messages"))
            model = tracer.start_span(f"chat {d.get('model') or ''}".strip(), context=stage_context,
                                      kind=SpanKind.CLIENT, start_time=at(d), attributes=model_attrs)
        elif kind == "llm_response" and model is not None:
            model.set_attributes(_reply_attributes(d))
            if content:
                model.set_attribute("gen_ai.output.messages", _messages_out(d.get("text"), d.get("finish_reason")))
            replied = at(d)
        elif kind in ("transport_error", "model_error") and model is not None:
            model.set_status(Status(StatusCode.ERROR, str(d.get("message") or "")[:500]))
            model.set_attribute("error.type", str(d.get("kind") or d.get("exception") or kind))
            model.add_event(f"contractstudio.{kind}", _attributes(d, ("kind", "status", "message", "retry", "gave_up")),
                            timestamp=at(d))
            if kind == "model_error" or d.get("gave_up") or not d.get("retryable"):
                model.end(end_time=at(d))
                model = None
        elif kind == "condition":
            if d.get("applies", True) and not d.get("passed", True):
                name = f"{d.get('stage')}.{d['id']}" if d.get("id") else f"{d.get('stage')}[{d.get('index', 0)}]"
                (stage or call).add_event("contractstudio.condition_failed", {
                    "contractstudio.condition": name, **_attributes(d, ("id", "expression", "message", "raised_at"))},
                    timestamp=at(d))
        elif kind == "validation_error":
            (stage or call).add_event("contractstudio.validation_error", {
                "contractstudio.where": str(d.get("where")), "contractstudio.errors": [str(e) for e in d.get("errors") or ()],
                **_attributes(d, ("attempt",))}, timestamp=at(d))
        elif kind not in _QUIET:
            keys = [k for k in d if k not in ("seq", "t", "stage", "type")]
            (model or stage or call).add_event(f"contractstudio.{kind}", _attributes(d, keys), timestamp=at(d))
            if kind == "early_stop" and model is not None:
                model.set_attribute("contractstudio.early_stop", True)
    if model is not None:
        model.end(end_time=replied if replied is not None else end_ns)
    if stage is not None:
        stage.end(end_time=end_ns)
    call.end(end_time=end_ns)


def _outcome(successful: bool, fallback: bool, result: Mapping[str, Any]) -> str:
    if fallback:
        return "fallback"
    if successful:
        return "success"
    return "raised" if result.get("raised") else "failure"


# ------------------------------------------------------------------ spans of a pipeline run


def _export_pipeline(name: str, events: list[dict[str, Any]], duration_s: float, end_ns: int, error: str | None,
                     state: Any, replies: list[Any]) -> None:
    from opentelemetry.trace import Status, StatusCode, set_span_in_context

    from contractstudio.runtime.trace import Trace, redacted_json

    tracer = _tracer()
    lines = Trace.from_dicts(events).to_dicts()  # redacted as a trace file is
    start_ns = end_ns - int(max(duration_s, 0.0) * 1e9)
    at = lambda d: start_ns + int(float(d.get("t") or 0.0) * 1e9)  # noqa: E731
    steps = [d.get("step") for d in lines if d.get("type") == "step_start"]
    attrs: dict[str, Any] = {"contractstudio.pipeline": name, "contractstudio.steps": len(steps),
                             "contractstudio.outcome": "failure" if error else "success"}
    if capture_content():
        attrs["contractstudio.input"] = json.dumps(redacted_json(state), ensure_ascii=False)
        attrs["contractstudio.replies"] = json.dumps(redacted_json(replies), ensure_ascii=False)
        attrs[TRACE_ATTRIBUTE] = "".join(json.dumps(d, ensure_ascii=False) + "\n" for d in lines)
    run = tracer.start_span(f"pipeline {name}", start_time=start_ns, attributes=attrs)
    if error:
        from contractstudio.safe_text import redact_text

        run.set_status(Status(StatusCode.ERROR, redact_text(error)[:500]))
    context = set_span_in_context(run)
    step: Any = None
    for d in lines:
        kind = d.get("type")
        if kind == "step_start":
            step = tracer.start_span(f"step {d.get('step')}", context=context, start_time=at(d),
                                     attributes=_attributes(d, ("step", "action")))
        elif kind == "step_end" and step is not None:
            step.set_attributes(_attributes(d, ("ok", "route", "next", "error")))
            if not d.get("ok", True):
                step.set_status(Status(StatusCode.ERROR, str(d.get("error") or "")[:500]))
            step.end(end_time=at(d))
            step = None
        elif kind == "step_skipped" and step is not None:
            step.add_event("contractstudio.step_skipped", _attributes(d, ("reason",)), timestamp=at(d))
    if step is not None:
        step.end(end_time=end_ns)
    run.end(end_time=end_ns)
