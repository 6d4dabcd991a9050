"""The prefix watch (issue 37.2): a streaming reply stopped at the first character that breaks a clause for good,
with the error text the whole-reply check gives, and never a reply that would pass when whole."""

from __future__ import annotations

from pathlib import Path

import pytest

import contractstudio as cs
from contractstudio.runtime.call_state import CallOptions
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


def load(tmp_path: Path, extra: str = "") -> cs.Contract:  # type: ignore[name-defined]
    path = tmp_path / "label.contract.yaml"
    path.write_text(CONTRACT + extra)
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
    result = contract.call("x", [reply, GOOD], options=CallOptions(wait=False))
    return list(result.errors)


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
