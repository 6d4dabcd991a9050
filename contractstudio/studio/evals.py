"""What Eval mode shows, without any drawing: row filters, table cells, plot data, results files, a row's trace.

The evaluation package is imported inside the functions that need it, never when this module loads.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from contractstudio.evaluation.record_model import Record
    from contractstudio.evaluation.summary_model import RunSummary

BASE_FILTERS = [("all rows", "all"), ("failed", "failed"), ("remedied", "remedied"), ("fell back", "fallback"),
                ("raised", "raised"), ("first try", "first_try")]


def slim(rec: Record) -> Record:
    """A record as the table keeps it: everything but the trace (a row's is read again when it is opened)."""
    return rec if rec.trace is None else rec.model_copy(update={"trace": None})


def failed_checks(rec: Record) -> list[str]:
    """The conditions a row failed (a pipeline row: its failed assertion), as the evaluation's summary counts them."""
    from contractstudio.evaluation.summary import failed_checks as checks_failed

    return checks_failed(rec)


def matches(rec: Record, chosen: str) -> bool:
    """Whether a row passes a filter: all, failed, an outcome, or `check:NAME`."""
    if chosen == "all":
        return True
    if chosen == "failed":
        return not rec.successful
    if chosen.startswith("check:"):
        return chosen[len("check:"):] in failed_checks(rec)
    kind, _, name = chosen.partition(":")
    if kind in ("false_fail", "false_pass"):  # a judged row the condition got wrong (eval --judge)
        from contractstudio.evaluation.judge import disagreement

        return disagreement(rec, name) == kind
    return rec.outcome == chosen


def filter_choices(summary: RunSummary | None) -> list[tuple[str, str]]:
    """The base filters plus one per failing condition (a pipeline's rows: the base filters)."""
    out = list(BASE_FILTERS)
    if summary is None or summary.kind == "pipeline":
        return out
    if summary.judge is not None:  # the rows each condition got wrong against the labels, first: what a judged run is for
        for c in [*summary.judge.conditions, summary.judge.contract]:
            for kind, words, count in (("false_fail", "false fails", c.false_fail), ("false_pass", "false passes", c.false_pass)):
                if count:
                    out.append((f"{words}: {c.check} ({count})", f"{kind}:{c.check}"))
    for entry in summary.failing_conditions:
        out.append((f"condition: {entry.check} ({entry.rows})", f"check:{entry.check}"))
    return out


def input_summary(value: Any, limit: int = 40) -> str:
    """A row's input on one safe line: its first text field (the query, the question), else the whole input."""
    import json

    from contractstudio.safe_text import shown

    if isinstance(value, dict):
        text = next((v for v in value.values() if isinstance(v, str) and v.strip()), None)
        if text is None:
            text = json.dumps(value, ensure_ascii=False, default=str)
    else:
        text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
    return shown(" ".join(text.split()), limit)


def row_cells(rec: Record, input_width: int = 40) -> tuple[Any, ...]:
    """The table cells of one row: number, id, input (its summary), outcome, attempts, calls, latency, failed conditions.

    The failed conditions (as long as a row failed many) come last: every column before them is on screen at 80 columns.
    """
    from rich.text import Text

    from contractstudio.evaluation.record_model import PipelineRecord

    query = Text(input_summary(rec.input, input_width))  # never read as markup: it is the dataset's text
    ms = f"{1e3 * rec.latency_s:.0f}"
    if isinstance(rec, PipelineRecord):
        return (str(rec.row), rec.id, query, rec.outcome, str(len(rec.path)), "", ms,
                ", ".join(failed_checks(rec)) or " -> ".join(rec.path))
    return (str(rec.row), rec.id, query, rec.outcome, str(rec.attempts), str(rec.llm_calls), ms,
            ", ".join(failed_checks(rec)))


COLUMNS = ("row", "id", "input", "outcome", "attempts", "calls", "ms", "failed conditions")


def load_results(path: Path) -> tuple[list[Record], RunSummary]:
    """A results file's rows (without traces) and its summary: the evaluation's summary of the file, not a second one."""
    from contractstudio.evaluation.run_summary import results_summary

    rows: list[Record] = []
    summary = results_summary(path, keep=lambda rec: rows.append(slim(rec)))
    return rows, summary


def trace_of(results: Path, key: str) -> list[dict[str, Any]] | None:
    """The recorded trace of one row of a results file (embedded, or in its trace file); ResultsError says why not."""
    from contractstudio.evaluation.results import numbered_records, recorded_trace

    for number, _offset, rec in numbered_records(results, None):
        if rec.key == key:
            return recorded_trace(results, number, rec)
    return None


def summary_text(summary: RunSummary) -> str:
    """The summary as the CLI prints it (text; a judged run: a confusion matrix per condition, its figures and rows)."""
    from contractstudio.evaluation.run_summary import summary_text as text_of

    return text_of(summary)


def bar_label(name: str, room: int) -> str:
    """A plot's bar label in `room` columns (cut, the one way text is cut, only when it does not fit)."""
    from contractstudio.safe_text import shorten

    return name if len(name) <= room else shorten(name, max(room - 3, 1))


def label_room(plot_width: int) -> int:
    """Columns a horizontal bar plot gives its labels: all but a dozen for the bars, never under 12 (whole names when wide)."""
    return max(12, plot_width - 12)


def attempts_bars(summary: RunSummary, room: int = 12) -> tuple[list[str], list[int]]:
    """How rows ended: first try, remedied at each attempt, fallback, raised (a pipeline: end steps and failures)."""
    if summary.kind == "pipeline":
        return [bar_label(k, room) for k in summary.outcomes], list(summary.outcomes.values())
    labels, values = ["1st"], [summary.first_try]
    later = 0
    for attempt, count in summary.remedied_by_attempt.items():
        if int(attempt) < 3:
            labels.append(f"#{attempt}")
            values.append(int(count))
        else:
            later += int(count)
    if later:  # few bars, so that every label fits a small plot
        labels.append("#3+")
        values.append(later)
    for name, count in (("fallback", summary.fallback), ("raised", summary.raised)):
        if count:
            labels.append(name)
            values.append(count)
    return labels, values


def check_bars(summary: RunSummary, limit: int = 6, room: int = 12) -> tuple[list[str], list[int]]:
    """The most failed conditions (a pipeline: assertion failures per step)."""
    if summary.kind == "pipeline":
        steps = summary.assertion_failures[:limit]
        return [bar_label(e.step, room) for e in steps], [e.count for e in steps]
    entries = summary.failing_conditions[:limit]
    return [bar_label(e.check.split(".")[-1], room) for e in entries], [e.count for e in entries]


def count_ticks(top: int, most: int = 5) -> list[int]:
    """Whole-number ticks from 0 to at least `top` for an axis of counts (at most `most`+1 of them): 0 2 4 6, never 0.83."""
    top = max(top, 1)
    step = -(-top // most)
    return list(range(0, -(-top // step) * step + 1, step))


def cost_series(rows: list[Record]) -> tuple[str, list[float]]:
    """Per row, in row order: cost when there is one, else tokens, else LLM calls (a pipeline's row: its steps)."""
    from contractstudio.evaluation.record_model import ContractRecord

    ordered = sorted(rows, key=lambda r: r.row)
    contract = [r for r in ordered if isinstance(r, ContractRecord)]
    costs = [r.cost_usd for r in contract]
    if any(costs):
        return "cost per row ($)", costs
    tokens = [float(r.tokens.prompt + r.tokens.completion) for r in contract]
    if any(tokens):
        return "tokens per row", tokens
    return "LLM calls per row", [float(r.llm_calls if isinstance(r, ContractRecord) else len(r.path)) for r in ordered]
