"""A streamed reply cut as soon as its prefix breaks a clause: the engine, the remedy after it, scripted and replayed.

The clauses decidable on a prefix are runtime/prefix_watch.py's; these tests give the engine a watch of their own
(`LabelWatch`: the label's first characters can no longer be 'pos' or 'neg'), so they hold whatever that module
decides.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import pytest

import contractstudio as cs
from contractstudio.runtime.call_state import CallOptions
from contractstudio.runtime.events import EarlyStop, ModelReply
from contractstudio.runtime.models import ReplayModel, ScriptedModel
from contractstudio.runtime.streaming import token_pieces
from contractstudio.runtime.trace import Trace

CONTRACT = """\
kind: contract
name: verdict
prompt: Classify the review.
types:
  Review:
    fields:
      text: {type: str}
  Verdict:
    fields:
      label: {type: "Literal['pos', 'neg']"}
      reason: {type: str}
input: Review
output: Verdict
remedy:
  retry: {tries: 2, delay: 0}
"""
LABEL_ERROR = "label: Input should be 'pos' or 'neg'"
DOOMED = '{"label": "maybe", "reason": "' + "it is hard to say, really " * 20 + '"}'
GOOD = '{"label": "pos", "reason": "loves it"}'
REVIEW = {"text": "I love this phone"}


@dataclass(frozen=True)
class Violation:
    clause: str
    message: str
    position: int


class LabelWatch:
    """A test's own prefix watch: the label's value, once its first characters can be neither 'pos' nor 'neg'."""

    def __init__(self) -> None:
        self.fed: list[str] = []

    def feed(self, reply_so_far: str) -> Violation | None:
        self.fed.append(reply_so_far)
        key = '"label": "'
        at = reply_so_far.find(key)
        if at < 0:
            return None
        start = at + len(key)
        typed = reply_so_far[start:].split('"', 1)[0]
        if typed and not any(v.startswith(typed) for v in ("pos", "neg")):
            return Violation("output.label", LABEL_ERROR, start)
        return None


watches: list[LabelWatch] = []


def label_watch(plan: Any, mode: str) -> LabelWatch:
    watches.append(LabelWatch())
    return watches[-1]


WATCHED = CallOptions(wait=False, watch_for=label_watch)


@pytest.fixture
def verdict(tmp_path: Path) -> Any:
    path = tmp_path / "verdict.contract.yaml"
    path.write_text(CONTRACT)
    return cs.load(path)


def test_a_streamed_scripted_reply_is_cut_at_its_violation_and_the_remedy_sends_the_partial_reply(verdict: Any) -> None:
    result = verdict.call(REVIEW, ScriptedModel([DOOMED, GOOD], streamed=True), options=WATCHED)
    assert result.successful and result.output.label == "pos" and result.attempts == 1
    stop = next(e for e in result.trace if isinstance(e, EarlyStop))
    assert stop.clause == "output.label" and stop.message == LABEL_ERROR
    assert stop.position == DOOMED.index("maybe")
    first = next(e for e in result.trace if isinstance(e, ModelReply))
    assert DOOMED.startswith(first.text) and len(first.text) < 20  # the reply as it was when it was cut
    assert first.chunk_ends is not None and first.chunk_ends[-1] == len(first.text)
    assert stop.tokens == len(first.chunk_ends) and stop.saved_tokens and stop.saved_tokens > 100
    repair = [e for e in result.trace.of_type("llm_request")][1]
    assert repair.messages[2] == {"role": "assistant", "content": first.text}
    assert LABEL_ERROR in repair.messages[3]["content"]
    failure = next(e for e in result.trace.of_type("validation_error"))
    assert failure.where == "type" and failure.errors == [LABEL_ERROR]


def test_without_a_watch_the_same_reply_is_read_whole(verdict: Any) -> None:
    result = verdict.call(REVIEW, ScriptedModel([DOOMED, GOOD], streamed=True),
                          options=CallOptions(wait=False, watch_for=None))
    assert result.successful and result.attempts == 1
    assert not any(isinstance(e, EarlyStop) for e in result.trace)
    first = next(e for e in result.trace if isinstance(e, ModelReply))
    assert first.text == DOOMED and first.chunk_ends is None  # not streamed: nobody watched the chunks


def test_a_reply_that_breaks_nothing_streams_to_its_end_and_passes(verdict: Any) -> None:
    result = verdict.call(REVIEW, ScriptedModel([GOOD], streamed=True), options=WATCHED)
    assert result.successful and result.attempts == 0
    reply = next(e for e in result.trace if isinstance(e, ModelReply))
    assert reply.text == GOOD and reply.chunk_ends and reply.chunk_ends[-1] == len(GOOD)
    assert watches[-1].fed[-1] == GOOD  # the watch saw every prefix up to the whole reply


@pytest.mark.parametrize(("graceful", "accumulate"), [(False, False), (True, False), (False, True)])
def test_early_stops_end_in_a_fallback_or_a_violation_as_whole_replies_do(tmp_path: Path, graceful: bool,
                                                                        accumulate: bool) -> None:
    text = CONTRACT.replace("remedy:\n  retry: {tries: 2, delay: 0}\n",
                            f"remedy:\n  accumulate_errors: {str(accumulate).lower()}\n"
                            f"  retry: {{tries: 2, delay: 0, graceful: {str(graceful).lower()}}}\n"
                            "on_failure: fallback\nfallback: {label: \"'neg'\", reason: \"'unknown'\"}\n")
    path = tmp_path / "verdict.contract.yaml"
    path.write_text(text)
    contract = cs.load(path)
    streamed = contract.call(REVIEW, ScriptedModel([DOOMED] * 3, streamed=True), options=WATCHED)
    whole = contract.call(REVIEW, ScriptedModel([DOOMED] * 3), options=CallOptions(wait=False, watch_for=None))
    assert streamed.successful is whole.successful is False
    assert streamed.output_data == whole.output_data == {"label": "neg", "reason": "unknown"}
    assert len([e for e in streamed.trace if isinstance(e, EarlyStop)]) == 3
    assert [e.type for e in streamed.trace.of_type("remedy_exhausted")] == ["remedy_exhausted"]
    told = [e.errors for e in streamed.trace.of_type("llm_request")][1:]
    told_whole = [e.errors for e in whole.trace.of_type("llm_request")][1:]
    assert told == [[LABEL_ERROR] * len(errors or []) for errors in told_whole]
    assert [len(errors or []) for errors in told] == ([1, 2] if accumulate else [1, 1])


def test_a_replay_of_a_streamed_call_stops_in_the_same_chunk_at_the_same_times(verdict: Any, tmp_path: Path) -> None:
    recorded = verdict.call(REVIEW, ScriptedModel([DOOMED, GOOD], streamed=True), options=WATCHED)
    path = tmp_path / "call.jsonl"
    recorded.trace.write(path)
    again = verdict.call(REVIEW, ReplayModel(path), options=WATCHED)
    was = [e for e in Trace.read(path) if isinstance(e, (ModelReply, EarlyStop))]
    now = [e for e in again.trace if isinstance(e, (ModelReply, EarlyStop))]
    assert [e.type for e in now] == ["llm_response", "early_stop", "llm_response"]
    assert [(getattr(e, "text", None), getattr(e, "chunk_ends", None), getattr(e, "chunk_s", None)) for e in now] == \
        [(getattr(e, "text", None), getattr(e, "chunk_ends", None), getattr(e, "chunk_s", None)) for e in was]
    assert again.successful and not list(again.trace.of_type("replay_divergence"))


def test_a_replay_of_a_whole_streamed_reply_under_a_watch_says_what_the_stop_saved(verdict: Any, tmp_path: Path) -> None:
    # recorded while only the debugger listened (no watch): the whole reply, in its chunks and times
    listened = replace(WATCHED, watch_for=None, on_chunk=lambda stream: None)
    recorded = verdict.call(REVIEW, ScriptedModel([DOOMED, GOOD], streamed=True), options=listened)
    whole = next(e for e in recorded.trace if isinstance(e, ModelReply))
    assert whole.text == DOOMED and whole.chunk_s is not None
    path = tmp_path / "whole.jsonl"
    recorded.trace.write(path)
    again = verdict.call(REVIEW, ReplayModel(path), options=WATCHED)
    stop = next(e for e in again.trace if isinstance(e, EarlyStop))
    sent = len(next(e for e in again.trace if isinstance(e, ModelReply)).chunk_ends or [])
    assert stop.saved_tokens == len(whole.chunk_ends or []) - sent
    assert stop.saved_s == pytest.approx(whole.chunk_s[-1] - whole.chunk_s[sent - 1])
    assert stop.seconds == pytest.approx(whole.chunk_s[sent - 1])


def test_the_trace_keeps_the_chunks_and_reads_them_back(verdict: Any, tmp_path: Path) -> None:
    result = verdict.call(REVIEW, ScriptedModel([DOOMED, GOOD], streamed=True), options=WATCHED)
    path = tmp_path / "call.jsonl"
    result.trace.write(path)
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    stop = next(line for line in lines if line["type"] == "early_stop")
    assert {"clause", "message", "position", "tokens", "seconds", "saved_tokens"} <= set(stop)
    reply = next(line for line in lines if line["type"] == "llm_response")
    assert reply["chunk_ends"] == [len(p) for p in _prefixes(reply["text"], reply["chunk_ends"])]
    bad = dict(reply, chunk_s=["soon"])
    with pytest.raises(ValueError, match="chunk_s"):
        ModelReply.from_dict(bad)


def _prefixes(text: str, ends: list[int]) -> list[str]:
    return [text[:end] for end in ends]


def test_the_debugger_sees_the_reply_grow_and_the_first_tokens_time(verdict: Any) -> None:
    seen: list[str] = []
    options = CallOptions(wait=False, watch_for=None, on_chunk=lambda stream: seen.append(stream.text))
    session = verdict.session(REVIEW, ScriptedModel([GOOD], streamed=True), options=options)
    while not isinstance(session.step(), ModelReply):
        pass
    assert len(seen) > 5 and seen[-1] == GOOD and all(GOOD.startswith(s) for s in seen)
    llm = session.perf_stats()["llm"]
    assert llm["streamed"] == 1 and llm["first_token_s"] >= 0


def test_eval_counts_early_stops_and_what_they_saved(verdict: Any) -> None:
    from contractstudio.evaluation.dataset import Row
    from contractstudio.evaluation.options import EvalConfig
    from contractstudio.evaluation.record_model import made_record, record_problem
    from contractstudio.evaluation.rows import EvalJob, record
    from contractstudio.evaluation.summary import Tally, render

    job = EvalJob.of(EvalConfig(target=Path("verdict.contract.yaml"), data=Path("rows.jsonl"), mode="scripted"), CONTRACT)
    tally = Tally()
    for number, replies in enumerate([[DOOMED, GOOD], [GOOD], [DOOMED, DOOMED, GOOD]], 1):
        result = verdict.call(REVIEW, ScriptedModel(replies, streamed=True), options=WATCHED)
        rec = record(job, Row(number, str(number), REVIEW, f"d{number}"), result)
        assert record_problem(rec, "contract") is None
        tally.add(made_record(rec, "contract"))
    whole = len(token_pieces(DOOMED))
    stops = tally.summary().early_stops
    cut = stops.tokens_at_cut // 3
    assert (stops.count, stops.saved_known) == (3, 3)
    assert stops.saved_tokens == 3 * (whole - cut) and stops.saved_tokens_estimated == 0
    assert f"early stops: 3 replies cut while the model wrote, after {3 * cut} tokens" in render(tally.summary())
    assert f"saved {3 * (whole - cut):,} tokens" in render(tally.summary())


def test_with_the_real_prefix_watch_a_literal_label_stops_the_reply_end_to_end(tmp_path: Path) -> None:
    # runtime/prefix_watch.py's own watch (the default): the label's first letters decide it, worded as the whole check
    # (a strict JSON reply: a lenient one could still carry its JSON further on, so its prefix decides nothing)
    path = tmp_path / "strict.contract.yaml"
    path.write_text(CONTRACT + "json_reply: strict\n")
    verdict = cs.load(path)
    whole = verdict.call(REVIEW, ScriptedModel([DOOMED, GOOD]), options=CallOptions(wait=False, watch_for=None))
    result = verdict.call(REVIEW, ScriptedModel([DOOMED, GOOD], streamed=True), options=CallOptions(wait=False))
    assert result.successful and result.output.label == "pos" and result.attempts == 1
    stop = next(e for e in result.trace if isinstance(e, EarlyStop))
    assert stop.clause.startswith("output.label") and DOOMED.index("maybe") <= stop.position < DOOMED.index("reason")
    [told] = [e.errors for e in result.trace.of_type("llm_request")][1] or []
    [told_whole] = [e.errors for e in whole.trace.of_type("llm_request")][1] or []
    # the words of the whole reply's check, about the value as far as the reply had written it
    assert told.split(": ", 1)[1] == told_whole.split(": ", 1)[1] and told.startswith('output.label = "m')
    assert stop.saved_tokens and stop.saved_tokens > 100
