"""Contract and tools rules as a user sees them: messages, hints, positions inside values, and silence."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import SAMPLES

from contractstudio.analysis.check import Context, check_file, check_text
from contractstudio.trust import HookFolder, hook_folder

BASE = """kind: contract
name: t
description: A test contract.
prompt: Answer the question.
types:
  Q:
    description: A question.
    fields:
      text: {type: str, description: The question.}
      docs: {type: "list[str]", default: [], description: Sources.}
  A:
    description: An answer.
    fields:
      answer: {type: str, description: The answer.}
      score: {type: float, ge: 0, le: 1, description: Confidence.}
input: Q
output: A
"""
POST = """post:
  - assert: output.answer != ""
"""
FALLBACK = """fallback:
  answer: "'unknown'"
  score: "0.0"
"""


def found(text: str, trusted: bool = False) -> list[tuple[str, int, int]]:
    return [(d.code, d.line, d.column) for d in check_text(text, "t.contract.yaml", Context(hooks=HookFolder(trusted=trusted))).diagnostics]


def diags(text: str):  # type: ignore[no-untyped-def]
    return check_text(text, "t.contract.yaml", Context()).diagnostics


def test_a_complete_contract_is_silent() -> None:
    assert found(BASE + POST + FALLBACK) == []


@pytest.mark.parametrize("name", ["multidoc_qa.contract.yaml", "grant_agent_turn.contract.yaml", "notes.tools.yaml"])
@pytest.mark.parametrize("trusted", [False, True])
def test_samples_print_no_diagnostic_at_all(name: str, trusted: bool) -> None:
    path = SAMPLES / name
    report = check_file(path, Context(hooks=hook_folder(path.parent, trusted)))
    assert [(d.code, d.line, d.message) for d in report.diagnostics] == []


def test_broken_demos_show_many_families() -> None:
    report = check_file(SAMPLES / "broken" / "multidoc_qa_typos.contract.yaml", Context())
    codes = {d.code for d in report.diagnostics}
    assert {"REF201", "REF202", "EXP101", "EXP201", "EXP202", "EXP301", "EXP401", "EXP501",
            "CON102", "CON103", "CON104", "CON105", "CON106", "CON108", "SCH103"} <= codes
    tools = check_file(SAMPLES / "broken" / "notes_broken.tools.yaml", Context())
    assert {"TOL101", "TOL102", "TOL103", "REF202", "EXP401"} <= {d.code for d in tools.diagnostics}


JITTER_ABOVE_1 = ("CON102", "warning", "retry.jitter 1.01 is above 1: a wait of delay*(1+u) with u in [-1.01, 1.01] can be "
                  "negative", "jitter is relative: use a value between 0 and 1")


@pytest.mark.parametrize(("jitter", "expect"), [
    ("1", []),  # a wait may reach 0, never below: the largest jitter that behaves
    ("1.01", [JITTER_ABOVE_1]),
    ("0", []),  # no spread at all
    ("-0.5", [("SCH104", "error", "remedy.retry.jitter: input should be greater than or equal to 0 (got -0.5)", None)]),
])
def test_a_jitter_above_1_is_reported_at_the_jitter(jitter: str, expect: list[tuple[str, str, str, str | None]]) -> None:
    """CON102's boundary: jitter is relative, so above 1 a wait can be negative (below 0 is not a jitter at all)."""
    text = BASE + POST + FALLBACK + f"remedy:\n  retry: {{tries: 3, delay: 1, jitter: {jitter}}}\n"
    found = diags(text)
    assert [(d.code, d.severity, d.message, d.hint) for d in found] == expect
    assert all((d.line, d.column) == (text.count("\n"), text.splitlines()[-1].index(jitter) + 1) for d in found)


def test_expression_errors_point_inside_a_folded_block_scalar() -> None:
    text = BASE + """post:
  - assert: >-
      output.answer != "" and
      output.scroe > 0.5
""" + FALLBACK
    (d,) = diags(text)
    assert (d.code, d.line, d.column, d.end_column) == ("EXP201", 21, 14, 19)
    assert d.hint == "did you mean 'score'?"


