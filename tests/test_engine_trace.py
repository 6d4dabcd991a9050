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
