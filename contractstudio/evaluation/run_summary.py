"""The one summary of a run, whatever it ran: a contract's figures or a pipeline's, and the judge's tables.

    tally = RunTally("contract", judge=None)
    for rec in records:
        tally.add(rec)
    tally.summary().success_rate

`evaluate` counts a run's records with it as they finish; `results_summary` counts a results file (the studio's
Eval mode opens one so), so a figure is added up in one place, whoever shows it.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from contractstudio.evaluation.judge import JudgeTally
from contractstudio.evaluation.judge import render as render_judge
from contractstudio.evaluation.pipelines import PipelineTally
from contractstudio.evaluation.pipelines import render as render_pipeline
from contractstudio.evaluation.record_model import ContractRecord, Record
from contractstudio.evaluation.results import read_records
from contractstudio.evaluation.summary import Tally
from contractstudio.evaluation.summary import render as render_contract
from contractstudio.evaluation.summary_model import RunSummary


class RunTally:
    """The one summary of a run, record by record: a contract's figures (Tally) or a pipeline's (PipelineTally), and
    the judge's tables of labelled rows (eval --judge). `evaluate` counts its records with it, and the studio's Eval
    mode a results file it opens (`results_summary`): neither adds up a record itself."""

    def __init__(self, kind: str, judge: list[str] | None = None) -> None:
        self.figures: Any = PipelineTally() if kind == "pipeline" else Tally()
        self.judging = judge is not None  # a judged run: its tables even when no row got as far as a verdict
        self.judged = JudgeTally(judge)

    def add(self, rec: Record) -> bool:
        """Count one record; False (and nothing counted) when its row was counted already."""
        if not self.figures.add(rec):
            return False
        if isinstance(rec, ContractRecord):  # one without a label and verdicts (not judged) adds nothing to the tables
            self.judged.add(rec)
        return True

    def summary(self, *, duration_s: float | None = None, new_rows: int | None = None) -> RunSummary:
        """Every figure of the run; `judge`: the confusion tables, for a judged run or records that were judged."""
        out: RunSummary = self.figures.summary(duration_s=duration_s, new_rows=new_rows)
        if self.judging or self.judged.rows:
            out.judge = self.judged.summary()
        return out


def results_summary(path: Path, keep: Callable[[Record], None] | None = None) -> RunSummary:
    """The summary of a results file, as the run that wrote it gave it (less its bad rows and timing, which the file
    does not hold); `keep` sees each counted record. Raises ResultsError with the line of a record that is not one."""
    tally: RunTally | None = None
    for rec in read_records(path, None):  # the first record says contract or pipeline; every one is checked
        if tally is None:
            tally = RunTally(rec.kind)
        if tally.add(rec) and keep is not None:
            keep(rec)
    return (tally or RunTally("contract")).summary()


def summary_text(s: RunSummary) -> str:
    """A run's summary as text, whatever it ran: a judged run's tables, a pipeline's paths, else a contract's figures
    (the CLI prints it, the studio's Eval summary shows it)."""
    if s.judge is not None:
        return render_judge(s.judge)
    return render_pipeline(s) if s.kind == "pipeline" else render_contract(s)
