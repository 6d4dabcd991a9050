"""Issue 18.8: one expression budget per file's analysis and per call, on top of the per-evaluation bounds.

Scaled down: a few conditions that each do real work, times a few scenarios (or placeholders); the shared
budget is lowered so the test is fast. The assertions are on what the user sees (the finding or failure
naming the condition or template), never on time.
"""

from __future__ import annotations

from pathlib import Path

import pytest

import contractstudio as cs
from contractstudio.analysis.check import check_text
from contractstudio.expressions import sandbox
from contractstudio.runtime.call_state import CallOptions

# Each evaluation walks a list of about 400 items: a few thousand operations, far below the per-evaluation bounds.
EXPENSIVE = 'len([c for c in input.text * 40 if c != ""]) > 0'
SMALL_BUDGET = 20_000  # a handful of those evaluations


def _contract(conditions: int, scenarios: int, message: str | None = None) -> str:
    pre = "".join(f"  - id: c{i}\n    assert: '{EXPENSIVE} or {i} < 0'\n" for i in range(conditions))
    post = "  - assert: output.answer != \"\"\n"
    if message is not None:
        post = f"  - assert: output.answer == \"never\"\n    message: \"{message}\"\n"
    runs = "".join(
        f"  - name: s{i}\n    input: {{text: abcdefghij}}\n    responses: ['{{\"answer\": \"a\"}}']\n"
        f"    expect: {{successful: true}}\n" for i in range(scenarios))
    return (
        "kind: contract\nname: heavy\ndescription: Many expensive conditions.\nprompt: Answer.\n"
        "types:\n  Q:\n    description: A question.\n    fields:\n      text: {type: str, description: The text.}\n"
        "  A:\n    description: An answer.\n    fields:\n      answer: {type: str, description: The answer.}\n"
        f"input: Q\noutput: A\npre:\n{pre}post:\n{post}on_failure: raise\n"
        + (f"scenarios:\n{runs}" if scenarios else "")
    )


def test_an_analysis_stops_evaluating_when_its_expression_budget_is_spent_and_names_the_condition(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sandbox, "MAX_SHARED_WORK", SMALL_BUDGET)
    report = check_text(_contract(conditions=8, scenarios=8), "heavy.contract.yaml")
    limits = [d for d in report.diagnostics if d.code == "YML006"]
    assert len(limits) == 1, [d.message for d in report.diagnostics]
    assert "expression budget of this file's analysis (20,000 operations) is spent" in limits[0].message
    assert "condition `len([c for c in input.text * 40" in limits[0].message
    # It points at the condition refused first (an `assert:` line of the pre list).
    line = _contract(conditions=8, scenarios=8).splitlines()[limits[0].line - 1]
    assert "assert:" in line and EXPENSIVE in line


def test_an_analysis_within_its_budget_reports_no_limit() -> None:
    report = check_text(_contract(conditions=3, scenarios=3), "heavy.contract.yaml")
    assert not [d for d in report.diagnostics if d.code == "YML006"]


def test_a_call_whose_message_placeholders_spend_its_budget_fails_naming_the_template(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    placeholders = " ".join(["{len([c for c in input.text * 40 if c != ''])}"] * 30)
    path = tmp_path / "heavy.contract.yaml"
    path.write_text(_contract(conditions=1, scenarios=0, message=placeholders), encoding="utf-8")
    monkeypatch.setattr(sandbox, "MAX_SHARED_WORK", SMALL_BUDGET)
    with pytest.raises(cs.ContractViolation) as failed:
        cs.load(path).call({"text": "abcdefghij"}, ['{"answer": "a"}'] * 3, options=CallOptions(wait=False))
    text = str(failed.value)
    assert "the message could not be rendered: the expression budget of this call (20,000 operations) is spent" in text
    assert placeholders[:40] in text  # the template that ran out


def test_a_call_whose_budget_is_spent_asks_the_model_no_more_and_says_why(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Every post-condition does real work and fails: the first reply's judgement spends the call's budget, so a
    # remedy reply could no longer be judged. The call stops there instead of asking the model again.
    post = "".join(f"  - id: p{i}\n    assert: '{EXPENSIVE} and output.answer == \"never\"'\n" for i in range(8))
    text = _contract(conditions=0, scenarios=0).replace("pre:\npost:\n  - assert: output.answer != \"\"\n",
                                                        f"post:\n{post}")
    assert "id: p7" in text
    path = tmp_path / "heavy.contract.yaml"
    path.write_text(text, encoding="utf-8")
    monkeypatch.setattr(sandbox, "MAX_SHARED_WORK", SMALL_BUDGET)
    with pytest.raises(cs.ContractViolation) as failed:
        cs.load(path).call({"text": "abcdefghij"}, ['{"answer": "a"}'] * 4, options=CallOptions(wait=False))
    result = failed.value.result
    assert result.llm_calls == 1  # no remedy request once nothing more can be judged
    assert result.attempts == 0
    assert any("the expression budget of this call (20,000 operations) is spent: no remedy was asked" in e
               for e in result.errors), result.errors