def test_undeclared_type_points_at_the_name_inside_the_type_string_with_a_hint() -> None:
    text = BASE.replace('{type: "list[str]", default: []', '{type: "list[Sorce] | None", default: []') + POST + FALLBACK
    text = text.replace("  A:\n", "  Source:\n    description: A source.\n    fields:\n      url: {type: str, description: Where.}\n  A:\n")
    (d,) = diags(text)
    assert (d.code, d.line, d.column) == ("REF201", 10, 26)
    assert d.hint == "did you mean 'Source'?"


def test_malformed_type_string_is_a_shape_error_at_the_problem() -> None:
    text = BASE.replace('"list[str]"', '"list[str"') + POST + FALLBACK
    (d,) = diags(text)
    assert (d.code, d.line, d.column) == ("SCH103", 10, 29)  # at the end, where "]" is missing


def test_act_is_in_scope_of_post_only_when_there_is_an_act() -> None:
    with_act = BASE + """intermediate: Q
act:
  assign:
    text: input.text.strip()
    docs: "[d for d in input.docs if d]"
post:
  - assert: len(output.answer) < 10 * len(act.text) + 100
""" + FALLBACK
    assert found(with_act) == []
    without = BASE + "post:\n  - assert: len(output.answer) < len(act.text)\n" + FALLBACK
    ((code, line, col),) = found(without)
    assert (code, line, col) == ("EXP202", 19, 38)


def test_fallback_values_are_evaluated_and_validated_against_the_output() -> None:
    text = BASE + POST + """fallback:
  answer: input.text
  score: "2 * 0.75"
"""
    (d,) = diags(text)
    assert d.code == "CON103" and (d.line, d.column) == (22, 10)
    assert "less than or equal to 1" in d.message and "1.5" in d.message


def test_on_failure_raise_needs_no_fallback() -> None:
    assert found(BASE + POST + "on_failure: raise\n") == []


def test_a_prompt_may_show_json_examples_without_placeholder_warnings() -> None:
    text = BASE.replace("prompt: Answer the question.",
                        'prompt: \'Answer as JSON like {"answer": "...", "score": 0.5}.\'') + POST + FALLBACK
    assert found(text) == []


def test_suppression_comment_silences_a_contract_rule() -> None:
    text = BASE.replace("output: A\n", "# contractstudio: ignore[CON107]\noutput: A\n") + FALLBACK
    assert found(text) == []
    assert [c for c, _, _ in found(BASE + FALLBACK)] == ["CON107"]


SCENARIO = BASE + POST + FALLBACK + """remedy:
  retry: {tries: 2}
scenarios:
  - name: s
    input: {text: q}
    responses:
%s
    expect: %s
"""
GOOD = """      - '{"answer": "a", "score": 0.5}'"""
BAD = """      - 'no json here'"""


@pytest.mark.parametrize(
    ("responses", "expect"),
    [
        ([BAD, GOOD], "{successful: true, llm_calls: 2, remedy_attempts: 1}"),  # a deliberately broken first reply
        ([GOOD, GOOD], "{successful: true}"),
        ([BAD, BAD, BAD], "{successful: false, llm_calls: 3}"),
        ([BAD], "{successful: false, llm_calls: 1}"),
        ([GOOD], "{successful: true, output: {answer: a}}"),
        ([BAD, BAD, GOOD], "{successful: true, llm_calls: 3}"),
    ],
)
def test_scenarios_that_can_hold_are_not_reported(responses: list[str], expect: str) -> None:
    assert found(SCENARIO % ("\n".join(responses), expect)) == []


@pytest.mark.parametrize(
    ("responses", "expect", "words"),
    [
        ([GOOD], "{llm_calls: 2}", "scripts only 1 response"),
        ([BAD, BAD, BAD, BAD], "{llm_calls: 4}", "at most 3"),
        ([GOOD, BAD], "{successful: true, llm_calls: 2}", "must accept response 2"),
        ([BAD, BAD], "{successful: true}", "no response is a valid A"),
        ([GOOD], "{successful: true, raises: true}", "never raises"),
        ([GOOD], "{remedy_attempts: 3}", "at most 2"),
        ([GOOD], "{successful: true, llm_calls: 0}", "0 LLM calls"),
    ],
)
def test_scenarios_that_cannot_hold_are_reported(responses: list[str], expect: str, words: str) -> None:
    found_diags = diags(SCENARIO % ("\n".join(responses), expect))
    assert [d.code for d in found_diags] == ["CON108"]
    assert words in found_diags[0].message


