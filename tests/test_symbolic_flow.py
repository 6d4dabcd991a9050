"""contractstudio.symbolic: how SymbolicAI's class API flows (input, act, forward's input, types), on the one engine."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from pydantic import Field

import contractstudio as cs
from contractstudio.symbolic import Expression, LLMDataModel, contract, use_model


class Ask(LLMDataModel):
    text: str = Field(description="What to answer.")


class Notes(LLMDataModel):
    words: list[str] = Field(default_factory=list, description="The words the text stresses.")


class Answer(LLMDataModel):
    reply: str = Field(description="The answer.")


def run(obj: Any, replies: list[str], **call: Any) -> Any:
    with use_model(cs.ScriptedModel(replies), wait=False):
        return obj(**call)


def test_the_input_parameter_may_have_another_name_and_be_passed_by_it_or_as_input() -> None:
    @contract()
    class Named(Expression):
        @property
        def prompt(self) -> str:
            return "Answer."

        def pre(self, request: Ask) -> bool:
            return bool(request.text)

        def forward(self, request: Ask, **kwargs: Any) -> Answer:
            return self.contract_result

    inst = Named()
    assert run(inst, ['{"reply": "a"}'], request=Ask(text="q")).reply == "a"
    assert run(inst, ['{"reply": "b"}'], input=Ask(text="q")).reply == "b"
    with pytest.raises(ValueError, match="provide an `input`"):
        run(inst, [])


@contract(remedy_retry_params={"tries": 1, "delay": 0})
class Tracked(Expression):
    def __init__(self) -> None:
        super().__init__()
        self.threshold = 0.5
        self.forward_inputs: list[Any] = []
        self.act_input_ids: list[int] = []

    @property
    def prompt(self) -> str:
        return "Answer from the notes."

    def act(self, input: Ask, **kwargs: Any) -> Notes:
        if input.text == "boom":
            raise RuntimeError("act could not read the text")
        self.threshold = 0.9  # state act writes on self persists
        return Notes(words=input.text.split())

    def forward(self, input: Any, **kwargs: Any) -> Answer:
        self.forward_inputs.append(input)
        return self.contract_result if self.contract_successful else Answer(reply=f"fallback for {input.text}")


def test_forward_gets_act_s_output_on_success_and_the_original_input_when_act_fails() -> None:
    inst = Tracked()
    assert run(inst, ['{"reply": "ok"}'], input=Ask(text="two words")).reply == "ok"
    assert inst.forward_inputs[-1] == Notes(words=["two", "words"]) and inst.threshold == 0.9
    fresh = Tracked()
    assert run(fresh, [], input=Ask(text="boom")).reply == "fallback for boom"
    assert fresh.threshold == 0.5 and fresh.contract_successful is False
    assert "act could not read the text" in str(fresh.contract_exception)


def test_an_act_that_returns_its_input_keeps_the_object_forward_receives() -> None:
    @contract()
    class Same(Expression):
        @property
        def prompt(self) -> str:
            return "Answer."

        def act(self, input: Ask, **kwargs: Any) -> Ask:
            self.seen = id(input)
            return input

        def forward(self, input: Ask, **kwargs: Any) -> Answer:
            self.same = id(input) == self.seen
            return self.contract_result

    inst = Same()
    run(inst, ['{"reply": "x"}'], input=Ask(text="q"))
    assert inst.same is True


@pytest.mark.parametrize("bad_act", ["no_annotation", "no_return_annotation"])
def test_act_s_signature_is_validated_as_symbolicai_does(bad_act: str) -> None:
    def no_annotation(self: Any, input, **kwargs: Any) -> Notes:  # type: ignore[no-untyped-def]
        return Notes()

    def no_return_annotation(self: Any, input: Ask, **kwargs: Any):  # type: ignore[no-untyped-def]
        return Notes()

    def forward(self: Any, **kwargs: Any) -> Answer:
        return Answer(reply="fallback")

    cls = type("Checked", (Expression,), {"prompt": property(lambda self: "x"), "forward": forward,
                                          "act": {"no_annotation": no_annotation, "no_return_annotation": no_return_annotation}[bad_act]})
    inst = contract()(cls)()
    assert run(inst, [], input=Ask(text="q")).reply == "fallback"
    assert inst.contract_successful is False and "act" in str(inst.contract_exception)


def test_act_receives_the_call_s_other_keyword_arguments() -> None:
    @contract()
    class WithKwargs(Expression):
        @property
        def prompt(self) -> str:
            return "Answer."

        def act(self, input: Ask, **kwargs: Any) -> Notes:
            self.kwargs = kwargs
            return Notes()

        def forward(self, input: Any, **kwargs: Any) -> Answer:
            return self.contract_result

    inst = WithKwargs()
    run(inst, ['{"reply": "x"}'], input=Ask(text="q"), tone="formal")
    assert inst.kwargs == {"tone": "formal"}


def test_pre_remedy_repairs_the_input_and_pre_sees_the_repaired_one() -> None:
    @contract(pre_remedy=True, post_remedy=False, remedy_retry_params={"tries": 1, "delay": 0})
    class Positive(Expression):
        @property
        def prompt(self) -> str:
            return "Ensure the number is positive."

        def pre(self, input: Notes) -> bool:
            if not input.words:
                raise ValueError("give at least one word")
            self.checked = input.words
            return True

        def forward(self, input: Notes, **kwargs: Any) -> Answer:
            return self.contract_result

    inst = Positive()
    out = run(inst, ['{"words": ["fixed"]}', '{"reply": "done"}'], input=Notes())
    assert out.reply == "done" and inst.checked == ["fixed"] and inst.contract_successful
    requests = inst.contract_trace.of_type("llm_request")
    assert [r["purpose"] for r in requests] == ["remedy_pre", "generate"]
    assert "give at least one word" in requests[0]["messages"][1]["content"]


def test_post_remedy_without_a_post_method_is_not_a_failure() -> None:
    @contract(post_remedy=True)
    class NoPost(Expression):
        @property
        def prompt(self) -> str:
            return "Answer."

        def forward(self, input: Ask) -> Answer:
            return self.contract_result

    inst = NoPost()
    assert run(inst, ['{"reply": "fine"}'], input=Ask(text="q")).reply == "fine" and inst.contract_successful


def test_the_prompt_is_read_at_each_call_and_is_the_system_message() -> None:
    @contract()
    class Counting(Expression):
        reads = 0

        @property
        def prompt(self) -> str:
            self.reads += 1
            return "Answer in one word."

        def forward(self, input: Ask) -> Answer:
            return self.contract_result

    inst = Counting()
    before = inst.reads  # the decorator checks at construction that the class has a prompt
    run(inst, ['{"reply": "a"}'], input=Ask(text="q"))
    run(inst, ['{"reply": "b"}'], input=Ask(text="q"))
    assert inst.reads - before == 2
    system = inst.contract_trace.of_type("llm_request")[0]["messages"][0]["content"]
    assert system.startswith("Answer in one word.") and '"reply"' in system


class Person(LLMDataModel):
    name: str
    age: int | None


@pytest.mark.parametrize(
    ("annotation", "given", "reply", "expected"),
    [
        (str, "hello", '{"value": "HELLO"}', "HELLO"),
        (dict[str, int], {"a": 1}, '{"value": {"a": 1, "b": 4}}', {"a": 1, "b": 4}),
        (list[dict[str, int]], [{"a": 1}], '{"value": [{"a": 1}]}', [{"a": 1}]),
        (int | str | None, 42, '{"value": 42}', 42),
        (list[str] | None, "none", '{"value": null}', None),
        (dict[int, Person] | list[int], "Anna, 34", '{"value": {"1": {"name": "Anna", "age": 34}}}', {1: Person(name="Anna", age=34)}),
    ],
)
def test_non_model_types_are_answered_as_a_value_and_returned_unwrapped(annotation: Any, given: Any, reply: str,
                                                                        expected: Any) -> None:
    def forward(self: Any, input: Any) -> Any:
        assert self.contract_result is not None  # the value object, even when its value is null
        return self.contract_result

    forward.__annotations__ = {"input": type(given), "return": annotation}
    cls = contract(post_remedy=False)(type("Typed", (Expression,), {"prompt": property(lambda self: "Do it."), "forward": forward}))
    inst = cls()
    assert run(inst, [reply], input=given) == expected
    assert inst.contract_successful is True


def test_a_python_contract_s_trace_replays_strictly(tmp_path: Path) -> None:
    calls = tmp_path / "calls.jsonl"
    inst = Tracked()
    with use_model(cs.ScriptedModel(['{"reply": "recorded"}']), wait=False, trace=calls):
        inst(input=Ask(text="two words"))
    with use_model(cs.ReplayModel(calls, strict=True), wait=False):
        assert Tracked()(input=Ask(text="two words")).reply == "recorded"


def test_a_python_contract_steps_like_a_yaml_one_and_finishes_with_forward_s_result() -> None:
    inst = Tracked()
    spec = Tracked.__contract__  # type: ignore[attr-defined]
    session = spec.session(inst, (), {"input": Ask(text="two words")}, cs.ScriptedModel(['{"reply": "stepped"}']),
                           breakpoints={"post"})
    event = session.continue_()
    assert event is not None and event.type == "stage_start" and event.stage == "post"
    assert inst.forward_inputs == []  # paused before forward
    session.run(raise_on_violation=False)
    assert spec.finish(inst, session).reply == "stepped"
    assert inst.forward_inputs == [Notes(words=["two", "words"])] and inst.contract_trace is session.trace


def test_an_annotation_that_cannot_be_resolved_is_a_clear_error_at_decoration() -> None:
    class Local(LLMDataModel):  # local, and this module postpones annotations: 'Local' is only a string
        x: int

    def forward(self: Any, input: Local) -> Local:
        return input

    with pytest.raises(cs.ContractError, match="return annotation 'Local' cannot be resolved"):
        contract()(type("Unresolved", (Expression,), {"prompt": property(lambda self: "x"), "forward": forward}))
