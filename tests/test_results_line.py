"""A results line means what the stdlib's `json.dumps(record, default=str)` meant, whichever encoder wrote it (issue 24)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from contractstudio.evaluation.results import line_of
from contractstudio.runtime.events import ModelRequest, StageStart
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
