"""`eval --judge --sweep CONDITION`: move a condition's numeric threshold over the labelled rows and show the
trade-off (false fails against false passes), and the threshold an objective chooses.

Each candidate threshold is a value the compared expression took on a labelled row (read while the engine judged
it), so every distinct trade-off the rows allow is on the table. For each one the condition is rebuilt with that
number and every row is judged again by the engine (rows.RowRunner, --judge's way): no second evaluator.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from contractstudio.editing.thresholds import Threshold, find_threshold, number_text, with_threshold
from contractstudio.evaluation.dataset import Row, read_rows
from contractstudio.evaluation.judge import condition_name, truth
from contractstudio.evaluation.record_model import made_record
from contractstudio.evaluation.rows import RowRunner
from contractstudio.evaluation.summary_model import SweepPoint, SweepResult

OBJECTIVES = ("balanced", "fewest-false-passes", "fewest-false-fails")


class SweepError(Exception):
    """The sweep cannot be made: no such condition, no single numeric threshold, no labelled row for it."""


def objective_problem(text: str) -> str | None:
    """Why `--objective` is not one (balanced, fewest-false-passes, fewest-false-fails, cost:R), or None."""
    if text in OBJECTIVES:
        return None
    if text.startswith("cost:"):
        try:
            ratio = float(text[5:])
        except ValueError:
            ratio = -1.0
        if ratio > 0:
            return None
    return ("--objective is balanced, fewest-false-passes, fewest-false-fails, or cost:R "
            "(a false pass costs R false fails)")


def _score(objective: str, ff: float, fp: float) -> tuple[float, float]:
    if objective == "fewest-false-passes":
        return fp, ff
    if objective == "fewest-false-fails":
        return ff, fp
    ratio = float(objective[5:]) if objective.startswith("cost:") else 1.0
    return ff + ratio * fp, 0.0


@dataclass(slots=True)
class _Watch:
    """A condition that also records the value its threshold is compared with, each time the engine checks it."""

    check: Any
    subject: Any
    seen: list[float | None]

    def __getattr__(self, name: str) -> Any:
        return getattr(self.check, name)

    def evaluate(self, values: dict[str, Any], explain: bool = True) -> tuple[bool, bool, str | None]:
        try:
            self.seen.append(float(self.subject.evaluate(values)))
        except Exception:  # noqa: BLE001 - a value that is not a number has no place on the axis
            self.seen.append(None)
        return self.check.evaluate(values, explain)


def sweep(runner: RowRunner, data: Any, fmt: str | None, condition: str, objective: str = "balanced") -> SweepResult:
    """The trade-off of `condition`'s threshold over the labelled rows of `data` (runner: a --judge job's)."""
    from contractstudio.expressions import compile_expression
    from contractstudio.runtime.conditions import Check

    plan = runner.plan
    if plan is None:
        raise SweepError("--sweep needs a YAML contract (a Python class's conditions have no threshold to rewrite)")
    condition, _, part = condition.partition("@")  # `evidence_for_high_coverage@when`: the number of its `when`
    if part not in ("", "assert", "when"):
        raise SweepError(f"--sweep {condition}@{part}: the part of a condition is @assert or @when")
    name = condition_name(condition)
    ids = [f"post.{c.id}" if c.id else f"post[{i}]" for i, c in enumerate(plan.doc.post)]
    if name not in ids:
        raise SweepError(f"--sweep {condition}: not a post condition of the contract (its conditions: "
                         + ", ".join(i.removeprefix("post.") for i in ids) + ")")
    index = ids.index(name)
    cond = plan.doc.post[index]
    found: Threshold | None = None
    if part in ("", "assert"):
        found = find_threshold(cond.assert_ or "", "assert")
    if found is None and part in ("", "when") and cond.when:
        found = find_threshold(cond.when, "when")
    if found is None:
        raise SweepError(f"--sweep {condition}: its condition has no single numeric threshold to move "
                         f"(`{cond.assert_ or cond.python}`; one comparison of a value with a number, e.g. `x >= 0.55`)")
    source = cond.assert_ if found.key == "assert" else cond.when
    assert source is not None
    rows: list[tuple[Row, str]] = []
    for item in read_rows(data, lambda v: plan.input.validate(v)[1], fmt=fmt):
        if isinstance(item, Row) and item.labelled is not None:
            wanted = truth(item.labelled.label, item.labelled.labels, name)
            if wanted is not None:
                rows.append((item, wanted))
    if not rows:
        raise SweepError(f"--sweep {condition}: no labelled row says whether it should pass or fail")
    original = plan.post[index]
    watch = _Watch(original, compile_expression(found.subject), [])
    plan.post[index] = watch
    try:
        for row, _ in rows:
            runner.run(row)
        values = sorted({v for v in watch.seen if v is not None})
        table: list[SweepPoint] = []
        for t in sorted({*values, found.value}):
            attr = "assert_" if found.key == "assert" else "when"
            plan.post[index] = Check(cond.model_copy(update={attr: with_threshold(source, found, t)}), f"post[{index}]",
                                     root=original.hook.root if original.hook is not None else None)
            ff = fp = 0
            for row, wanted in rows:
                said = (made_record(runner.run(row), "contract").verdicts or {}).get(name)  # the typed record's
                ff += said == "fail" and wanted == "pass"
                fp += said == "pass" and wanted == "fail"
            table.append(SweepPoint(threshold=t, false_fails=ff, false_passes=fp, agreement=1 - (ff + fp) / len(rows)))
    finally:
        plan.post[index] = original
    best = min(table, key=lambda r: (_score(objective, r.false_fails, r.false_passes), abs(r.threshold - found.value)))
    now = next(r for r in table if r.threshold == found.value)
    return SweepResult(check=name, id=cond.id, key=found.key, expression=source, subject=found.subject, op=found.op,
                       current=found.value, rows=len(rows), objective=objective, table=table,
                       chosen=best.threshold, now=now, best=best)


def sweep_file(cfg: Any, condition: str, objective: str, *, write: bool = False) -> SweepResult:
    """`sweep` for an eval's options (a --judge run's file and data); with `write`, the chosen threshold is written into
    the file by the editor's quick fix (editing/thresholds.py), the rest of the file byte for byte as it was."""
    from contractstudio.evaluation.evaluate import _job

    runner = RowRunner(_job(cfg))
    found = sweep(runner, cfg.data, cfg.data_format, condition, objective)
    if write and found.chosen != found.current:
        from contractstudio.analysis.check import check_file
        from contractstudio.editing.text import apply_edits
        from contractstudio.editing.thresholds import threshold_action
        from contractstudio.storage.atomic import write_atomic

        action = threshold_action(check_file(cfg.target), found.id or "", found.chosen, found.key)
        if action is None:
            raise SweepError(f"the threshold of {found.check} is not written where a quick fix can change it "
                             "(a folded or multi-line expression): change it by hand")
        text = cfg.target.read_text(encoding="utf-8")
        write_atomic(cfg.target, apply_edits(text, action.edits))
        found.written = action.title
    return found


