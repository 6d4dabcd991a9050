"""Calls read back from exported spans: our contracted calls as traces, other applications' GenAI calls as replies.

Two export formats are read, both through the one bounded reader (reading/data_files.py) and both treated as
hostile (a wrong shape is an `ExportError` naming `file:line:column`, never a traceback):

- OTLP JSON: an `ExportTraceServiceRequest` (`{"resourceSpans": [...]}`), one per file or one per line (the
  OpenTelemetry Collector's file exporter writes JSON Lines); attribute values as OTLP's `AnyValue`s.
- Arize Phoenix's span export: the `{"data": [...]}` its REST API (`GET /v1/projects/NAME/spans`) answers, or a list
  of those spans; attributes as plain JSON, flat (`gen_ai.request.model`) or nested.

A span of ours (runtime/otel.py) that carries `contractstudio.trace` (exported with content capture on) becomes the
call's trace, line for line, so it replays offline (`replay:TRACE`), opens in the debugger and turns into a dataset
row. A GenAI span of another application (`gen_ai.operation.name`, or the OpenInference `llm.*` attributes Phoenix's
instrumentations write) becomes a `ForeignCall`: its messages and the reply, to check against a contract the user
names (runtime/span_checks.py).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from contractstudio.reading.data_files import DataFile, UnreadableData, read_data_text, read_text_file
from contractstudio.runtime.otel import TRACE_ATTRIBUTE
from contractstudio.runtime.trace import Trace

MAX_EXPORT_BYTES = 64 * 1024 * 1024  # a span export larger than this is read in parts (one file per part)


class ExportError(ValueError):
    """An export that cannot be read: `str(err)` names the file and, where known, the line and column."""


@dataclass(slots=True)
class ExportedSpan:
    """One span as an export holds it: ids, name, times, attributes (flat, dotted keys), and where it is."""

    name: str
    trace_id: str
    span_id: str
    parent_id: str
    start_ns: int
    attributes: dict[str, Any]
    where: str
    status: str = ""  # OK, ERROR or "" (unset)
    events: list[dict[str, Any]] = field(default_factory=list)


@dataclass(slots=True)
class ImportedCall:
    """A contracted call found in an export: its contract, outcome and (content captured) its trace."""

    span: ExportedSpan
    contract: str
    outcome: str
    trace: Trace | None
    problem: str | None = None  # why there is no trace
    kind: str = "contract"  # or "pipeline" (its trace is the run's step events)

    @property
    def failed(self) -> bool:
        return self.outcome != "success"

    def file_name(self) -> str:
        """The trace's file name: the contract, the outcome and the span id (unique within an export)."""
        return f"{_safe(self.contract, 60) or 'call'}.{_safe(self.outcome, 20)}.{_safe(self.span.span_id, 16) or 'span'}.trace.jsonl"


def _safe(text: str, limit: int) -> str:
    """A piece of a file name from an export's text (hostile: a name may hold `/`, `..` or controls)."""
    return "".join(c if c.isascii() and (c.isalnum() or c in "-_") else "_" for c in text)[:limit]


def _hex_id(value: Any) -> str:
    """A trace or span id as hex: OTLP JSON writes hex, protobuf's own JSON mapping base64; anything else as given."""
    text = str(value or "")
    if not text or all(c in "0123456789abcdefABCDEF" for c in text):
        return text.lower()
    import base64
    import binascii

    try:
        return base64.b64decode(text, validate=True).hex()
    except (binascii.Error, ValueError):
        return text


@dataclass(slots=True)
class ForeignCall:
    """A GenAI call made without ContractStudio: its model, the messages sent, and what the model replied."""

    span: ExportedSpan
    model: str
    messages: list[dict[str, Any]]
    reply: str | None


# ------------------------------------------------------------------ reading


def read_export(path: Path) -> list[ExportedSpan]:
    """Every span of an OTLP JSON or Phoenix export, in file order; ExportError says where a file is wrong."""
    try:
        text = read_text_file(path, MAX_EXPORT_BYTES)
        documents = _documents(text, str(path))
    except UnreadableData as err:
        raise ExportError(str(err)) from None
    spans: list[ExportedSpan] = []
    for doc in documents:
        spans.extend(_spans_of(doc))
    return spans


def _documents(text: str, name: str) -> list[DataFile]:
    """The whole text as one JSON value, or (JSON Lines: the Collector's file exporter) one value per line."""
    lines = [(n, line) for n, line in enumerate(text.splitlines(), 1) if line.strip()]
    if len(lines) > 1 and lines[0][1].lstrip().startswith("{") and lines[0][1].rstrip().endswith("}"):
        try:
            json.loads(lines[0][1])
        except ValueError:
            pass
        else:
            return [_shifted(read_data_text(line, name), n) for n, line in lines]
    return [read_data_text(text, name)]


