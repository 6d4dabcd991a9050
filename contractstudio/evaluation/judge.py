"""`eval --judge`: each condition measured as a classifier against outputs a person labelled.

A condition accepts or rejects an output. Against the labels, a rejection is the positive call:

                      label fail        label pass
    condition fails   both_fail (TP)    false_fail (FP)   a good output rejected: a remedy paid for nothing
    condition passes  false_pass (FN)   both_pass (TN)    a bad output let through

Per condition: agreement, the false-fail rate (of the good outputs), the false-pass rate (of the bad ones),
precision and recall of its rejections (each with a Wilson interval), Cohen's kappa with its interval, and
the rows of every disagreement. A condition's truth on a row is its own label (`labels`) when the row gives
one; else a row whose whole output is labelled `pass` must pass every condition; a row labelled `fail` as a
whole, without that condition's label, says nothing about that condition (another clause may be the one
meant to catch it), so it is left out of that condition's table. The whole contract (the output accepted:
valid and every condition passed) is measured against the whole-output labels the same way.
The verdicts come from the engine itself (rows.verdicts: the first reply judged, no remedy asked).
"""

from __future__ import annotations

import math
from collections.abc import Mapping

from contractstudio.evaluation.record_model import ContractRecord, Record
from contractstudio.evaluation.stats import Rate, kappa
from contractstudio.evaluation.summary_model import ConditionTable, JudgeSummary, Kappa, RateFigures, RowRef

CONTRACT = "(the whole contract)"
MAX_ROWS_KEPT = 1000  # disagreement rows kept per condition (the counts are always whole)


def condition_name(written: str) -> str:
    """A label's condition as the results name it: `coverage_floor` is `post.coverage_floor`."""
    return written if "." in written or "[" in written else f"post.{written}"


def unknown_label(labels: dict[str, str], known: list[str]) -> str | None:
    """Why a row's per-condition labels do not fit the contract (a name that is no post condition), or None."""
    for written in labels:
        if condition_name(written) not in known:
            ids = ", ".join(k.removeprefix("post.") for k in known if k.startswith("post"))
            return f"'labels' names '{written[:60]}', which is not a post condition of the contract (its conditions: {ids})"
    return None


def truth(output: str | None, conditions: Mapping[str, str], name: str) -> str | None:
    """What the labels (the whole `output`'s, each of `conditions`') say condition `name` should have said: its own
    label, else `pass` when the whole output is good, else nothing (a bad output does not say which clause should
    catch it). None for `output.type`."""
    if name == "output.type":
        return None
    given = {condition_name(k): v for k, v in conditions.items()}
    return given.get(name) or ("pass" if output == "pass" else None)


def disagreement(rec: Record, name: str) -> str | None:
    """`false_fail` or `false_pass` when condition `name` (or CONTRACT) disagreed with the labels on this record."""
    if not isinstance(rec, ContractRecord) or rec.label is None:
        return None
    label, said = rec.label, rec.verdicts or {}
    wanted: str | None
    verdict: str | None
    if name == CONTRACT:
        wanted, verdict = label.output, ("pass" if rec.successful else "fail")
    else:
        wanted, verdict = truth(label.output, label.conditions, name), said.get(name)
    if wanted is None or verdict is None or wanted == verdict:
        return None
    return "false_fail" if verdict == "fail" else "false_pass"


class _Table:
    __slots__ = ("both_fail", "false_fail", "false_pass", "both_pass", "false_fails", "false_passes")

    def __init__(self) -> None:
        self.both_fail = self.false_fail = self.false_pass = self.both_pass = 0
        self.false_fails: list[RowRef] = []
        self.false_passes: list[RowRef] = []

    def add(self, said: str, truth: str, where: RowRef) -> None:
        if said == "fail" and truth == "fail":
            self.both_fail += 1
        elif said == "fail":
            self.false_fail += 1
            if len(self.false_fails) < MAX_ROWS_KEPT:
                self.false_fails.append(where)
        elif truth == "fail":
            self.false_pass += 1
            if len(self.false_passes) < MAX_ROWS_KEPT:
                self.false_passes.append(where)
        else:
            self.both_pass += 1

    def report(self, name: str) -> ConditionTable:
        a, b, c, d = self.both_fail, self.false_fail, self.false_pass, self.both_pass
        k, se, low, high = kappa(a, b, c, d)
        return ConditionTable(
            check=name, n=a + b + c + d, both_fail=a, false_fail=b, false_pass=c, both_pass=d,
            agreement=_figures(Rate(a + d, a + b + c + d)),
            false_fail_rate=_figures(Rate(b, b + d)),  # of the outputs labelled good
            false_pass_rate=_figures(Rate(c, a + c)),  # of the outputs labelled bad
            precision=_figures(Rate(a, a + b)),  # of its rejections, how many were right
            recall=_figures(Rate(a, a + c)),  # of the bad outputs, how many it rejected
            kappa=Kappa(kappa=_finite(k), se=_finite(se), low=_finite(low), high=_finite(high)),
            false_fails=self.false_fails, false_passes=self.false_passes)


