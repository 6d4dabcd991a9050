"""Stepping a call (what the studio's debugger does): continue past a breakpoint, restart, breakpoints, edits."""

from __future__ import annotations

from pathlib import Path

import pytest

import contractstudio as cs
from contractstudio.runtime.events import STAGES, ModelRequest, StageStart, ValidationFailure
from contractstudio.runtime.model_choice import ModelChoice, choices_for
from contractstudio.runtime.models import ReplayModel, ScriptedModel

HERE = Path(__file__).parent / "runtime_contracts"
INPUT = {"query": "Why vectors?", "documents": [{"id": "A1", "content": "Vector databases store embeddings."}]}
GOOD = '{"answer": "They store embeddings.", "evidence": [{"doc_id": "A1", "snippet": "store embeddings"}], "coverage_score": 0.9}'
LOW = '{"answer": "x", "evidence": [], "coverage_score": 0.2}'


def qa() -> cs.Contract:  # type: ignore[name-defined]
    return cs.load(HERE / "qa.contract.yaml")


def test_continue_at_a_breakpoint_leaves_it_for_the_next_one() -> None:
    session = qa().session(INPUT, [LOW, GOOD], breakpoints={"post"})
    first = session.continue_()
    assert isinstance(first, StageStart) and (first.stage, first.attempt) == ("post", 0) and session.at_breakpoint
    second = session.continue_()  # paused at a breakpoint: continuing never stays where it is
    assert isinstance(second, StageStart) and (second.stage, second.attempt) == ("post", 1) and session.at_breakpoint
    assert session.continue_() is None and not session.at_breakpoint and session.result.successful


def test_a_breakpoint_set_while_paused_stops_the_next_continue() -> None:
    session = qa().session(INPUT, [GOOD])
    session.step()  # paused at the input stage's start, no breakpoints
    assert session.toggle_breakpoint("forward") is True
    event = session.continue_()
    assert isinstance(event, StageStart) and event.stage == "forward"
    assert session.toggle_breakpoint("forward") is False and session.breakpoints == set()
    with pytest.raises(ValueError, match="no stage 'generatte'"):
        session.toggle_breakpoint("generatte")
    assert set(STAGES) >= {"input", "post", "finalize"}


def test_restart_runs_the_call_again_from_the_first_reply() -> None:
    contract = qa()
    session = contract.session(INPUT, [LOW, GOOD], breakpoints={"generate"})
    session.continue_()
    session.step()
    session.step()
    assert len(session.trace) > 3
    session.restart()
    assert len(session.trace) == 0 and not session.done and session.breakpoints == {"generate"}
    assert session.result is None
    result = session.run()
    fresh = contract.call(INPUT, [LOW, GOOD])
    assert [(e.stage, e.type) for e in result.trace] == [(e.stage, e.type) for e in fresh.trace]
    assert result.attempts == 1 and result.successful  # the scripted replies started from LOW again


def test_restart_of_a_replay_replays_from_the_first_recorded_reply(tmp_path: Path) -> None:
    contract = qa()
    recorded = contract.call(INPUT, [LOW, GOOD])
    session = contract.session(INPUT, ReplayModel(recorded.trace))
    first = session.run()
    session.restart()
    again = session.run()
    assert first.attempts == again.attempts == 1 and again.successful
    assert not [e for e in again.trace if e.type == "replay_divergence"]


def test_pending_edit_says_what_the_paused_event_allows() -> None:
    session = qa().session(INPUT, [LOW, GOOD])
    seen = set()
    while (event := session.step()) is not None:
        want = "reply" if isinstance(event, ModelRequest) else "errors" if isinstance(event, ValidationFailure) else None
        assert session.pending_edit == want
        seen.add(want)
    assert seen == {"reply", "errors", None} and session.pending_edit is None


def _lines(trace: object) -> list[dict[str, object]]:
    return [{k: v for k, v in line.items() if k not in ("t", "duration_s", "latency_s", "seconds")} for line in trace.to_dicts()]  # type: ignore[attr-defined]