def _shifted(doc: DataFile, line: int) -> DataFile:
    """A line's value, its positions named in the file's lines."""
    return _LineFile(doc.name, doc.data, doc.root, line)


@dataclass(frozen=True, slots=True)
class _LineFile(DataFile):
    line: int = 1

    def where(self, loc: tuple[Any, ...]) -> str:
        inner = DataFile.where(self, loc)
        parts = inner.rsplit(":", 2)
        if len(parts) == 3 and parts[1].isdigit():
            return f"{parts[0]}:{self.line + int(parts[1]) - 1}:{parts[2]}"
        return f"{self.name}:{self.line}"


def _spans_of(doc: DataFile) -> Iterator[ExportedSpan]:
    data = doc.data
    if isinstance(data, dict) and "resourceSpans" in data:
        yield from _otlp_spans(doc)
    elif isinstance(data, dict) and "data" in data or isinstance(data, list):
        yield from _phoenix_spans(doc)
    else:
        raise ExportError(f"{doc.where(())}: not a span export: expected an OTLP JSON object with \"resourceSpans\", "
                          "or Phoenix's spans (a \"data\" list)")


def _expect(doc: DataFile, value: Any, kind: type, loc: tuple[Any, ...], what: str) -> Any:
    if not isinstance(value, kind) or isinstance(value, bool) and kind is not bool:
        wanted = {list: "a list", dict: "an object", str: "a string", int: "an integer"}.get(kind, kind.__name__)
        raise ExportError(f"{doc.where(loc)}: {what} must be {wanted}, not {_kind(value)}")
    return value


def _kind(value: Any) -> str:
    return {dict: "an object", list: "a list", str: "a string", bool: "a boolean", type(None): "null"}.get(
        type(value), "a number")


def _otlp_spans(doc: DataFile) -> Iterator[ExportedSpan]:
    resources = _expect(doc, doc.data["resourceSpans"], list, ("resourceSpans",), "resourceSpans")
    for r, resource in enumerate(resources):
        at: tuple[Any, ...] = ("resourceSpans", r)
        resource = _expect(doc, resource, dict, at, "a resourceSpans entry")
        scopes = _expect(doc, resource.get("scopeSpans", []), list, (*at, "scopeSpans"), "scopeSpans")
        for s, scope in enumerate(scopes):
            scope = _expect(doc, scope, dict, (*at, "scopeSpans", s), "a scopeSpans entry")
            spans = _expect(doc, scope.get("spans", []), list, (*at, "scopeSpans", s, "spans"), "spans")
            for i, span in enumerate(spans):
                loc = (*at, "scopeSpans", s, "spans", i)
                yield _otlp_span(doc, _expect(doc, span, dict, loc, "a span"), loc)


def _otlp_span(doc: DataFile, span: dict[str, Any], loc: tuple[Any, ...]) -> ExportedSpan:
    attributes = _otlp_attributes(doc, span.get("attributes", []), (*loc, "attributes"))
    start = span.get("startTimeUnixNano", 0)
    try:
        start_ns = int(start)
    except (TypeError, ValueError):
        raise ExportError(f"{doc.where((*loc, 'startTimeUnixNano'))}: startTimeUnixNano must be an integer") from None
    status = span.get("status") or {}
    code = status.get("code") if isinstance(status, dict) else None
    events = []
    for e, event in enumerate(_expect(doc, span.get("events", []), list, (*loc, "events"), "events")):
        event = _expect(doc, event, dict, (*loc, "events", e), "an event")
        events.append({"name": str(event.get("name", "")),
                       "attributes": _otlp_attributes(doc, event.get("attributes", []), (*loc, "events", e, "attributes"))})
    return ExportedSpan(name=str(span.get("name", "")), trace_id=_hex_id(span.get("traceId")),
                        span_id=_hex_id(span.get("spanId")), parent_id=_hex_id(span.get("parentSpanId")),
                        start_ns=start_ns, attributes=attributes, where=doc.where(loc), events=events,
                        status={2: "ERROR", "STATUS_CODE_ERROR": "ERROR", 1: "OK", "STATUS_CODE_OK": "OK"}.get(code, ""))


