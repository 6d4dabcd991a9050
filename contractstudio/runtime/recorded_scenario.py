"""A recorded call as a `scenarios:` entry: its input, the model's replies in order, and what the call gave.

`run --save-scenario NAME` goes through here (a live call, or a replayed trace): the entry `contractstudio test`
then replays offline with the scripted model, expecting the recorded outcome (success, output, LLM calls, remedy
attempts). The text edit that adds it to the contract's file is editing/scenario_text.py's.
"""

from __future__ import annotations

from typing import Any

from contractstudio.runtime.events import CallResult, ModelReply, StageStart
from contractstudio.runtime.trace import Trace


def scenario_of(trace: Trace, name: str) -> dict[str, Any]:
    """The scenario entry of the first call of a trace; ValueError when the trace cannot be replayed as one."""
    events = list(trace)
    start = next((e for e in events if isinstance(e, StageStart) and e.stage == "input" and e.contract), None)
    end = next((i for i, e in enumerate(events) if isinstance(e, CallResult)), None)
    if start is None or end is None:
        raise ValueError("the trace records no whole call (its input and its result)")
    result = events[end]
    assert isinstance(result, CallResult)
    replies = [e for e in events[: end + 1] if isinstance(e, ModelReply)]
    if any(r.truncated for r in replies):
        raise ValueError("a reply of the trace was cut at the trace's limit: a scenario needs the whole reply")
    expect: dict[str, Any] = {"successful": result.successful}
    if result.raised:
        expect["raises"] = True
    expect["llm_calls"] = len(replies)
    expect["remedy_attempts"] = result.remedy_attempts
    if result.successful:
        expect["output"] = result.output
    return {"name": name, "description": f"recorded from a call to {start.model or 'a model'}",
            "input": start.value, "responses": [r.text for r in replies], "expect": expect}

