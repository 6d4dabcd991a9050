"""Completion: position -> the items offered (labels, what they insert, their docs)."""

from __future__ import annotations

from contractstudio.editing import complete

from .conftest import marked

CONTRACT = """\
kind: contract
name: qa
prompt: Answer the question.
types:
  Question:
    fields:
      text: {type: str, description: The question.}
      documents: {type: "list[Doc]", description: Corpus.}
  Doc:
    fields:
      id: {type: str, description: Document id.}
      body: {type: str, description: Text.}
  Answer:
    fields:
      answer: {type: str, description: The answer.}
      evidence: {type: "list[Snippet]", description: Cited passages.}
  Snippet:
    fields:
      doc_id: {type: str, description: Cited document.}
      quote: {type: str, description: Verbatim excerpt.}
input: Question
output: Answer
post:
  - assert: len(output.evidence) > 0
    message: "No evidence for {output.answer}"
"""


def labels(text: str, report_text: str | None = None) -> list[str]:
    m = marked(text, report_text)
    return [i.label for i in complete(m.report, m.line, m.column, m.text)]


def items(text: str, report_text: str | None = None) -> dict:
    m = marked(text, report_text)
    return {i.label: i for i in complete(m.report, m.line, m.column, m.text)}


def test_top_level_keys_of_a_contract_are_those_not_yet_written_with_their_docs() -> None:
    found = items(CONTRACT + "‸\n")
    assert "pre" in found and "on_failure" in found and "fallback" in found
    assert "prompt" not in found and "types" not in found  # already there
    assert found["pre"].documentation == "Pre-conditions (scope: input)."
    assert found["on_failure"].insert_text == "on_failure: "
    assert found["pre"].insert_text == "pre:"  # a list goes on the lines below


def test_a_word_typed_narrows_the_keys_and_is_what_the_item_replaces() -> None:
    m = marked(CONTRACT + "on_f‸\n")
    got = complete(m.report, m.line, m.column, m.text)
    assert [i.label for i in got] == ["on_failure"]
    assert (got[0].replace.column, got[0].replace.end_column) == (1, 5)


def test_enum_values_after_a_key() -> None:
    assert labels(CONTRACT + "on_failure: ‸\n") == ["fallback", "raise"]
    # right after the colon the value gets its space
    assert [i.insert_text for i in items(CONTRACT + "on_failure:‸\n").values()] == [" fallback", " raise"]


def test_an_empty_document_offers_the_four_kinds() -> None:
    assert labels("‸") == ["kind: contract", "kind: agent", "kind: pipeline", "kind: tools"]


def test_declared_type_names_for_input_output_and_inside_type_strings() -> None:
    text = CONTRACT.replace("input: Question", "input: Qu‸")
    assert labels(text, CONTRACT) == ["Question"]
    text = CONTRACT.replace('"list[Doc]"', '"list[Sn‸]"')
    assert labels(text, CONTRACT) == ["Snippet"]
    field_type = CONTRACT.replace("{type: str, description: The question.}", "{type: ‸}")
    got = labels(field_type, CONTRACT)
    assert {"Question", "Doc", "str", "int", "list[...]"} <= set(got)


def test_fields_of_the_output_inside_an_expression_and_nested_through_a_list() -> None:
    text = CONTRACT.replace("len(output.evidence) > 0", "output.‸")
    assert labels(text, CONTRACT) == ["answer", "evidence"]
    text = CONTRACT.replace("len(output.evidence) > 0", "output.evidence[0].‸")
    got = items(text, CONTRACT)
    assert list(got) == ["doc_id", "quote"]
    assert got["quote"].detail == "str" and got["quote"].documentation == "Verbatim excerpt."


def test_a_comprehension_variable_is_typed_by_what_it_iterates() -> None:
    text = CONTRACT.replace("len(output.evidence) > 0", "all(s.‸ for s in output.evidence)")
    assert labels(text, CONTRACT) == ["doc_id", "quote"]


def test_names_functions_and_methods_in_expressions() -> None:
    got = labels(CONTRACT.replace("len(output.evidence) > 0", "‸"), CONTRACT)
    assert {"input", "output", "len", "matches", "all"} <= set(got)
    assert "act" not in got  # no act: not in scope
    methods = labels(CONTRACT.replace("len(output.evidence) > 0", "output.answer.st‸"), CONTRACT)
    assert methods[:2] == ["startswith", "strip"]  # then those that contain "st" (istitle, lstrip, ...)


def test_inside_a_message_template_placeholder_only() -> None:
    assert labels(CONTRACT.replace("{output.answer}", "{output.‸}"), CONTRACT) == ["answer", "evidence"]
    assert labels(CONTRACT.replace("No evidence for {output.answer}", "No evid‸"), CONTRACT) == []


