"""The deliberate differences from SymbolicAI's released decorator (docs/symbolicai.md), each as a user sees it."""

from __future__ import annotations

from typing import Any

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


@contract(remedy_retry_params={"tries": 2, "delay": 0})
class Rated(Expression):
    @property
    def prompt(self) -> str:
        return "Rate the claim."

    def post(self, output: Verdict) -> bool:
        if output.score < 0.5:
            raise ValueError(f"Score {output.score} is below 0.5.")
        return True

    def forward(self, input: Claim) -> Verdict:
        return self.contract_result if self.contract_successful else Verdict(score=-1)


def test_the_first_post_failure_is_repaired_with_its_error_not_regenerated() -> None:
    inst = Rated()
    assert call(inst, '{"score": 0.1}', '{"score": 0.9}', input=Claim(text="c")).score == 0.9
    first_remedy = inst.contract_trace.of(ModelRequest)[1]
    assert first_remedy.purpose == "remedy_post" and first_remedy.errors == ["Score 0.1 is below 0.5."]
    assert first_remedy.messages[-2] == {"role": "assistant", "content": '{"score": 0.1}'}


def test_tries_2_with_two_failing_replies_is_three_model_calls() -> None:
    inst = Rated()
    assert call(inst, '{"score": 0.1}', '{"score": 0.2}', '{"score": 0.9}', input=Claim(text="c")).score == 0.9
    assert len(inst.contract_trace.of(ModelRequest)) == 3


def test_a_last_reply_that_is_not_json_fails_the_call_instead_of_keeping_a_stale_output() -> None:
    inst = Rated()
    assert call(inst, '{"score": 0.1}', '{"score": 0.2}', "I cannot answer that.", input=Claim(text="c")).score == -1
    assert inst.contract_successful is False and inst.contract_result is None
    assert "not valid JSON" in str(inst.contract_exception)


def test_a_graceful_pre_remedy_that_gives_up_fails_the_contract() -> None:
    @contract(pre_remedy=True, remedy_retry_params={"tries": 1, "delay": 0, "graceful": True})
    class Guarded(Expression):
        @property
        def prompt(self) -> str:
            return "Rate the claim."

        def pre(self, input: Claim) -> bool:
            if not input.text:
                raise ValueError("The claim is empty.")
            return True

        def forward(self, input: Claim) -> Verdict:
            return self.contract_result if self.contract_successful else Verdict(score=-1)

    inst = Guarded()
    assert call(inst, '{"text": ""}', input=Claim(text="")).score == -1
    assert inst.contract_successful is False
    assert [r.purpose for r in inst.contract_trace.of(ModelRequest)] == ["remedy_pre"]  # never generated from it


def test_pre_and_post_returning_none_pass() -> None:
    @contract()
    class Quiet(Expression):
        @property
        def prompt(self) -> str:
            return "Rate the claim."

        def pre(self, input: Claim) -> None:
            pass

        def post(self, output: Verdict) -> None:
            pass

        def forward(self, input: Claim) -> Verdict:
            return self.contract_result

    inst = Quiet()
    assert call(inst, '{"score": 0.3}', input=Claim(text="c")).score == 0.3 and inst.contract_successful


def test_forward_may_return_the_plain_value_of_a_non_model_annotation() -> None:
    @contract()
    class Shout(Expression):
        @property
        def prompt(self) -> str:
            return "Shout the text."

        def forward(self, input: str) -> str:
            return self.contract_result.value.upper() + "!"

    assert call(Shout(), '{"value": "hello"}', input="hello") == "HELLO!"


def test_contract_result_does_not_survive_a_failed_call() -> None:
    inst = Rated()
    call(inst, '{"score": 0.9}', input=Claim(text="c"))
    assert inst.contract_result == Verdict(score=0.9)
    call(inst, '{"score": 0.1}', '{"score": 0.1}', '{"score": 0.1}', input=Claim(text="c"))
    assert inst.contract_result is None


def test_pre_remedy_without_a_pre_method_is_not_a_failure() -> None:
    @contract(pre_remedy=True)
    class NoPre(Expression):
        @property
        def prompt(self) -> str:
            return "Rate the claim."

        def forward(self, input: Claim) -> Verdict:
            return self.contract_result

    inst = NoPre()
    assert call(inst, '{"score": 0.6}', input=Claim(text="c")).score == 0.6 and inst.contract_successful