def _figures(rate: Rate) -> RateFigures:
    low, high = rate.interval
    return RateFigures(rate=rate.value, low=low, high=high, n=rate.whole)


def _finite(x: float) -> float | None:
    return None if math.isnan(x) else x


class JudgeTally:
    """The confusion table of every condition (and of the whole contract), record by record."""

    def __init__(self, conditions: list[str] | None = None) -> None:
        self.order = list(conditions or [])
        self.tables: dict[str, _Table] = {name: _Table() for name in self.order}
        self.contract = _Table()
        self.rows = 0
        self.not_judged: list[RowRef] = []  # labelled rows whose output was never judged (pre or act failed)

    def add(self, rec: ContractRecord) -> None:
        """Count a judged record (one with labels and verdicts; any other adds nothing)."""
        label, said = rec.label, rec.verdicts
        if label is None or said is None:
            return
        self.rows += 1
        where = RowRef(row=rec.row, id=rec.id, key=rec.key)
        if not said:
            if len(self.not_judged) < MAX_ROWS_KEPT:
                self.not_judged.append(where)
            return
        for name, verdict in said.items():
            wanted = truth(label.output, label.conditions, name)
            if wanted is None:
                continue
            if name not in self.tables:
                self.order.append(name)
                self.tables[name] = _Table()
            self.tables[name].add(verdict, wanted, where)
        if label.output is not None:
            self.contract.add("pass" if rec.successful else "fail", label.output, where)

    def summary(self) -> JudgeSummary:
        return JudgeSummary(rows=self.rows, not_judged=self.not_judged,
                            conditions=[self.tables[name].report(name) for name in self.order],
                            contract=self.contract.report(CONTRACT))


def _pct(r: RateFigures) -> str:
    if not r.n:
        return "-"
    return f"{100 * r.rate:.1f}% [{100 * r.low:.1f}, {100 * r.high:.1f}]"


def _rows(found: list[RowRef], total: int, limit: int = 8) -> str:
    shown = ", ".join(f"row {w.row}" + (f" ({w.id})" if str(w.id) != str(w.row) else "") for w in found[:limit])
    return shown + (f", ... {total - min(len(found), limit)} more" if total > limit else "")


def render_one(c: ConditionTable) -> list[str]:
    """One condition's block: its confusion matrix, the figures with their intervals, and the rows it got wrong."""
    k = c.kappa
    kappa_text = "undefined (one verdict only)" if k.kappa is None else f"{k.kappa:.2f} [{k.low:.2f}, {k.high:.2f}]"
    lines = [f"{c.check}: {c.n} labelled row(s)",
             "                  label fail  label pass",
             f"    rejects      {c.both_fail:>10}  {c.false_fail:>10}   (false fails: {c.false_fail})",
             f"    accepts      {c.false_pass:>10}  {c.both_pass:>10}   (false passes: {c.false_pass})",
             f"  agreement {_pct(c.agreement)}   kappa {kappa_text}",
             f"  false fails {c.false_fail} of {c.false_fail + c.both_pass} good: {_pct(c.false_fail_rate)}   "
             f"false passes {c.false_pass} of {c.false_pass + c.both_fail} bad: {_pct(c.false_pass_rate)}",
             f"  rejections: precision {_pct(c.precision)}   recall {_pct(c.recall)}"]
    if c.false_fails:
        lines.append("  false fails:  " + _rows(c.false_fails, c.false_fail))
    if c.false_passes:
        lines.append("  false passes: " + _rows(c.false_passes, c.false_pass))
    return lines


def render(j: JudgeSummary) -> str:
    """The judge report as text: every condition, then the whole contract (intervals: Wilson 95%)."""
    from contractstudio.safe_text import shown_lines

    lines = [f"judged: {j.rows} labelled output(s), each condition against the labels (intervals: 95%)"]
    if j.not_judged:
        lines.append(f"not judged: {len(j.not_judged)} row(s) whose input failed before the output was checked: "
                     + _rows(j.not_judged, len(j.not_judged)))
    for c in [*j.conditions, j.contract]:
        if c.n:
            lines.extend(render_one(c))
    return shown_lines(lines)
