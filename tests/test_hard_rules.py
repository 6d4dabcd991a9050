"""`remedy: false` on a condition (seed 004): the JSON shape is retried once, two questions end the call at once.

Counted as requests reaching the local OpenAI-compatible server, and caught as the exception classes seed 004's
code throws: InvalidOutput is a ValueError (the JSON contract), ConditionFailed a RuntimeError (a broken rule).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from openai_server import OpenAIServer
from pydantic import Field

import contractstudio as cs
from contractstudio.runtime.call_state import CallOptions
from contractstudio.symbolic import Expression, LLMDataModel, NoRemedy, contract, use_model

GRANT = Path(__file__).resolve().parent.parent / "samples" / "grant_agent_turn.contract.yaml"
TURN = {"user_message": "The project is called Seeds for Schools.", "current_field": "project_title",
        "schema_fields": ["organisation_name", "project_title", "amount_requested", "project_summary"],
        "completed_fields": ["organisation_name"]}
GOOD = {"acknowledgement": "Great name.", "extracted_data": {"project_title": "Seeds for Schools"},
        "summary_for_user": "Your project is titled Seeds for Schools.", "confidence": "high",
        "next_question": "How much funding are you requesting?"}
TWO_QUESTIONS = json.dumps({**GOOD, "next_question": "How much do you need? And when does it start?"})
NO_SUMMARY = json.dumps({k: v for k, v in GOOD.items() if k != "summary_for_user"})


@pytest.fixture(scope="module")
def server():
    with OpenAIServer() as srv:
        yield srv


def turn(server: OpenAIServer, *replies: str):
    server.script(*replies)
    return cs.load(GRANT).call(TURN, "openai/test-model", api_base=server.base_url, api_key="sk-test-hard-rules-0001",
                               options=CallOptions(wait=False))


def test_two_question_marks_fail_at_once_as_a_runtime_error(server: OpenAIServer) -> None:
    with pytest.raises(RuntimeError) as caught:
        turn(server, TWO_QUESTIONS, json.dumps(GOOD))
    assert len(server.requests) == 1  # no corrective retry was sent
    assert isinstance(caught.value, cs.ConditionFailed)
    assert "exactly one question mark, found 2" in str(caught.value)


def test_the_json_shape_is_retried_once_then_fails_as_a_value_error(server: OpenAIServer) -> None:
    with pytest.raises(ValueError) as caught:
        turn(server, NO_SUMMARY, NO_SUMMARY, json.dumps(GOOD))
    assert len(server.requests) == 2  # the first request and its one corrective retry
    assert isinstance(caught.value, cs.InvalidOutput)
    assert "summary_for_user: required field is missing" in str(caught.value)


def test_the_one_retry_repairs_the_json_shape(server: OpenAIServer) -> None:
    result = turn(server, NO_SUMMARY, json.dumps(GOOD))
    assert result.successful and len(server.requests) == 2
    repair = server.requests[1].body["messages"][-1]["content"]
    assert "summary_for_user: required field is missing" in repair


def test_a_hard_rule_broken_during_the_shape_retry_ends_the_call_there(server: OpenAIServer) -> None:
    with pytest.raises(cs.ConditionFailed):
        turn(server, NO_SUMMARY, TWO_QUESTIONS)
    assert len(server.requests) == 2


def test_without_remedy_false_the_same_reply_is_remedied(server: OpenAIServer, tmp_path: Path) -> None:
    soft = tmp_path / "soft.contract.yaml"
    soft.write_text(GRANT.read_text().replace("    remedy: false   # seed 004", "    # seed 004"))
    server.script(TWO_QUESTIONS, json.dumps(GOOD))
    result = cs.load(soft).call(TURN, "openai/test-model", api_base=server.base_url, api_key="sk-test-hard-rules-0001",
                                options=CallOptions(wait=False))
    assert result.successful and len(server.requests) == 2



class Turn(LLMDataModel):
    user_message: str = Field(description="The user's latest message.")


class NextQuestion(LLMDataModel):
    next_question: str = Field(description="Exactly one question.")


@contract(post_remedy=True, remedy_retry_params={"tries": 1, "delay": 0})
class QuestionAgent(Expression):
    @property
    def prompt(self) -> str:
        return "Ask the next question."

    def post(self, output: NextQuestion) -> bool:
        if output.next_question.count("?") != 1:
            raise NoRemedy(f"exactly one question mark, found {output.next_question.count('?')}")
        return True

    def forward(self, input: Turn) -> NextQuestion:
        if not self.contract_successful:
            raise self.contract_violation
        return self.contract_result


def test_a_python_contract_s_no_remedy_ends_the_call_after_one_request(server: OpenAIServer) -> None:
    server.script('{"next_question": "How much? When?"}', '{"next_question": "How much?"}')
    live = cs.LiveModel(model="openai/test-model", api_base=server.base_url, api_key="sk-test-hard-rules-0001")
    with use_model(live, wait=False), pytest.raises(RuntimeError, match="exactly one question mark, found 2"):
        QuestionAgent()(input=Turn(user_message="We need money."))
    assert len(server.requests) == 1