def _otlp_attributes(doc: DataFile, items: Any, loc: tuple[Any, ...]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for n, item in enumerate(_expect(doc, items, list, loc, "attributes")):
        item = _expect(doc, item, dict, (*loc, n), "an attribute")
        key = _expect(doc, item.get("key"), str, (*loc, n, "key"), "an attribute's key")
        out[key] = _any_value(doc, item.get("value"), (*loc, n, "value"))
    return out


_DEPTH = 32  # an AnyValue nested deeper than this is refused (the reader bounds nesting too; this bounds our walk)


def _any_value(doc: DataFile, value: Any, loc: tuple[Any, ...], depth: int = 0) -> Any:
    """An OTLP AnyValue as plain data: stringValue, boolValue, intValue (a string in JSON), doubleValue, arrayValue,
    kvlistValue, bytesValue; an empty one is None."""
    if value is None:
        return None
    value = _expect(doc, value, dict, loc, "an attribute's value")
    if depth > _DEPTH:
        raise ExportError(f"{doc.where(loc)}: an attribute's value nests deeper than {_DEPTH}")
    if "stringValue" in value:
        return str(value["stringValue"])
    if "boolValue" in value:
        return bool(value["boolValue"])
    if "intValue" in value:
        try:
            return int(value["intValue"])
        except (TypeError, ValueError):
            raise ExportError(f"{doc.where((*loc, 'intValue'))}: intValue must be an integer") from None
    if "doubleValue" in value:
        number = value["doubleValue"]
        if isinstance(number, (int, float)) and not isinstance(number, bool):
            return float(number)
        raise ExportError(f"{doc.where((*loc, 'doubleValue'))}: doubleValue must be a number")
    if "arrayValue" in value:
        inner = _expect(doc, value["arrayValue"], dict, (*loc, "arrayValue"), "arrayValue")
        items = _expect(doc, inner.get("values", []), list, (*loc, "arrayValue", "values"), "arrayValue.values")
        return [_any_value(doc, v, (*loc, "arrayValue", "values", i), depth + 1) for i, v in enumerate(items)]
    if "kvlistValue" in value:
        inner = _expect(doc, value["kvlistValue"], dict, (*loc, "kvlistValue"), "kvlistValue")
        return _otlp_attributes(doc, inner.get("values", []), (*loc, "kvlistValue", "values"))
    if "bytesValue" in value:
        return str(value["bytesValue"])
    return None


def _phoenix_spans(doc: DataFile) -> Iterator[ExportedSpan]:
    data = doc.data
    loc: tuple[Any, ...] = ("data",) if isinstance(data, dict) else ()
    spans = _expect(doc, data["data"] if isinstance(data, dict) else data, list, loc, "data")
    for i, span in enumerate(spans):
        at = (*loc, i)
        span = _expect(doc, span, dict, at, "a span")
        context = _expect(doc, span.get("context", {}), dict, (*at, "context"), "context")
        attributes = _expect(doc, span.get("attributes", {}), dict, (*at, "attributes"), "attributes")
        events = [{"name": str(e.get("name", "")), "attributes": _flat(e.get("attributes") or {})}
                  for e in span.get("events") or () if isinstance(e, dict)]
        yield ExportedSpan(name=str(span.get("name", "")), trace_id=str(context.get("trace_id", "")),
                           span_id=str(context.get("span_id", "")), parent_id=str(span.get("parent_id") or ""),
                           start_ns=0, attributes=_flat(attributes), where=doc.where(at), events=events,
                           status=str(span.get("status_code") or "").upper().replace("UNSET", ""))


def _flat(value: dict[str, Any], prefix: str = "", depth: int = 0) -> dict[str, Any]:
    """Nested attributes (`{"gen_ai": {"request": {"model": ...}}}`) as dotted keys; flat ones stay as they are."""
    out: dict[str, Any] = {}
    for key, item in value.items():
        name = f"{prefix}{key}"
        if isinstance(item, dict) and depth < _DEPTH:
            out.update(_flat(item, name + ".", depth + 1))
        else:
            out[name] = item
    return out


# ------------------------------------------------------------------ our calls


def contracted_calls(spans: list[ExportedSpan]) -> list[ImportedCall]:
    """Each span of a contracted call (ours: `contractstudio.contract`), with its trace when the export has it."""
    calls = []
    for span in spans:
        contract = span.attributes.get("contractstudio.contract")
        kind = "contract"
        if not isinstance(contract, str):
            contract, kind = span.attributes.get("contractstudio.pipeline"), "pipeline"
            if not isinstance(contract, str):
                continue
        outcome = str(span.attributes.get("contractstudio.outcome") or "unknown")
        text = span.attributes.get(TRACE_ATTRIBUTE)
        if not isinstance(text, str):
            calls.append(ImportedCall(span, contract, outcome, None, f"{span.where}: the call of '{contract}' was exported "
                                      "without its content (OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true "
                                      "exports it)", kind))
            continue
        try:
            trace = Trace.from_dicts(_trace_lines(text, span.where))
        except (TypeError, ValueError, OverflowError) as err:
            calls.append(ImportedCall(span, contract, outcome, None, f"{span.where}: {TRACE_ATTRIBUTE}: {err}", kind))
            continue
        calls.append(ImportedCall(span, contract, outcome, trace, None, kind))
    return calls


def _trace_lines(text: str, where: str) -> Iterator[dict[str, Any]]:
    from contractstudio.reading.replies import strict_json

    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            event = strict_json(line)
        except ValueError as err:
            raise ValueError(f"line {n}: not a JSON line: {err}") from None
        if not isinstance(event, dict):
            raise ValueError(f"line {n}: an event must be a JSON object")
        yield event


def dataset_row(call: ImportedCall) -> dict[str, Any] | None:
    """An eval row of an imported call: its input, and its model's replies as scripted replies (docs/eval.md)."""
    if call.trace is None or not len(call.trace):
        return None
    if call.kind == "pipeline":
        return _pipeline_row(call)
    first = call.trace[0]
    replies = [str(e.get("text", "")) for e in call.trace.of_type("llm_response")]
    return {"id": f"{call.contract}-{_safe(call.span.span_id, 16)}", "input": first.get("value"), "replies": replies,
            "meta": {"outcome": call.outcome, "trace_id": call.span.trace_id}}


def _pipeline_row(call: ImportedCall) -> dict[str, Any] | None:
    """A pipeline run's row: its first state, its model calls' replies, and the routes its custom routers took (a step
    passed more than once is left to its own counting, as eval simulates it)."""
    state, replies = _parsed(call.span.attributes.get("contractstudio.input")), _parsed(call.span.attributes.get(
        "contractstudio.replies"))
    if not isinstance(state, dict) or not isinstance(replies, list):
        return None
    assert call.trace is not None
    ends = [e for e in call.trace if e.type == "step_end"]
    passes: dict[str, int] = {}
    for e in ends:
        passes[str(e.get("step"))] = passes.get(str(e.get("step")), 0) + 1
    routes = {str(e.get("step")): e.get("route") for e in ends if passes[str(e.get("step"))] == 1 and e.get("route")}
    return {"id": f"{call.contract}-{_safe(call.span.span_id, 16)}", "input": state, "replies": [str(r) for r in replies],
            "meta": {"outcome": call.outcome, "trace_id": call.span.trace_id, "routes": routes}}


# ------------------------------------------------------------------ other applications' GenAI calls

_GENAI_OPERATIONS = frozenset({"chat", "text_completion", "generate_content"})


def foreign_calls(spans: list[ExportedSpan]) -> list[ForeignCall]:
    """The model calls of spans not made by ContractStudio: GenAI conventions or OpenInference (Phoenix)."""
    out = []
    for span in spans:
        a = span.attributes
        if any(k.startswith("contractstudio.") for k in a):
            continue
        if a.get("gen_ai.operation.name") in _GENAI_OPERATIONS:
            out.append(ForeignCall(span, str(a.get("gen_ai.request.model") or ""), _genai_messages(a.get("gen_ai.input.messages")),
                                   _genai_reply(a)))
        elif a.get("openinference.span.kind") == "LLM":
            out.append(ForeignCall(span, str(a.get("llm.model_name") or ""), _openinference_messages(a, "llm.input_messages"),
                                   _openinference_reply(a)))
    return out


def _parsed(value: Any) -> Any:
    if isinstance(value, str):
        try:
            return json.loads(value)
        except ValueError:
            return None
    return value


def _text_of(message: dict[str, Any]) -> str:
    parts = message.get("parts")
    if isinstance(parts, list):
        return "".join(str(p.get("content", "")) for p in parts if isinstance(p, dict) and p.get("type", "text") == "text")
    return str(message.get("content") or "")


def _genai_messages(value: Any) -> list[dict[str, Any]]:
    messages = _parsed(value)
    if not isinstance(messages, list):
        return []
    return [{"role": str(m.get("role", "")), "content": _text_of(m)} for m in messages if isinstance(m, dict)]


def _genai_reply(a: dict[str, Any]) -> str | None:
    out = _parsed(a.get("gen_ai.output.messages"))
    if isinstance(out, list) and out and isinstance(out[0], dict):
        return _text_of(out[0])
    legacy = a.get("gen_ai.completion.0.content")  # the older flat shape (one attribute per message)
    return str(legacy) if legacy is not None else None


def _openinference_messages(a: dict[str, Any], prefix: str) -> list[dict[str, Any]]:
    messages = []
    for n in range(1000):
        role = a.get(f"{prefix}.{n}.message.role")
        content = a.get(f"{prefix}.{n}.message.content")
        if role is None and content is None:
            break
        messages.append({"role": str(role or ""), "content": str(content or "")})
    return messages


def _openinference_reply(a: dict[str, Any]) -> str | None:
    replies = _openinference_messages(a, "llm.output_messages")
    if replies:
        return replies[0]["content"]
    value = a.get("output.value")
    return str(value) if value is not None else None
