"""A Python contract's perf stats with SymbolicAI's stage keys, from the engine's own stage timings.

input_validation = input + pre, act_execution = act, output_validation = generate + post (every attempt),
forward_execution = forward (the class's own forward runs there); contract_execution is the call, and
overhead the call's time outside those stages (finalize included), so the percentages add up to 100.
"""

from __future__ import annotations

from typing import Any

from contractstudio.runtime.perf import PerfStats

STAGE_KEYS = {"input": "input_validation", "pre": "input_validation", "act": "act_execution",
              "generate": "output_validation", "post": "output_validation", "forward": "forward_execution"}
ORDER = ("input_validation", "act_execution", "output_validation", "forward_execution")


class SymbolicPerf:
    """Per-instance statistics over calls: one sample per stage key per call in which it ran."""

    def __init__(self) -> None:
        self.stats = PerfStats()

    def record_call(self, state: Any) -> None:
        """Add one finished call (a runtime CallState)."""
        per_key: dict[str, float] = {}
        for stage, seconds in state.stage_times:
            key = STAGE_KEYS.get(stage)
            if key is not None:
                per_key[key] = per_key.get(key, 0.0) + seconds
        self.stats.record(list(per_key.items()), state.llm, state.total, sum(per_key.values()))

    @property
    def calls(self) -> int:
        """How many calls were recorded."""
        return self.stats.calls.n

    def as_dict(self) -> dict[str, Any]:
        """{input_validation, act_execution, output_validation, forward_execution, contract_execution, overhead, llm}."""
        raw = self.stats.as_dict()
        empty = {"count": 0, "total": 0.0, "mean": 0.0, "std": 0.0, "min": 0.0, "max": 0.0, "percentage": 0.0}
        out: dict[str, Any] = {key: raw.get(key, dict(empty)) for key in ORDER}
        out["contract_execution"] = raw["total_execution"]
        out["overhead"] = raw["overhead"]
        out["llm"] = raw["llm"]
        return out


HEADER = ("Operation", "Count", "Total(s)", "Mean(s)", "Std(s)", "Min(s)", "Max(s)", "% Total")


def summary_table(stats: dict[str, Any], calls: int) -> str:
    """The table SymbolicAI's `contract_perf_stats()` prints: one row per stage, Overhead and Total Execution."""
    def row(label: str, s: dict[str, Any], count: str, share: str) -> tuple[str, ...]:
        return (label, count, *(f"{s[k]:.3f}" for k in ("total", "mean", "std", "min", "max")), share)

    rows = [row(key.replace("_", " ").title(), stats[key], str(stats[key]["count"]), f"{stats[key]['percentage']:.1f}%")
            for key in ORDER]
    rows.append(row("Overhead", stats["overhead"], str(stats["overhead"]["count"]), f"{stats['overhead']['percentage']:.1f}%"))
    rows.append(row("Total Execution", stats["contract_execution"], "N/A", "100.0%"))
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(HEADER)]
    lines = ["", f"Contract Execution Summary ({calls} Forward Calls)"]
    lines += ["  ".join(cell.ljust(widths[i]) for i, cell in enumerate(r)) for r in (HEADER, *rows)]
    return "\n".join(lines) + "\n"
