"""The prefix watch (issue 37.2): a streaming reply stopped at the first character that breaks a clause for good,
with the error text the whole-reply check gives, and never a reply that would pass when whole."""

from __future__ import annotations

from pathlib import Path

import pytest

import contractstudio as cs
from contractstudio.runtime.call_state import CallOptions
from contractstudio.runtime.errors import ContractViolation
from contractstudio.runtime.prefix_watch import EarlyViolation, watch_for

CONTRACT = """kind: contract
name: label
types:
  Verdict:
    fields:
      label: {type: "Literal['positive', 'negative']"}
      reason: {type: str, max_length: 20, default: ""}
      tags: {type: "list[str]", max_length: 2, default: []}
      score: {type: int, le: 100, ge: 0, default: 0}
input: str
output: Verdict
prompt: Label it.
"""
GOOD = '{"label": "negative", "reason": "r", "tags": [], "score": 1}'


def load(tmp_path: Path, extra: str = "", text: str = CONTRACT) -> cs.Contract:  # type: ignore[name-defined]
    """The contract `text` (plus `extra`), written in the test's folder and loaded."""
    path = tmp_path / "label.contract.yaml"
    path.write_text(text + extra)
    return cs.load(path)


def first_stop(contract: cs.Contract, reply: str, mode: str = "off") -> EarlyViolation | None:  # type: ignore[name-defined]
    """Feed the reply a character at a time, as a stream would; the first violation."""
    watch = watch_for(contract.plan, mode)
    assert watch is not None
    for end in range(1, len(reply) + 1):
        found = watch.feed(reply[:end])
        if found is not None:
            return found
    return None


def whole_errors(contract: cs.Contract, reply: str) -> list[str]:  # type: ignore[name-defined]
    """The errors the whole-reply check finds in `reply` (the remedy's reply aside)."""
    try:
        result = contract.call("x", [reply, GOOD], options=CallOptions(wait=False))
    except ContractViolation as err:
        result = err.result  # type: ignore[attr-defined]
    return [e for e in result.errors if not e.startswith("model:")]


def test_a_label_no_literal_value_starts_with_stops_at_its_first_wrong_character(tmp_path: Path) -> None:
    contract = load(tmp_path, "json_reply: strict\n")
    reply = '{"label": "neutral", "reason": "a long explanation follows here"}'
    found = first_stop(contract, reply)
    assert found is not None
    assert found.position == reply.index("neutral") + 2  # "ne" may still be "negative"; "neu" cannot
    assert found.clause == "output.label: the Literal values"
    assert found.message == ("output.label = \"neu\": Input should be 'positive' or 'negative' "
                             "(constraint: expected=\"'positive' or 'negative'\")")
    whole = whole_errors(contract, reply)[0]
    assert whole.split(":", 1)[1].split("(")[0] in found.message  # the same words as the whole-reply check


def test_a_prefix_of_a_literal_value_is_not_stopped_but_ending_there_is(tmp_path: Path) -> None:
    contract = load(tmp_path, "json_reply: strict\n")
    assert first_stop(contract, '{"label": "positive"}') is None
    found = first_stop(contract, '{"label": "pos", "reason": "x"}')
    assert found is not None and found.message.startswith('output.label = "pos": Input should be')


@pytest.mark.parametrize(("field", "value", "words"), [
    ("score", "101", "output.score = 101: Input should be less than or equal to 100 (constraint: le=100)"),
    ("score", "-1", "output.score = -1: Input should be greater than or equal to 0 (constraint: ge=0)"),
    ("reason", '"' + "a" * 30 + '"', "String should have at most 20 characters"),
    ("tags", '["a", "b", "c", "d"]', "List should have at most 2 items after validation"),
])
def test_bounds_stop_the_reply_with_the_whole_checks_words(tmp_path: Path, field: str, value: str, words: str) -> None:
    contract = load(tmp_path, "json_reply: strict\n")
    reply = f'{{"label": "negative", "{field}": {value}, "more": "text the model goes on writing"}}'
    found = first_stop(contract, reply)
    assert found is not None and words in found.message
    assert found.position < reply.index('"more"')
    assert any(words.split(": ")[-1].split(" (")[0] in e for e in whole_errors(contract, reply))


def test_a_list_is_stopped_when_the_item_past_its_bound_starts(tmp_path: Path) -> None:
    contract = load(tmp_path, "json_reply: strict\n")
    reply = '{"label": "negative", "tags": ["a", "b", "c", "d"]}'
    found = first_stop(contract, reply)
    assert found is not None and found.position == reply.index('"c"')
    assert found.message.startswith("output.tags = a list of 3 items so far: List should have at most 2 items")


def test_a_number_is_judged_once_written_out_as_an_exponent_can_still_shrink_it(tmp_path: Path) -> None:
    contract = load(tmp_path, "json_reply: strict\n")
    assert first_stop(contract, '{"label": "negative", "score": 1000e-1}') is None  # 100.0: an int of 100
    assert whole_errors(contract, '{"label": "negative", "score": 1000e-1}') == []


