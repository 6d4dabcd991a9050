"""A contract enforces exactly what its types say: every pattern, every constraint, or a finding at its key."""

from __future__ import annotations

from pathlib import Path

import pytest

import contractstudio as cs
from contractstudio.analysis.check import Context, check_text
from contractstudio.runtime.call_state import CallOptions

NO_WAIT = CallOptions(wait=False)
LINE = 13  # the line of the first output field in contract()


def contract(output_fields: str, *, extra: str = "forbid") -> str:
    """A small contract whose output type has the given fields (YAML flow mappings, one per line)."""
    fields = "\n".join(f"      {line}" for line in output_fields.strip().splitlines())
    return f"""kind: contract
name: t
prompt: Answer.
types:
  Q:
    description: A question.
    fields:
      text: {{type: str, description: The question.}}
  A:
    description: An answer.
    extra: {extra}
    fields:
{fields}
input: Q
output: A
post:
  - assert: len(str(output.name)) > 0
on_failure: raise
"""


def codes(text: str) -> list[tuple[str, int, int]]:
    return [(d.code, d.line, d.column) for d in check_text(text, "t.contract.yaml", Context()).diagnostics]


def messages(text: str) -> list[str]:
    return [f"{d.code} {d.message}" for d in check_text(text, "t.contract.yaml", Context()).diagnostics]


LOOKAHEAD = contract("""
name: {type: str, pattern: "^(?!admin)[a-z]+$", description: A user name.}
score: {type: int, ge: 0, le: 5, description: A score.}
""")


def load(tmp_path: Path, text: str) -> cs.Contract:  # type: ignore[name-defined]
    path = tmp_path / "t.contract.yaml"
    path.write_text(text)
    return cs.load(path)


# ----------------------------------------------------------------- 1. patterns and unbuildable types


def test_a_lookahead_pattern_is_enforced_and_the_rest_of_the_type_still_is(tmp_path: Path) -> None:
    assert codes(LOOKAHEAD) == []
    c = load(tmp_path, LOOKAHEAD)
    with pytest.raises(cs.ContractViolation) as err:  # the whole type used to vanish: this passed as the output
        c.call({"text": "q"}, ['{"totally": "wrong", "score": 7}'], options=NO_WAIT)
    text = "\n".join(err.value.errors)
    assert "output.name: required field is missing" in text
    assert "output.totally" in text and "not declared" in text
    assert "output.score = 7" in text
    with pytest.raises(cs.ContractViolation) as err:
        c.call({"text": "q"}, ['{"name": "admin", "score": 1}'], options=NO_WAIT)
    assert "String should match pattern '^(?!admin)[a-z]+$'" in "\n".join(err.value.errors)
    result = c.call({"text": "q"}, ['{"name": "bob", "score": 1}'], options=NO_WAIT)
    assert result.successful and result.output_data == {"name": "bob", "score": 1}


