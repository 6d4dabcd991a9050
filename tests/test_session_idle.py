"""A stepped call's timings count the call, never the time it waited for its first step (the studio's restart);
every time a call records is read from its clock (`CallOptions.clock`)."""

from __future__ import annotations

from pathlib import Path

from contractstudio.runtime.api import load
from contractstudio.runtime.call_state import CallOptions
from contractstudio.runtime.models import LLMReply, LLMRequest, ScriptedModel

QA = Path(__file__).parent / "runtime_contracts" / "qa.contract.yaml"


def test_the_wait_before_the_first_step_is_not_overhead() -> None:
    now = [1000.0]
    contract = load(QA)
    scenario = contract.scenario("first-time")
    session = contract.session(scenario.input, list(scenario.responses), options=CallOptions(wait=False, clock=lambda: now[0]))
    now[0] += 600.0  # the user restarted the call and went for coffee
    while session.step() is not None:
        now[0] += 0.001
    stats = session.result.perf_stats(cumulative=False)
    assert stats["total_execution"]["total"] < 1.0
    assert stats["overhead"]["total"] < 1.0
    assert session.trace[0].t < 1.0


class _SlowModel(ScriptedModel):
    """Scripted replies, each taking `seconds` on the call's clock (a model that answers in 2 s)."""

    def __init__(self, replies: list[str], now: list[float], seconds: float) -> None:
        super().__init__(replies)
        self.now, self.seconds = now, seconds

    def complete(self, request: LLMRequest) -> LLMReply:
        self.now[0] += self.seconds
        return super().complete(request)


def test_the_call_records_its_times_from_the_clock_it_is_given() -> None:
    now = [50.0]
    contract = load(QA)
    scenario = contract.scenario("first-time")
    model = _SlowModel(list(scenario.responses), now, 2.0)
    result = contract.call(scenario.input, model, options=CallOptions(wait=False, clock=lambda: now[0]))
    assert result.successful
    [reply] = result.trace.of_type("llm_response")
    assert reply["latency_s"] == 2.0  # the model's latency, by the given clock
    assert [e.t for e in result.trace] == [0.0] * (reply.seq - 1) + [2.0] * (len(result.trace) - reply.seq + 1)
    stats = result.perf_stats(cumulative=False)
    assert stats["total_execution"]["total"] == 2.0
    assert stats["llm"]["latency_s"] == 2.0