def test_strict_json_stops_at_the_first_character_that_cannot_be_json(tmp_path: Path) -> None:
    contract = load(tmp_path, "json_reply: strict\n")
    reply = 'Sure! {"label": "positive"}'
    found = first_stop(contract, reply)
    assert found is not None and found.position == 0 and found.clause == "json"
    assert found.message == "the reply is not valid JSON: Expecting value at line 1, column 1"
    found = first_stop(contract, '{"label" "positive"}')
    assert found is not None and found.position == 9
    assert found.message == "the reply is not valid JSON: Expecting ':' delimiter at line 1, column 10"


def test_lenient_replies_are_judged_only_inside_the_first_json_fence(tmp_path: Path) -> None:
    contract = load(tmp_path)
    # bare JSON that breaks a clause can still pass whole: a later ```json fence is what the lenient reader takes
    rescued = '{"label": "neutral"}\n```json\n' + GOOD + "\n```"
    assert whole_errors(contract, rescued) == []
    assert first_stop(contract, rescued) is None
    fenced = 'Here you go:\n```json\n{"label": "neutral", "reason": "..."}\n```\nThe label is neutral because...'
    found = first_stop(contract, fenced)
    assert found is not None and found.position == fenced.index("neutral") + 2
    broken = 'Here you go:\n```json\n{"label": "positive",, }\n```'
    found = first_stop(contract, broken)
    assert found is not None and found.clause == "json" and found.position == broken.index(",,") + 1


def test_a_fence_closed_on_unfinished_json_is_stopped_there(tmp_path: Path) -> None:
    contract = load(tmp_path)
    reply = 'Here:\n```json\n{"label": "positive"\n```\nand then more prose'
    found = first_stop(contract, reply)
    assert found is not None and found.position == reply.rindex("```") + 2  # the closing fence's last backtick
    assert found.message in whole_errors(contract, reply)


def test_under_a_decoder_the_json_is_judged_and_its_syntax_left_to_the_decoder(tmp_path: Path) -> None:
    contract = load(tmp_path)
    found = first_stop(contract, '{"label": "neutral"}', mode="json_object")
    assert found is not None and found.clause == "output.label: the Literal values"
    assert first_stop(contract, 'not JSON at all {"label": "neutral"}', mode="json_object") is None


def test_a_key_written_twice_is_refused_by_the_whole_reply_check(tmp_path: Path) -> None:
    # Python's reader keeps the last of a repeated key, so the first value could be replaced: no prefix could
    # decide a field before the reply ended. A reply names each key once.
    contract = load(tmp_path, "json_reply: strict\n")
    errors = whole_errors(contract, '{"label": "neutral", "label": "positive"}')
    assert errors and 'the key "label" is repeated in one object' in errors[0]


def test_the_watch_is_fed_the_reply_so_far_in_chunks_of_any_size(tmp_path: Path) -> None:
    contract = load(tmp_path, "json_reply: strict\n")
    reply = '{"reason": "\\u00e9\\ud83d\\ude00 ok", "label": "nope"}'
    watch = watch_for(contract.plan, "off")
    assert watch is not None
    found = None
    for end in (5, 17, 30, len(reply)):
        found = found or watch.feed(reply[:end])
    assert found is not None and found.position == reply.index("nope") + 1  # "n" may still be "negative"


PATTERNED = """kind: contract
name: codes
types:
  Code:
    fields:
      code: {type: str, pattern: "^[A-Z][0-9]{2}$"}
      tail: {type: str, pattern: "b$", default: "b"}
      word: {type: str, pattern: "(?i)^abc$", default: "abc"}
      short: {type: str, min_length: 3, default: "abc"}
input: str
output: Code
prompt: Code it.
json_reply: strict
"""


def test_an_anchored_pattern_stops_at_the_first_character_no_match_continues(tmp_path: Path) -> None:
    contract = load(tmp_path, text=PATTERNED)
    reply = '{"code": "A1x9", "tail": "..."}'
    found = first_stop(contract, reply)
    assert found is not None and found.position == reply.index("x")
    assert found.message == "output.code = \"A1x\": String should match pattern '^[A-Z][0-9]{2}$' (constraint: pattern=\"^[A-Z][0-9]{2}$\")"
    assert first_stop(contract, '{"code": "A12"}') is None


def test_an_unanchored_pattern_and_a_minimum_length_are_judged_when_the_string_ends(tmp_path: Path) -> None:
    contract = load(tmp_path, text=PATTERNED)
    reply = '{"code": "A12", "tail": "abc", "word": "more"}'
    found = first_stop(contract, reply)
    assert found is not None and found.position == reply.index('"abc"') + 4 and found.clause == "output.tail: pattern"
    found = first_stop(contract, '{"code": "A12", "short": "ab", "x": 1}')
    assert found is not None and "String should have at least 3 characters" in found.message


def test_a_pattern_engines_may_read_differently_is_left_to_the_whole_reply(tmp_path: Path) -> None:
    # Python's case folding and word classes are not the Rust engine's that pydantic runs: never decided early
    contract = load(tmp_path, text=PATTERNED)
    assert first_stop(contract, '{"code": "A12", "word": "ABC"}') is None
    assert first_stop(contract, '{"code": "A12", "word": "xyz"}') is None


