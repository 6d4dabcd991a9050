"""One step from a failed production call to the debugger: `contractstudio studio FOLDER --trace EXPORT` opens the
export's failed call in the debugger of the real app (tmux), ready to replay; R then G replay it to the same outcome."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from google.protobuf.json_format import MessageToJson
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

import contractstudio as cs
from contractstudio.runtime import otel

from .terminal import Terminal, needs_tmux

pytestmark = [needs_tmux]

QA = Path(__file__).parents[1] / "runtime_contracts" / "qa.contract.yaml"
INPUT = {"query": "Why vectors?", "documents": [{"id": "A1", "content": "Vector databases store embeddings."}]}
LOW = '{"answer": "x", "evidence": [], "coverage_score": 0.2}'
GOOD = '{"answer": "They store embeddings.", "evidence": [{"doc_id": "A1", "snippet": "store embeddings"}], "coverage_score": 0.9}'


def test_a_failed_call_of_an_export_opens_in_the_debugger_ready_to_replay(tmp_path: Path,
                                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    folder = tmp_path / "project"
    folder.mkdir()
    shutil.copy(QA, folder / QA.name)
    monkeypatch.setenv(otel.CONTENT_VARIABLE, "true")
    spans = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(spans))
    otel.configure(provider=provider)
    try:
        contract = cs.load(folder / QA.name)
        contract.call(INPUT, [GOOD])  # production: one call went well, the next fell back after its remedies
        failed = contract.session(INPUT, [LOW] * 10).run(raise_on_violation=False)
    finally:
        otel.reset()
    assert not failed.successful
    export = tmp_path / "production.otlp.json"
    export.write_text(MessageToJson(encode_spans(list(spans.get_finished_spans()))))

    env = "env " + " ".join(f"{k}=" for k in os.environ if k.startswith("OTEL_"))
    term = Terminal.studio(["studio", folder, "--trace", export], tmp_path / "config", (160, 45), env=env)
    try:
        screen = term.wait("events · replies: the", 60)  # the input's own replies (the line wraps at 80)
        assert "trace qa.fallback." in screen and f"{len(failed.trace)} events" in screen
        assert "recorded: qa.fallback." in screen and "replay: qa.fallback." in screen  # its input, its replies
        term.press("R")  # the recorded call set up again (its input, its replies)
        term.wait("ready · replies: the", 30)
        term.press("g")  # and run to its end, offline
        term.wait(f"failed · {failed.llm_calls} LLM call(s), {failed.attempts} remedy attempt(s)", 60)
    finally:
        term.close()
