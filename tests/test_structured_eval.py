"""Structured outputs offline: the `llm.structured_output` key, scripted and replayed models, the debugger's request
view, and `eval --structured` with its summary and `--baseline` comparison (scripted replies, no server)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import SAMPLES

import contractstudio as cs
from contractstudio.analysis.check import check_text
from contractstudio.cli import main
from contractstudio.reading.replies import extract_json
from contractstudio.runtime.call_state import CallOptions
from contractstudio.runtime.events import StructureFallback
from contractstudio.runtime.models import ReplayModel, ScriptedModel, TransportFault

TRIAGE = Path(__file__).parent / "runtime_contracts" / "structured.contract.yaml"
QA = SAMPLES / "multidoc_qa.contract.yaml"
FREE = SAMPLES / "eval" / "multidoc_qa.rows.jsonl"
DECODED = SAMPLES / "eval" / "multidoc_qa.decoded.rows.jsonl"
TICKET = {"text": "I cannot log in."}
GOOD = '{"summary": "Cannot log in", "code": "LOG-12", "priority": 1, "area": "login", "confidence": 0.9}'
OPTS = CallOptions(wait=False)
OUTLINE = """kind: contract
name: outline
prompt: Outline the topic as a tree of headings.
types:
  Question:
    description: A question.
    fields:
      text: {type: str, description: The question.}
  Heading:
    description: A heading and the headings below it.
    fields:
      title: {type: str, description: The heading.}
      children: {type: "list[Heading]", default: [], description: Sub-headings.}
