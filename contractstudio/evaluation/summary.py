"""The summary of an evaluation, aggregated record by record (from the run, or from a results file).

Everything is a running count except the row latencies (one float per row) and
the set of row keys, so memory grows by a few dozen bytes per row, never by a
row's trace or output.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterator
from typing import Any

from contractstudio.evaluation.record_model import ContractRecord, PipelineRecord, Record
from contractstudio.evaluation.stats import wilson
from contractstudio.evaluation.summary_model import (
    CacheFigures,
    ContractSummary,
    CostFigures,
    EarlyStopFigures,
    FailingCondition,
    Interval,
    LatencyFigures,
    RemedyShare,
    Reproducibility,
    RunSummary,
    Sequential,
    TokenFigures,
)
from contractstudio.safe_text import shorten, shown_lines

MAX_MESSAGES = 3  # distinct messages kept per failing condition


def percentile(sorted_values: list[float], p: float) -> float:
    """The nearest-rank percentile of sorted values (0 for none)."""
    if not sorted_values:
        return 0.0
    rank = max(math.ceil(p / 100.0 * len(sorted_values)), 1)
    return sorted_values[min(rank, len(sorted_values)) - 1]


def _rate(part: int, whole: int) -> float:
    return part / whole if whole else 0.0


class Tally:
    """Running figures over row records; `summary()` gives every figure of the eval summary."""

    def __init__(self) -> None:
        self.keys: set[str] = set()
        self.rows = 0
        self.outcomes: Counter[str] = Counter()
        self.remedied_at: Counter[int] = Counter()
        self.checks: dict[str, dict[str, Any]] = {}
        self.transport: Counter[str] = Counter()
        self.transport_failed = 0
        self.prompt_tokens = self.completion_tokens = self.remedy_tokens = 0
        self.cost = self.remedy_cost = self.saved = 0.0
        self.cache_hits = self.cache_misses = 0
        self.latencies: list[float] = []
        self.limit_wait = 0.0
        self.bad_rows = 0
        self.requests = self.remedies = self.structure_fallbacks = 0
        self.structured: Counter[str] = Counter()  # rows by the structure mode they asked in
        self.first_error = ""  # why the first row that could not run did not (a run where none ran says it)
        # what the provider said of the run's replies: the seeds sent, the model versions and fingerprints
        self.reproducibility: dict[str, set[Any]] = {"seed": set(), "model_version": set(), "system_fingerprint": set()}
        self.stops: Counter[str] = Counter()  # replies cut early: how many, what they had, what was saved (where known)
        self.stop_s: float = 0.0
        self.saved_s: float = 0.0

    def add(self, rec: ContractRecord) -> bool:
        """Count one record; False (and nothing counted) when its row was counted already."""
        if rec.key in self.keys:
            return False
        self.keys.add(rec.key)
        self.rows += 1
        self.outcomes[rec.outcome] += 1
        if rec.outcome == "remedied":
            self.remedied_at[rec.attempts] += 1
        elif rec.outcome == "error" and not self.first_error and rec.errors:
            self.first_error = rec.errors[0]
        seen_here: set[str] = set()
        for name, message in failures(rec):
            entry = self.checks.get(name)
            if entry is None:
                entry = self.checks[name] = {"check": name, "count": 0, "rows": 0, "messages": []}
            entry["count"] += 1
            if name not in seen_here:
                entry["rows"] += 1
                seen_here.add(name)
            if message and len(entry["messages"]) < MAX_MESSAGES and message not in entry["messages"]:
                entry["messages"].append(message)
        for fault in rec.transport:
            self.transport[fault.kind] += 1
        self.transport_failed += rec.transport_failed
        self.prompt_tokens += rec.tokens.prompt
        self.completion_tokens += rec.tokens.completion
        self.remedy_tokens += rec.remedy_tokens
        self.cost += rec.cost_usd
        self.remedy_cost += rec.remedy_cost_usd
        self.cache_hits += rec.cache.hits
        self.cache_misses += rec.cache.misses
        self.saved += rec.cache.saved_usd
        self.latencies.append(rec.latency_s)
        self.limit_wait += rec.limit_wait_s
        self.requests += rec.llm_calls
        self.remedies += rec.attempts
        if rec.structured:  # a row that never asked for an output (its input failed) asked in no mode
            self.structured[rec.structured] += 1
        self.structure_fallbacks += rec.structure_fallbacks
        if rec.reproducibility is not None:
            for name, seen in self.reproducibility.items():
                if len(seen) < MAX_MESSAGES * 10:  # a handful, never one per row
                    seen.update(getattr(rec.reproducibility, name))
        stops = rec.early_stops
        if stops is not None:
            for key in ("count", "tokens", "saved_tokens", "saved_known", "tokens_unknown"):
                self.stops[key] += getattr(stops, key)
            self.stop_s += stops.seconds
            self.saved_s += stops.saved_s
        return True

    def early_stops(self) -> EarlyStopFigures:
        """Replies cut early: how many, the tokens and seconds they had at the cut, and what the rest would have
        cost where the model knew it (scripted, replayed); for the others (live) the tokens saved are estimated as
        the run's whole replies' mean length less what the cut reply had."""
        stops = self.stops
        unknown = stops["count"] - stops["saved_known"]
        whole_replies = self.requests - stops["count"]
        mean_whole = (self.completion_tokens - stops["tokens"]) / whole_replies if whole_replies > 0 else 0.0
        estimated = max(mean_whole * unknown - stops["tokens_unknown"], 0.0) if unknown else 0.0
        return EarlyStopFigures(count=stops["count"], tokens_at_cut=stops["tokens"], seconds_at_cut=self.stop_s,
                                saved_tokens=stops["saved_tokens"], saved_s=self.saved_s, saved_known=stops["saved_known"],
                                saved_tokens_estimated=round(estimated, 1))

    def summary(self, *, duration_s: float | None = None, new_rows: int | None = None) -> ContractSummary:
        """Every figure: rates, remedies by attempt, failing conditions, faults, tokens, cost, latency."""
        n = self.rows
        ok = self.outcomes["first_try"] + self.outcomes["remedied"]
        tokens = self.prompt_tokens + self.completion_tokens
        lat = sorted(self.latencies)
        ranked = sorted(self.checks.values(), key=lambda e: (-e["count"], e["check"]))
        timing: dict[str, Any] = {}
        if duration_s is not None:
            done = n if new_rows is None else new_rows
            timing = {"duration_s": duration_s, "rows_this_run": done,
                      "rows_per_s": done / duration_s if duration_s > 0 else 0.0}
        return ContractSummary(
            rows=n, bad_rows=self.bad_rows,
            successful=ok, success_rate=_rate(ok, n),
            first_try=self.outcomes["first_try"], first_try_rate=_rate(self.outcomes["first_try"], n),
            remedied=self.outcomes["remedied"], remedied_rate=_rate(self.outcomes["remedied"], n),
            remedied_by_attempt={str(k): v for k, v in sorted(self.remedied_at.items())},
            fallback=self.outcomes["fallback"], raised=self.outcomes["raised"], errors=self.outcomes["error"],
            failing_conditions=[FailingCondition(**e) for e in ranked],
            transport_faults=dict(sorted(self.transport.items())), transport_failed_rows=self.transport_failed,
            tokens=TokenFigures(prompt=self.prompt_tokens, completion=self.completion_tokens, total=tokens,
                                per_successful_row=tokens / ok if ok else 0.0),
            cost_usd=CostFigures(total=self.cost, per_successful_row=self.cost / ok if ok else 0.0,
                                 paid=max(self.cost - self.saved, 0.0), from_cache=self.saved),
            remedy_share=RemedyShare(cost=_rate_f(self.remedy_cost, self.cost), tokens=_rate_f(self.remedy_tokens, tokens)),
            latency_s=LatencyFigures(p50=percentile(lat, 50), p95=percentile(lat, 95), p99=percentile(lat, 99),
                                     mean=sum(lat) / n if n else 0.0, max=lat[-1] if lat else 0.0),
            cache=CacheFigures(hits=self.cache_hits, misses=self.cache_misses),
            rate_limit_wait_s=self.limit_wait,
            requests=self.requests, requests_per_row=_rate(self.requests, n), remedies_per_row=_rate(self.remedies, n),
            structured_output=dict(sorted(self.structured.items())), structure_fallbacks=self.structure_fallbacks,
            early_stops=self.early_stops(),
            # every rate with its 95% Wilson interval: a rate from a sample is an estimate, not a fact
            intervals={name: interval(part, n) for name, part in
                       (("success_rate", ok), ("first_try_rate", self.outcomes["first_try"]),
                        ("remedied_rate", self.outcomes["remedied"]))},
            # what the provider said of the run: seed, model versions, fingerprints
            reproducibility=Reproducibility(**{k: sorted(v) for k, v in self.reproducibility.items()})
            if any(self.reproducibility.values()) else None,
            first_error=self.first_error or None, **timing)


def failures(rec: Record) -> Iterator[tuple[str, str]]:
    """(condition, message) for each condition a contract row failed, attempt by attempt: the one walk of a record's
    `failures` (the tally counts them; the studio filters and shows rows by them: `failed_checks`)."""
    if isinstance(rec, ContractRecord):
        for attempt in rec.failures:
            for failed in attempt.failed:
                yield failed.check, failed.message


def failed_checks(rec: Record) -> list[str]:
    """The conditions a contract row failed at any attempt, each once, in order of first failure; a pipeline row's
    failed runtime assertion as `step: phase field` (what the pipeline summary counts per step)."""
    seen = list(dict.fromkeys(name for name, _message in failures(rec)))
    if isinstance(rec, PipelineRecord) and rec.assertion is not None:
        seen.append(f"{rec.assertion.step}: {rec.assertion.phase} {rec.assertion.field}")
    return seen


def nothing_judged(s: RunSummary) -> str | None:
    """Why a finished run judged nothing (no row ran, or every row failed on transport), or None: such a run
    must not pass a CI, whatever its success rate says."""
    rows, bad = s.rows, s.bad_rows
    if rows == 0:
        return f"no row ran ({bad} bad row(s) skipped, none valid)" if bad else "no row ran (the dataset has no rows)"
    if s.kind == "pipeline":
        return None
    if s.errors == rows:  # rows that could not run at all (a scripted row without replies) did not run
        first = s.first_error
        return f"no row ran: all {rows} could not run" + (f" (the first: {first})" if first else "")
    if s.transport_failed_rows == rows:
        faults = ", ".join(f"{k} {v}" for k, v in s.transport_faults.items())
        return f"every row that ran ({rows}) failed on transport ({faults}); no reply was judged"
    return None


def gated_rate(s: RunSummary) -> tuple[str, float]:
    """The rate a gate reads: a contract's success rate, a pipeline's rate of rows that reached an end."""
    return ("reached_end_rate", s.reached_end_rate) if s.kind == "pipeline" else ("success_rate", s.success_rate)


def gate_failure(s: RunSummary, gate: float, *, point: bool = False) -> str | None:
    """Why a run fails its gate, or None. A decided sequential test (--stop-when-decided) decides; else the rate's
    95% lower bound must be at or above `gate` (--fail-under), or the rate itself (`point`: --fail-under-point)."""
    name, rate = gated_rate(s)
    what = "the success rate" if name == "success_rate" else "the rate of rows that reached an end"
    found = s.intervals.get(name)
    low = found.low if found is not None else 0.0
    decided = s.sequential.decision if s.sequential is not None else None
    if decided == "fail":
        assert s.sequential is not None
        return f"{what} is under {100 * gate:.1f}%, as the sequential test decided after {s.sequential.rows} row(s)"
    if decided == "pass":
        return None
    if point:
        return None if rate >= gate else f"{what} {_pct(rate)} is under --fail-under-point {_pct(gate)}"
    if low >= gate:
        return None
    return (f"{what} {with_interval(s, name)} is not surely at or above --fail-under {_pct(gate)}: the lower bound of "
            f"its 95% interval, {_pct(low)}, is under it (--fail-under-point compares the rate itself)")


def sequential_text(q: Sequential) -> str:
    """What --stop-when-decided did: the decision and what stopping saved, or that it did not decide."""
    test = (f"SPRT of {_pct(q.gate - q.margin)} against {_pct(q.gate + q.margin)}, "
            f"errors at most {100 * q.alpha:.0f}% / {100 * q.beta:.0f}%")
    if q.decision is None:
        return f"the sequential test did not decide in {q.rows} row(s) ({test}): the gate reads the interval"
    return (f"stopped when decided: the gate {'passes' if q.decision == 'pass' else 'fails'} after "
            f"{q.rows} row(s) ({test}); {q.rows_not_run} row(s) not run, about ${q.saved_usd:.6f} saved")


def interval(part: int, whole: int) -> Interval:
    """A rate's 95% Wilson interval as the summary keeps it."""
    low, high = wilson(part, whole)
    return Interval(low=low, high=high)