def test_the_backtracking_patterns_of_one_validation_share_one_regex_budget_and_only_they_make_one(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A validation makes a regex budget only for a type that can check a backtracking pattern, however deep (here in a
    list of a nested type); every pattern it checks draws on that one, and the next validation has its own."""
    from contractstudio.documents import patterns

    text = contract("""
name: {type: str, description: A user name.}
tags: {type: "list[Tag]", description: Tags.}
""").replace("input: Q\n", "  Tag:\n    description: A tag.\n    fields:\n"
             "      label: {type: str, pattern: \"^(?!admin)[a-z]+$\", description: A label.}\ninput: Q\n")
    c = load(tmp_path, text)
    used: list[object] = []
    active = patterns.active_budget
    monkeypatch.setattr(patterns, "active_budget", lambda seconds: used.append(patterns._ACTIVE.get()) or active(seconds))
    made: list[object] = []
    budget = patterns.RegexBudget
    monkeypatch.setattr(patterns, "RegexBudget", lambda seconds: made.append(seconds) or budget(seconds))
    output = c.plan.output
    for _ in range(2):
        value, errors = output.validate({"name": "bob", "tags": [{"label": "ab"}, {"label": "cd"}, {"label": "ef"}]})
        assert errors == [] and value is not None
    assert len(used) == 6 and None not in used
    assert used[0] is used[1] is used[2] and used[3] is used[4] is used[5] and used[0] is not used[3]
    assert len(made) == 2  # one per validation
    _, errors = output.validate({"name": "bob", "tags": [{"label": "admin"}]})
    assert "String should match pattern '^(?!admin)[a-z]+$'" in errors[0]
    made.clear()
    c.plan.input.validate({"text": "q"})  # no pattern in it: no budget made
    assert made == []


def test_an_invalid_pattern_is_an_error_at_its_position() -> None:
    text = contract("""
name: {type: str, pattern: "^[a-z+$", description: A user name.}
""")
    found = check_text(text, "t.contract.yaml", Context()).diagnostics
    assert [(d.code, d.severity, d.line, d.column) for d in found] == [("SCH103", "error", LINE, 36)]  # the unclosed `[`
    assert "not a valid regular expression" in found[0].message and "unterminated character set" in found[0].message


def test_a_type_pydantic_cannot_build_is_an_error_and_the_runtime_refuses_it(tmp_path: Path) -> None:
    text = contract("""
name: {type: str, max_length: 1000000000000000000000000000000, description: A user name.}
""")
    found = check_text(text, "t.contract.yaml", Context()).diagnostics
    assert [(d.code, d.severity, d.line, d.column) for d in found] == [("SCH107", "error", LINE, 7)]
    assert "type 'A' cannot be built" in found[0].message
    with pytest.raises(cs.ContractError):
        load(tmp_path, text)
    # and never a permissive model, even when a program builds the contract around the analyzer
    from contractstudio.analysis.check import check_text as analyze
    from contractstudio.runtime.api import Contract

    doc = analyze(text, "t.contract.yaml", Context()).documents[0].model
    with pytest.raises(cs.ContractError, match="cannot be built"):
        Contract(doc)


def test_a_field_named_like_a_generated_name_does_not_replace_another_field(tmp_path: Path) -> None:
    text = contract("""
name: {type: str, description: A user name.}
my-key: {type: int, description: Needs an alias.}
field_1: {type: str, description: Looks like a generated name.}
""")
    c = load(tmp_path, text)
    with pytest.raises(cs.ContractViolation) as err:
        c.call({"text": "q"}, ['{"name": "bob", "field_1": "x"}'], options=NO_WAIT)
    assert "output.my-key: required field is missing" in err.value.errors
    result = c.call({"text": "q"}, ['{"name": "bob", "my-key": 1, "field_1": "x"}'], options=NO_WAIT)
    assert result.output_data == {"name": "bob", "my-key": 1, "field_1": "x"}


# ----------------------------------------------------------------- 2. impossible or ignored constraints


@pytest.mark.parametrize(
    ("field", "code", "key", "words"),
    [
        ('name: {type: str, min_length: 5, max_length: 2, description: N.}', "SCH106", "min_length", "min_length 5 is above max_length 2"),
        ('name: {type: int, ge: 10, le: 1, description: N.}', "SCH106", "ge", "no int is >= 10 and <= 1"),
        ('name: {type: float, gt: 1, lt: 1, description: N.}', "SCH106", "gt", "no number is > 1 and < 1"),
        ('name: {type: int, default: 0, ge: 1, le: 10, description: N.}', "SCH106", "default", "default 0 is not a valid value"),
        ('name: {type: str, default: "toolong", max_length: 3, description: N.}', "SCH106", "default", "at most 3 characters"),
        ('name: {type: str, default: "ADMIN", pattern: "^[a-z]+$", description: N.}', "SCH106", "default", "should match pattern"),
        ('name: {type: str, default: 5, description: N.}', "SCH106", "default", "valid string"),
        ('name: {type: str, ge: 1, description: N.}', "SCH105", "ge", "`ge` does not apply to str"),
        ('name: {type: int, pattern: "^[0-9]+$", description: N.}', "SCH105", "pattern", "`pattern` does not apply to int"),
        ('name: {type: bool, min_length: 1, description: N.}', "SCH105", "min_length", "`min_length` does not apply to bool"),
        ('name: {type: "list[str]", pattern: "^a", description: N.}', "SCH105", "pattern", "`pattern` does not apply to list[str]"),
    ],
)
def test_impossible_or_ignored_constraints_are_errors_at_their_key(field: str, code: str, key: str, words: str) -> None:
    text = contract(field)
    found = check_text(text, "t.contract.yaml", Context()).diagnostics
    line = text.splitlines()[LINE - 1]
    assert [(d.code, d.severity, d.line, d.column) for d in found] == [(code, "error", LINE, line.index(f" {key}:") + 2)]
    assert words in found[0].message


@pytest.mark.parametrize(
    "field",
    [
        'name: {type: str, min_length: 2, max_length: 2, description: N.}',
        'name: {type: "int | None", default: null, ge: 1, le: 10, description: N.}',
        'name: {type: "int | None", default: 3, ge: 1, le: 10, description: N.}',
        'name: {type: "list[str]", min_length: 1, description: N.}',
        'name: {type: "str | None", pattern: "^[a-z]+$", description: N.}',
        'name: {type: float, ge: 0, le: 0, description: N.}',
    ],
)
def test_constraints_that_apply_and_can_hold_are_silent(field: str) -> None:
    assert codes(contract(field)) == []


# ----------------------------------------------------------------- 4. on_failure follows whether a fallback is declared

SKELETON = """kind: contract
name: smallest
prompt: Answer.
types:
  Q: {description: A question., fields: {text: {type: str, description: The question.}}}
  A: {description: An answer., fields: {answer: {type: str, description: The answer.}}}
input: Q
output: A
"""
NOT_JSON = ["not json"] * 6  # the first reply and every remedy attempt fail


def test_the_smallest_skeleton_has_no_error_and_raises_when_it_fails(tmp_path: Path) -> None:
    assert [d.code for d in check_text(SKELETON, "t.contract.yaml", Context()).diagnostics if d.severity == "error"] == []
    with pytest.raises(cs.ContractViolation) as err:
        load(tmp_path, SKELETON).call({"text": "q"}, NOT_JSON, options=NO_WAIT)
    assert "the reply is not valid JSON" in err.value.errors[0]


def test_a_declared_fallback_is_returned_when_on_failure_is_not_given(tmp_path: Path) -> None:
    text = SKELETON + "fallback: {answer: \"'unknown'\"}\n"
    assert [d.code for d in check_text(text, "t.contract.yaml", Context()).diagnostics if d.severity == "error"] == []
    result = load(tmp_path, text).call({"text": "q"}, NOT_JSON, options=NO_WAIT)
    assert not result.successful and result.output_data == {"answer": "unknown"}


def test_on_failure_fallback_still_needs_a_fallback_that_is_a_valid_output() -> None:
    assert sorted(c for c, _, _ in codes(SKELETON + "on_failure: fallback\n")) == ["CON103", "CON107"]
    assert sorted(c for c, _, _ in codes(SKELETON + "fallback: {answr: \"'x'\"}\n")) == ["CON103", "CON103", "CON107"]


# ----------------------------------------------------------------- 6. invalid input is the caller's error

RUNTIME = Path(__file__).parent / "runtime_contracts"
QA = RUNTIME / "qa.contract.yaml"  # on_failure: fallback, with a fallback
BAD_INPUT = {"query": 5, "documents": []}
GOOD_REPLY = '{"answer": "x", "evidence": [], "coverage_score": 0.9}'


def test_invalid_input_raises_even_when_a_fallback_exists_and_no_model_is_called() -> None:
    with pytest.raises(cs.InvalidInput) as err:
        cs.load(QA).call(BAD_INPUT, [GOOD_REPLY], options=NO_WAIT)
    assert isinstance(err.value, ValueError)
    assert str(err.value).startswith("contract 'qa': the input is not a valid QAInput")
    assert err.value.errors == ["input.query = 5: Input should be a valid string"]
    assert err.value.trace.of_type("llm_request") == []
    assert [e.data["used"] for e in err.value.trace.of_type("forward")] == ["raise"]  # never the fallback


def test_a_pre_remedy_repairs_an_invalid_input() -> None:
    contract = cs.load(RUNTIME / "pre_remedy.contract.yaml")
    result = contract.call({"nom": "Ada"}, ['{"name": "Ada"}', '{"text": "Hello, Ada"}'], options=NO_WAIT)
    assert result.successful and result.output_data == {"text": "Hello, Ada"}
    first = result.trace.of_type("llm_request")[0]
    assert first["purpose"] == "remedy_pre"
    assert '"nom": "Ada"' in first["messages"][1]["content"]
    assert "1. input.name: required field is missing" in first["messages"][1]["content"]


def test_a_pre_remedy_that_cannot_repair_the_input_still_raises() -> None:
    contract = cs.load(RUNTIME / "pre_remedy.contract.yaml")  # tries: 2
    with pytest.raises(cs.InvalidInput) as err:
        contract.call({"nom": "Ada"}, ['{"nom": 1}', '{"name": " "}'], options=NO_WAIT)
    assert err.value.errors[0] == "input.name: required field is missing"
    assert len(err.value.trace.of_type("llm_request")) == 2


def test_run_refuses_an_invalid_input_with_exit_1_and_the_validation_errors(
        capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import json

    from openai_server import OpenAIServer

    from contractstudio.cli import main

    inp = tmp_path / "in.json"
    inp.write_text(json.dumps(BAD_INPUT))
    monkeypatch.setenv("OPENAI_API_KEY", "sk-local-test-key-000")
    with OpenAIServer([GOOD_REPLY]) as server:
        live = ["--model", "openai/test-model", "--api-base", server.base_url, "--no-wait"]
        code = main(["run", str(QA), "--input", str(inp), *live])
        out, _ = capsys.readouterr()
        assert code == 1
        assert "FAILED (the input is not a valid QAInput: nothing was called)" in out
        assert "1. input.query = 5: Input should be a valid string" in out
        assert "fallback" not in out
        code = main(["run", str(QA), "--input", str(inp), *live, "--json"])
        data = json.loads(capsys.readouterr().out)
        assert server.requests == []
    assert code == 1
    assert data["invalid_input"] is True and data["raised"] is True and data["output"] is None
    assert data["errors"] == ["input.query = 5: Input should be a valid string"]


# ----------------------------------------------------------------- 7. analyzer gaps


def test_every_missing_required_key_is_reported_in_one_pass() -> None:
    found = check_text("kind: contract\ndescription: Nothing else yet.\n", "t.contract.yaml", Context()).diagnostics
    assert [(d.code, d.line, d.message) for d in found] == [
        ("SCH101", 1, f"missing required key '{key}' in the document")
        for key in ("input", "name", "output", "prompt")]  # ordered by message
    agent = "kind: agent\nname: a\ntasks:\n  - description: x\n"
    found = check_text(agent, "a.agent.yaml", Context()).diagnostics
    assert [(d.code, d.line, d.message) for d in found] == [
        ("SCH101", 4, "missing required key 'id' in tasks.0"), ("SCH101", 4, "missing required key 'oracle' in tasks.0")]


AGENT = """kind: agent
name: support
tools:
  - name: search_kb
  - name: issue_refund
tasks:
  - id: answer
    oracle: llm_judge
    llm_calls: 2
ensemble: {judges: [openai/gpt-4o-mini]}
"""


def test_a_required_tool_pattern_that_matches_no_declared_tool_is_a_dangling_reference() -> None:
    text = AGENT + "policies:\n  - id: must-fetch\n    require: {tool_pattern: \"fetch_.*\"}\n"
    found = check_text(text, "a.agent.yaml", Context()).diagnostics
    assert [(d.code, d.severity, d.line, d.column) for d in found] == [("AGT401", "error", 13, 29)]
    assert found[0].message == "policy 'must-fetch' requires a tool matching 'fetch_.*', but no declared tool does"
    assert "search_kb, issue_refund" in (found[0].hint or "")
    matching = AGENT + "policies:\n  - id: must-search\n    require: {tool_pattern: \"search_.*\"}\n"
    assert check_text(matching, "a.agent.yaml", Context()).diagnostics == []


def test_a_cost_budget_for_a_model_without_a_known_price_says_so_naming_the_model() -> None:
    text = AGENT + """constraints: {max_cost_usd: 0.01}
backend:
  model: acme/unpriced-model-7
  tokens_per_call: {prompt: 1500, completion: 300}
"""
    found = check_text(text, "a.agent.yaml", Context()).diagnostics
    assert [(d.code, d.severity, d.line) for d in found] == [("AGT303", "info", 11)]
    assert "'acme/unpriced-model-7'" in found[0].message and "max_cost_usd is not checked" in found[0].message
    assert "cost_per_call_usd" in (found[0].hint or "")
    priced = text.replace("acme/unpriced-model-7", "openai/gpt-4o-mini")
    assert check_text(priced, "a.agent.yaml", Context()).diagnostics == []
    overridden = text + "  cost_per_call_usd: 0.001\n"
    assert check_text(overridden, "a.agent.yaml", Context()).diagnostics == []
