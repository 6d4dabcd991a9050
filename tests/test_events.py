"""Typed events: one class per type, traces written before they were typed read and written back byte for byte.

tests/fixtures/traces/ holds traces written by the engine before its events were typed (every event type it
emits: transport faults, remedies, edits in a stepped session, replay divergence, a runaway reply, ...).
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest
from conftest import FIXTURES, SAMPLES

import contractstudio as cs
from contractstudio.runtime.call_state import CallOptions
from contractstudio.runtime.events import (
    EVENT_TYPES,
    STAGES,
    ConditionChecked,
    ModelReply,
    ModelRequest,
    PlainEvent,
    RetryWait,
    StageEnd,
    StageStart,
    TransportFailure,
    ValidationFailure,
)
from contractstudio.runtime.models import ReplayModel, ScriptedModel, TransportFault
from contractstudio.runtime.perf import PerfStats
from contractstudio.runtime.trace import Trace

BEFORE = sorted((FIXTURES / "traces").glob("*.jsonl"))
QA = SAMPLES / "multidoc_qa.contract.yaml"
PRE = Path(__file__).parent / "runtime_contracts" / "pre_remedy.contract.yaml"


@pytest.mark.parametrize("path", [*BEFORE, *sorted((SAMPLES / "traces").glob("*.jsonl"))], ids=lambda p: p.name)
def test_a_trace_written_before_reads_as_typed_events_and_writes_back_the_same_bytes(path: Path) -> None:
    trace = Trace.read(path)
    assert not [e for e in trace if isinstance(e, PlainEvent)]  # every type the engine wrote has its class
    assert trace.to_jsonl() == path.read_text(encoding="utf-8")


def test_the_fixtures_hold_every_event_type() -> None:
    written = {json.loads(line)["type"] for path in BEFORE for line in path.read_text().splitlines()}
    assert written == set(EVENT_TYPES)


def _comparable(text: str) -> list[list[tuple[str, Any]]]:
    """A trace's lines without what differs between runs: times, and a remedy wait's random jitter."""
    out = []
    for line in text.splitlines():
        d = json.loads(line)
        for key in ("t", "duration_s", "latency_s", "chunk_s"):
            d.pop(key, None)
        if d["type"] == "early_stop":
            d.pop("seconds")
        if d["type"] == "retry_wait" and d["kind"] == "remedy":
            d.pop("seconds")
        out.append(list(d.items()))
    return out


def _calls() -> dict[str, Trace]:
    """The calls that wrote the fixtures, run again now."""
    opts = CallOptions(wait=False, rng=random.Random(0))
    qa = cs.load(QA)
    scenario = qa.doc.scenarios[0]
    good, value = scenario.responses[0], scenario.input
    low = '{"answer": "x", "evidence": [], "coverage_score": 0.1}'
    faults = [TransportFault("rate limited", kind="rate_limit", retryable=True, status=429, exc_class="RateLimitError", retry_after=0.5),
              TransportFault("boom", kind="server", retryable=True, status=503, exc_class="ServiceUnavailableError")]
    out = {"transport-and-remedies": qa.call(value, ScriptedModel([*faults, low, "not json at all", good]), options=opts).trace,
           "transport-gives-up": qa.call(value, ScriptedModel([TransportFault(
               "no key", kind="authentication", retryable=False, status=401, exc_class="AuthenticationError")]), options=opts).trace,
           "model-error": qa.call(value, ScriptedModel(["{}"]), options=opts).trace}
    first = qa.call(value, ScriptedModel([good]), options=opts)
    out["replay-divergence"] = qa.call({**value, "query": value["query"] + " (changed)"}, ReplayModel(first.trace), options=opts).trace
    session = qa.session(value, ScriptedModel([low, good]))
    while (event := session.step()) is not None:
        if isinstance(event, ModelRequest) and event.attempt == 0:
            session.edit_messages([*event.messages, {"role": "user", "content": "Please be brief."}])
            session.edit_reply(low)
        elif isinstance(event, ValidationFailure):
            session.edit_errors(["coverage too low (edited)"])
    out["edited"] = session.trace
    pre = cs.load(PRE)
    out["pre-remedy-exhausted"] = pre.call({"name": " "}, ScriptedModel(['{"name": "Ada"}', *['{"text": "Hi"}'] * 3]), options=opts).trace
    out["invalid-input-repaired"] = pre.call({"nom": 3}, ScriptedModel(['{"name": "Bo"}', '{"text": "Hello Bo"}']), options=opts).trace
    out["input-null"] = qa.session(None, ScriptedModel([good])).run(raise_on_violation=False).trace
    watched = CallOptions(wait=False, rng=random.Random(0), watch_for=lambda plan, mode: _NotAnObject())
    out["early-stop"] = qa.call(value, ScriptedModel(["Sure! Here is the answer you asked for: {}", good], streamed=True),
                                options=watched).trace
    return out


class _NotAnObject:
    """A prefix watch of a test's own: a reply whose first character is not `{` can never be the output's object."""

    def feed(self, reply_so_far: str) -> Any:
        text = reply_so_far.lstrip()
        if text and not text.startswith("{"):
            from types import SimpleNamespace

            return SimpleNamespace(clause="output", message="the reply is not a JSON object", position=0)
        return None


def test_the_engine_writes_the_lines_it_wrote_before_events_were_typed() -> None:
    for name, trace in _calls().items():
        assert _comparable(trace.to_jsonl()) == _comparable((FIXTURES / "traces" / f"{name}.jsonl").read_text()), name


def test_events_are_typed_for_the_code_that_reads_them() -> None:
    trace = Trace.read(FIXTURES / "traces" / "transport-and-remedies.jsonl")
    starts = trace.of(StageStart)
    assert [s.stage for s in starts][:3] == ["input", "pre", "act"] and starts[0].contract == "multidoc_qa"
    faults = trace.of(TransportFailure)
    assert [(f.kind, f.status, f.gave_up) for f in faults] == [("rate_limit", 429, False), ("server", 503, False)]
    waits = trace.of(RetryWait)
    assert waits[0].kind == "transport" and waits[0].retry == 1 and waits[0].seconds == 0.5
    remedies = [r for r in trace.of(ModelRequest) if r.remedy]
    assert [r.purpose for r in remedies] == ["remedy_post", "remedy_post"] and remedies[0].errors
    assert all(isinstance(r, ModelReply) and r.chars == len(r.text) for r in trace.of(ModelReply))
    failed = [c.name for c in trace.of(ConditionChecked) if c.failed]
    assert failed and all(name.startswith("post.") for name in failed)
    assert set(STAGES) >= {e.stage for e in trace}


def test_a_trace_with_a_field_of_the_wrong_type_is_refused_naming_its_line_and_field(tmp_path: Path) -> None:
    lines = (FIXTURES / "traces" / "model-error.jsonl").read_text().splitlines()
    index = next(i for i, line in enumerate(lines) if '"llm_response"' in line)
    bad = json.loads(lines[index])
    bad["prompt_tokens"] = "many"
    lines[index] = json.dumps(bad)
    path = tmp_path / "edited-by-hand.jsonl"
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(ValueError,
                       match=rf"edited-by-hand.jsonl:{index + 1}: not an event: llm_response: 'prompt_tokens' must be an integer"):
        Trace.read(path)


def test_unknown_types_and_keys_are_kept_as_they_came(tmp_path: Path) -> None:
    text = ('{"seq": 1, "t": 0.5, "stage": "pipeline", "type": "step_start", "step": "retrieve"}\n'
            '{"seq": 2, "t": 0.6, "stage": "generate", "type": "llm_response", "attempt": 0, "text": "{}", "prompt_tokens": 3, '
            '"completion_tokens": 1, "cost_usd": 0.0, "latency_s": 0.1, "note": "a key a later version writes"}\n')
    path = tmp_path / "t.jsonl"
    path.write_text(text)
    trace = Trace.read(path)
    plain, reply = trace
    assert isinstance(plain, PlainEvent) and plain.type == "step_start" and plain.get("step") == "retrieve"
    assert isinstance(reply, ModelReply) and reply.prompt_tokens == 3 and reply.get("note") == "a key a later version writes"
    assert trace.to_jsonl() == text


def test_perf_of_a_recorded_trace_is_the_one_of_its_events() -> None:
    trace = Trace.read(SAMPLES / "traces" / "multidoc_qa.remedied-after-low-coverage.jsonl")
    stats = PerfStats.of_events(trace).as_dict()
    ends = [e for e in trace if e.type == "stage_end"]
    assert stats["generate"]["count"] == sum(1 for e in ends if e.stage == "generate")
    assert stats["llm"]["calls"] == len(trace.of(ModelReply))
    assert stats["total_execution"]["total"] == trace[len(trace) - 1].t


def _stepped_and_called(contract: Any, value: Any, replies: list[Any], **options: Any) -> tuple[list[Any], Any, Any]:
    """The same call stepped event by event (as the debugger does) and called to its end: (the events each step
    returned, the stepped session, the call's result)."""
    streamed = "watch_for" in options  # a watched call's replies stream (and may be cut early)
    stepped = contract.session(value, ScriptedModel(list(replies), streamed=streamed),
                               options=CallOptions(wait=False, rng=random.Random(0), **options))
    seen = []
    while (event := stepped.step()) is not None:
        assert stepped.last is event
        seen.append(event)
    called = contract.session(value, ScriptedModel(list(replies), streamed=streamed),
                              options=CallOptions(wait=False, rng=random.Random(0), **options)).run(raise_on_violation=False)
    return seen, stepped, called


def test_a_call_s_events_read_after_it_are_the_ones_a_stepped_session_returned_as_it_ran() -> None:
    """The engine records a call's events as rows and builds them when something reads them (issue 36.10): what a caller
    reads after the call is what the debugger got at each step, and the trace holds the very events a step returned."""
    qa, pre = cs.load(QA), cs.load(PRE)
    scenario = qa.doc.scenarios[0]
    good, value = scenario.responses[0], scenario.input
    low = '{"answer": "x", "evidence": [], "coverage_score": 0.1}'
    faults = [TransportFault("rate limited", kind="rate_limit", retryable=True, status=429, exc_class="RateLimitError", retry_after=0.5),
              TransportFault("no key", kind="authentication", retryable=False, status=401, exc_class="AuthenticationError")]
    cases = [(qa, value, [faults[0], low, "not json at all", good], {}), (qa, value, [faults[1]], {}), (qa, value, ["{}"], {}),
             (qa, None, [good], {}), (pre, {"name": " "}, ['{"name": "Ada"}', *['{"text": "Hi"}'] * 3], {}),
             (pre, {"nom": 3}, ['{"name": "Bo"}', '{"text": "Hello Bo"}'], {}),
             (qa, value, ["Sure: {}", good], {"watch_for": lambda plan, mode: _NotAnObject()})]
    covered: set[str] = set()
    for contract, given, replies, options in cases:
        seen, stepped, called = _stepped_and_called(contract, given, replies, **options)
        covered |= {e.type for e in seen}
        assert stepped.trace.events == seen  # the same objects: an edit made at a step is in the trace
        unread = len(called.trace)
        assert [type(e) for e in called.trace] == [type(e) for e in seen] and len(called.trace) == unread
        assert [e.seq for e in called.trace] == list(range(1, unread + 1))
        assert _comparable(called.trace.to_jsonl()) == _comparable(stepped.trace.to_jsonl()), (contract.name, replies)
    assert covered == set(EVENT_TYPES) - {"replay_divergence", "structure_fallback"}


def test_a_call_s_event_times_are_its_clock_s_when_each_happened() -> None:
    """An event recorded as a row keeps the time it happened, not the time it was read; a stage's duration is its end's
    time minus its start's."""
    qa = cs.load(QA)
    scenario = qa.doc.scenarios[0]
    readings: list[float] = []

    def clock() -> float:
        readings.append(len(readings) * 0.125)
        return readings[-1]

    result = qa.call(scenario.input, ScriptedModel(["{}", scenario.responses[0]]), options=CallOptions(wait=False, clock=clock))
    read_at = len(readings)
    times = [e.t for e in result.trace]
    assert len(readings) == read_at  # reading the events asked the clock nothing
    assert times == sorted(times) and set(times) <= {r - readings[0] for r in readings}
    started: dict[str, float] = {}
    for event in result.trace:
        if isinstance(event, StageStart):
            started[event.stage] = event.t
        elif isinstance(event, StageEnd):
            assert event.duration_s == event.t - started[event.stage]