def render(s: SweepResult) -> str:
    """The sweep as a table: one line per threshold, the current one and the chosen one marked."""
    from contractstudio.safe_text import shown_lines

    lines = [f"sweep of {s.check} ({s.key}: {s.expression}) over {s.rows} labelled row(s):",
             "  threshold  false fails  false passes  agreement"]
    for r in s.table:
        mark = ("   <- chosen" if r.threshold == s.chosen else "") + ("   (now)" if r.threshold == s.current else "")
        lines.append(f"  {number_text(r.threshold):>9}  {r.false_fails:>11}  {r.false_passes:>12}  "
                     f"{100 * r.agreement:>8.1f}%{mark}")
    lines.append(f"chosen by {s.objective}: {choice_text(s)}")
    if s.written:
        lines.append(f"written: {s.written}")
    return shown_lines(lines)


def choice_text(s: SweepResult, said: str = "") -> str:
    """The threshold chosen and what it changes: `coverage >= 0.4 (now 0.55): false fails 2 -> 0, false passes 1 -> 1`
    (the CLI's last line of a sweep; the studio's status line after one, `said` after the number: ` chosen`)."""
    return (f"{s.subject} {s.op} {number_text(s.chosen)}{said} (now {number_text(s.current)}): false fails "
            f"{s.now.false_fails} -> {s.best.false_fails}, false passes {s.now.false_passes} -> {s.best.false_passes}")
