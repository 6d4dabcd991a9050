"""A stepped call's timings count the call, never the time it waited for its first step (the studio's restart)."""

from __future__ import annotations

import types
from pathlib import Path

import pytest

from contractstudio.runtime.api import load

QA = Path(__file__).parent / "runtime_contracts" / "qa.contract.yaml"


def test_the_wait_before_the_first_step_is_not_overhead(monkeypatch: pytest.MonkeyPatch) -> None:
    import contractstudio.runtime.asking as asking
    import contractstudio.runtime.call_state as call_state
    import contractstudio.runtime.session as session_module

    now = [1000.0]
    clock = types.SimpleNamespace(perf_counter=lambda: now[0], monotonic=lambda: now[0], time=lambda: now[0], sleep=lambda s: None)
    for module in (call_state, asking):  # the call's clock (its start, each event) and the model's latency
        monkeypatch.setattr(module, "time", clock)
    monkeypatch.setattr(session_module, "time", clock)
    contract = load(QA)
    scenario = contract.scenario("first-time")
    session = contract.session(scenario.input, list(scenario.responses))
    now[0] += 600.0  # the user restarted the call and went for coffee
    while session.step() is not None:
        now[0] += 0.001
    stats = session.result.perf_stats(cumulative=False)
    assert stats["total_execution"]["total"] < 1.0
    assert stats["overhead"]["total"] < 1.0
    assert session.trace[0].t < 1.0
