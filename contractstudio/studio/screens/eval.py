"""Eval mode: run a contract (or a pipeline) over a dataset, watch it progress, read the summary and plots,
filter the rows, and open any row's recorded call in the debugger (Enter), ready to replay and edit.

The run is `contractstudio.evaluation.evaluate` (what `contractstudio eval` runs) in a worker of the studio's one
style (studio/analyses.py): it posts its outcome as a message; the records finished so far are handed over under
a lock and a timer draws them in batches (a message per row would flood the screen on a big dataset).
"""

from __future__ import annotations

import tempfile
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult, RenderResult
from textual.binding import Binding
from textual.containers import Horizontal, ScrollableContainer
from textual.message import Message
from textual.widgets import DataTable, ProgressBar, Select, Static
from textual.worker import Worker, WorkerState
from textual_plotext import PlotextPlot

from contractstudio.studio import evals
from contractstudio.studio.screens.base import StudioScreen
from contractstudio.studio.textual_internals import offered_values
from contractstudio.studio.widgets.footer import StudioFooter

if TYPE_CHECKING:
    from contractstudio.evaluation.record_model import Record
    from contractstudio.evaluation.summary_model import RunSummary, SweepResult

DRAIN_S = 0.2


class SafePlot(PlotextPlot):
    """A plot that says so when plotext cannot draw it at this size (it raises for some small sizes)."""

    def render(self) -> RenderResult:
        try:
            return super().render()
        except Exception:  # noqa: BLE001 - plotext's layout errors must never take the studio down
            return Text("(no room for this plot)", style="dim")


class RowsTable(DataTable[Any]):
    """The rows; Enter (the table's own select, which opens the row) is named in the footer while it has the focus."""

    # The screen's key by the same id: a keymap that moves eval.open_row moves both
    BINDINGS = [Binding("enter", "select_cursor", "Open in debugger", id="eval.open_row")]


class EvalDone(Message):
    """Posted by the eval worker when the run is over: its outcome (summary, bad rows)."""

    def __init__(self, outcome: Any) -> None:
        super().__init__()
        self.outcome = outcome


class SweepDone(Message):
    """Posted by the sweep worker: the trade-off of a condition's threshold (evaluation/sweep.py), or why not."""

    def __init__(self, found: tuple[Path, SweepResult] | None, problem: str | None = None) -> None:
        super().__init__()
        self.found, self.problem = found, problem  # found: the contract swept and its sweep


