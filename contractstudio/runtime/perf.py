"""Perf stats of contracted calls, with SymbolicAI's keys, accumulated per contract object.

Every stage run is timed from its `stage_start` to its `stage_end`; the LLM's
latency belongs to the stage that called it (generate, or pre for a pre
remedy), never to `overhead`, which is only the call time outside any stage.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable
from itertools import chain, repeat
from operator import methodcaller, mul
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

    def add_all(self, values: list[float]) -> None:
        """`add` of each value, in C: the same sums (sum() adds left to right on 3.11; from 3.12 it compensates its
        rounding, which can move the last digit)."""
        if not values:
            return
        self.n += len(values)
        self.total = sum(values, self.total)
        self.sumsq = sum(map(mul, values, values), self.sumsq)
        low, high = min(values), max(values)
        if low < self.min:
            self.min = low
        if high > self.max:
            self.max = high

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


# Calls recorded before their samples are added up: a bound on what waits (each call's stage list and LLM counts).
_FOLD_AT = 256


class PerfStats:
    """Stage timings, call totals and LLM usage over any number of calls.

    `record` keeps a finished call's raw timings (a sample per stage, its total, its LLM counts) and they are added
    up when the stats are read, or every `_FOLD_AT` calls: each series then takes its samples in one pass in C
    (`Series.add_all`), in the order they came. Adding them per call, a Python call per sample, was a thirtieth of a
    scripted call's work.
    """

    def __init__(self) -> None:
        self._stages: dict[str, Series] = {}
        self._calls = Series()
        self._overheads = Series()
        self._llm = new_llm_counts()
        self._samples: defaultdict[str, list[float]] = defaultdict(list)  # per stage, in the order recorded
        self._totals: list[float] = []
        self._outside: list[float] = []  # each call's total less its time in stages (clamped at 0 when added up)
        self._llms: list[dict[str, Any]] = []

    @property
    def stages(self) -> dict[str, Series]:
        self._fold()
        return self._stages

    @property
    def calls(self) -> Series:
        self._fold()
        return self._calls

    @property
    def overheads(self) -> Series:
        self._fold()
        return self._overheads

    @property
    def llm(self) -> dict[str, Any]:
        self._fold()
        return self._llm

    def add_stage(self, stage: str, seconds: float) -> None:
        series = self.stages.get(stage)
        if series is None:
            series = self._stages[stage] = Series()
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
        self._overheads.add(max(seconds - in_stages, 0.0))

    def record(self, stage_times: list[tuple[str, float]], llm: dict[str, Any], total: float | None, in_stages: float) -> None:
        """Add one finished call's raw timings (kept as a plain list during the call); `llm`, its counts, is read when
        the stats are added up: the call is over, nothing changes it."""
        samples = self._samples
        for stage, seconds in stage_times:
            samples[stage].append(seconds)
        llms = self._llms
        llms.append(llm)
        if total is not None:
            self._totals.append(total)
            self._outside.append(total - in_stages)
        if len(llms) >= _FOLD_AT:
            self._fold()

    def _fold(self) -> None:
        """Add the recorded calls' samples to the series and counts (each in the order recorded)."""
        llms = self._llms
        if not llms:  # every recorded call is in it
            return
        samples, totals, outside = self._samples, self._totals, self._outside
        self._samples, self._totals, self._outside, self._llms = defaultdict(list), [], [], []
        stages = self._stages
        for stage, values in samples.items():
            series = stages.get(stage)
            if series is None:
                series = stages[stage] = Series()
            series.add_all(values)
        mine = self._llm
        for key in dict.fromkeys(chain.from_iterable(llms)):  # the keys in the order met (a new one goes last)
            mine[key] = sum(map(methodcaller("get", key, 0), llms), mine.get(key, 0))
        self._calls.add_all(totals)
        self._overheads.add_all(list(map(max, outside, repeat(0.0))))

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
        stages = self.stages
        for stage, series in other.stages.items():
            mine = stages.get(stage)
            if mine is None:
                mine = stages[stage] = Series()
            mine.merge(series)
        self._calls.merge(other.calls)
        self._overheads.merge(other.overheads)
        llm = self._llm
        for k, v in other.llm.items():
            llm[k] = llm.get(k, 0) + v

    def as_dict(self) -> dict[str, Any]:
        """{stage: {count,total,mean,std,min,max,percentage}, overhead: {...}, total_execution: {...}, llm: {...}}."""
        self._fold()
        whole = self._calls.total
        out: dict[str, Any] = {}
        stages = self._stages
        order = [s for s in STAGES if s in stages] + sorted(s for s in stages if s not in STAGES)
        for stage in order:
            entry = stages[stage].summary()
            entry["percentage"] = 100.0 * entry["total"] / whole if whole else 0.0
            out[stage] = entry
        overhead = self._overheads.summary()
        overhead["percentage"] = 100.0 * overhead["total"] / whole if whole else 0.0
        out["overhead"] = overhead
        total = self._calls.summary()
        total["percentage"] = 100.0 if whole else 0.0
        out["total_execution"] = total
        out["llm"] = dict(self._llm)
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