def test_a_scenario_whose_input_certainly_fails_pre_cannot_succeed() -> None:
    text = (SCENARIO % (GOOD, "{successful: true}")).replace("input: {text: q}", "input: {text: '  '}")
    text = text.replace("output: A\n", 'output: A\npre:\n  - id: nonempty\n    assert: input.text.strip() != ""\n')
    (d,) = diags(text)
    assert d.code == "CON108" and "fails pre condition 'nonempty'" in d.message


def test_tools_conditions_see_only_their_parameters() -> None:
    text = """kind: tools
name: notes
tools:
  - name: create
    description: Create.
    params:
      title: {type: str, description: Title.}
    preconditions:
      - assert: titl != "" and input.x
"""
    report = check_text(text, "n.tools.yaml", Context())
    assert [(d.code, d.column, d.hint) for d in report.diagnostics] == [
        ("TOL101", 17, "did you mean 'title'?"),
        ("TOL101", 32, None),
    ]


def test_hooks_need_trust_once_per_document_and_are_imported_when_trusted(tmp_path: Path) -> None:
    (tmp_path / "cr_hooks_for_test.py").write_text("def ok(**kw):\n    return True\nVALUE = 1\n")
    text = """kind: tools
name: notes
tools:
  - name: a
    description: A.
    preconditions:
      - python: "cr_hooks_for_test:ok"
    handler: "cr_hooks_for_test:VALUE"
  - name: b
    description: B.
    handler: "cr_hooks_for_test:missing"
"""
    path = tmp_path / "n.tools.yaml"
    path.write_text(text)
    untrusted = check_file(path, Context(hooks=hook_folder(tmp_path, False))).diagnostics
    assert [(d.code, d.line) for d in untrusted] == [("TOL103", 7)]
    trusted = check_file(path, Context(hooks=hook_folder(tmp_path, True))).diagnostics
    assert [(d.code, d.line) for d in trusted] == [("TOL102", 8), ("TOL102", 11)]
    assert "not callable" in trusted[0].message and "no attribute 'missing'" in trusted[1].message


def test_contract_hooks_are_checked_like_tool_hooks(tmp_path: Path) -> None:
    text = BASE + POST + FALLBACK + "pre:\n  - python: \"nowhere_module_for_test:check\"\n"
    path = tmp_path / "c.contract.yaml"
    path.write_text(text)
    assert [d.code for d in check_file(path, Context(hooks=hook_folder(tmp_path, False))).diagnostics] == ["TOL103"]
    assert [d.code for d in check_file(path, Context(hooks=hook_folder(tmp_path, True))).diagnostics] == ["TOL102"]


def test_a_fixed_hook_file_is_seen_on_the_next_check(tmp_path: Path) -> None:
    import os

    hooks = tmp_path / "cr_reload_hooks_for_test.py"
    hooks.write_text("def other(**kw):\n    return True\n")
    path = tmp_path / "n.tools.yaml"
    path.write_text('kind: tools\nname: notes\ntools:\n  - name: a\n    description: A.\n    handler: "cr_reload_hooks_for_test:run"\n')
    assert [d.code for d in check_file(path, Context(hooks=hook_folder(tmp_path, True))).diagnostics] == ["TOL102"]
    hooks.write_text("def run(**kw):\n    return 'ran'\n")
    stat = hooks.stat()
    os.utime(hooks, (stat.st_atime, stat.st_mtime + 5))
    assert check_file(path, Context(hooks=hook_folder(tmp_path, True))).diagnostics == []


@pytest.mark.parametrize(
    ("expect", "words"),
    [
        ("{successful: false}", "expects failure"),
        ("{llm_calls: 2}", "expects 2"),
        ("{remedy_attempts: 1}", "1 remedy attempts"),
        ("{raises: true}", "never raises"),
    ],
)
def test_a_first_reply_that_is_certainly_accepted_decides_the_scenario(expect: str, words: str) -> None:
    found_diags = diags(SCENARIO % ("\n".join([GOOD, GOOD]), expect))
    assert [d.code for d in found_diags] == ["CON108"]
    assert "response 1 is a valid A that passes every condition" in found_diags[0].message and words in found_diags[0].message


