"""SymbolicAI programs as its users write them behave here as on the released package (symbolicai 2.2.0).

Each test's docstring says what the released decorator (`symai/strategy.py`, `symai/models/base.py` of the
2.2.0 wheel) does in the same situation; the assertions are ours, on what the user sees.
"""

from __future__ import annotations

from typing import Any, Literal

import pytest
from pydantic import Field

import contractstudio as cs
from contractstudio.runtime.events import ModelRequest
from contractstudio.symbolic import Expression, LLMDataModel, contract, use_model


class Claim(LLMDataModel):
    text: str = Field(description="A claim to rate.")


class Verdict(LLMDataModel):
    score: float = Field(description="How true the claim is, 0 to 1.")


def call(obj: Any, *replies: str, **kwargs: Any) -> Any:
    with use_model(cs.ScriptedModel(list(replies)), wait=False):
        return obj(**kwargs)


# ---------------------------------------------------------------- 1. forward's return type


def _dict_returner(graceful: bool) -> Any:
    @contract(remedy_retry_params={"tries": 1, "delay": 0, "graceful": graceful})
    class DictReturner(Expression):
        @property
        def prompt(self) -> str:
            return "Rate the claim."

        def forward(self, input: Claim) -> Verdict:
            return {"score": 0.5}  # type: ignore[return-value]

    return DictReturner()


def test_forward_returning_a_dict_for_a_model_annotation_raises_type_error() -> None:
    """2.2.0: `_finalize_contract_output` checks `isinstance(output, output_type)`; a dict for `-> Verdict` raises
    TypeError ("Forward method must return an instance of ...")."""
    with pytest.raises(TypeError, match="must return"):
        call(_dict_returner(False), '{"score": 0.9}', input=Claim(text="c"))


def test_forward_returning_a_dict_with_graceful_returns_the_dict_as_is() -> None:
    """2.2.0: with `graceful: True` the mismatching output is returned as it is (the dict, not a model)."""
    result = call(_dict_returner(True), '{"score": 0.9}', input=Claim(text="c"))
    assert result == {"score": 0.5} and type(result) is dict


# ---------------------------------------------------------------- 4. contract_exception keeps the original exception


class EmptyClaim(ValueError):
    pass


@contract(remedy_retry_params={"tries": 2, "delay": 0})
class Rated(Expression):
    @property
    def prompt(self) -> str:
        return "Rate the claim."

    def pre(self, input: Claim) -> bool:
        if not input.text:
            raise EmptyClaim("The claim is empty.")
        return True

    def post(self, output: Verdict) -> bool:
        if output.score < 0.5:
            raise ValueError(f"Score {output.score} is below 0.5.")
        return True

    def forward(self, input: Claim) -> Verdict:
        return self.contract_result if self.contract_successful else Verdict(score=-1)


def test_a_failed_pre_leaves_the_exception_pre_raised_in_contract_exception() -> None:
    """2.2.0: without `pre_remedy`, `_validate_input` re-raises what `pre` raised and the pipeline stores that very
    exception in `contract_exception` (a user's ValueError subclass stays one)."""
    inst = Rated()
    call(inst, input=Claim(text=""))
    assert type(inst.contract_exception) is EmptyClaim and str(inst.contract_exception) == "The claim is empty."
    assert isinstance(inst.contract_violation, cs.ConditionFailed)  # ours: every error and the trace
    assert inst.contract_violation.trace is inst.contract_trace


def test_a_post_that_exhausts_its_remedies_leaves_a_value_error_with_prompt_result_and_violations() -> None:
    """2.2.0: the type-validation function gives up with `ValueError("[[Prompt]]\\n<prompt>\\n\\n[[Result]]\\n<last
    reply>\\n\\n[[Violations]]\\n<errors>")`, each `post` error written "Semantic validation failed with:\\n<message>"."""
    inst = Rated()
    call(inst, '{"score": 0.1}', '{"score": 0.2}', '{"score": 0.3}', input=Claim(text="c"))
    exc = inst.contract_exception
    assert type(exc) is not cs.ConditionFailed and isinstance(exc, ValueError)
    text = str(exc)
    assert text.startswith("[[Prompt]]\nRate the claim.\n\n[[Result]]\n{\"score\": 0.3}\n\n[[Violations]]\n")
    assert "Semantic validation failed with:\nScore 0.1 is below 0.5." in text
    assert text.endswith("Semantic validation failed with:\nScore 0.3 is below 0.5.")
    assert isinstance(inst.contract_violation, cs.ConditionFailed)
    assert len(inst.contract_trace.of(ModelRequest)) == 3  # 2.2.0: 4 (a zero-shot again before its 2 remedies)