class EvalScreen(StudioScreen):
    """The eval screen (mode `eval`)."""

    BINDINGS = [
        Binding("r", "run_eval", "Run", id="eval.run"),
        Binding("f", "next_filter", "Filter", id="eval.filter"),
        Binding("enter", "open_row", "Open in debugger", id="eval.open_row"),
        Binding("t", "sweep", "Sweep", id="eval.sweep", show=False),
        Binding("w", "write_threshold", "Write threshold", id="eval.write_threshold", show=False),
    ]

    def __init__(self) -> None:
        super().__init__(id="eval-screen")
        self.rows: list[Record] = []  # the typed results records (evaluation/record_model.py), without traces
        self.summary: RunSummary | None = None  # the typed summary (evaluation/summary_model.py)
        self._shown_input_width = 0
        self.results: Path | None = None
        self._incoming: list[Record] = []
        self._lock = threading.Lock()
        self._progress = (0, 0)
        self._folder: Path | None = None
        self._wanted_data: Path | None = None
        self._results_shown: Path | None = None  # a results file opened as it is: no dataset is chosen meanwhile
        self.sweep: tuple[Path, SweepResult] | None = None  # the file of the last sweep of a condition's threshold, and it
        self._judged: tuple[Path, Path] | None = None  # (contract, dataset) of the last judged run

    def compose(self) -> ComposeResult:
        with Horizontal(id="eval-setup"):
            yield Select([], prompt="contract or pipeline", id="eval-target", compact=True)
            yield Select([], prompt="dataset", id="eval-data", compact=True)
            yield Select([("scripted: the rows' replies", "scripted"), ("live: the llm: block", "live"),
                          ("judge: the rows' labelled outputs", "judge")],
                         value="scripted", allow_blank=False, id="eval-model", compact=True)
        with Horizontal(id="eval-progress-row"):
            yield ProgressBar(id="eval-progress", show_eta=False)
            yield Static("", id="eval-status")
        with Horizontal(id="eval-summary"):
            with ScrollableContainer(id="eval-figures-box"):  # the summary is longer and wider than its box: it scrolls
                yield Static("", id="eval-figures")
            yield SafePlot(id="plot-attempts")
            yield SafePlot(id="plot-checks")
            yield SafePlot(id="plot-cost")
        yield Select(evals.BASE_FILTERS, value="all", allow_blank=False, id="eval-filter", compact=True)
        yield RowsTable(id="eval-rows", cursor_type="row", zebra_stripes=True)
        yield StudioFooter()

    def on_mount(self) -> None:
        self.query_one("#eval-summary").border_title = "Summary"
        table = self.query_one("#eval-rows", DataTable)
        table.border_title = "Rows"
        for column in evals.COLUMNS:
            table.add_column(column, key=column)
        self.set_interval(DRAIN_S, self._drain)
        self._status("Pick a contract and a dataset, then r runs it.")

    def on_resize(self) -> None:
        self.set_class(self.size.width < 100, "narrow")
        if self.summary is not None:  # plotext keeps state from the old size: plot afresh at the new one (labels too)
            self.call_after_refresh(self._show_plots)
        if self.rows and self._input_width() != self._shown_input_width:
            self._apply_filter()  # the input column as wide as the new width leaves room for

    def _input_width(self) -> int:
        return max(20, self.size.width - 100)  # the query where the other columns leave room

    def on_screen_resume(self) -> None:
        self.on_resize()
        self._fill_choices()
        self.query_one("#eval-rows").focus()

    # Set-up ---------------------------------------------------------------------------------

    def _fill_choices(self) -> None:
        workspace = self.studio.workspace
        targets = [(workspace.display(f.path), str(f.path)) for f in workspace.of_kind("contract", "pipeline")]
        data = [(workspace.display(f.path), str(f.path)) for f in workspace.of_kind("dataset")]
        for select, options in ((self.query_one("#eval-target", Select), targets), (self.query_one("#eval-data", Select), data)):
            current = select.value
            select.set_options(options)
            if current in [v for _, v in options]:
                select.value = current
        data_select = self.query_one("#eval-data", Select)
        if self._wanted_data is not None and str(self._wanted_data) in [v for _, v in data]:
            data_select.value = str(self._wanted_data)
            self._wanted_data = None
        elif not isinstance(data_select.value, str) and data and self._results_shown is None:
            data_select.value = data[0][1]
        self._guess_target()
        target = self.query_one("#eval-target", Select)
        if not isinstance(target.value, str) and targets:
            target.value = targets[0][1]

    def _guess_target(self) -> None:
        """A dataset named like `multidoc_qa.rows.jsonl` picks the contract `multidoc_qa.contract.yaml`."""
        data, target = self.query_one("#eval-data", Select), self.query_one("#eval-target", Select)
        if not isinstance(data.value, str) or isinstance(target.value, str):
            return
        stem = Path(data.value).name.split(".")[0]
        for value in offered_values(target):
            if isinstance(value, str) and Path(value).name.split(".")[0] == stem:
                target.value = value
                return

    @on(Select.Changed, "#eval-data")
    def _data_changed(self) -> None:
        data = self.query_one("#eval-data", Select)
        if isinstance(data.value, str):  # a dataset chosen again: the next run's
            self._results_shown = None
            data.prompt = "dataset"
        self._guess_target()

    def open_data(self, path: Path) -> None:
        """Open a dataset (selected for the next run) or a results file (shown as it is)."""
        from contractstudio.studio.workspace import kind_of_path

        if kind_of_path(path) == "results":
            self.show_results(path)
            return
        self._wanted_data = path
        self._fill_choices()

    # Running --------------------------------------------------------------------------------

    def action_run_eval(self) -> None:
        """Run the chosen contract over the chosen dataset (the saved files)."""
        target, data = self.query_one("#eval-target", Select).value, self.query_one("#eval-data", Select).value
        if not isinstance(target, str) or not isinstance(data, str):
            self.notify("Pick a contract (or pipeline) and a dataset first.", severity="warning")
            return
        if any(w.is_running for w in self.workers if w.group == "eval"):
            self.notify("An evaluation is running.", severity="warning")
            return
        self._folder = Path(tempfile.mkdtemp(prefix="contractstudio-eval-"))
        self.results = self._folder / f"{Path(target).name.split('.')[0]}.results.jsonl"
        self.rows, self.summary, self._incoming = [], None, []
        self.query_one("#eval-rows", DataTable).clear()
        self.query_one("#eval-progress", ProgressBar).update(total=None, progress=0)
        self._status(f"Running {Path(target).name} over {Path(data).name} ...")
        mode = str(self.query_one("#eval-model", Select).value)
        self._judged = (Path(target), Path(data)) if mode == "judge" else None
        self.sweep = None
        self.evaluate(Path(target), Path(data), mode)

    @work(thread=True, exclusive=True, group="eval", exit_on_error=False)
    def evaluate(self, target: Path, data: Path, mode: str) -> None:
        """Run the evaluation (what `contractstudio eval` runs); records reach the screen through `_drain`, the outcome as EvalDone."""
        from contractstudio.evaluation.evaluate import EvalConfig, evaluate

        def sink(kind: str, payload: Any, progress: Any) -> None:
            with self._lock:
                if kind == "record":
                    self._incoming.append(evals.slim(payload))
                self._progress = (progress.done, progress.planned)

        assert self.results is not None
        config = EvalConfig(target=target, data=data, out=self.results, overwrite=True, mode=mode,
                            trust=self.studio.trust.allows(target))  # the file's own folder decides
        self.post_message(EvalDone(evaluate(config, on_progress=sink)))

    def _drain(self) -> None:
        with self._lock:
            new, self._incoming = self._incoming, []
            done, planned = self._progress
        if planned:
            self.query_one("#eval-progress", ProgressBar).update(total=planned, progress=done)
        if new:
            self.rows.extend(new)
            self._add_rows(new)

    @on(EvalDone)
    def _done(self, message: EvalDone) -> None:
        self._drain()
        outcome = message.outcome
        self.summary = summary = outcome.summary
        self._show_summary()
        bad = f"; {len(outcome.bad_rows)} bad row(s) skipped (first: {outcome.bad_rows[0]})" if outcome.bad_rows else ""
        self._status(f"Done: {summary.rows} rows in {summary.duration_s or 0:.1f} s{bad}. "
                     f"Enter opens a row in the debugger. Results: {self.results}")

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        if event.worker.group == "eval" and event.state == WorkerState.ERROR:
            self._status(f"Could not run: {type(event.worker.error).__name__}: {event.worker.error}", error=True)

    # Results --------------------------------------------------------------------------------

    def show_results(self, path: Path) -> None:
        """Show an earlier results file: its summary, plots and rows."""
        from contractstudio.evaluation.results import ResultsError

        try:
            self.rows, self.summary = evals.load_results(path)
        except ResultsError as err:
            self.notify(str(err), severity="error")
            return
        self.results = path
        # Its rows came from a dataset the file does not name: the box says what is shown, not the last dataset.
        self._results_shown = path
        data = self.query_one("#eval-data", Select)
        data.prompt = path.name
        data.clear()
        self.query_one("#eval-progress", ProgressBar).update(total=len(self.rows), progress=len(self.rows))
        self._show_summary()
        self._status(f"{path.name}: {len(self.rows)} rows. Enter opens a row in the debugger.")

    def _show_summary(self) -> None:
        if self.summary is not None:
            # Wrapped, and the box scrolls (↑ ↓ End): the last lines (requests, structured output) and long messages are read whole.
            self.query_one("#eval-figures", Static).update(Text(evals.summary_text(self.summary.timeless())))
        self._show_plots()
        self._fill_filters()
        self._apply_filter()

    def _show_plots(self) -> None:
        if (summary := self.summary) is None:
            return
        room = evals.label_room(self.query_one("#plot-checks", PlotextPlot).size.width)  # the plots share the width
        self._plot("#plot-attempts", "outcomes", *evals.attempts_bars(summary, room))
        self._plot("#plot-checks", "failed checks" if summary.kind != "pipeline" else "assertions",
                   *evals.check_bars(summary, room=room))
        title, values = evals.cost_series(self.rows)
        plot = self.query_one("#plot-cost", PlotextPlot)
        plt = plot.plt
        plt.clear_figure()
        plt.title(title)
        if values:
            plt.bar([str(i) for i in range(1, len(values) + 1)], values, width=1)
            plt.xticks([])
        plot.refresh()

    # Thresholds ---------------------------------------------------------------------------------

    def action_sweep(self) -> None:
        """Sweep the threshold of the condition the filter shows the false fails or passes of (a judged run)."""
        chosen = str(self.query_one("#eval-filter", Select).value)
        kind, _, name = chosen.partition(":")
        if self._judged is None or kind not in ("false_fail", "false_pass") or name.startswith("("):
            self.notify("Judge labelled outputs, then pick a condition's false fails or false passes (f), then t.",
                        severity="warning")
            return
        self._status(f"Sweeping the threshold of {name} ...")
        self.run_sweep(*self._judged, name)

    @work(thread=True, exclusive=True, group="sweep", exit_on_error=False)
    def run_sweep(self, target: Path, data: Path, name: str) -> None:
        from contractstudio.evaluation.evaluate import EvalConfig
        from contractstudio.evaluation.sweep import SweepError, sweep_file

        config = EvalConfig(target=target, data=data, mode="judge", trust=self.studio.trust.allows(target))
        try:
            found = sweep_file(config, name, "balanced")
        except SweepError as err:
            self.post_message(SweepDone(None, str(err)))
            return
        self.post_message(SweepDone((target, found)))

    @on(SweepDone)
    def _swept(self, message: SweepDone) -> None:
        if message.found is None:
            self._status(message.problem or "", error=True)
            return
        self.sweep = message.found
        found = message.found[1]
        xs = [r.threshold for r in found.table]
        plot = self.query_one("#plot-cost", PlotextPlot)
        plt = plot.plt
        plt.clear_figure()
        plt.title(f"{found.id}: threshold")
        plt.plot(xs, [r.false_fails for r in found.table], label="false fails", marker="braille")
        plt.plot(xs, [r.false_passes for r in found.table], label="false passes", marker="braille")
        plt.vertical_line(found.chosen)
        plot.refresh()
        from contractstudio.evaluation.sweep import choice_text

        self._status(f"{found.check}: {choice_text(found, ' chosen')}. w writes it (the editor's quick fix).", wrap=True)

    def action_write_threshold(self) -> None:
        """Open the contract in the editor and apply the quick fix that sets the chosen threshold (undo takes it back)."""
        if self.sweep is None:
            self.notify("Sweep a condition's threshold first (t).", severity="warning")
            return
        target, found = self.sweep
        self.studio.threshold_choice = (target, found.id or "", found.chosen, found.key)
        self.studio.write_threshold_choice()

    def _plot(self, selector: str, title: str, labels: list[str], values: list[int]) -> None:
        plot = self.query_one(selector, PlotextPlot)
        plt = plot.plt
        plt.clear_figure()
        plt.title(title)
        if labels:
            plt.bar(labels, values, orientation="horizontal", width=0.4)
            # As many ticks as the bars' width has room for, each label apart (plotext drops crowded ones at random).
            room = plot.size.width - max(len(label) for label in labels) - 3
            ticks = evals.count_ticks(max(values), most=max(1, room // (len(str(max(values))) + 2)))
            plt.xticks([float(t) for t in ticks], [str(t) for t in ticks])  # counts: whole numbers on the axis
            plt.xlim(0, ticks[-1])
        plot.refresh()

    def _fill_filters(self) -> None:
        select = self.query_one("#eval-filter", Select)
        current = select.value
        options = evals.filter_choices(self.summary)
        select.set_options(options)
        select.value = current if current in [v for _, v in options] else "all"

    @on(Select.Changed, "#eval-filter")
    def _apply_filter(self) -> None:
        table = self.query_one("#eval-rows", DataTable)
        table.clear()
        self._add_rows(self.rows)

    def _add_rows(self, rows: list[Record]) -> None:
        chosen = str(self.query_one("#eval-filter", Select).value)
        table = self.query_one("#eval-rows", DataTable)
        shown = [r for r in rows if evals.matches(r, chosen)]
        input_width = self._shown_input_width = self._input_width()
        for rec in shown:
            table.add_row(*evals.row_cells(rec, input_width), key=rec.key)
        if self.summary is not None:  # the run is over: rows in row order
            table.sort("row", key=lambda cell: int(cell) if str(cell).isdigit() else 0)
        table.border_title = f"Rows ({table.row_count})"

    def action_next_filter(self) -> None:
        """Cycle through the filters (all, failed, remedied, fell back, ..., each failing condition)."""
        select = self.query_one("#eval-filter", Select)
        values = offered_values(select)
        if values:
            index = values.index(select.value) if select.value in values else -1
            select.value = values[(index + 1) % len(values)]

    # To the debugger --------------------------------------------------------------------------

    @on(DataTable.RowSelected, "#eval-rows")
    def _row_selected(self, event: DataTable.RowSelected) -> None:
        self._open(str(event.row_key.value))

    def action_open_row(self) -> None:
        """Open the selected row's recorded call in the debugger (replay, ready to step and edit)."""
        table = self.query_one("#eval-rows", DataTable)
        if table.row_count:
            self._open(str(table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value))

    def _open(self, key: str) -> None:
        rec = next((r for r in self.rows if r.key == key), None)
        if rec is None or self.results is None:
            return
        if rec.kind == "pipeline":
            self.notify("A pipeline row has no call to debug; its path is in the table (F3 shows the graph).")
            return
        from contractstudio.evaluation.results import ResultsError

        try:
            events = evals.trace_of(self.results, key)
        except ResultsError as err:  # an edited results file: say what is wrong with it, never the crash dialog
            self.notify(str(err), severity="error")
            return
        if not events:
            self.notify(f"Row {rec.row} has no recorded trace.", severity="warning")
            return
        from contractstudio.runtime.trace import Trace

        if self._folder is None:  # a results file opened from the workspace: its traces go to a private folder
            self._folder = Path(tempfile.mkdtemp(prefix="contractstudio-eval-"))
        from contractstudio.storage.atomic import write_named

        try:  # the name holds the file's `contract`: one that would leave the folder (`../`) is refused, never followed
            path = write_named(self._folder, f"{rec.contract or 'row'}.row-{rec.row}.jsonl",
                               Trace.from_dicts(events).to_jsonl()).path
        except OSError as err:
            self.notify(f"The trace of row {rec.row} was not written: {err.strerror or err}", severity="error")
            return
        self.studio.workspace.add(path)  # so the debugger offers its replay
        self.studio.open_file(path)

    def _status(self, text: str, error: bool = False, *, wrap: bool = False) -> None:
        """One line, cut with an ellipsis (a run's progress, a path); `wrap`: read whole, on the rows it needs (its
        row grows, up to max-height in studio.tcss), as a sweep's outcome and the `w` that writes it."""
        status = self.query_one("#eval-status", Static)
        status.set_class(wrap, "-whole")  # the widget's text-wrap decides (studio.tcss), not the Text's own no_wrap
        status.update(Text(text, style="bold red" if error else ""))
