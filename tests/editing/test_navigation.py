"""Definition, references and rename: position -> locations / edits, and the renamed file analyzed again."""

from __future__ import annotations

from contractstudio.analysis.check import check_text
from contractstudio.editing import apply_edits, definition, references, rename

from .conftest import position
from .test_completion import AGENT, PIPELINE


def test_definition_of_a_step_named_by_next_is_its_id() -> None:
    report = check_text(PIPELINE)
    line, col = position(PIPELINE, "next: dispatch", 7)
    [loc] = definition(report, line, col)
    assert (loc.span.line, loc.span.column) == position(PIPELINE, "id: dispatch", 4)


def test_references_of_a_step_include_every_route_to_it() -> None:
    report = check_text(PIPELINE)
    line, col = position(PIPELINE, "id: answer", 4)
    found = [(loc.span.line, loc.span.column) for loc in references(report, line, col)]
    assert found == [position(PIPELINE, "id: answer", 4), position(PIPELINE, "on_bm25: answer", 9),
                     position(PIPELINE, "on_other: answer", 10)]
    assert len(references(report, line, col, include_declaration=False)) == 2


def test_rename_a_step_updates_every_route_and_the_entry_and_the_file_stays_clean() -> None:
    report = check_text(PIPELINE)
    result = rename(report, *position(PIPELINE, "next: dispatch", 8), "route_reply")
    assert result.refused is None
    new = apply_edits(PIPELINE, result.edits)
    assert "id: route_reply" in new and "next: route_reply" in new and "dispatch" not in new
    assert [(d.code, d.line) for d in check_text(new).diagnostics] == [(d.code, d.line) for d in check_text(PIPELINE).diagnostics]


def test_rename_refuses_a_name_that_is_taken_and_a_name_that_needs_quotes() -> None:
    report = check_text(PIPELINE)
    at = position(PIPELINE, "id: route", 4)
    taken = rename(report, *at, "answer")
    assert taken.edits == () and taken.refused == "step id 'answer' already exists (line 17)"
    assert "letters, digits" in (rename(report, *at, "a: b").refused or "")


CONTRACT = """\
kind: contract
name: qa
prompt: Answer.  # fixed
types:
  Q:
    fields:
      text: {type: str, description: The question.}
  A:
    fields:
      score: {type: float, description: Confidence.}
      notes: {type: "list[str] | None", default: null, description: Notes.}
input: Q
output: A
post:
  - assert: output.score >= 0.5
    message: "Score {output.score:.2f} is low"
  - assert: all(n != '' for n in output.notes or [])
on_failure: fallback
fallback:
  score: "0.0"
examples:
  - name: one
    input: {text: hello}
scenarios:
  - name: ok
    input: {text: hi}
    responses: ['{"score": 0.9}', "{\\"score\\": 0.8}"]
    expect: {successful: true, output: {score: 0.8}}
"""


def test_rename_a_field_updates_expressions_templates_fallback_and_data_and_keeps_comments() -> None:
    report = check_text(CONTRACT)
    assert report.diagnostics == [] or all(d.severity != "error" for d in report.diagnostics)
    result = rename(report, *position(CONTRACT, "output.score >=", 8), "confidence")
    assert result.refused is None
    new = apply_edits(CONTRACT, result.edits)
    assert new.count("confidence") == 7  # field, assert, message, fallback, two replies, expected output
    assert "score" not in new.replace("Score", "")
    assert "prompt: Answer.  # fixed" in new
    assert check_text(new).diagnostics == report.diagnostics


def test_rename_a_field_to_a_field_of_the_same_type_is_refused_but_another_types_is_fine() -> None:
    report = check_text(CONTRACT)
    at = position(CONTRACT, "score: {type", 0)
    assert rename(report, *at, "notes").refused == "field of A 'notes' already exists (line 11)"
    assert rename(report, *at, "text").refused is None  # 'text' is a field of Q, not of A
    assert "keyword" in (rename(report, *at, "if").refused or "")


def test_rename_a_type_updates_type_strings() -> None:
    report = check_text(CONTRACT)
    result = rename(report, *position(CONTRACT, "output: A", 8), "Answer")
    new = apply_edits(CONTRACT, result.edits)
    assert "  Answer:\n" in new and "output: Answer" in new
    assert check_text(new).diagnostics == report.diagnostics


def test_agent_tool_references_and_rename() -> None:
    report = check_text(AGENT)
    at = position(AGENT, "{tool: search_kb}", 8)
    assert len(references(report, *at)) == 3
    new = apply_edits(AGENT, rename(report, *at, "kb_search").edits)
    assert new.count("kb_search") == 3 and "search_kb" not in new


def test_nothing_to_navigate_on_a_plain_key() -> None:
    report = check_text(PIPELINE)
    at = position(PIPELINE, "routers:", 1)
    assert definition(report, *at) == [] and references(report, *at) == []
    assert rename(report, *at, "x").refused is not None


POLICIES = AGENT.replace("    scope: [answer]\n", "    scope: [answer]\n  - id: no-refunds\n    forbid: {tool: issue_refund}\n"
                         "    scope: []\n    conflicts_with: [must-search]\n")


def test_a_policy_id_named_by_conflicts_with_navigates_and_renames() -> None:
    report = check_text(POLICIES)
    assert report.diagnostics == []
    use = position(POLICIES, "conflicts_with: [must-search]", len("conflicts_with: [") + 2)
    [target] = definition(report, *use)
    assert (target.span.line, target.span.column) == position(POLICIES, "must-search")
    assert len(references(report, *use)) == 2  # its id and the conflicts_with entry
    new = apply_edits(POLICIES, rename(report, *use, "search-first").edits)
    assert new.count("search-first") == 2 and "must-search" not in new
    assert check_text(new).diagnostics == []


def test_a_router_named_by_a_model_step_prompt_navigates_and_renames() -> None:
    report = check_text(PIPELINE)
    use = position(PIPELINE, "prompt: router_v1", len("prompt: ") + 3)
    [target] = definition(report, *use)
    assert (target.span.line, target.span.column) == position(PIPELINE, "router_v1:")
    new = apply_edits(PIPELINE, rename(report, *use, "router_v2").edits)
    assert new.count("router_v2") == 2 and "router_v1" not in new
    same = [(d.code, d.line, d.column, d.message.replace("router_v2", "router_v1")) for d in check_text(new).diagnostics]
    assert same == [(d.code, d.line, d.column, d.message) for d in report.diagnostics]  # only the name changed
