"""Every wait is bounded (issue 18.6): a server's absurd Retry-After fails that row at once instead of sleeping for
days, a 429's shared cool-down is capped like run's transport waits, and --no-wait sleeps nothing anywhere. The
sleeps are recorded through the injected `sleep`, never slept."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from openai_server import OpenAIServer, Received, Reply

from contractstudio.evaluation.evaluate import EvalConfig, evaluate
from contractstudio.runtime.call_state import CallOptions, TransportRetry

ROOT = Path(__file__).resolve().parent.parent
QA = ROOT / "tests" / "runtime_contracts" / "qa.contract.yaml"
GOOD = '{"answer": "ok", "evidence": [{"doc_id": "A1", "snippet": "s"}], "coverage_score": 0.9}'
INPUT = {"query": "q", "documents": [{"id": "A1", "content": "text"}]}


def _rows(path: Path, queries: list[str]) -> Path:
    path.write_text("".join(json.dumps({"id": q, "input": {**INPUT, "query": q}}) + "\n" for q in queries))
    return path


def _answer(retry_after: str):  # type: ignore[no-untyped-def]
    def answer(received: Received) -> Reply | str:
        if '"query": "slow' in received.body["messages"][1]["content"]:
            return Reply(status=429, content="rate limited", headers={"Retry-After": retry_after})
        return GOOD
    return answer


def _eval(tmp_path: Path, server: OpenAIServer, wait: bool) -> tuple[dict[str, Any], list[float]]:
    slept: list[float] = []
    out = tmp_path / "r.jsonl"
    cfg = EvalConfig(target=QA, data=_rows(tmp_path / "rows.jsonl", ["slow-1", "ok-1", "ok-2"]), out=out, concurrency=1,
                     cache=False, model="openai/test-model", api_base=server.base_url, wait=wait)
    evaluate(cfg, sleep=slept.append)
    return {r["id"]: r for r in map(json.loads, out.read_text().splitlines())}, slept


@pytest.mark.parametrize("retry_after", ["999999", "inf", "nan"])
def test_an_absurd_retry_after_fails_that_row_at_once_and_caps_the_shared_cool_down(tmp_path: Path, retry_after: str) -> None:
    with OpenAIServer(responder=_answer(retry_after)) as server:
        records, slept = _eval(tmp_path, server, wait=True)
        asked = [r for r in server.requests if '"query": "slow' in r.body["messages"][1]["content"]]
    slow = records["slow-1"]
    assert slow["transport_failed"] and not slow["successful"]
    assert len(asked) == 1  # not retried: no retry could wait that long
    assert any("asks to wait" in e and "more than" in e for e in slow["errors"])
    assert records["ok-1"]["successful"] and records["ok-2"]["successful"]
    assert slept and max(slept) <= TransportRetry().max_delay  # the other rows held back, but at most 30 s


def test_no_wait_sleeps_nothing_after_a_429(tmp_path: Path) -> None:
    with OpenAIServer(responder=_answer("5")) as server:
        records, slept = _eval(tmp_path, server, wait=False)
    assert slept == []
    assert records["slow-1"]["transport_failed"] and records["ok-1"]["successful"]


def test_a_retry_after_within_the_budget_is_waited_and_retried() -> None:
    import contractstudio as cs
    from contractstudio.runtime.models import ScriptedModel, TransportFault

    slept: list[float] = []
    fault = TransportFault("429", kind="rate_limit", retryable=True, status=429, retry_after=45.0)
    result = cs.load(QA).call(INPUT, ScriptedModel([fault, GOOD]), options=CallOptions(sleep=slept.append))
    assert result.successful and slept == [30.0]  # capped at the transport's longest wait, then retried


@pytest.mark.parametrize("value", ["nan", "inf", "0", "-5"])
@pytest.mark.parametrize("option", ["--rpm", "--tpm"])
def test_a_rate_limit_that_is_not_a_finite_positive_number_is_refused(capsys: pytest.CaptureFixture[str], tmp_path: Path,
                                                                      option: str, value: str) -> None:
    from contractstudio.cli import main

    rows = _rows(tmp_path / "rows.jsonl", ["ok-1"])
    code = main(["eval", str(QA), "--data", str(rows), "--scripted", option, value])
    err = capsys.readouterr().err
    assert code == 2 and f"{option} must be a finite number above 0, not {value}" in err


def test_the_rate_limiter_refuses_a_limit_that_would_turn_it_off() -> None:
    from contractstudio.evaluation.limits import RateLimiter

    for bad in (float("nan"), float("inf"), 0.0, -1.0):
        with pytest.raises(ValueError, match="rpm must be a finite number above 0"):
            RateLimiter(rpm=bad)
        with pytest.raises(ValueError, match="tpm must be a finite number above 0"):
            RateLimiter(tpm=bad)


def test_a_missing_api_key_is_named_before_any_request(monkeypatch: pytest.MonkeyPatch) -> None:
    import contractstudio as cs
    from contractstudio.runtime.live import LiveModel

    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    result = cs.load(QA).call(INPUT, LiveModel("openai/gpt-4o-mini"), options=CallOptions(wait=False))
    assert not result.successful and result.llm_calls == 0
    assert not result.trace.of_type("transport_error")  # nothing was sent, so nothing failed on the way
    assert any("OPENAI_API_KEY is not set" in e for e in result.errors)


def test_a_refused_connection_to_loopback_is_retried_once_quickly_and_says_nothing_listens() -> None:
    import socket

    import contractstudio as cs
    from contractstudio.runtime.live import LiveModel

    with socket.socket() as probe:  # a port that was free a moment ago: nothing listens there
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    api_base = f"http://127.0.0.1:{port}/v1"
    slept: list[float] = []
    result = cs.load(QA).call(INPUT, LiveModel("openai/test-model", api_base=api_base), options=CallOptions(sleep=slept.append))
    assert not result.successful and len(result.trace.of_type("transport_error")) == 2  # the first try and one retry
    assert sum(slept) <= 1.0
    assert any(f"nothing is listening at {api_base}" in e for e in result.errors)
