"""`--baseline OLD.jsonl`: what changed per metric against an earlier results file, and which rows flipped.

Rows are matched by their key (row number and input digest), so the same
dataset run before and after a contract change lines up row by row.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from contractstudio.evaluation.record_model import Record
from contractstudio.evaluation.results import read_records
from contractstudio.evaluation.run_summary import RunTally
from contractstudio.evaluation.summary_model import (
    BaselineReport,
    ContractSummary,
    Flip,
    Interval,
    MetricChange,
    ModesBoth,
    RunSummary,
)
from contractstudio.safe_text import shown_lines

METRICS = (
    ("success_rate", ("success_rate",)), ("first_try_rate", ("first_try_rate",)), ("remedied_rate", ("remedied_rate",)),
    ("fallback", ("fallback",)), ("raised", ("raised",)), ("tokens", ("tokens", "total")),
    ("tokens_per_successful_row", ("tokens", "per_successful_row")), ("cost_usd", ("cost_usd", "total")),
    ("cost_per_successful_row", ("cost_usd", "per_successful_row")), ("remedy_cost_share", ("remedy_share", "cost")),
    ("latency_p50_s", ("latency_s", "p50")), ("latency_p95_s", ("latency_s", "p95")),
    ("requests", ("requests",)), ("remedies_per_row", ("remedies_per_row",)),
)
MAX_FLIPS_SHOWN = 20
# Shown whenever the two runs asked in different structure modes (eval --structured), changed or not.
STRUCTURE_METRICS = ("first_try_rate", "remedies_per_row", "requests", "cost_usd")


def _get(summary: RunSummary, path: tuple[str, ...]) -> float:
    """A metric's figure; 0 where this kind of summary has none (a pipeline's run has no cost)."""
    value: Any = summary
    for part in path:
        value = getattr(value, part, 0)
    return float(value or 0)


class Comparison:
    """The baseline's summary and outcome per row; `see` each current record, then `report`."""

    def __init__(self, path: Path, kind: str = "contract") -> None:
        self.path = path
        self.tally = RunTally(kind)
        self.before: dict[str, tuple[str, str, bool]] = {}
        for rec in read_records(path, kind):
            if self.tally.add(rec):
                self.before[rec.key] = (rec.id, rec.outcome, rec.successful)
        self.flips: list[Flip] = []
        self.changed = 0
        self.matched = 0

    def see(self, rec: Record) -> None:
        """Compare one current record with the baseline's record of the same row."""
        old = self.before.get(rec.key)
        if old is None:
            return
        self.matched += 1
        if old[1] != rec.outcome:
            self.changed += 1
        if old[2] != rec.successful:
            self.flips.append(Flip(key=rec.key, row=rec.row, id=rec.id, before=old[1], after=rec.outcome,
                                   now_successful=rec.successful))

    def report(self, current: RunSummary) -> BaselineReport:
        """Per-metric before/after/delta, and the rows whose success flipped."""
        base = self.tally.summary()
        metrics = []
        for name, path in METRICS:
            before, after = _get(base, path), _get(current, path)
            both = name in base.intervals and name in current.intervals  # a rate of rows: each side's interval
            metrics.append(MetricChange(metric=name, before=before, after=after, delta=after - before,
                                        before_interval=base.intervals[name] if both else None,
                                        after_interval=current.intervals[name] if both else None))
        flips = sorted(self.flips, key=lambda f: f.row)
        return BaselineReport(baseline=str(self.path), baseline_rows=base.rows, matched_rows=self.matched,
                              structured_output=ModesBoth(before=_modes_of(base), after=_modes_of(current)),
                              outcome_changed=self.changed, metrics=metrics,
                              fixed=sum(1 for f in flips if f.now_successful),
                              broken=sum(1 for f in flips if not f.now_successful), flipped=flips)


def _modes_of(summary: RunSummary) -> dict[str, int]:
    """The structure modes a run's rows asked in (a pipeline's rows ask in none)."""
    return dict(summary.structured_output) if isinstance(summary, ContractSummary) else {}


def render(report: BaselineReport) -> str:
    """The comparison as text."""
    lines = [f"against {report.baseline} ({report.matched_rows} of {report.baseline_rows} rows matched, "
             f"{report.outcome_changed} changed outcome):"]
    modes = report.structured_output
    shown: tuple[str, ...] = ()
    if modes.before != modes.after:
        lines.append(f"  {'structured_output':<26} {_modes(modes.before):>12} -> {_modes(modes.after)}")
        shown = STRUCTURE_METRICS  # what structure may save is shown even when it saved nothing
    for m in report.metrics:
        if m.before == m.after and m.metric not in shown:
            continue
        rate = m.metric.endswith(("_rate", "_share"))
        fmt = (lambda v: f"{100 * v:.1f}%") if rate else (lambda v: f"{v:,.6g}")
        sign = "+" if m.delta > 0 else ""
        delta = f"{sign}{100 * m.delta:.1f} pts" if rate else f"{sign}{m.delta:,.6g}"
        if m.before_interval is not None and m.after_interval is not None:  # a rate of rows: each side's 95% interval
            lines.append(f"  {m.metric:<26} {_with(m.before, m.before_interval):>24} -> "
                         f"{_with(m.after, m.after_interval):<24} ({delta})")
            continue
        lines.append(f"  {m.metric:<26} {fmt(m.before):>12} -> {fmt(m.after):<12} ({delta})")
    lines.append(f"flipped rows: {report.fixed} now successful, {report.broken} now failing")
    for f in report.flipped[:MAX_FLIPS_SHOWN]:
        lines.append(f"  row {f.row} (id {f.id}): {f.before} -> {f.after}")
    if len(report.flipped) > MAX_FLIPS_SHOWN:
        lines.append(f"  ... and {len(report.flipped) - MAX_FLIPS_SHOWN} more (--json lists them all)")
    return shown_lines(lines)


def _with(rate: float, found: Interval) -> str:
    return f"{100 * rate:.1f}% [{100 * found.low:.1f}, {100 * found.high:.1f}]"


def _modes(rows_by_mode: dict[str, int]) -> str:
    """`json_schema` or `off 3, json_schema 9`: the structure modes a run's rows asked in."""
    return next(iter(rows_by_mode)) if len(rows_by_mode) == 1 else ", ".join(f"{m} {n}" for m, n in rows_by_mode.items()) or "-"
