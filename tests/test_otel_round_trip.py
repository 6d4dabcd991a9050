"""Production calls in and out: a call exported as OTLP JSON (the SDK's own encoding) and imported again replays to
the same outcome, events and messages (a YAML contract, a Python contract, a pipeline; eval's local and workers
engines); foreign GenAI spans are checked against a contract; a hostile export is refused with its position."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from google.protobuf.json_format import MessageToJson
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from test_otel import GOOD, HERE, INPUT, LOW
from test_python_run import MODULE

import contractstudio as cs
from contractstudio.cli import main
from contractstudio.runtime import otel
from contractstudio.runtime.models import ReplayModel
from contractstudio.runtime.span_import import ExportError, contracted_calls, dataset_row, foreign_calls, read_export
from contractstudio.runtime.trace import Trace

RAG_ROWS = Path(__file__).parents[1] / "samples" / "eval" / "rag_router.rows.jsonl"
RAG = Path(__file__).parents[1] / "samples" / "rag_router.pipeline.yaml"


@pytest.fixture
def exporter(monkeypatch: pytest.MonkeyPatch) -> Iterator[InMemorySpanExporter]:
    for name in otel.ENDPOINT_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv(otel.CONTENT_VARIABLE, "true")
    spans = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(spans))
    otel.configure(provider=provider)
    yield spans
    otel.reset()


def export_file(spans: InMemorySpanExporter, path: Path, *, lines: bool = False) -> Path:
    """The spans as an OTLP JSON export, encoded by the SDK's own OTLP encoder (one request, or one per line)."""
    finished = list(spans.get_finished_spans())
    if lines:
        path.write_text("".join(MessageToJson(encode_spans([s]), indent=None) + "\n" for s in finished))
    else:
        path.write_text(MessageToJson(encode_spans(finished)))
    spans.clear()
    return path


def same_call(replayed: Any, original: Trace) -> None:
    replayed = getattr(replayed, "trace", replayed)
    """The same outcome, events and messages (times, latencies, jittered waits and the model's name aside: a replay is named so)."""
    def same(key: str, value: Any) -> Any:
        return {k: v for k, v in value.items() if k != "model"} if key == "params" else value

    def shape(trace: Trace) -> list[tuple[str, str, Any]]:
        return [(e.stage, e.type, {k: same(k, v) for k, v in e.data.items() if k not in ("duration_s", "latency_s", "model", "seconds")})
                for e in trace]
    assert shape(replayed) == shape(original)


def test_a_yaml_contract_call_round_trips_and_replays_the_same(exporter: InMemorySpanExporter, tmp_path: Path) -> None:
    contract = cs.load(HERE / "qa.contract.yaml")
    original = contract.call(INPUT, [LOW, GOOD])
    [call] = contracted_calls(read_export(export_file(exporter, tmp_path / "export.json")))
    assert (call.contract, call.outcome, call.kind) == ("qa", "success", "contract") and call.trace is not None
    assert call.trace.to_jsonl() == original.trace.to_jsonl()  # line for line
    replayed = contract.call(call.trace[0].get("value"), ReplayModel(call.trace))
    assert replayed.successful and replayed.attempts == original.attempts == 1
    same_call(replayed, original.trace)


