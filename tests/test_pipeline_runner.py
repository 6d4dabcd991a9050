"""The pipeline runner: runtime assertions that name step, action and field; prefix routing; the step limit."""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any

import pytest
from conftest import FIXTURES, SAMPLES

from contractstudio.runtime.errors import ContractError
from contractstudio.runtime.pipeline_runner import (
    PipelineAssertionError,
    PipelineError,
    PipelineRunner,
    parse_prefix,
)
from contractstudio.runtime.route_simulation import simulate

RAG = SAMPLES / "rag_router.pipeline.yaml"


def rag_handlers(router_reply: str, calls: list[str] | None = None) -> dict[str, Any]:
    calls = calls if calls is not None else []

    def call_model(state: dict[str, Any], step: dict[str, Any]) -> dict[str, Any]:
        calls.append(step["prompt"])
        return {"last_model_response": router_reply if step["prompt"] == "router_v1" else "The answer."}

    def search_nodes(state: dict[str, Any], step: dict[str, Any]) -> dict[str, Any]:
        return {"context_blocks": [f"hit for {state['followup_query']}"], "seed_nodes": ["n1"]}

    return {
        "call_model": call_model,
        "search_nodes": search_nodes,
        "expand_dependency_tree": lambda state, step: {"seed_nodes": state["seed_nodes"] + ["n2"]},
        "fetch_node_texts": lambda state, step: {"context_blocks": state["context_blocks"] + ["text of n2"]},
        "rerank": lambda state, step: {"context_blocks": sorted(state["context_blocks"])[: step["top_k"]]},
        "persist_turn": lambda state, step: None,
    }


def test_run_follows_the_router_prefix_and_keeps_the_payload() -> None:
    runner = PipelineRunner.from_file(RAG)
    calls: list[str] = []
    run = runner.run({"user_query": "why was I charged twice?"}, rag_handlers("  [BM25:]  double charge ", calls))
    assert run.path == ["route", "dispatch", "search", "expand", "fetch", "rerank", "answer", "persist"]
    assert run.state["retrieval_mode"] == "bm25" and run.state["followup_query"] == "double charge"
    assert run.state["last_model_response"] == "The answer."
    assert calls == ["router_v1", "answer_v1"]


def test_unrecognised_reply_goes_to_on_other() -> None:
    run = PipelineRunner.from_file(RAG).run({"user_query": "hi"}, rag_handlers("Hello there"))
    assert run.path == ["route", "dispatch", "answer", "persist"]
    assert run.state["retrieval_mode"] == "other"


def test_first_matching_prefix_wins_in_declaration_order() -> None:
    prefixes = [("semantic", "[SEMANTIC"), ("rerank", "[SEMANTIC_RERANK:]")]
    assert parse_prefix("\n [SEMANTIC_RERANK:] q ", prefixes) == ("semantic", "_RERANK:] q")
    assert parse_prefix("[DIRECT:]", prefixes) == ("other", "[DIRECT:]")


def test_requires_fails_fast_naming_step_action_and_field() -> None:
    runner = PipelineRunner.from_file(RAG)
    handlers = rag_handlers("[SEMANTIC:]   ")  # an empty query payload
    with pytest.raises(PipelineAssertionError) as info:
        runner.run({"user_query": "q"}, handlers)
    err = info.value
    assert (err.step, err.action, err.field, err.phase) == ("search", "search_nodes", "followup_query | retrieval_query", "requires_state")
    assert str(err) == ("step 'search' (action 'search_nodes') requires one of the state fields "
                        "followup_query, retrieval_query, but none is set")


def test_ensures_is_checked_after_the_step() -> None:
    handlers = rag_handlers("[SEMANTIC:] q")
    handlers["search_nodes"] = lambda state, step: {"context_blocks": []}  # forgets seed_nodes
    with pytest.raises(PipelineAssertionError) as info:
        PipelineRunner.from_file(RAG).run({"user_query": "q"}, handlers)
    assert (info.value.step, info.value.field, info.value.phase) == ("search", "seed_nodes", "ensures_state")
    assert "must set state field 'seed_nodes'" in str(info.value)


def test_missing_handler_is_a_clear_error() -> None:
    with pytest.raises(PipelineError, match=r"step 'route': no handler for action 'call_model'"):
        PipelineRunner.from_file(RAG).run({"user_query": "q"}, {})


