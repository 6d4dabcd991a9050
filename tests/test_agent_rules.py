"""Agent contracts (seed 001): its regression list, plus what the messages and positions tell a user."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest
from conftest import FIXTURES, SAMPLES

from contractstudio.analysis.check import check_text
from contractstudio.cli import main
from contractstudio.findings.diagnostics import Diagnostic

AGT = FIXTURES / "err" / "AGT"


def analyze(text: str) -> list[Diagnostic]:
    return check_text(textwrap.dedent(text), "a.agent.yaml").diagnostics


def found(path) -> list[tuple[int, str, str]]:  # type: ignore[no-untyped-def]
    return [(d.line, d.code, d.severity) for d in check_text(path.read_text(), path.name).diagnostics]


def test_analyze_empty_contract_has_no_diagnostics() -> None:
    assert analyze("kind: agent\nname: empty\n") == []


def test_analyze_detects_policy_contradiction_forbid_vs_require_tool() -> None:
    [d] = check_text((AGT / "forbid_vs_require.yaml").read_text(), "f.yaml").diagnostics
    assert (d.code, d.severity, d.line) == ("AGT101", "error", 9)
    assert d.message == "policy 'no-search' forbids tool 'search_kb', which policy 'must-search' requires on overlapping scope"
    assert d.related[0].line == 7 and d.related[0].message == "policy 'must-search' requires it"


def test_analyze_detects_policy_contradiction_by_explicit_conflicts_with_pair_once() -> None:
    assert found(AGT / "conflicts_with.yaml") == [(13, "AGT101", "error")]


def test_analyze_detects_forbid_pattern_matching_a_required_tool() -> None:
    messages = [d.message for d in check_text((AGT / "pattern_hits_required.yaml").read_text(), "p.yaml").diagnostics]
    assert "matches tool 'issue_refund' that policy 'must-refund' requires" in messages[1]
    assert "matches every tool policy 'must-issue-something' may use (issue_refund, issue_credit)" in messages[0]


def test_disjoint_scopes_and_a_pattern_that_spares_the_required_tool_are_consistent() -> None:
    assert found(FIXTURES / "ok/agt_disjoint_scopes.yaml") == []


def test_analyze_detects_oracle_mismatch_human_without_annotator_config() -> None:
    assert found(AGT / "human_without_annotators.yaml") == [(5, "AGT201", "error")]
    # no corpus at all is the same mismatch
    [d] = analyze("""\
        kind: agent
        name: a
        tasks: [{id: t, oracle: human}]
        """)
    assert d.code == "AGT201" and "no human annotator" in d.message


def test_analyze_detects_oracle_mismatch_functional_without_code_criteria() -> None:
    assert found(AGT / "functional_without_code.yaml") == [(5, "AGT202", "error")]


def test_analyze_detects_oracle_mismatch_llm_judge_without_judges() -> None:
    assert found(AGT / "judge_without_judges.yaml") == [(5, "AGT203", "error")]


def test_analyze_detects_impossible_latency_constraint() -> None:
    # the seed's example: max_latency_ms: 100 with a task of 3 sequential LLM calls
    [d] = analyze("""\
        kind: agent
        name: a
        tasks:
          - id: t
            oracle: llm_judge
            llm_calls: 3
        ensemble: {judges: [openai/gpt-4o-mini]}
        constraints: {max_latency_ms: 100}
        backend:
          model: openai/gpt-4o-mini
          latency_ms_per_call: {min: 300, typical: 800}
        """)
    assert (d.code, d.severity, d.line) == ("AGT301", "error", 6)
    assert d.message == "task 't' certainly exceeds constraints.max_latency_ms 100 ms: 3 sequential call(s) take at least 900 ms"
    assert d.related[0].line == 8


def test_analyze_detects_impossible_call_count_and_minimum_cost() -> None:
    codes = found(AGT / "impossible_budget.yaml")
    assert codes.count((11, "AGT301", "error")) == 3  # latency, calls and cost of 'chatty'
    assert (8, "AGT302", "warning") in codes  # 'quick': only its typical cost is over


def test_analyze_warns_on_near_limit_budget_constraint() -> None:
    diags = check_text((AGT / "near_limit_budget.yaml").read_text(), "n.yaml").diagnostics
    assert {(d.code, d.severity) for d in diags} == {("AGT302", "warning")}
    assert len(diags) == 3 and all("task 'research'" in d.message and "(80%)" in d.message for d in diags)


def test_no_backend_means_no_budget_check() -> None:
    assert found(FIXTURES / "ok/agt_no_backend_no_budget_check.yaml") == []


def test_analyze_detects_dangling_cross_level_references() -> None:
    diags = check_text((AGT / "dangling_reference.yaml").read_text(), "d.yaml").diagnostics
    assert [d.code for d in diags] == ["AGT401"] * 5
    hints = [d.hint for d in diags]
    assert hints[0] == "did you mean 'search_kb'?" and hints[3] == "did you mean 'search_kb'?" and hints[4] == "did you mean 'status'?"


def test_success_criteria_asserts_are_type_checked_against_the_schema() -> None:
    diags = check_text((AGT / "criterion_expression.yaml").read_text(), "c.yaml").diagnostics
    assert [(d.line, d.column, d.code) for d in diags] == [(11, 24, "EXP201"), (12, 17, "EXP202"), (13, 37, "EXP501")]
    assert diags[0].hint == "did you mean 'status'?"


def test_analyze_passes_on_well_formed_fixture_contract() -> None:
    for name in ("billing_support.agent.yaml", "support_oracles.agent.yaml"):
        assert check_text((SAMPLES / name).read_text(), name).diagnostics == []


def test_every_oracle_kind_is_in_the_oracles_sample() -> None:
    text = (SAMPLES / "support_oracles.agent.yaml").read_text()
    assert all(f"oracle: {kind}" in text for kind in ("functional", "human", "llm_judge"))


def test_cli_validate_exits_nonzero_on_fatal(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", str(AGT / "forbid_vs_require.yaml")]) == 1
    assert main(["check", str(SAMPLES / "billing_support.agent.yaml")]) == 0
    assert main(["check", str(AGT / "near_limit_budget.yaml")]) == 0  # warnings only
    capsys.readouterr()


def test_cli_validate_prints_all_diagnostics(capsys: pytest.CaptureFixture[str]) -> None:
    path = SAMPLES / "broken" / "billing_support_broken.agent.yaml"
    expected = check_text(path.read_text(), str(path)).diagnostics
    assert len({d.code for d in expected}) >= 6
    assert main(["check", "--format", "json", str(path)]) == 1
    printed = json.loads(capsys.readouterr().out)["diagnostics"]
    assert [(d["line"], d["code"]) for d in printed] == [(d.line, d.code) for d in expected]
    assert main(["check", "--no-color", str(path)]) == 1
    text = capsys.readouterr().out
    for d in expected:
        assert f":{d.line}:{d.column}: {d.severity} {d.code} {d.message}" in text


def test_price_table_is_read_without_importing_litellm() -> None:
    code = ("import sys; from contractstudio.analysis import budget; p = budget.price_of('openai/gpt-4o-mini'); "
            "print(p.prompt > 0 and p.completion > 0, budget.price_of('no-such/model-xyz'), 'litellm' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.stdout.split() == ["True", "None", "False"]


def test_schema_and_tool_parameter_types_are_checked() -> None:
    diags = check_text((AGT / "l1_types.yaml").read_text(), "l.yaml").diagnostics
    assert [(d.code, d.message) for d in diags] == [
        ("REF201", "type of parameter 'invoice' of tool 'lookup': 'Invoice' is not a type an agent can use"),
        ("SCH103", "type of parameter 'limit' of tool 'lookup': a type name is missing"),
        ("SCH103", diags[2].message),
    ]
    assert diags[2].message.startswith("type of schema field 'status':")


def test_empty_scope_applies_to_no_task_so_it_contradicts_nothing() -> None:
    assert analyze("""\
        kind: agent
        name: a
        tools: [{name: t}]
        policies:
          - {id: need-t, require: {tool: t}}
          - {id: never-t, forbid: {tool: t}, scope: []}
        """) == []


def test_duplicate_tool_policy_and_task_names_are_reported_at_the_second() -> None:
    diags = check_text((AGT / "duplicate_names.yaml").read_text(), "d.yaml").diagnostics
    assert [(d.line, d.code) for d in diags] == [(5, "REF202"), (8, "REF202"), (11, "REF202")]
    assert diags[1].message == "policy id 'no-refunds' is used twice" and diags[1].related[0].line == 7


def test_agt202_is_fatal_only_for_functional_with_prose_criteria() -> None:
    """Seed 001: 'oracle: functional but success_criteria are natural-language sentences' is fatal; a hybrid
    oracle (it can fall back to a judge or a human) or a task with no criteria yet is a warning (issue 21.4)."""
    def agt202(oracle: str, criteria: str) -> list[str]:
        text = f"kind: agent\nname: a\ncorpus: {{annotators: {{human: 1}}}}\nensemble: {{judges: [j]}}\n" \
               f"tasks:\n  - id: t\n    oracle: {oracle}\n{criteria}"
        return [d.severity for d in check_text(text, "a.agent.yaml").diagnostics if d.code == "AGT202"]

    prose = "    success_criteria: [The answer is correct.]\n"
    assert agt202("functional", prose) == ["error"]
    assert agt202("functional", "") == ["warning"]
    assert agt202("hybrid", prose) == ["warning"]
    assert agt202("hybrid", "") == ["warning"]
    assert agt202("hybrid", "    success_criteria: [{assert: output.ok}]\n") == []