def with_interval(s: RunSummary, name: str) -> str:
    """A rate as printed: `87.5% [75.3, 94.1]` (the bounds of its 95% interval, in percent)."""
    found = s.intervals.get(name)
    text = _pct(getattr(s, name))
    return text if found is None else f"{text} [{100 * found.low:.1f}, {100 * found.high:.1f}]"


def _rate_f(part: float, whole: float) -> float:
    return part / whole if whole else 0.0


def _pct(x: float) -> str:
    return f"{100.0 * x:.1f}%"


def render(s: ContractSummary) -> str:
    """The summary as text."""
    n = s.rows
    lines = [f"rows: {n}" + (f" ({s.bad_rows} bad row(s) skipped)" if s.bad_rows else "")
             + (f", {s.rows_this_run} run now in {s.duration_s:.1f} s ({s.rows_per_s:.1f} rows/s)"
                if s.duration_s is not None else "")]
    lines.append(f"successful: {s.successful} ({with_interval(s, 'success_rate')})   first try: {s.first_try} "
                 f"({with_interval(s, 'first_try_rate')})   remedied: {s.remedied} ({with_interval(s, 'remedied_rate')})")
    if s.remedied_by_attempt:
        lines.append("remedied at attempt: " + ", ".join(f"#{k}: {v}" for k, v in s.remedied_by_attempt.items()))
    lines.append(f"fallback: {s.fallback}   raised: {s.raised}   could not run: {s.errors}")
    if s.failing_conditions:
        lines.append("failing conditions (times failed, rows):")
        for e in s.failing_conditions[:10]:
            message = (e.messages[0] if e.messages else "").split(" (condition: ")[0]  # --json keeps the values
            message = message if len(message) <= 100 else shorten(message, 97)  # redacted before it is cut
            lines.append(f"  {e.count:>5} {e.rows:>5}  {e.check}: {message}")
        if len(s.failing_conditions) > 10:
            lines.append(f"  ... and {len(s.failing_conditions) - 10} more")
    if s.transport_faults:
        lines.append("transport faults: " + ", ".join(f"{k} {v}" for k, v in s.transport_faults.items())
                     + f"; rows failed for good: {s.transport_failed_rows}")
    t, c = s.tokens, s.cost_usd
    lines.append(f"tokens: {t.total:,} ({t.prompt:,} prompt + {t.completion:,} completion), "
                 f"{t.per_successful_row:.1f} per successful row")
    lines.append(f"cost: ${c.total:.6f} (${c.per_successful_row:.6f} per successful row; paid now ${c.paid:.6f}, "
                 f"from cache ${c.from_cache:.6f})")
    r = s.remedy_share
    lines.append(f"remedies: {_pct(r.cost)} of the cost, {_pct(r.tokens)} of the tokens, "
                 f"{s.remedies_per_row:.2f} per row")
    lines.append(f"requests: {s.requests:,} ({s.requests_per_row:.2f} per row)   structured output: "
                 + (", ".join(f"{mode} {rows}" for mode, rows in s.structured_output.items()) or "-")
                 + (f"; fell back {s.structure_fallbacks} time(s)" if s.structure_fallbacks else ""))
    stops = s.early_stops
    if stops.count:
        known, unknown = stops.saved_known, stops.count - stops.saved_known
        lines.append(f"early stops: {stops.count} repl{'y' if stops.count == 1 else 'ies'} cut while the model wrote, "
                     f"after {stops.tokens_at_cut:,} tokens and {stops.seconds_at_cut:.2f} s; saved "
                     + (f"{stops.saved_tokens:,} tokens and {stops.saved_s:.2f} s ({known} known)" if known else "")
                     + ("; " if known and unknown else "")
                     + (f"about {stops.saved_tokens_estimated:,.0f} tokens ({unknown} estimated from the whole replies)"
                        if unknown else ""))
    lat = s.latency_s
    lines.append(f"latency per row: p50 {lat.p50:.3f} s, p95 {lat.p95:.3f} s, p99 {lat.p99:.3f} s")
    found = s.reproducibility
    if found is not None:
        lines.append("reproducibility: " + "; ".join(f"{k.replace('_', ' ')} {', '.join(str(v) for v in getattr(found, k))}"
                                                      for k in ("seed", "model_version", "system_fingerprint")
                                                      if getattr(found, k)))
    if s.cache.hits or s.cache.misses:
        lines.append(f"cache: {s.cache.hits} hit(s), {s.cache.misses} miss(es)")
    if s.rate_limit_wait_s:
        lines.append(f"rate limits: {s.rate_limit_wait_s:.1f} s waited in total")
    return shown_lines(lines)