def test_events_go_to_the_sink_in_order() -> None:
    seen: list[Any] = []
    run = PipelineRunner.from_file(RAG).run({"user_query": "q"}, rag_handlers("[DIRECT:] hi"), on_event=seen.append)
    assert seen == run.events
    assert [(e.type, e.get("step")) for e in seen[:4]] == [("step_start", "route"), ("step_end", "route"),
                                                              ("step_start", "dispatch"), ("step_end", "dispatch")]
    assert seen[3]["route"] == "on_direct" and seen[3]["next"] == "answer" and seen[3]["ok"] is True
    assert seen[-1].type == "result" and seen[-1]["successful"] is True
    assert [e.seq for e in seen] == list(range(len(seen)))
    assert all(e.stage == "pipeline" for e in seen)


def test_failing_step_emits_its_end_event_before_raising() -> None:
    seen: list[Any] = []
    with pytest.raises(PipelineAssertionError):
        PipelineRunner.from_file(RAG).run({"user_query": "q"}, rag_handlers("[SEMANTIC:]"), on_event=seen.append)
    assert seen[-1].type == "step_end" and seen[-1]["ok"] is False and seen[-1]["step"] == "search"


def test_step_limit_stops_a_loop_the_replies_never_leave() -> None:
    runner = PipelineRunner.from_file(FIXTURES / "ok/pip_router_loop_with_exit.yaml")
    handlers = {
        "search_nodes": lambda s, c: {"context_blocks": [], "seed_nodes": []},
        "expand_dependency_tree": lambda s, c: None,
        "call_model": lambda s, c: {"last_model_response": "[MORE:] again"},
        "fetch_node_texts": lambda s, c: {"context_blocks": []},
        "persist_turn": lambda s, c: None,
    }
    with pytest.raises(PipelineError, match=r"ran 50 steps without reaching an end"):
        runner.run({"retrieval_mode": "semantic", "retrieval_query": "q"}, handlers, max_steps=50)
    replies = iter(["[MORE:]", "[MORE:]", "[ENOUGH:]", "done"])
    handlers["call_model"] = lambda s, c: {"last_model_response": next(replies)}
    run = runner.run({"retrieval_mode": "semantic", "retrieval_query": "q"}, handlers)
    assert run.path.count("expand") == 3 and run.path[-1] == "persist"


def test_a_custom_action_routes_by_returning_a_route_name(tmp_path: Path) -> None:
    path = tmp_path / "p.pipeline.yaml"
    path.write_text(textwrap.dedent("""\
        kind: pipeline
        name: custom
        entry_step_id: pick
        actions:
          pick_source: {ensures_state: [source]}
        steps:
          - id: pick
            action: pick_source
            on_web: answer
            on_other: answer
          - id: answer
            action: call_model
            prompt: p
            end: true
        """))
    handlers = {"pick_source": lambda s, c: (s.update(source="web"), "web")[1],
                "call_model": lambda s, c: {"last_model_response": "ok"}}
    run = PipelineRunner.from_file(path).run({}, handlers)
    assert run.path == ["pick", "answer"] and run.events[1]["route"] == "on_web"


def test_from_file_refuses_a_file_with_errors() -> None:
    with pytest.raises(ContractError, match=r"cannot run .*dead_end.yaml: 1 error\(s\): 9:9: PIP105"):
        PipelineRunner.from_file(FIXTURES / "err/PIP/dead_end.yaml")


def test_simulate_from_the_runner_matches_the_run_path() -> None:
    runner = PipelineRunner.from_file(RAG)
    sim = simulate(runner.pipeline, "[HYBRID:] refund policy")
    run = runner.run({"user_query": "q"}, rag_handlers("[HYBRID:] refund policy"))
    assert sim.path == run.path and sim.ok
    assert sim.steps[2].known == ["followup_query", "last_model_response", "retrieval_mode", "user_query"]


def test_cs_load_returns_the_runner_for_a_pipeline_file() -> None:
    import contractstudio as cs

    runner = cs.load(RAG)
    assert isinstance(runner, PipelineRunner) and runner.name == "rag_router"
    run = runner.run({"user_query": "q"}, rag_handlers("[SEMANTIC:] refunds"))
    assert run.path[:3] == ["route", "dispatch", "search"]
    with pytest.raises(ContractError):
        cs.load(FIXTURES / "err/PIP/maybe_unset.yaml")


# ----------------------------------------------------------------- simulate agrees with the runner


