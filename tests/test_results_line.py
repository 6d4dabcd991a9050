"""A results line means what the stdlib's `json.dumps(record, default=str)` meant, and a prompt's JSON is the stdlib's
character for character, whichever encoder wrote them (issue 24)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from contractstudio.evaluation.results import line_of
from contractstudio.runtime.events import ModelRequest, StageStart
from contractstudio.runtime.json_text import dumps
from contractstudio.runtime.trace import Trace


def stdlib(record: dict[str, Any]) -> Any:
    return json.loads(json.dumps(record, ensure_ascii=False, default=str))


ODD = {
    "bytes": {"output": {"blob": b"ab"}},
    "a set": {"output": {"tags": {"x"}}},
    "a key that is None": {"output": {None: 1}},
    "an integer key": {"output": {1: "one"}},
    "a non-finite float": {"output": {"score": float("inf")}},
    "a tuple": {"output": {"pair": (1, 2)}},
    "line separators": {"output": {"text": "a\u2028b\x85c"}},
    "an object": {"output": {"when": ValueError("late")}},
}


@pytest.mark.parametrize("name", list(ODD))
def test_a_record_with_an_odd_value_reads_back_as_the_stdlib_wrote_it(name: str) -> None:
    record = {"key": "k", "row": 1, **ODD[name]}
    line = line_of(record)
    assert line.endswith("\n") and line.count("\n") == 1  # one physical line, whatever its strings hold
    assert json.loads(line) == stdlib(record)


def test_a_record_with_a_trace_reads_back_as_the_stdlib_wrote_it() -> None:
    trace = Trace([StageStart(seq=1, t=0.000123, stage="input", contract="qa", model="m", value={"q": "x", "n": 2.5}),
                   ModelRequest(seq=2, t=0.5, stage="generate", messages=[{"role": "user", "content": "api_key=sk-abc123secret456"}])])
    record = {"key": "k", "input": {"q": "x", "n": [1, 2.5, None, True]}, "cost_usd": 0.1, "trace": trace.to_dicts()}
    line = line_of(record)
    assert json.loads(line) == stdlib(record)
    assert "sk-abc123secret456" not in line  # the trace's one redaction path ran before the line was written


def test_a_lone_surrogate_is_written_as_before() -> None:
    record = {"key": "k", "output": {"text": "\ud800"}}
    assert line_of(record) == json.dumps(record, ensure_ascii=False, separators=(",", ":")) + "\n"


_JSON = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(), st.floats(), st.text(max_size=12),
              st.sampled_from(["\u2028", "\x85", "\ud800", "é", "\x00\x1f\x7f", 1e-05, 1e16, 5e-324, -0.0])),
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.tuples(inner, inner),
                            st.dictionaries(st.one_of(st.text(max_size=6), st.integers(), st.none()), inner, max_size=4)),
    max_leaves=20)


@settings(max_examples=150, deadline=None)
@given(value=_JSON, indent=st.sampled_from([None, 2]))
def test_a_prompts_json_text_is_the_stdlibs_character_for_character(value: object, indent: int | None) -> None:
    # the input block of every request is made by json_text.dumps: the reply cache's key holds each of its characters
    expected = json.dumps(value, ensure_ascii=False, default=str, indent=indent, separators=(",", ":") if indent is None else None)
    assert dumps(value, indent=indent) == expected