MONOTONE = """kind: contract
name: summary
types:
  Summary:
    fields:
      summary: {type: str}
      tags: {type: "list[str]", default: []}
input: str
output: Summary
prompt: Summarize.
json_reply: strict
post:
  - id: short
    assert: len(output.summary) <= 20
    monotone: true
  - id: no_todo
    assert: "'TODO' not in output.summary and len(output.tags) < 3"
    monotone: true
    message: "no placeholders, at most two tags"
  - id: long_enough
    assert: len(output.summary) >= 5
    monotone: true
  - id: bounded_by_input
    assert: len(output.summary) <= len(input) + 10
    monotone: true
"""


def test_a_monotone_post_condition_stops_the_reply_at_the_character_that_breaks_it(tmp_path: Path) -> None:
    contract = load(tmp_path, text=MONOTONE)
    reply = '{"summary": "a TODO list of things", "tags": []}'
    found = first_stop(contract, reply)
    assert found is not None and found.position == reply.index("TODO") + 3 and found.clause == "post[1] 'no_todo'"
    assert found.message == ("no placeholders, at most two tags (condition: 'TODO' not in output.summary and "
                             'len(output.tags) < 3; output.summary = "a TODO", output.tags = [])')
    assert any(e.startswith("no placeholders, at most two tags (condition:") for e in whole_errors(contract, reply))
    found = first_stop(contract, '{"summary": "' + "x" * 30 + '"}')
    assert found is not None and found.clause == "post[0] 'short'" and found.position == len('{"summary": "') + 20


def test_a_lower_bound_marked_monotone_is_refused_by_the_analyzer_and_never_stops_a_reply(tmp_path: Path) -> None:
    contract = load(tmp_path, text=MONOTONE)
    assert first_stop(contract, '{"summary": "abc"}') is None  # too short while written, but it could have grown
    from contractstudio.analysis.check import Context, check_file
    from contractstudio.trust import hook_folder

    report = check_file(Path(contract.path), Context(hooks=hook_folder(Path(contract.path), False)))
    found = [d for d in report.diagnostics if d.code == "CON133"]
    assert [d.message.split(" is marked")[0] for d in found] == ["post[2]"]


def test_a_bound_read_from_the_input_is_watched_only_when_the_watch_has_the_calls_values(tmp_path: Path) -> None:
    contract = load(tmp_path, text=MONOTONE.replace("len(output.summary) <= 20", "len(output.summary) <= 200"))
    reply = '{"summary": "' + "y" * 14 + '"}'
    assert first_stop(contract, reply) is None
    watch = watch_for(contract.plan, "off", {"input": "abc"})
    assert watch is not None
    found = next(f for f in (watch.feed(reply[:n]) for n in range(1, len(reply) + 1)) if f is not None)
    assert found.clause == "post[3] 'bounded_by_input'" and found.position == len('{"summary": "') + 13


def test_a_python_contracts_type_with_a_before_validator_is_judged_only_whole() -> None:
    # the author's own validator may turn "NEG" into "negative": a prefix decides nothing of such a type
    from types import SimpleNamespace
    from typing import Literal

    from pydantic import BaseModel, field_validator

    from contractstudio.documents.models import Contract
    from contractstudio.runtime.validation import Shape

    class Plain(BaseModel):
        label: Literal["positive", "negative"]

    class Lowered(Plain):
        @field_validator("label", mode="before")
        @classmethod
        def _lower(cls, value: object) -> object:
            return value.lower() if isinstance(value, str) else value

    def plan(model: type[BaseModel]) -> SimpleNamespace:
        doc = Contract(kind="contract", name="p", input="str", output=model.__name__, prompt="x", json_reply="strict")
        return SimpleNamespace(doc=doc, output=Shape.of_python(model, "output", model.__name__), post=[])

    reply = '{"label": "NEGATIVE"}'
    assert Lowered.model_validate_json(reply).label == "negative"
    for model, stops in ((Plain, True), (Lowered, False)):
        watch = watch_for(plan(model), "off")
        assert watch is not None
        found = [watch.feed(reply[:n]) for n in range(1, len(reply) + 1)]
        assert any(found) is stops


def test_a_backtracking_pattern_spends_the_replys_regex_budget_and_is_then_left_to_the_whole_reply(tmp_path: Path) -> None:
    contract = load(tmp_path, text=PATTERNED.replace('"^[A-Z][0-9]{2}$"', '"^(a|a)+$"'))
    reply = '{"code": "' + "a" * 40 + 'b", "tail": "b"}'
    watch = watch_for(contract.plan, "off")
    assert watch is not None
    assert watch.feed(reply) is None  # the matcher ran out of the reply's budget: nothing decided, nothing hung
    errors = whole_errors(contract, reply)
    assert errors and "String should match pattern '^(a|a)+$'" in errors[0]  # pydantic's linear engine decides it