def test_pre_conditions_see_only_the_input() -> None:
    text = CONTRACT + "pre:\n  - assert: ‸\n"
    got = labels(text, CONTRACT)
    assert "input" in got and "output" not in got


def test_completion_works_while_the_buffer_does_not_parse_using_the_last_good_analysis() -> None:
    # 'inp' without its colon is a YAML syntax error; the report of the previous text still knows the types
    broken = CONTRACT.replace("input: Question\n", "inp‸\n")
    assert labels(broken, CONTRACT) == ["input"]
    broken = CONTRACT.replace("input: Question\n", "inp\n").replace("output: Answer", "output: ‸")
    assert labels(broken, CONTRACT) == ["Question", "Doc", "Answer", "Snippet"]


PIPELINE = """\
kind: pipeline
name: rag
entry_step_id: route
routers:
  router_v1:
    prefixes: ["[BM25:]", "[DIRECT:]"]
steps:
  - id: route
    action: call_model
    prompt: router_v1
    next: dispatch
  - id: dispatch
    action: prefix_router
    bm25_prefix: "[BM25:]"
    on_bm25: answer
    on_other: answer
  - id: answer
    action: call_model
    prompt: answer_v1
    end: true
"""


def test_step_ids_after_next_and_on_keys_and_entry_step_id() -> None:
    assert labels(PIPELINE.replace("next: dispatch", "next: ‸")) == ["route", "dispatch", "answer"]
    assert labels(PIPELINE.replace("on_bm25: answer", "on_bm25: an‸")) == ["answer"]
    assert labels(PIPELINE.replace("entry_step_id: route", "entry_step_id: ‸")) == ["route", "dispatch", "answer"]


def test_actions_with_their_contracts_and_router_names_for_a_model_prompt() -> None:
    got = items(PIPELINE.replace("action: prefix_router", "action: ‸"))
    assert "search_nodes" in got and "prefix_router" in got
    assert "requires state: retrieval_mode" in got["search_nodes"].documentation
    assert labels(PIPELINE.replace("prompt: router_v1", "prompt: ‸")) == ["router_v1"]


def test_a_new_list_item_offers_step_keys_and_a_router_step_its_routes() -> None:
    new_step = PIPELINE + "  - ‸\n"
    assert labels(new_step, PIPELINE)[:2] == ["id", "action"]
    router = PIPELINE.replace("    on_other: answer\n", "    ‸\n")
    got = labels(router, PIPELINE)
    assert "on_other" in got and "direct_prefix" in got and "on_direct" in got
    assert "on_bm25" not in got  # already written


def test_router_prefixes_are_offered_quoted() -> None:
    got = items(PIPELINE.replace('bm25_prefix: "[BM25:]"', "bm25_prefix: ‸"))
    assert list(got) == ['"[BM25:]"', '"[DIRECT:]"']


AGENT = """\
kind: agent
name: support
tools:
  - name: search_kb
    description: Search the knowledge base.
  - name: issue_refund
schema:
  fields:
    status: {type: "Literal['resolved', 'escalated']", description: Outcome.}
policies:
  - id: must-search
    require: {tool: search_kb}
    scope: [answer]
tasks:
  - id: answer
    oracle: functional
    success_criteria:
      - assert: output.status == 'resolved'
    trajectory:
      - expect_tool: search_kb
"""


def test_agent_references_tools_tasks_fields_and_oracle_values() -> None:
    assert labels(AGENT.replace("{tool: search_kb}", "{tool: ‸}")) == ["search_kb", "issue_refund"]
    assert labels(AGENT.replace("scope: [answer]", "scope: [‸]")) == ["answer"]
    assert labels(AGENT.replace("expect_tool: search_kb", "expect_tool: iss‸")) == ["issue_refund"]
    assert labels(AGENT.replace("oracle: functional", "oracle: ‸")) == ["human", "functional", "llm_judge", "hybrid"]
    assert labels(AGENT.replace("output.status == 'resolved'", "output.‸"), AGENT) == ["status"]


def test_tool_conditions_see_the_parameters() -> None:
    tools = """\
kind: tools
name: notes
tools:
  - name: create_note
    params:
      title: {type: str, description: Title.}
    preconditions:
      - assert: ‸
"""
    got = labels(tools, tools.replace("‸", "True"))
    assert "title" in got and "input" not in got


def test_the_second_document_of_a_file_completes_for_its_own_kind() -> None:
    text = AGENT + "---\n" + PIPELINE.replace("next: dispatch", "next: ‸")
    assert labels(text) == ["route", "dispatch", "answer"]