input: Question
output: Heading
"""


def codes(text: str) -> list[tuple[str, str, str]]:
    """The errors and warnings (the infos say who enforces each clause: tests/test_structure_shown.py)."""
    return [(d.code, d.severity, d.message) for d in check_text(text, "t.contract.yaml").diagnostics if d.severity != "info"]


def test_the_analyzer_takes_each_structured_output_mode_and_refuses_another() -> None:
    text = TRIAGE.read_text()
    for mode in ("auto", "json_schema", "json_object", '"off"'):  # quoted: YAML 1.1 tools read a bare off as false
        assert codes(text.replace("llm:\n", f"llm:\n  structured_output: {mode}\n")) == []
    [(code, severity, message)] = codes(text.replace("llm:\n", "llm:\n  structured_output: strict\n"))
    assert severity == "error" and "structured_output" in message


def test_a_scripted_model_asks_for_no_structure_unless_it_stands_for_a_model_that_has_it() -> None:
    plain = cs.load(TRIAGE).call(TICKET, ScriptedModel([GOOD]), options=OPTS)
    assert "response_format" not in plain.trace.of_type("llm_request")[0]["params"]  # offline runs as before
    decoder = cs.load(TRIAGE).call(TICKET, ScriptedModel([GOOD], supports=(True, True), stands_for="openai/gpt-4o-mini"), options=OPTS)
    request = decoder.trace.of_type("llm_request")[0]
    assert decoder.successful and request["structured_output"] == "json_schema"
    assert request["params"]["response_format"]["json_schema"]["name"] == "Triage"


def test_a_fallback_is_in_the_trace_and_a_replay_asks_in_the_mode_each_recorded_request_used(tmp_path: Path) -> None:
    refused = TransportFault("Invalid schema for response_format 'Triage'", kind="request", retryable=False, status=400)
    model = ScriptedModel([refused, GOOD], supports=(True, True), stands_for="openai/gpt-4o-mini")
    result = cs.load(TRIAGE).call(TICKET, model, options=OPTS)
    assert result.successful
    [fallback] = result.trace.of(StructureFallback)
    assert (fallback.from_mode, fallback.to_mode) == ("json_schema", "json_object")
    path = tmp_path / "fallback.jsonl"
    result.trace.write(path)
    replayed = cs.load(TRIAGE).call(TICKET, ReplayModel(path, strict=True), options=OPTS)  # strict: any difference raises
    assert replayed.successful
    assert [r["structured_output"] for r in replayed.trace.of_type("llm_request")] == ["json_object"]


def test_a_type_no_schema_can_express_for_the_provider_asks_in_json_mode_and_the_trace_says_why(tmp_path: Path) -> None:
    path = tmp_path / "outline.contract.yaml"
    path.write_text(OUTLINE)
    model = ScriptedModel(['{"title": "Search", "children": [{"title": "BM25"}]}'], supports=(True, True),
                          stands_for="anthropic/claude-sonnet-4-5")
    result = cs.load(path).call({"text": "search"}, model, options=OPTS)
    assert result.successful and result.output.children[0].title == "BM25"
    [fallback] = result.trace.of(StructureFallback)
    assert (fallback.from_mode, fallback.to_mode) == ("json_schema", "json_object") and "recursive" in fallback.reason
    [request] = result.trace.of_type("llm_request")
    assert request["params"]["response_format"] == {"type": "json_object"}
    from contractstudio.commands.run import describe

    printed = [line for event in result.trace for line in describe(event)]  # what `contractstudio run` prints
    assert any(line.startswith("    ! structured output json_schema -> json_object: ") for line in printed)
    assert any(line.startswith("    -> scripted (generate, 2 messages, json_object)") for line in printed)


def test_the_debuggers_request_view_shows_the_mode_and_the_exact_schema_sent() -> None:
    from rich.console import Console

    from contractstudio.studio.widgets.events import event_line, event_view

    result = cs.load(TRIAGE).call(TICKET, ScriptedModel([GOOD], supports=(True, True), stands_for="openai/gpt-4o-mini"), options=OPTS)
    events = list(result.trace)
    request = result.trace.of_type("llm_request")[0]
    console = Console(width=200, record=True)
    console.print(event_view(request, events))
    shown = console.export_text()
    assert "structured output: json_schema · the exact response_format sent" in shown
    assert '"additionalProperties": false' in shown and '"strict": true' in shown
    assert "· json_schema" in event_line(request, set()).plain


def test_the_decoded_dataset_is_the_bundled_one_with_only_its_malformed_replies_removed() -> None:
    plan = cs.load(QA).plan
    free = [json.loads(line) for line in FREE.read_text().splitlines()]
    decoded = [json.loads(line) for line in DECODED.read_text().splitlines()]
    assert [r["input"] for r in free] == [r["input"] for r in decoded]
    removed = 0
    for old, new in zip(free, decoded, strict=True):
        well_formed = [t for t in old.get("replies") or [] if not plan.output.validate(extract_json(t)[0])[1]]
        assert (new.get("replies") or []) == well_formed  # the decoder's replies: the well-formed ones, in order
        removed += len(old.get("replies") or []) - len(well_formed)
    assert removed > 0


def test_eval_structured_off_and_auto_compare_requests_remedies_and_modes(capsys: pytest.CaptureFixture[str],
                                                                          tmp_path: Path) -> None:
    free = tmp_path / "free.jsonl"
    common = ["--scripted", "--limit", "16", "--quiet"]
    assert main(["eval", str(QA), "--data", str(FREE), "--structured", "off", "--out", str(free), *common]) == 0
    capsys.readouterr()
    assert main(["eval", str(QA), "--data", str(DECODED), "--structured", "auto", "--baseline", str(free), "--json",
                 *common]) == 0
    doc = json.loads(capsys.readouterr().out)
    summary, report = doc["summary"], doc["baseline"]
    assert set(summary["structured_output"]) == {"json_schema"} and summary["structure_fallbacks"] == 0
    metrics = {m["metric"]: m for m in report["metrics"]}
    assert metrics["requests"]["after"] == summary["requests"] < metrics["requests"]["before"]  # no re-ask for a shape
    assert metrics["remedies_per_row"]["after"] < metrics["remedies_per_row"]["before"]
    assert set(report["structured_output"]["before"]) == {"off"}
    assert main(["eval", str(QA), "--data", str(DECODED), "--structured", "auto", "--baseline", str(free), *common]) == 0
    out = capsys.readouterr().out
    assert "structured output: json_schema" in out and "requests:" in out and "per row" in out
    assert "structured_output" in out and "-> json_schema" in out  # the comparison names both modes
    assert main(["eval", str(QA), "--data", str(FREE), "--replay", str(free), "--structured", "auto"]) == 2
    assert "a replay asks in the modes its recording used" in capsys.readouterr().err


def test_a_mapping_default_in_the_yaml_reaches_the_schema_without_a_python_warning(capsys: pytest.CaptureFixture[str]) -> None:
    """`default: {}` (the sample's `aspects`) printed pydantic's 'Default value {} is not JSON serializable' with a
    path into site-packages on every `run`, and the schema compiled for the provider lost the default."""
    import warnings

    sample = SAMPLES / "review_extraction.contract.yaml"
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        assert main(["run", str(sample), "--scenario", "too-short-summary-is-remedied"]) == 0
        schema = cs.load(sample).plan.output.json_schema()
    assert [str(w.message) for w in seen] == []
    assert "successful: 2 LLM call(s)" in capsys.readouterr().out
    assert schema["properties"]["aspects"]["default"] == {}