def test_a_post_without_remedy_leaves_the_exception_post_raised() -> None:
    """2.2.0: with `post_remedy=False`, `_validate_output` re-raises what `post` raised: that is `contract_exception`."""
    @contract(post_remedy=False)
    class Once(Rated):
        pass

    inst = Once()
    call(inst, '{"score": 0.1}', input=Claim(text="c"))
    assert type(inst.contract_exception) is ValueError and str(inst.contract_exception) == "Score 0.1 is below 0.5."


def test_replies_that_never_become_the_output_type_leave_a_value_error_with_violations() -> None:
    """2.2.0: replies that never validate end the same way, `ValueError("[[Prompt]]...[[Violations]]...")`."""
    inst = Rated()
    call(inst, "not json", "still not", "no", input=Claim(text="c"))
    assert isinstance(inst.contract_exception, ValueError) and str(inst.contract_exception).startswith("[[Prompt]]\n")
    assert isinstance(inst.contract_violation, cs.InvalidOutput)


# ---------------------------------------------------------------- 5. post's message and argument


def test_post_returning_false_fails_with_semantic_validation_failed() -> None:
    """2.2.0: `post` returning False fails `assert post(output)`; the error is "Semantic validation failed with:"
    (followed by the assertion's empty message; ours names the method that returned False)."""
    @contract(remedy_retry_params={"tries": 1, "delay": 0})
    class FalsePost(Expression):
        @property
        def prompt(self) -> str:
            return "Rate the claim."

        def post(self, output: Verdict) -> bool:
            return output.score > 0.5

        def forward(self, input: Claim) -> Verdict:
            return self.contract_result if self.contract_successful else Verdict(score=-1)

    inst = FalsePost()
    call(inst, '{"score": 0.1}', '{"score": 0.2}', input=Claim(text="c"))
    assert inst.contract_violation.errors[0].startswith("Semantic validation failed with:")
    assert "FalsePost.post returned False" in inst.contract_violation.errors[0]


def test_post_of_a_list_output_gets_the_value_object_first_then_the_plain_list() -> None:
    """2.2.0: `_validate_output` calls `post(output)` with the dynamic `value` model; the remedy loop then calls
    `post(result.value)`, the plain list. A post written for SymbolicAI handles both; it sees both here."""
    seen: list[Any] = []

    @contract(remedy_retry_params={"tries": 2, "delay": 0})
    class Tags(Expression):
        @property
        def prompt(self) -> str:
            return "Tag the claim."

        def post(self, output: list[str]) -> bool:
            seen.append(output)
            tags = output.value if hasattr(output, "value") else output
            if len(tags) < 2:
                raise ValueError("Give at least two tags.")
            return True

        def forward(self, input: Claim) -> list[str]:
            return self.contract_result if self.contract_successful else []

    assert call(Tags(), '{"value": ["a"]}', '{"value": ["a", "b"]}', input=Claim(text="c")) == ["a", "b"]
    assert [type(s).__name__ for s in seen] == ["Value", "list"]
    assert seen[0].value == ["a"] and seen[1] == ["a", "b"]


# ---------------------------------------------------------------- 6. check says what the decorator does

MISSPELT = '''\
from pydantic import Field

from contractstudio.symbolic import Expression, LLMDataModel, contract


class Claim(LLMDataModel):
    text: str = Field(description="A claim to rate.")


class Verdict(LLMDataModel):
    score: float = Field(description="How true the claim is, 0 to 1.")


@contract(SETTINGS)
class Rated(Expression):
    @property
    def prompt(self) -> str:
        return "Rate the claim."

    def post(self, output: Verdict) -> bool:
        return True

    def forward(self, input: Claim) -> Verdict:
        return self.contract_result
'''


@pytest.mark.parametrize(("settings", "key", "hint"), [
    ("post_remedyy=True", "post_remedyy", "did you mean 'post_remedy'?"),
    ('remedy_retry_params={"tries": 2, "backof": 2}', "backof", "did you mean 'backoff'?"),
])
def test_check_gives_a_misspelt_setting_the_severity_the_decorator_gives_it(tmp_path: Any, settings: str, key: str,
                                                                             hint: str) -> None:
    """The decorator refuses the class (ContractError, SCH102); `check` says the same thing at error level. (2.2.0
    itself: `post_remedyy` is a TypeError of `contract()`; an unknown retry key is silently ignored.)"""
    import importlib.util

    from contractstudio.analysis.check import check_file

    path = tmp_path / "rated.py"
    path.write_text(MISSPELT.replace("SETTINGS", settings))
    found = [(d.code, d.severity, d.hint) for d in check_file(path).diagnostics if key in d.message]
    assert found == [("SCH102", "error", hint)]

    spec = importlib.util.spec_from_file_location("rated_misspelt", path)
    assert spec is not None and spec.loader is not None
    with pytest.raises(cs.ContractError) as err:
        spec.loader.exec_module(importlib.util.module_from_spec(spec))
    assert [(d.code, d.severity, d.hint) for d in err.value.diagnostics] == found
    assert [d.message for d in err.value.diagnostics] == [d.message for d in check_file(path).diagnostics if key in d.message]