def test_a_first_reply_that_a_post_condition_rejects_is_not_assumed_accepted() -> None:
    rejected = """      - '{"answer": "", "score": 0.5}'"""
    assert found(SCENARIO % ("\n".join([rejected, GOOD]), "{successful: true, llm_calls: 2, remedy_attempts: 1}")) == []


# ----------------------------------------------------------------- CON108 is sound

from types import SimpleNamespace  # noqa: E402

from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

_REPLIES = [
    '{"answer": "a", "score": 0.9}',
    '{"answer": "a", "score": 0.2}',
    '{"answer": "", "score": 0.9}',
    '{"answer": "a", "score": 3}',
    "not json",
    "[1, 2]",
    'Sure:\n```json\n{"answer": "b", "score": 0.7}\n```',
]
_INPUTS = [{"text": "q"}, {"text": "  "}, {"question": "q"}]
_SOUND_BASE = BASE.replace("prompt: Answer the question.", "prompt: Answer the question.\npre:\n  - assert: input.text.strip() != ''")


def _scenario_yaml(remedy_pre: bool, on_failure: str, tries: int, inp: dict, replies: list[str], expect: dict) -> str:
    import json

    post = "post:\n  - assert: output.answer != ''\n  - assert: output.score >= 0.5\n"
    lines = [_SOUND_BASE + post + FALLBACK, f"on_failure: {on_failure}",
             f"remedy:\n  pre: {str(remedy_pre).lower()}\n  retry: {{tries: {tries}}}",
             "scenarios:", "  - name: generated", f"    input: {json.dumps(inp)}", f"    responses: {json.dumps(replies)}"]
    lines.append(f"    expect: {json.dumps(expect)}")
    return "\n".join(lines) + "\n"


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    remedy_pre=st.booleans(),
    on_failure=st.sampled_from(["fallback", "raise"]),
    tries=st.integers(1, 2),
    inp=st.sampled_from(_INPUTS),
    replies=st.lists(st.sampled_from(_REPLIES), min_size=0, max_size=4),
    expect=st.fixed_dictionaries(
        {},
        optional={
            "successful": st.booleans(),
            "llm_calls": st.integers(0, 5),
            "remedy_attempts": st.integers(0, 4),
            "raises": st.booleans(),
            "output": st.sampled_from([{"answer": "a"}, {"answr": "a"}]),
        },
    ),
)
def test_con108_only_reports_scenarios_that_really_fail(remedy_pre: bool, on_failure: str, tries: int, inp: dict,
                                                       replies: list[str], expect: dict) -> None:
    from contractstudio.commands.test import run_scenario
    from contractstudio.runtime.compiled import CompiledContract
    from contractstudio.runtime.perf import PerfStats

    report = check_text(_scenario_yaml(remedy_pre, on_failure, tries, inp, replies, expect), "g.contract.yaml", Context())
    codes = [d.code for d in report.diagnostics]
    assert set(codes) <= {"CON108", "CON101"}, report.diagnostics
    doc = report.documents[0].model
    contract = SimpleNamespace(plan=CompiledContract.of_document(doc), perf=PerfStats())
    problems = run_scenario(contract, doc.scenarios[0])
    if "CON108" in codes:
        assert problems, f"CON108 said this cannot hold, but it passed: {[d.message for d in report.diagnostics]}"


@pytest.mark.parametrize(
    ("written", "line", "column"),
    [
        ('output.answer != "" and\n      output.scroe > 0.5', 20, 14),  # a plain scalar over two lines
        ('"output.answer != \'\' and\n      output.scroe > 0.5"', 20, 14),  # a double-quoted one
        ('>\n      output.answer != ""\n        and output.scroe > 0.5', 21, 20),  # folded, with a more-indented line
        ('|\n      output.answer != "" and\n\n        output.scroe > 0.5', 22, 16),  # literal, with a blank line
    ],
)
def test_expression_positions_in_multi_line_scalars(written: str, line: int, column: int) -> None:
    text = BASE + "post:\n  - assert: " + written + "\n" + FALLBACK
    (d,) = diags(text)
    assert (d.code, d.line, d.column, d.end_column - d.column) == ("EXP201", line, column, 5)