@pytest.mark.parametrize("reply", ["[BM25:]", "[SEMANTIC:]    ", "  [HYBRID:]\n"])
def test_a_blank_payload_fails_in_simulate_exactly_as_in_the_runner(reply: str) -> None:
    runner = PipelineRunner.from_file(RAG)
    with pytest.raises(PipelineAssertionError) as err:
        runner.run({"user_query": "q"}, rag_handlers(reply))
    sim = simulate(runner.pipeline, reply)
    assert not sim.ok and sim.outcome == "assertion"
    assert sim.message == str(err.value)
    assert sim.path == ["route", "dispatch", "search"] and sim.steps[-1].missing == ["followup_query | retrieval_query"]


def test_a_blank_router_reply_fails_at_the_router_in_both() -> None:
    runner = PipelineRunner.from_file(RAG)
    with pytest.raises(PipelineAssertionError) as err:
        runner.run({"user_query": "q"}, rag_handlers("   "))
    sim = simulate(runner.pipeline, "   ")
    assert (sim.outcome, sim.message, sim.path) == ("assertion", str(err.value), ["route", "dispatch"])


ANY_OF = FIXTURES / "ok" / "pip_any_of_on_each_branch.yaml"


def test_a_custom_router_is_steered_in_simulate_as_its_handler_steers_the_run() -> None:
    runner = PipelineRunner.from_file(ANY_OF)
    handlers = {"pick_source": lambda state, step: "rewrite", "rewrite_query": lambda state, step: {"retrieval_query": "q"},
                "search_nodes": lambda state, step: {"context_blocks": [], "seed_nodes": []}}
    run = runner.run({"retrieval_mode": "x", "use_router": False}, handlers)
    sim = simulate(runner.pipeline, "anything", routes={"pick": "rewrite"})
    assert sim.path == run.path == ["pick", "rewrite", "search"] and sim.ok
    assert sim.steps[0].route == "on_rewrite" and sim.steps[0].note == "route 'rewrite' chosen with --route"
    first = simulate(runner.pipeline, "anything")  # not steered: the first route, and it says so
    assert first.path[:2] == ["pick", "route"]
    assert first.steps[0].note == "its handler chooses at run time; simulated: the first route (steer with --route pick=ROUTE)"


def test_a_reply_no_prefix_matches_names_the_missing_on_other_once() -> None:
    """Not "the step has no on_other and no on_other" (issue 34.17): no prefix matched, and there is no on_other."""
    pipeline = PipelineRunner.from_file(FIXTURES / "err" / "RTE" / "no_on_other.yaml", ).pipeline
    sim = simulate(pipeline, "garbage")
    assert sim.outcome == "dead_end"
    assert sim.message == "step 'dispatch': no prefix matches the reply, and the step has no on_other"


def test_a_pipeline_run_emits_typed_events_as_a_contract_call_does() -> None:
    # Issue 36, point 8: the runner emitted dicts where the engine emits typed events; now both are runtime.events'
    # Event, so the CLI, the studio, eval and a trace read one kind of event, and a trace line keeps its shape.
    from contractstudio.runtime.events import Event
    from contractstudio.runtime.pipeline_events import PipelineFinished, StepEnded, StepStarted
    from contractstudio.runtime.trace import Trace

    run = PipelineRunner.from_file(RAG).run({"user_query": "q"}, rag_handlers("[DIRECT:] hi"))
    assert all(isinstance(e, Event) for e in run.events)
    assert [type(e) for e in run.events[:2]] == [StepStarted, StepEnded] and isinstance(run.events[-1], PipelineFinished)
    first_end, last_end = run.events[1], [e for e in run.events if isinstance(e, StepEnded)][-1]
    assert isinstance(first_end, StepEnded) and (first_end.step, first_end.ok, first_end.route) == ("route", True, "next")
    lines = Trace(run.events).to_dicts()
    assert [line["seq"] for line in lines] == list(range(len(lines)))
    assert {k: v for k, v in lines[1].items() if k not in ("t", "duration_s")} == {
        "seq": 1, "stage": "pipeline", "type": "step_end", "step": "route", "action": "call_model", "ok": True,
        "route": "next", "next": "dispatch"}
    assert "next" in Trace([last_end]).to_dicts()[0] and Trace([last_end]).to_dicts()[0]["next"] is None  # the end
    assert {k: v for k, v in lines[-1].items() if k != "t"} == {"seq": len(lines) - 1, "stage": "pipeline", "type": "result",
                                                               "successful": True, "steps": len(run.path)}
