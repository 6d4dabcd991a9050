"""Traces: JSONL round trip, readable errors for bad files, and secrets redacted everywhere."""

from __future__ import annotations

from pathlib import Path

import pytest

from contractstudio.runtime.models import ReplayModel, explain_difference
from contractstudio.runtime.perf import PerfStats, format_table
from contractstudio.runtime.trace import Trace, redact, register_secret


def test_redaction_of_keys_headers_and_known_secrets() -> None:
    register_secret("my-own-secret-value-123")
    data = {
        "api_key": "abc", "headers": {"Authorization": "Bearer xyz", "X-Api-Key": "k"},
        "message": "Incorrect API key provided: sk-proj-abcdef123456. Authorization: Bearer tok_ABCDEFG",
        "note": "used my-own-secret-value-123 here", "ok": "plain text", "n": 3,
        "list": ["api_key=shhh123", "fine"],
    }
    out = redact(data)
    assert out["api_key"] == "***" and out["headers"] == {"Authorization": "***", "X-Api-Key": "***"}
    assert "sk-proj" not in out["message"] and "tok_ABCDEFG" not in out["message"]
    assert out["note"] == "used *** here" and out["ok"] == "plain text" and out["n"] == 3
    assert out["list"] == ["api_key=***", "fine"]


def test_jsonl_round_trip_redacts_on_write(tmp_path: Path) -> None:
    trace = Trace.from_dicts([{"seq": 1, "t": 0.0, "stage": "generate", "type": "llm_request",
                               "messages": [{"role": "user", "content": "hi"}], "params": {"model": "m", "api_key": "sk-live-zzzzzzzz"}},
                              {"seq": 2, "t": 0.5, "stage": "generate", "type": "llm_response", "text": "{}", "prompt_tokens": 1}])
    path = tmp_path / "t.jsonl"
    trace.write(path)
    assert "sk-live" not in path.read_text()
    back = Trace.read(path)
    assert [(e.seq, e.stage, e.type) for e in back] == [(1, "generate", "llm_request"), (2, "generate", "llm_response")]
    assert back[0]["params"]["api_key"] == "***" and back[1]["text"] == "{}"


def test_bad_trace_files_are_reported_with_a_line(tmp_path: Path) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text('{"seq": 1, "type": "x"}\nnot json\n')
    with pytest.raises(ValueError, match=r"bad.jsonl:2: not a JSON line"):
        Trace.read(path)
    path.write_text("[1, 2]\n")
    with pytest.raises(ValueError, match="an event must be a JSON object"):
        ReplayModel(path)


def test_difference_names_the_message_and_the_place() -> None:
    old = [{"role": "system", "content": "task"}, {"role": "user", "content": "line one\nquery: cats"}]
    new = [{"role": "system", "content": "task"}, {"role": "user", "content": "line one\nquery: dogs"}]
    text = explain_difference(old, new)
    assert text is not None and text.startswith("message 2 (user) changed at line 2, character 17")
    assert explain_difference(old, old) is None
    assert explain_difference(old, old[:1]) == "the request has 1 messages, the recording 2"
    assert explain_difference(old, [{"role": "user", "content": "task"}]) == "message 1 changed role: recorded 'system', now 'user'"


def test_perf_table_lists_stages_overhead_and_llm() -> None:
    perf = PerfStats()
    perf.add_stage("generate", 0.5)
    perf.add_stage("generate", 0.3)
    perf.add_llm(10, 5, 0.001, 0.7)
    perf.add_call(1.0, 0.8)
    stats = perf.as_dict()
    assert stats["generate"]["count"] == 2 and stats["generate"]["min"] == 0.3 and stats["generate"]["max"] == 0.5
    assert stats["generate"]["std"] == pytest.approx(0.1414, abs=1e-3)
    assert stats["overhead"]["total"] == pytest.approx(0.2) and stats["overhead"]["percentage"] == pytest.approx(20.0)
    table = format_table(stats)
    assert "generate" in table and "overhead" in table and "1 call(s), 10 prompt + 5 completion tokens" in table


def test_placeholder_keys_are_not_redacted_everywhere() -> None:
    register_secret("none")
    register_secret("not-needed")
    assert redact("the answer is none of these; not-needed") == "the answer is none of these; not-needed"


def _flat(stats: dict) -> dict[str, object]:
    """`as_dict` as one level of "section.key" entries, in its order (pytest.approx compares one level)."""
    return {f"{name}.{key}": value for name, section in stats.items() for key, value in section.items()}


def test_recorded_calls_add_up_to_the_same_stats_as_each_sample_added_when_it_came() -> None:
    import random

    from contractstudio.runtime.perf import _FOLD_AT, new_llm_counts

    rng = random.Random(7)
    kept, one_by_one = PerfStats(), PerfStats()
    for call in range(2 * _FOLD_AT + 37):  # folded twice on the way, read part-way, the rest folded when read
        stages = [(s, rng.random() / 7) for s in ("input", "pre", "generate", "post", "generate", "post", "finalize")]
        stages = stages[:rng.randint(1, len(stages))]
        in_stages = sum(seconds for _, seconds in stages)
        llm = new_llm_counts()
        llm.update(calls=rng.randint(0, 3), prompt_tokens=rng.randint(0, 900), cost_usd=rng.random() / 1000,
                   latency_s=rng.random())
        if call % 5 == 0:
            llm["a later key"] = call
        total = None if call % 11 == 0 else in_stages + rng.random() / 50 - 0.01  # a few overheads below 0: clamped
        kept.record(stages, llm, total, in_stages)
        for stage, seconds in stages:
            one_by_one.add_stage(stage, seconds)
        mine = one_by_one.llm
        for k, v in llm.items():
            mine[k] = mine.get(k, 0) + v
        if total is not None:
            one_by_one.add_call(total, in_stages)
        if call == 100:
            assert _flat(kept.as_dict()) == pytest.approx(_flat(one_by_one.as_dict()), rel=1e-12)
    # every count the same, every float the same but for its last digits (Python 3.12's sum() compensates rounding)
    assert _flat(kept.as_dict()) == pytest.approx(_flat(one_by_one.as_dict()), rel=1e-12)
    assert list(kept.as_dict()["llm"]) == list(one_by_one.as_dict()["llm"])
    assert kept.calls.n == one_by_one.calls.n == sum(1 for c in range(2 * _FOLD_AT + 37) if c % 11)