def test_a_call_run_to_its_end_records_the_events_of_the_same_call_stepped_through() -> None:
    contract = qa()
    stepped = contract.session(INPUT, [LOW, GOOD])
    while stepped.step() is not None:
        pass
    run = contract.session(INPUT, [LOW, GOOD])
    result = run.run()
    assert _lines(result.trace) == _lines(stepped.trace) and len(result.trace) > 20
    assert run.last is not None and run.last.type == "result" and run.last.seq == len(result.trace)


def test_an_edit_made_while_paused_is_delivered_when_the_session_then_runs_to_its_end() -> None:
    session = qa().session(INPUT, [LOW, GOOD])
    while session.pending_edit != "reply":
        session.step()
    session.edit_reply(GOOD)  # instead of LOW: no remedy is needed
    result = session.run()
    assert result.successful and result.attempts == 0 and result.llm_calls == 1
    replies = [e for e in result.trace if e.type == "llm_response"]
    assert len(replies) == 1 and replies[0].edited and replies[0].text == GOOD


@pytest.mark.parametrize(("text", "kind", "arg"), [
    ("scripted:remedied once", "scripted", "remedied once"), ("replay:/tmp/a b.jsonl", "replay", "/tmp/a b.jsonl"),
    ("live", "live", None), ("live:ollama/llama3:8b", "live", "ollama/llama3:8b"),
])
def test_model_choices_read_back_what_they_write(text: str, kind: str, arg: str | None) -> None:
    choice = ModelChoice.parse(text)
    assert (choice.kind, choice.arg) == (kind, arg) and str(choice) == text


@pytest.mark.parametrize("text", ["", "scripted", "scripted:", "openai/gpt-4o", "replay:"])
def test_a_model_choice_that_is_none_says_what_is(text: str) -> None:
    with pytest.raises(ValueError, match=r"scripted:SCENARIO, replay:TRACE, live or live:MODEL"):
        ModelChoice.parse(text)


def test_the_cli_flags_and_the_studio_list_make_the_same_models(tmp_path: Path) -> None:
    contract = cs.load(Path(__file__).parent.parent / "samples" / "multidoc_qa.contract.yaml")
    trace = tmp_path / "t.jsonl"
    contract.call(contract.doc.scenarios[0].input, list(contract.doc.scenarios[0].responses), trace=trace)
    listed = choices_for(contract.doc, [trace])
    names = [s.name for s in contract.doc.scenarios]
    assert [str(c) for c in listed] == [*(f"scripted:{n}" for n in names), f"replay:{trace}", "live"]
    assert listed[0].label(contract.doc) == f"scripted: {names[0]}" and listed[-1].label(contract.doc).startswith("live: ")
    flags = ModelChoice.from_flags(scenario=names[0])
    assert flags == listed[0]
    model = flags.model(contract)
    assert isinstance(model, ScriptedModel) and model.name == f"scripted:{names[0]}"
    assert isinstance(ModelChoice.from_flags(replay=str(trace)).model(contract), ReplayModel)
    assert ModelChoice.from_flags(model="openai/other").model(contract, api_base="http://127.0.0.1:9/v1").name == "openai/other"
    with pytest.raises(KeyError, match="has no scenario 'nope'"):
        ModelChoice("scripted", "nope").model(contract)


def test_a_trace_drawn_from_another_thread_while_the_call_steps_holds_each_event_once() -> None:
    """The studio steps a call in a worker thread and draws its trace from the UI thread. Events are recorded as rows
    and built when read (issue 36.10): a read while the engine records must neither build a row twice nor drop one,
    and every event keeps its number. Thread switches are forced as often as the interpreter allows."""
    import sys
    import threading

    contract = qa()
    broken = []
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        for _ in range(100):
            session = contract.session(INPUT, [LOW, GOOD])
            stepped: list[object] = []
            worker = threading.Thread(target=lambda s=session, seen=stepped: [seen.append(e) for e in iter(s.step, None)])
            worker.start()
            while worker.is_alive():
                list(session.trace)  # what the debugger's redraw reads
            worker.join()
            numbers = [e.seq for e in session.trace]
            if numbers != list(range(1, len(numbers) + 1)) or session.trace.events != stepped:
                broken.append(numbers)
    finally:
        sys.setswitchinterval(interval)
    assert not broken, broken[:3]
