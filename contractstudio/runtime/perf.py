"""Perf stats of contracted calls, with SymbolicAI's keys, accumulated per contract object.

Every stage run is timed from its `stage_start` to its `stage_end`; the LLM's
latency belongs to the stage that called it (generate, or pre for a pre
remedy), never to `overhead`, which is only the call time outside any stage.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

from contractstudio.runtime.events import STAGES, EarlyStop, Event, ModelReply, StageEnd
from contractstudio.safe_text import shown_lines


def new_llm_counts() -> dict[str, Any]:
    """The LLM usage counters of a call or of many calls."""
    return {"calls": 0, "prompt_tokens": 0, "completion_tokens": 0, "cost_usd": 0.0, "latency_s": 0.0,
            "waited_s": 0.0, "transport_retries": 0, "streamed": 0, "first_token_s": 0.0, "early_stops": 0}


class Series:
    """Running count, total, sum of squares, min and max: O(1) per sample, however many calls."""

    __slots__ = ("n", "total", "sumsq", "min", "max")

    def __init__(self) -> None:
        self.n = 0
        self.total = 0.0
        self.sumsq = 0.0
        self.min = math.inf
        self.max = -math.inf

    def add(self, value: float) -> None:
        self.n += 1
        self.total += value
        self.sumsq += value * value
        if value < self.min:
            self.min = value
        if value > self.max:
            self.max = value

    def merge(self, other: Series) -> None:
        self.n += other.n
        self.total += other.total
        self.sumsq += other.sumsq
        self.min = min(self.min, other.min)
        self.max = max(self.max, other.max)

    def summary(self) -> dict[str, float]:
        n = self.n
        mean = self.total / n if n else 0.0
        var = (self.sumsq - n * mean * mean) / (n - 1) if n > 1 else 0.0
        return {"count": n, "total": self.total, "mean": mean, "std": math.sqrt(max(var, 0.0)),
                "min": self.min if n else 0.0, "max": self.max if n else 0.0}


class PerfStats:
    """Stage timings, call totals and LLM usage over any number of calls."""

    def __init__(self) -> None:
        self.stages: dict[str, Series] = {}
        self.calls = Series()
        self.overheads = Series()
        self.llm = new_llm_counts()

    def add_stage(self, stage: str, seconds: float) -> None:
        series = self.stages.get(stage)
        if series is None:
            series = self.stages[stage] = Series()
        series.add(seconds)

    def add_llm(self, prompt_tokens: int, completion_tokens: int, cost_usd: float, latency_s: float) -> None:
        llm = self.llm
        llm["calls"] += 1
        llm["prompt_tokens"] += prompt_tokens
        llm["completion_tokens"] += completion_tokens
        llm["cost_usd"] += cost_usd
        llm["latency_s"] += latency_s

    def add_call(self, seconds: float, in_stages: float) -> None:
        self.calls.add(seconds)
        self.overheads.add(max(seconds - in_stages, 0.0))

    def record(self, stage_times: list[tuple[str, float]], llm: dict[str, Any], total: float | None, in_stages: float) -> None:
        """Add one call's raw timings (kept as a plain list during the call: cheaper than stats per call)."""
        stages, mine = self.stages, self.llm
        for stage, seconds in stage_times:  # add_stage's work, without a call per stage
            series = stages.get(stage)
            if series is None:
                series = stages[stage] = Series()
            series.add(seconds)
        for k, v in llm.items():
            mine[k] = mine.get(k, 0) + v
        if total is not None:
            self.add_call(total, in_stages)

    @classmethod
    def of_events(cls, events: Iterable[Event]) -> PerfStats:
        """The stats of one recorded call, from its events (a trace read from a file: no session to ask)."""
        stats = cls()
        in_stages = 0.0
        last: float | None = None
        for e in events:
            last = e.t
            if isinstance(e, StageEnd):
                stats.add_stage(e.stage, e.duration_s)
                in_stages += e.duration_s
            elif isinstance(e, ModelReply):
                stats.add_llm(e.prompt_tokens, e.completion_tokens, e.cost_usd, e.latency_s)
                if e.chunk_s:
                    stats.llm["streamed"] += 1
                    stats.llm["first_token_s"] += e.chunk_s[0]
            elif isinstance(e, EarlyStop):
                stats.llm["early_stops"] += 1
        if last is not None:  # the call's time: the last event's
            stats.add_call(last, in_stages)
        return stats

    def merge(self, other: PerfStats) -> None:
        """Add another call's (or contract's) stats to these."""
        for stage, series in other.stages.items():
            mine = self.stages.get(stage)
            if mine is None:
                mine = self.stages[stage] = Series()
            mine.merge(series)
        self.calls.merge(other.calls)
        self.overheads.merge(other.overheads)
        for k, v in other.llm.items():
            self.llm[k] = self.llm.get(k, 0) + v

    def as_dict(self) -> dict[str, Any]:
        """{stage: {count,total,mean,std,min,max,percentage}, overhead: {...}, total_execution: {...}, llm: {...}}."""
        whole = self.calls.total
        out: dict[str, Any] = {}
        order = [s for s in STAGES if s in self.stages] + sorted(s for s in self.stages if s not in STAGES)
        for stage in order:
            entry = self.stages[stage].summary()
            entry["percentage"] = 100.0 * entry["total"] / whole if whole else 0.0
            out[stage] = entry
        overhead = self.overheads.summary()
        overhead["percentage"] = 100.0 * overhead["total"] / whole if whole else 0.0
        out["overhead"] = overhead
        total = self.calls.summary()
        total["percentage"] = 100.0 if whole else 0.0
        out["total_execution"] = total
        out["llm"] = dict(self.llm)
        return out


def format_table(stats: dict[str, Any]) -> str:
    """The perf stats as a fixed-width table, as printed by `run` and shown in the studio."""
    head = f"{'stage':<16}{'count':>6}{'total ms':>11}{'mean ms':>10}{'std ms':>10}{'min ms':>10}{'max ms':>10}{'%':>8}"
    lines = [head, "-" * len(head)]
    for name, e in stats.items():
        if name == "llm":
            continue
        if name == "total_execution":
            lines.append("-" * len(head))
        lines.append(
            f"{name:<16}{e['count']:>6}{e['total'] * 1e3:>11.3f}{e['mean'] * 1e3:>10.3f}{e['std'] * 1e3:>10.3f}"
            f"{e['min'] * 1e3:>10.3f}{e['max'] * 1e3:>10.3f}{e['percentage']:>7.1f}%"
        )
    llm = stats.get("llm") or {}
    if llm:
        lines.append(
            f"llm: {llm['calls']} call(s), {llm['prompt_tokens']} prompt + {llm['completion_tokens']} completion tokens, "
            f"${llm['cost_usd']:.6f}, {llm['latency_s']:.3f} s waiting for the model, "
            f"{llm['transport_retries']} transport retr{'y' if llm['transport_retries'] == 1 else 'ies'}"
            + (f", first token after {llm['first_token_s'] / llm['streamed']:.3f} s on average over {llm['streamed']} "
               f"streamed repl{'y' if llm['streamed'] == 1 else 'ies'}" if llm.get("streamed") else "")
            + (f", {llm['early_stops']} cut early" if llm.get("early_stops") else "")
        )
    return shown_lines(lines)  # a stage's name is one line