# ---------------------------------------------------------------- 7. post_remedy without post


def test_post_remedy_without_post_says_symbolicai_fails_every_call_and_the_default_says_nothing(tmp_path: Any) -> None:
    """2.2.0: `_validate_output` with `post_remedy=True` and no `post` raises "Post-condition function not defined"
    on every call (the contract always fails); its default is `post_remedy=False`, with which nothing fails."""
    from contractstudio.analysis.check import check_file

    explicit = MISSPELT.replace("SETTINGS", "post_remedy=True").replace(
        "    def post(self, output: Verdict) -> bool:\n        return True\n\n", "")
    path = tmp_path / "explicit.py"
    path.write_text(explicit)
    found = [(d.code, d.severity, d.message) for d in check_file(path).diagnostics if d.code == "PYC105"]
    assert len(found) == 1 and found[0][1] == "warning"
    assert "SymbolicAI fails every call" in found[0][2] and "Post-condition function not defined" in found[0][2]

    path.write_text(explicit.replace("@contract(post_remedy=True)", "@contract()"))
    assert [d for d in check_file(path).diagnostics if d.code == "PYC105"] == []


# ---------------------------------------------------------------- 3. LLMDataModel's text, as SymbolicAI's


class Address(LLMDataModel):
    street: str = Field(description="The street and number.")
    city: str = Field(description="The city.")


class Person(LLMDataModel):
    name: str = Field(description="The person's full name.")
    age: int | None = Field(None, description="Age in years.")
    tags: list[str] = Field(default_factory=list, description="Short tags.")
    address: Address = Field(description="Where the person lives.")
    scores: dict[str, float] = Field(default_factory=dict, description="Scores by subject.")
    kind: Literal["a", "b"] = "a"
    friends: list[Address] = Field(default_factory=list, description="Friends' addresses.")


# Printed by symbolicai 2.2.0's LLMDataModel for the same two models (its models/base.py loaded alone, pydantic 2).
RELEASED_SCHEMA = '''\
[[Schema]]
- "name" (string, required)
- "age" (integer or null, optional)
- "tags" (array of string, optional)
- "address" (nested object (Address), required)
  - Nested fields:
  - "street" (string, required)
  - "city" (string, required)
- "scores" (object of number, optional)
- "kind" (enum ('a', 'b'), optional)
- "friends" (array of nested object (Address), optional)
  - Nested fields:
  - "street" (string, required)
  - "city" (string, required)

[[Definitions]]
- Person:
  - "name": The person's full name.
  - "age": Age in years.
  - "tags": Short tags.
  - "address": Where the person lives.
  - "scores": Scores by subject.
  - "kind": No definition provided. Focus on the [[Schema]] and the prompt to infer the expected structure and constraints.
  - "friends": Friends' addresses.
- Address:
  - "street": The street and number.
  - "city": The city.'''

RELEASED_STR = '''\
[[Person]]
  name: Ada
  age: 36
  tags:
    - : math
    - :
  address:
    street: 1 Main
    city: London
  scores:
    x: 1.0
  kind: a
  friends:
    - : street: 2 Side
      city: Paris
'''


def test_simplify_json_schema_is_symbolicai_s_schema_digest() -> None:
    """2.2.0: `simplify_json_schema()` lists each field as `"name" (type, required|optional)`, expands nested models,
    then `[[Definitions]]` with every description (a field without one gets its "No definition provided" line)."""
    assert Person.simplify_json_schema() == RELEASED_SCHEMA


def test_str_of_a_model_is_symbolicai_s_indented_text_with_its_section_header() -> None:
    """2.2.0: `str(model)` is `[[section_header]]` then `  key: value` lines, lists as `- : item`, nested models
    indented; `section_header` is never a field of the schema (nor of the JSON the engine asks for)."""
    ada = Person(name="Ada", age=36, tags=["math", ""], address=Address(street="1 Main", city="London"),
                 scores={"x": 1.0}, friends=[Address(street="2 Side", city="Paris")], section_header="Person")
    assert str(ada) == RELEASED_STR
    assert "section_header" not in Person.model_json_schema()["properties"]
    assert "section_header" not in ada.model_dump()


def test_generate_example_json_and_instruct_llm_are_symbolicai_s() -> None:
    """2.2.0: `generate_example_json()` fills each field (defaults kept, empty factories filled, a model already
    shown at that level as `{}`); `instruct_llm()` is `[[Result]]`, the schema digest and one `[[Example]]` whose
    optional fields are all filled."""
    assert Person.generate_example_json() == {
        "name": "example_string", "age": None, "tags": ["example_string"],
        "address": {"street": "example_string", "city": "example_string"}, "scores": {"example_string": 123.45},
        "kind": "a", "friends": [{}]}
    text = Person.instruct_llm()
    head = "\n[[Result]]\nReturn a JSON object with the following schema:\n\n"
    assert text.startswith(head + RELEASED_SCHEMA + "\n\n[[Example]]\n```json\n{\n")
    assert '"age": 123,' in text and text.endswith("\n```\n")