def test_eval_turns_imported_calls_into_a_dataset_that_reruns_the_same_on_each_engine(
        exporter: InMemorySpanExporter, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    contract = cs.load(HERE / "qa.contract.yaml")
    contract.call(INPUT, [LOW, GOOD])
    contract.session(INPUT, [LOW] * 10).run(raise_on_violation=False)
    export = export_file(exporter, tmp_path / "export.jsonl", lines=True)  # the Collector's file exporter's shape
    assert main(["spans", str(export), "--dataset", str(tmp_path / "rows.jsonl"), "--traces", str(tmp_path / "t")]) == 0
    listed = capsys.readouterr().out
    assert "qa: success ->" in listed and "qa: " in listed and len(list((tmp_path / "t").iterdir())) == 2
    rows = [json.loads(line) for line in (tmp_path / "rows.jsonl").read_text().splitlines()]
    assert [len(r["replies"]) for r in rows][0] == 2 and rows[0]["input"] == INPUT
    for engine in (["--engine", "local"], ["--engine", "local", "--workers", "2"]):
        out = tmp_path / f"results{len(engine)}.jsonl"
        main(["eval", str(HERE / "qa.contract.yaml"), "--data", str(tmp_path / "rows.jsonl"), "--scripted", "--no-wait",
              "--quiet", "--out", str(out), *engine])
        records = sorted((json.loads(line) for line in out.read_text().splitlines()), key=lambda r: r["row"])
        assert [r["successful"] for r in records] == [True, False]
        assert [r["id"] for r in records] == [r["id"] for r in rows]


def test_a_python_contract_call_round_trips(exporter: InMemorySpanExporter, tmp_path: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    from contractstudio.hooks import resolve_hook
    from contractstudio.symbolic import use_model

    (tmp_path / "answerer_mod.py").write_text(MODULE)
    cls = resolve_hook("answerer_mod:Answerer", tmp_path)
    with use_model(cs.ScriptedModel(['{"answer": "light blue"}', '{"answer": "blue"}']), wait=False):
        assert cls()(input={"text": "What colour is the sky?"}).answer == "blue"
    [call] = contracted_calls(read_export(export_file(exporter, tmp_path / "export.json")))
    assert call.contract == "Answerer" and call.trace is not None
    trace = tmp_path / "imported.jsonl"
    call.trace.write(trace)
    otel.reset()
    again = tmp_path / "again.jsonl"
    code = main(["run", f"{tmp_path / 'answerer_mod.py'}:Answerer", "--replay", str(trace), "--trust", "--no-wait", "--json",
                 "--trace", str(again)])
    shown = json.loads(capsys.readouterr().out)
    assert code == 0 and shown["successful"] and shown["remedy_attempts"] == 1 and shown["output"] == {"answer": "blue"}
    same_call(Trace.read(again), call.trace)


def test_a_pipeline_run_round_trips_through_eval(exporter: InMemorySpanExporter, tmp_path: Path) -> None:
    first = tmp_path / "first.jsonl"
    assert main(["eval", str(RAG), "--data", str(RAG_ROWS), "--quiet", "--out", str(first)]) in (0, 1)
    calls = contracted_calls(read_export(export_file(exporter, tmp_path / "export.json")))
    assert calls and all(c.kind == "pipeline" and c.trace is not None for c in calls)
    rows = [row for c in calls if (row := dataset_row(c)) is not None]
    (tmp_path / "rows.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    again = tmp_path / "again.jsonl"
    main(["eval", str(RAG), "--data", str(tmp_path / "rows.jsonl"), "--quiet", "--out", str(again)])
    def paths(results: Path) -> list[tuple[list[str], str]]:
        records = sorted((json.loads(line) for line in results.read_text().splitlines()), key=lambda r: r["row"])
        return [(r["path"], r["outcome"]) for r in records]
    assert sorted(paths(again)) == sorted(paths(first))
    for call in calls:  # the imported events are the run's own steps
        assert call.trace is not None and [e.type for e in call.trace][0] == "step_start"


def genai_export(path: Path, reply: str, user: str) -> Path:
    """Spans of another application, as the OpenTelemetry GenAI conventions write them (content captured)."""
    def text(content: str) -> dict[str, str]:
        return {"type": "text", "content": content}

    def attr(key: str, value: Any) -> dict[str, Any]:
        return {"key": key, "value": {"intValue": str(value)} if isinstance(value, int) else {"stringValue": value}}
    span = {"traceId": "0af7651916cd43dd8448eb211c80319c", "spanId": "b7ad6b7169203331", "name": "chat gpt-4o",
            "kind": 3, "startTimeUnixNano": "1700000000000000000", "endTimeUnixNano": "1700000001000000000",
            "attributes": [attr("gen_ai.operation.name", "chat"), attr("gen_ai.request.model", "gpt-4o"),
                           attr("gen_ai.usage.input_tokens", 12),
                           attr("gen_ai.input.messages", json.dumps([{"role": "user", "parts": [text(user)]}])),
                           attr("gen_ai.output.messages", json.dumps([{"role": "assistant", "parts": [text(reply)]}]))]}
    path.write_text(json.dumps({"resourceSpans": [{"resource": {"attributes": [attr("service.name", "shop")]},
                                                   "scopeSpans": [{"scope": {"name": "openai"}, "spans": [span]}]}]}, indent=1))
    return path


def test_foreign_genai_calls_are_checked_against_a_named_contract_listing_every_failing_condition(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = genai_export(tmp_path / "bad.json", LOW, json.dumps(INPUT))
    [call] = foreign_calls(read_export(bad))
    assert call.model == "gpt-4o" and call.reply == LOW
    assert main(["spans", str(bad), "--check", str(HERE / "qa.contract.yaml")]) == 1
    out = capsys.readouterr().out
    assert "gpt-4o: refused, " in out and "post[0]:" in out and "coverage" in out.lower()
    good = genai_export(tmp_path / "good.json", GOOD, json.dumps(INPUT))
    assert main(["spans", str(good), "--check", str(HERE / "qa.contract.yaml")]) == 0
    assert "gpt-4o: accepted" in capsys.readouterr().out


@pytest.mark.parametrize(("text", "said"), [
    ('{"resourceSpans": {"spans": []}}', "export.json:1:2: resourceSpans must be a list, not an object"),
    ('{"resourceSpans": [{"scopeSpans": [{"spans": [\n  {"name": "x", "attributes": [{"key": 7}]}]}]}]}',
     "export.json:2:33: an attribute's key must be a string, not a number"),
    ('{"resourceSpans": [{"scopeSpans": [{"spans": [{"startTimeUnixNano": "soon"}]}]}]}', "startTimeUnixNano must be an integer"),
    ('{"nothing": 1}', "not a span export"),
    ('{"resourceSpans": [', "export.json:2:1: the input is not valid YAML or JSON"),
    ("\xff", None),
    ('[' * 5000 + ']' * 5000, "export.json:1:"),
])
def test_a_hostile_export_is_refused_with_its_position_never_a_traceback(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str, said: str | None) -> None:
    path = tmp_path / "export.json"
    if text == "\xff":
        path.write_bytes(b'{"resourceSpans": \xff}')
        said = "export.json:1:1: the file is not UTF-8 text (byte 18)"
    else:
        path.write_text(text)
    with pytest.raises(ExportError) as info:
        contracted_calls(read_export(path))
    assert said is not None and said in str(info.value)
    assert main(["spans", str(path)]) == 2
    err = capsys.readouterr().err
    assert said in err and "Traceback" not in err


def test_a_call_exported_without_content_says_how_to_get_it(exporter: InMemorySpanExporter, tmp_path: Path,
                                                             monkeypatch: pytest.MonkeyPatch,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.delenv(otel.CONTENT_VARIABLE)
    cs.load(HERE / "qa.contract.yaml").call(INPUT, [GOOD])
    export = export_file(exporter, tmp_path / "export.json")
    assert main(["spans", str(export), "--traces", str(tmp_path / "t")]) == 0
    assert "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true" in capsys.readouterr().out
    assert not (tmp_path / "t").exists()


def test_names_from_an_export_never_leave_the_traces_folder(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    line = json.dumps({"seq": 1, "t": 0.0, "stage": "input", "type": "stage_start", "contract": "qa", "value": INPUT})
    def attr(key: str, value: str) -> dict[str, Any]:
        return {"key": key, "value": {"stringValue": value}}
    span = {"traceId": "../../x", "spanId": "../../../etc/passwd", "name": "contract", "startTimeUnixNano": "1",
            "attributes": [attr("contractstudio.contract", "../../outside/qa"), attr("contractstudio.outcome", "/x/../y"),
                           attr(otel.TRACE_ATTRIBUTE, line + "\n")]}
    export = tmp_path / "export.json"
    export.write_text(json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": [span]}]}]}))
    folder = tmp_path / "deep" / "calls"
    assert main(["spans", str(export), "--traces", str(folder)]) == 0
    [written] = list(folder.iterdir())
    assert written.name == "______outside_qa._x____y._________etc_pas.trace.jsonl"
    assert sorted(p.name for p in tmp_path.rglob("*") if p.is_file()) == sorted(["export.json", written.name])