def test_policy_ids_for_conflicts_with_and_act_fields_in_an_expression() -> None:
    agent = AGENT.replace("    scope: [answer]\n", "    scope: [answer]\n  - id: no-refunds\n    forbid: {tool: issue_refund}\n"
                          "    scope: []\n    conflicts_with: [‸]\n")
    assert "must-search" in labels(agent, agent.replace("‸", "must-search"))
    act = CONTRACT.replace("input: Question\n", "input: Question\nintermediate: Asked\n").replace(
        "  Snippet:\n", "  Asked:\n    fields:\n      question: {type: str, description: The question.}\n  Snippet:\n").replace(
        "post:\n", "act:\n  assign:\n    question: input.text\npost:\n", 1)
    first_post = act.index("assert:", act.index("post:")) + len("assert: ")
    typed = act[:first_post] + "act.‸ and " + act[first_post:]
    assert labels(typed, act) == ["question"]


def test_a_condition_offers_remedy_the_hard_rule_key() -> None:
    found = items(CONTRACT + "    ‸\n")
    assert "remedy" in found and "without a remedy" in str(found["remedy"].documentation)


def _lines_run(call) -> int:  # type: ignore[no-untyped-def]
    """How many lines of Python a call runs (its own frames and all it calls): work that grows with the file shows."""
    import sys

    count = 0

    def tracer(frame, event, arg):  # type: ignore[no-untyped-def]
        nonlocal count
        count += event == "line"
        return tracer

    sys.settrace(tracer)
    try:
        call()
    finally:
        sys.settrace(None)
    return count


def _chain(steps: int) -> str:
    body = "".join(f"  - id: s{n}\n    action: call_model\n    description: step {n}\n    next: s{n + 1}\n"
                   for n in range(steps))
    return f"kind: pipeline\nname: chain\nentry_step_id: s0\nsteps:\n{body}  - id: s{steps}\n    action: call_model\n    end: true\n"


def test_typing_a_value_in_a_long_pipeline_costs_what_it_does_in_a_short_one() -> None:
    # Issue 35.1: in the 5 MB chain (44,000 steps), each letter typed in a step's description listed every step id
    # for completion on the screen's thread (30-50 ms a key) though a description offers none.
    def cost(steps: int) -> int:
        m = marked(_chain(steps).replace("description: step 1\n", "description: step 1 wor‸\n", 1))
        return _lines_run(lambda: complete(m.report, m.line, m.column, m.text.split("\n")))

    assert cost(3000) < 1.2 * cost(30)


def test_step_ids_offered_in_a_long_pipeline_are_those_the_word_typed_matches() -> None:
    m = marked(_chain(3000).replace("next: s3\n", "next: s299‸\n", 1))
    got = [i.label for i in complete(m.report, m.line, m.column, m.text.split("\n"))]
    assert got[:2] == ["s299", "s2990"] and len(got) == 11 and "s1299" not in got  # prefix matches: s299, s2990-s2999
    m = marked(_chain(3000).replace("next: s3\n", "next: 99‸\n", 1))
    got = [i.label for i in complete(m.report, m.line, m.column, m.text.split("\n"))]
    assert "s99" in got and "s1299" in got and got.index("s99") < got.index("s1299")  # contains, in the steps' order


def test_typing_in_the_middle_of_a_long_pipeline_costs_what_it_does_in_a_short_one() -> None:
    # Issue 35.1: where the cursor is was read walking up one row at a time, to the top of the list and of the document;
    # in the middle of the 5 MB chain that was 150-180 ms of the screen's thread per completion.
    def cost(steps: int) -> int:
        text = _chain(steps)
        middle = f"description: step {steps // 2}\n"
        m = marked(text.replace(middle, middle.replace("\n", " wor‸\n"), 1))
        assert complete(m.report, m.line, m.column, m.text.split("\n")) == []  # a description: nothing to offer
        key = marked(text.replace(middle, middle + "    ‸\n", 1))  # a key of that step: its siblings are read
        found = [i.label for i in complete(key.report, key.line, key.column, key.text.split("\n"))]
        assert found == ["end", "prompt"]  # id, action, description above the cursor and next below it are written
        return _lines_run(lambda: complete(m.report, m.line, m.column, m.text.split("\n"))) + _lines_run(
            lambda: complete(key.report, key.line, key.column, key.text.split("\n")))

    cost(50)  # the regular expressions compiled once
    assert cost(5000) < 2 * cost(50)  # 100 times the rows; the rows are searched in C (editing/row_scan.py)