# ---------------------------------------------------------------- 2. what verbose=True and contract_perf_stats() print


def test_verbose_prints_symbolicai_s_panels_on_stdout(capsys: pytest.CaptureFixture[str]) -> None:
    """2.2.0 prints (`print`, stdout) a `--- Prompt ---`, `--- Input data model ---` and `--- Output data model ---`
    panel (the schema digests) when it asks for the output, and for each failed attempt `--- Validation Errors (last
    error) ---` and `--- New Context ---` (what the remedy asks)."""
    @contract(verbose=True, remedy_retry_params={"tries": 2, "delay": 0})
    class Loud(Rated):
        pass

    call(Loud(), '{"score": 0.1}', '{"score": 0.9}', input=Claim(text="c"))
    out = capsys.readouterr().out
    assert "\n--- Prompt ---\nRate the claim.\n" in out
    assert '\n--- Input data model ---\n[[Schema]]\n- "text" (string, required)\n' in out
    assert '\n--- Output data model ---\n[[Schema]]\n- "score" (number, required)\n' in out
    assert "\n--- Validation Errors (last error) ---\nSemantic validation failed with:\nScore 0.1 is below 0.5.\n" in out
    assert "\n--- New Context ---\n" in out and out.index("--- Validation Errors") < out.index("--- New Context ---")


def test_a_bare_contract_perf_stats_prints_symbolicai_s_table(capsys: pytest.CaptureFixture[str]) -> None:
    """2.2.0's `contract_perf_stats()` prints "Contract Execution Summary (N Forward Calls)", a header row
    (Operation, Count, Total(s) ... % Total) and one row per stage, Overhead and Total Execution; with no call yet it
    prints "No contract executions recorded." and returns {}."""
    inst = Rated()
    assert inst.contract_perf_stats() == {}
    assert capsys.readouterr().out == "No contract executions recorded.\n"
    call(inst, '{"score": 0.9}', input=Claim(text="c"))
    call(inst, '{"score": 0.8}', input=Claim(text="d"))
    stats = inst.contract_perf_stats()
    lines = capsys.readouterr().out.splitlines()
    assert lines[:2] == ["", "Contract Execution Summary (2 Forward Calls)"]
    assert lines[2].split() == ["Operation", "Count", "Total(s)", "Mean(s)", "Std(s)", "Min(s)", "Max(s)", "%", "Total"]
    assert [line[:17].strip() for line in lines[3:9]] == ["Input Validation", "Act Execution", "Output Validation",
                                                          "Forward Execution", "Overhead", "Total Execution"]
    assert lines[3].split()[2] == "2" and lines[8].split()[2] == "N/A" and lines[8].rstrip().endswith("100.0%")
    assert lines[9] == "" and stats["contract_execution"]["count"] == 2


def test_verbose_panels_escape_controls_and_redact_keys(capsys: pytest.CaptureFixture[str]) -> None:
    """What a model or a post message holds reaches the terminal escaped and redacted, as everything `run` shows."""
    key = "sk-proj-abcdefghijklmnopqrstuvwx0123"

    @contract(verbose=True, remedy_retry_params={"tries": 1, "delay": 0})
    class Hostile(Expression):
        @property
        def prompt(self) -> str:
            return "Rate the claim."

        def post(self, output: Verdict) -> bool:
            raise ValueError(f"bad \x1b]52;c;AAAA\x07 score, key {key}")

        def forward(self, input: Claim) -> Verdict:
            return Verdict(score=-1)

    call(Hostile(), '{"score": 0.1}', '{"score": 0.2}', input=Claim(text="c"))
    out = capsys.readouterr().out
    assert "--- Validation Errors (last error) ---" in out and "\\x1b]52" in out
    assert "\x1b" not in out and key not in out


def test_an_act_that_raises_leaves_its_own_exception() -> None:
    """2.2.0: `_act` re-raises what `act` raised; the pipeline stores it in `contract_exception`."""
    @contract(remedy_retry_params={"tries": 1, "delay": 0})
    class Acting(Expression):
        @property
        def prompt(self) -> str:
            return "Rate the claim."

        def act(self, input: Claim, **kwargs: Any) -> Claim:
            raise KeyError("no such source")

        def forward(self, input: Claim) -> Verdict:
            return Verdict(score=-1)

    inst = Acting()
    call(inst, input=Claim(text="c"))
    assert type(inst.contract_exception) is KeyError and inst.contract_exception.args == ("no such source",)
