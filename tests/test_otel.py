"""OpenTelemetry spans of every contracted call (runtime/otel.py), caught by the SDK's in-memory exporter: the call,
its stages and its model requests in the GenAI conventions, failed conditions as events, content only on opt-in."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import SAMPLES
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind, StatusCode
from test_pipeline_runner import RAG, rag_handlers
from test_python_run import MODULE

import contractstudio as cs
from contractstudio.cli import main
from contractstudio.runtime import otel
from contractstudio.runtime.pipeline_runner import PipelineAssertionError, PipelineRunner

HERE = Path(__file__).parent / "runtime_contracts"
INPUT = {"query": "Why vectors?", "documents": [{"id": "A1", "content": "Vector databases store embeddings."}]}
GOOD = '{"answer": "They store embeddings.", "evidence": [{"doc_id": "A1", "snippet": "store embeddings"}], "coverage_score": 0.9}'
LOW = '{"answer": "x", "evidence": [], "coverage_score": 0.2}'
KEY = "sk-proj-" + "Zq8vN3xLw2Rt7YpK4sMd9HfB6jGc1TnE"  # a token shape: redacted wherever it is written


@pytest.fixture
def spans(monkeypatch: pytest.MonkeyPatch) -> Iterator[InMemorySpanExporter]:
    for name in (*otel.ENDPOINT_VARIABLES, otel.CONTENT_VARIABLE):
        monkeypatch.delenv(name, raising=False)
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    otel.configure(provider=provider)
    yield exporter
    otel.reset()


def named(exporter: InMemorySpanExporter, prefix: str) -> list[ReadableSpan]:
    return [s for s in exporter.get_finished_spans() if s.name.startswith(prefix)]


def attrs(span: ReadableSpan) -> dict[str, Any]:
    return dict(span.attributes or {})


def test_a_call_is_a_span_with_stage_spans_and_genai_model_spans(spans: InMemorySpanExporter) -> None:
    result = cs.load(HERE / "qa.contract.yaml").call(INPUT, [LOW, GOOD])
    assert result.successful and result.attempts == 1
    [call] = named(spans, "contract ")
    assert call.name == "contract qa"
    assert {k: v for k, v in attrs(call).items() if k.startswith("contractstudio.")} == {
        "contractstudio.contract": "qa", "contractstudio.outcome": "success", "contractstudio.attempts": 1,
        "contractstudio.remedies": 1, "contractstudio.fallback": False, "contractstudio.llm_calls": 2,
        "contractstudio.forward": "output"}
    stages = sorted(named(spans, "stage "), key=lambda s: (s.start_time, s.context.span_id))
    assert [s.name for s in stages] == [f"stage {e.stage}" for e in result.trace.of_type("stage_start")]
    assert [s.name for s in stages].count("stage post") == 2
    assert all(s.parent is not None and s.parent.span_id == call.context.span_id for s in stages)
    models = named(spans, "chat ")
    assert len(models) == 2 and all(m.kind is SpanKind.CLIENT for m in models)
    first, remedy = (attrs(m) for m in models)
    assert first["gen_ai.operation.name"] == "chat" and first["gen_ai.request.model"] == "scripted"
    assert isinstance(first["gen_ai.usage.input_tokens"], int) and isinstance(first["gen_ai.usage.output_tokens"], int)
    assert (first["contractstudio.purpose"], remedy["contractstudio.purpose"]) == ("generate", "remedy_post")
    generate = next(s for s in stages if s.name == "stage generate")
    assert models[0].parent is not None and models[0].parent.span_id == generate.context.span_id  # inside generate
    failed_post = next(s for s in stages if s.name == "stage post")
    [event] = [e for e in failed_post.events if e.name == "contractstudio.condition_failed"]
    assert event.attributes is not None and event.attributes["contractstudio.condition"] == "post[0]"
    assert "coverage" in str(event.attributes["contractstudio.message"]).lower()
    assert failed_post.status.status_code is StatusCode.ERROR
    assert all(call.start_time <= s.start_time <= s.end_time <= call.end_time for s in stages + models)  # type: ignore[operator]
    assert not any(k.startswith("gen_ai.input") or k.startswith("gen_ai.output.messages") or k == otel.TRACE_ATTRIBUTE
                   for s in spans.get_finished_spans() for k in attrs(s))  # no content unless asked for


def test_prompts_and_replies_go_out_only_when_asked_for_and_redacted_as_traces_are(
        spans: InMemorySpanExporter, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(otel.CONTENT_VARIABLE, "true")
    question = {**INPUT, "query": f"Why vectors? my key is {KEY}"}
    result = cs.load(HERE / "qa.contract.yaml").call(question, [GOOD])
    [call] = named(spans, "contract ")
    [model] = named(spans, "chat ")
    sent = json.loads(attrs(model)["gen_ai.input.messages"])
    assert sent[-1]["role"] == "user" and "Why vectors?" in sent[-1]["parts"][0]["content"]
    assert json.loads(attrs(model)["gen_ai.output.messages"])[0]["parts"][0]["content"] == GOOD
    everything = json.dumps([attrs(s) for s in spans.get_finished_spans()])
    assert KEY not in everything and KEY[:12] not in everything and "my key is ***" in everything
    assert attrs(call)[otel.TRACE_ATTRIBUTE] == result.trace.to_jsonl()  # the trace file's own lines


def test_a_fallback_says_so(spans: InMemorySpanExporter) -> None:
    contract = cs.load(HERE / "qa.contract.yaml")
    result = contract.session(INPUT, [LOW] * 10).run(raise_on_violation=False)
    [call] = named(spans, "contract ")
    assert (attrs(call)["contractstudio.outcome"], attrs(call)["contractstudio.fallback"]) == ("fallback", True)  # on_failure: fallback
    assert attrs(call)["contractstudio.remedies"] == sum(1 for r in result.trace.of_type("llm_request")
                                                          if r["purpose"].startswith("remedy"))
    assert not result.successful and call.status.status_code is StatusCode.ERROR
    assert attrs(call)["contractstudio.errors"]


def test_a_python_contract_makes_the_same_spans(spans: InMemorySpanExporter, tmp_path: Path) -> None:
    from contractstudio.hooks import resolve_hook
    from contractstudio.symbolic import use_model

    (tmp_path / "answerer_mod.py").write_text(MODULE)
    cls = resolve_hook("answerer_mod:Answerer", tmp_path)
    with use_model(cs.ScriptedModel(['{"answer": "light blue"}', '{"answer": "blue"}']), wait=False):
        assert cls()(input={"text": "What colour is the sky?"}).answer == "blue"
    [call] = named(spans, "contract ")
    assert attrs(call)["contractstudio.contract"] == "Answerer" and attrs(call)["contractstudio.attempts"] == 1
    assert len(named(spans, "chat ")) == 2


def test_a_pipeline_run_is_a_span_with_a_span_per_step(spans: InMemorySpanExporter) -> None:
    PipelineRunner.from_file(RAG).run({"user_query": "q"}, rag_handlers("Hello there"))
    [run] = named(spans, "pipeline ")
    assert attrs(run)["contractstudio.outcome"] == "success" and attrs(run)["contractstudio.steps"] == 4
    assert [s.name for s in named(spans, "step ")] == ["step route", "step dispatch", "step answer", "step persist"]
    with pytest.raises(PipelineAssertionError):
        PipelineRunner.from_file(RAG).run({"user_query": "q"}, rag_handlers("[SEMANTIC:]   "))
    failed = named(spans, "pipeline ")[-1]
    assert attrs(failed)["contractstudio.outcome"] == "failure" and failed.status.status_code is StatusCode.ERROR
    assert "followup_query" in (failed.status.description or "")


def test_eval_makes_a_call_span_per_row(spans: InMemorySpanExporter, tmp_path: Path) -> None:
    data = tmp_path / "rows.jsonl"
    data.write_text("".join(json.dumps({"id": f"r{i}", "input": INPUT, "replies": [GOOD]}) + "\n" for i in range(3)))
    assert main(["eval", str(HERE / "qa.contract.yaml"), "--data", str(data), "--scripted", "--quiet"]) == 0
    assert len(named(spans, "contract qa")) == 3


def test_nothing_configured_imports_no_opentelemetry(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
    code = ("import sys, contractstudio as cs\n"
            f"cs.load({str(HERE / 'qa.contract.yaml')!r}).call({INPUT!r}, [{GOOD!r}])\n"
            "print(sorted(m for m in sys.modules if m.startswith('opentelemetry')))")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120, check=True)
    assert out.stdout.strip() == "[]"
    sample = SAMPLES / "multidoc_qa.contract.yaml"
    trace = SAMPLES / "traces" / "multidoc_qa.answered-first-time.jsonl"
    cli = subprocess.run([sys.executable, "-m", "contractstudio", "run", str(sample), "--replay", str(trace), "--no-wait"],
                         env={**env, "PYTHONWARNINGS": "error"}, capture_output=True, text=True, timeout=120)
    assert cli.returncode == 0, cli.stderr


def test_otlp_takes_a_url(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        main(["run", str(HERE / "qa.contract.yaml"), "--otlp", "localhost:4318"])
    assert info.value.code == 2
    assert "--otlp takes an http:// or https:// URL, not 'localhost:4318'" in capsys.readouterr().err


def test_an_early_stop_marks_the_model_request_it_cut(spans: InMemorySpanExporter, tmp_path: Path) -> None:
    from test_early_stop import CONTRACT, DOOMED, REVIEW, WATCHED
    from test_early_stop import GOOD as LABELLED

    (tmp_path / "verdict.contract.yaml").write_text(CONTRACT)
    result = cs.load(tmp_path / "verdict.contract.yaml").call(REVIEW, cs.ScriptedModel([DOOMED, LABELLED], streamed=True),
                                                             options=WATCHED)
    assert result.successful and result.trace.of_type("early_stop")
    cut, repaired = sorted(named(spans, "chat "), key=lambda s: s.start_time or 0)
    assert attrs(cut)["contractstudio.early_stop"] is True and "contractstudio.early_stop" not in attrs(repaired)
    [event] = [e for e in cut.events if e.name == "contractstudio.early_stop"]
    assert event.attributes is not None and event.attributes["contractstudio.clause"] == "output.label"


@pytest.mark.parametrize("streamed", [False, True], ids=["whole", "streamed"])
def test_a_live_model_request_span_names_the_servers_finish_reason(spans: InMemorySpanExporter, streamed: bool) -> None:
    from openai_server import OpenAIServer

    from contractstudio.runtime.call_state import CallOptions

    options = CallOptions(wait=False) if streamed else CallOptions(wait=False, watch_for=None)
    with OpenAIServer([GOOD]) as server:  # its replies end with finish_reason "stop", whole or streamed
        result = cs.load(HERE / "qa.contract.yaml").call(INPUT, "openai/test-model", api_base=server.base_url,
                                                         api_key=KEY, options=options)
    assert result.successful
    [reply] = result.trace.of_type("llm_response")
    assert reply["finish_reason"] == "stop" and bool(reply.get("chunk_ends")) is streamed
    [request] = named(spans, "chat ")
    assert attrs(request)["gen_ai.response.finish_reasons"] == ("stop",)
