"""contractstudio.symbolic: a SymbolicAI-style class (three import lines swapped) running on the one engine."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from pydantic import Field

import contractstudio as cs
from contractstudio.runtime.errors import ContractError, ModelError
from contractstudio.runtime.events import ModelRequest
from contractstudio.runtime.models import LLMReply, LLMRequest
from contractstudio.symbolic import Expression, LLMDataModel, NoRemedy, contract, use_model


class Review(LLMDataModel):
    text: str = Field(description="The review text.")


class Rating(LLMDataModel):
    score: float = Field(ge=0, le=1, description="0 is hostile, 1 is glowing.")


class Keywords(LLMDataModel):
    words: list[str] = Field(description="Words the review stresses.")


@contract(post_remedy=True, remedy_retry_params={"tries": 2, "delay": 0.1, "max_delay": 0.15, "backoff": 2, "jitter": 0})
class RateReview(Expression):
    def __init__(self) -> None:
        super().__init__()
        self.seen: list[str] = []

    @property
    def prompt(self) -> str:
        return "Rate how positive the review is."

    def pre(self, input: Review) -> bool:
        if not input.text.strip():
            raise ValueError("The review is empty.")
        return True

    def post(self, output: Rating) -> bool:
        if output.score < 0.5:
            raise ValueError(f"Score {output.score:.1f} is below 0.5.")
        return True

    def forward(self, input: Review, **kwargs: Any) -> Rating:
        self.seen.append(input.text)
        if not self.contract_successful:
            return Rating(score=0.0)
        return self.contract_result


def scripted(*replies: str) -> cs.ScriptedModel:
    return cs.ScriptedModel(list(replies))


def purposes(obj: Any) -> list[str]:
    return [e["purpose"] for e in obj.contract_trace.of_type("llm_request")]


def test_a_passing_call_returns_forward_s_result_and_sets_the_contract_attributes() -> None:
    rater = RateReview()
    with use_model(scripted('{"score": 0.9}'), wait=False):
        out = rater(input=Review(text="Works as described."))
    assert out == Rating(score=0.9)
    assert rater.contract_successful is True and rater.contract_result == Rating(score=0.9)
    assert rater.contract_exception is None
    stages = [e.stage for e in rater.contract_trace.of_type("stage_start")]
    assert stages == ["input", "pre", "generate", "post", "forward", "finalize"]


def test_a_message_raised_by_post_is_the_remedy_feedback_and_the_waits_are_recorded() -> None:
    rater = RateReview()
    with use_model(scripted('{"score": 0.1}', '{"score": 0.2}', '{"score": 0.9}'), wait=False):
        out = rater(input=Review(text="Fine."))
    assert out.score == 0.9 and purposes(rater) == ["generate", "remedy_post", "remedy_post"]
    sent = [e.errors for e in rater.contract_trace.of(ModelRequest)][1:]
    assert sent == [["Score 0.1 is below 0.5."], ["Score 0.2 is below 0.5."]]
    waits = [(e["seconds"], e["waited"]) for e in rater.contract_trace.of_type("retry_wait")]
    assert waits == [(0.1, False), (0.15, False)]


def test_a_failed_contract_still_calls_forward_with_the_original_input() -> None:
    rater = RateReview()
    with use_model(scripted('{"score": 0.1}', '{"score": 0.1}', '{"score": 0.1}'), wait=False):
        out = rater(input=Review(text="Meh."))
    assert out == Rating(score=0.0) and rater.seen == ["Meh."]
    assert rater.contract_successful is False and rater.contract_result is None
    assert "Score 0.1 is below 0.5." in str(rater.contract_exception)


def test_a_failing_pre_without_pre_remedy_never_calls_the_model() -> None:
    rater = RateReview()
    with use_model(scripted(), wait=False):
        out = rater(Review(text="  "))  # the input may be passed positionally, as SymbolicAI allows
    assert out == Rating(score=0.0) and purposes(rater) == []
    assert "The review is empty." in str(rater.contract_exception)


@contract(post_remedy=False)
class StrictPost(Expression):
    @property
    def prompt(self) -> str:
        return "Rate it."

    def post(self, output: Rating) -> bool:
        return output.score > 0.5

    def forward(self, input: Review) -> Rating:
        return self.contract_result if self.contract_successful else Rating(score=0)


def test_post_returning_false_fails_naming_the_method() -> None:
    inst = StrictPost()
    with use_model(scripted('{"score": 0.2}'), wait=False):
        inst(input=Review(text="x"))
    assert inst.contract_successful is False
    assert "StrictPost.post returned False" in str(inst.contract_exception)


def test_act_output_is_what_the_model_sees_and_state_on_self_persists() -> None:
    @contract()
    class Stressed(Expression):
        calls = 0

        @property
        def prompt(self) -> str:
            return "Rate the stressed words."

        def act(self, input: Review, **kwargs: Any) -> Keywords:
            self.calls += 1
            return Keywords(words=[w for w in input.text.split() if w.isupper()])

        def forward(self, input: Keywords, **kwargs: Any) -> Rating:
            assert isinstance(input, Keywords)  # success: forward gets act's output
            return self.contract_result

    inst = Stressed()
    with use_model(scripted('{"score": 0.7}', '{"score": 0.8}'), wait=False):
        inst(input=Review(text="GREAT value, VERY good"))
        inst(input=Review(text="fine"))
    assert inst.calls == 2
    first = inst.contract_trace.of_type("llm_request")[0]["messages"][1]["content"]
    assert '"words": []' in first and "## Input (Keywords)" in first


def test_a_non_model_return_type_is_asked_as_a_value_object_and_unwrapped() -> None:
    @contract(post_remedy=True, remedy_retry_params={"tries": 1, "delay": 0})
    class Squares(Expression):
        @property
        def prompt(self) -> str:
            return "Square each number."

        def post(self, output: list[int]) -> bool:
            if output != [9, 16]:
                raise ValueError("Square every number of the input.")
            return True

        def forward(self, input: list[int], **kwargs: Any) -> list[int]:
            return self.contract_result

    inst = Squares()
    with use_model(scripted('{"value": [3, 4]}', '{"value": [9, 16]}'), wait=False):
        assert inst(input=[3, 4]) == [9, 16]
    system = inst.contract_trace.of_type("llm_request")[0]["messages"][0]["content"]
    assert '"value"' in system  # the schema the model answers: an object with one field, value
    assert inst.contract_trace.of(ModelRequest)[1].errors == ["Square every number of the input."]


def test_forward_returning_the_wrong_type_raises_type_error_unless_graceful() -> None:
    @contract(post_remedy=False)
    class Bad(Expression):
        @property
        def prompt(self) -> str:
            return "Echo."

        def forward(self, input: Review) -> str:
            return 123  # type: ignore[return-value]

    @contract(post_remedy=False, remedy_retry_params={"graceful": True})
    class Lenient(Bad):
        pass

    with use_model(scripted('{"value": "a"}', '{"value": "b"}'), wait=False):
        with pytest.raises(TypeError, match="Bad.forward must return str"):
            Bad()(input=Review(text="x"))
        assert Lenient()(input=Review(text="x")) == 123


def test_bad_decorator_settings_are_the_analyzer_s_findings_raised_at_decoration() -> None:
    with pytest.raises(ContractError) as err:
        @contract(remedy_retry_params={"tries": 0, "delai": 1})
        class Broken(Expression):
            @property
            def prompt(self) -> str:
                return "x"

            def forward(self, input: str) -> str:
                return input

    text = str(err.value)
    assert "SCH104" in text and "tries" in text and "SCH102" in text and "delai" in text
    assert f"{Path(__file__).name}:" in text  # the class's own file


def test_the_decorator_defaults_are_seed_000_s() -> None:
    plan_remedy = RateReview.__contract__.remedy  # type: ignore[attr-defined]
    assert (plan_remedy.pre, plan_remedy.post, plan_remedy.accumulate_errors) == (False, True, False)

    @contract()
    class Plain(Expression):
        @property
        def prompt(self) -> str:
            return "x"

        def forward(self, input: str) -> str:
            return input

    retry = Plain.__contract__.remedy.retry  # type: ignore[attr-defined]
    assert (retry.tries, retry.delay, retry.max_delay, retry.jitter, retry.backoff, retry.graceful) == (5, 0.5, 15, 0.1, 2, False)


def test_perf_stats_have_symbolicai_s_keys_and_add_up_to_100() -> None:
    rater = RateReview()
    with use_model(scripted('{"score": 0.9}', '{"score": 0.1}', '{"score": 0.8}'), wait=False):
        rater(input=Review(text="a"))
        rater(input=Review(text="b"))
    stats = rater.contract_perf_stats()
    keys = ["input_validation", "act_execution", "output_validation", "forward_execution", "contract_execution", "overhead"]
    assert all(k in stats for k in keys)
    assert stats["contract_execution"]["count"] == 2 and stats["act_execution"]["count"] == 0
    assert stats["output_validation"]["count"] == 2
    parts = sum(stats[k]["percentage"] for k in keys if k != "contract_execution")
    assert parts == pytest.approx(100.0)


def test_use_model_nests_and_appends_each_call_s_trace(tmp_path: Path) -> None:
    calls = tmp_path / "calls.jsonl"
    rater = RateReview()
    with use_model(scripted('{"score": 0.9}'), wait=False, trace=calls):
        with use_model(scripted('{"score": 0.6}'), wait=False):
            assert rater(input=Review(text="inner")).score == 0.6
        assert rater(input=Review(text="outer")).score == 0.9
    lines = [json.loads(x) for x in calls.read_text().splitlines()]
    assert [x["output"] for x in lines if x["type"] == "result"] == [{"score": 0.9}]
    replayed = cs.Trace.read(calls)
    assert replayed.of_type("llm_response")[0]["text"] == '{"score": 0.9}'


def test_a_model_object_of_the_user_s_own_answers_requests() -> None:
    class Echo:
        name = "echo"

        def complete(self, request: LLMRequest) -> LLMReply:
            return LLMReply(text='{"score": 0.75}')

    with use_model(Echo(), wait=False):
        assert RateReview()(input=Review(text="a")).score == 0.75


def test_without_a_model_the_call_says_how_to_choose_one(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("CONTRACTSTUDIO_MODEL", raising=False)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
    with pytest.raises(ModelError, match="use_model"):
        RateReview()(input=Review(text="a"))
def test_no_remedy_raised_by_post_ends_the_call_at_once() -> None:
    @contract(remedy_retry_params={"tries": 3, "delay": 0})
    class OneQuestion(Expression):
        @property
        def prompt(self) -> str:
            return "Ask one question."

        def post(self, output: str) -> bool:
            text = getattr(output, "value", output)  # the `value` object first, as SymbolicAI passes it
            if text.count("?") > 1:
                raise NoRemedy(f"Exactly one question, found {text.count('?')}.")
            return True

        def forward(self, input: str) -> str:
            return self.contract_result.value if self.contract_successful else "failed"

    inst = OneQuestion()
    with use_model(scripted('{"value": "A? B?"}', '{"value": "A?"}'), wait=False):
        assert inst(input="hi") == "failed"
    assert purposes(inst) == ["generate"]
    assert "Exactly one question, found 2." in str(inst.contract_exception)


@contract(post_remedy=False)
class NoRemedies(Expression):
    @property
    def prompt(self) -> str:
        return "Rate it."

    def forward(self, input: Review) -> Rating:
        return self.contract_result if self.contract_successful else Rating(score=0)


def test_post_remedy_false_sends_no_remedy_even_for_a_malformed_reply() -> None:
    inst = NoRemedies()
    with use_model(scripted('{"score": "high"}', '{"score": 0.9}'), wait=False):
        assert inst(input=Review(text="x")) == Rating(score=0)
    assert purposes(inst) == ["generate"] and "output.score" in str(inst.contract_exception)


def test_a_fenced_reply_is_read() -> None:
    inst = NoRemedies()
    with use_model(scripted('Here it is:\n```json\n{"score": 0.7}\n```'), wait=False):
        assert inst(input=Review(text="x")) == Rating(score=0.7)


def test_verbose_logs_each_event_redacted(caplog: pytest.LogCaptureFixture) -> None:
    @contract(verbose=True)
    class Loud(Expression):
        @property
        def prompt(self) -> str:
            return "Rate it. key sk-proj-abcdefghijklmnopqrstuvwx0123"

        def forward(self, input: Review) -> Rating:
            return self.contract_result

    with caplog.at_level("INFO", logger="contractstudio.symbolic"), use_model(scripted('{"score": 0.7}'), wait=False):
        Loud()(input=Review(text="x"))
    assert any("llm_request" in r.getMessage() for r in caplog.records)
    assert not any("sk-proj-abcdefghijklmnopqrstuvwx0123" in r.getMessage() for r in caplog.records)


def test_contract_violation_has_seed_004_s_classes_so_forward_can_raise_it() -> None:
    rater = RateReview()
    with use_model(scripted('{"score": "high"}', "not json", '{"score": 1.5}'), wait=False):
        rater(input=Review(text="x"))
    assert isinstance(rater.contract_violation, ValueError) and isinstance(rater.contract_violation, cs.InvalidOutput)
    with use_model(scripted('{"score": 0.1}', '{"score": 0.1}', '{"score": 0.1}'), wait=False):
        rater(input=Review(text="x"))
    assert isinstance(rater.contract_violation, RuntimeError) and isinstance(rater.contract_violation, cs.ConditionFailed)


def test_an_input_that_is_not_of_forward_s_type_raises_value_error_before_any_model_call() -> None:
    @contract()
    class Counts(Expression):
        @property
        def prompt(self) -> str:
            return "Count."

        def forward(self, input: list[int]) -> int:
            return self.contract_result

    inst = Counts()
    with use_model(scripted(), wait=False), pytest.raises(ValueError, match="not a valid list"):
        inst(input=["a", "b"])
    assert purposes(inst) == []


def test_use_model_is_local_to_its_thread(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    import threading

    monkeypatch.delenv("CONTRACTSTUDIO_MODEL", raising=False)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))  # no config.yaml: no default model

    seen: list[str] = []

    def other_thread() -> None:
        try:
            RateReview()(input=Review(text="x"))
        except ModelError:
            seen.append("no model in this thread")

    with use_model(scripted('{"score": 0.9}'), wait=False):
        worker = threading.Thread(target=other_thread)
        worker.start()
        worker.join()
        assert RateReview()(input=Review(text="x")).score == 0.9
    assert seen == ["no model in this thread"]


def test_accumulate_errors_sends_every_error_of_the_loop_oldest_first() -> None:
    @contract(accumulate_errors=True, remedy_retry_params={"tries": 2, "delay": 0})
    class Piling(RateReview):
        pass

    inst = Piling()
    with use_model(scripted('{"score": 0.1}', '{"score": 0.2}', '{"score": 0.9}'), wait=False):
        assert inst(input=Review(text="x")).score == 0.9
    sent = [e.errors for e in inst.contract_trace.of(ModelRequest)][1:]
    assert sent == [["Score 0.1 is below 0.5."], ["Score 0.1 is below 0.5.", "Score 0.2 is below 0.5."]]


def test_outside_use_model_the_environment_then_the_user_config_name_the_model(monkeypatch: pytest.MonkeyPatch,
                                                                              tmp_path: Path) -> None:
    from contractstudio.symbolic import current_use

    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
    (tmp_path / "contractstudio").mkdir()
    (tmp_path / "contractstudio" / "config.yaml").write_text("model: openai/from-config\n")
    monkeypatch.delenv("CONTRACTSTUDIO_MODEL", raising=False)
    assert "from-config" in current_use().model.name
    monkeypatch.setenv("CONTRACTSTUDIO_MODEL", "openai/from-environment")
    assert "from-environment" in current_use().model.name
    with use_model(scripted()):
        assert current_use().model.name == "scripted"


def test_a_misspelt_decorator_keyword_is_sch102_with_a_suggestion_at_its_line() -> None:
    with pytest.raises(ContractError) as err:
        contract(post_remedi=False)  # type: ignore[call-arg]
    text = str(err.value)
    assert "error SCH102 unknown key 'post_remedi' in @contract" in text and f"{Path(__file__).name}:" in text
    assert err.value.diagnostics[0].hint == "did you mean 'post_remedy'?"
