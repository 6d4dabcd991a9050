"""Eval mode (F5): run the sample dataset, filter the rows, open a row's call in the debugger; a snapshot."""

from __future__ import annotations

import json
import shutil
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot

from contractstudio.evaluation.record_model import checked_record
from contractstudio.studio import evals
from contractstudio.studio.app import StudioApp
from contractstudio.studio.config import load_config

from .conftest import settle
from .test_screen_room import screen_rows

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "samples" / "multidoc_qa.contract.yaml"
ROWS = ROOT / "samples" / "eval" / "multidoc_qa.rows.jsonl"


@pytest.fixture
def eval_workspace(tmp_path: Path) -> Path:
    folder = tmp_path / "ws"
    folder.mkdir()
    shutil.copy(SAMPLE, folder)
    shutil.copy(ROWS, folder)
    return folder


def results_file(folder: Path) -> Path:
    """The sample's results with fixed latencies (a run's own timings would change every snapshot)."""
    from contractstudio.evaluation.evaluate import EvalConfig, evaluate

    raw = folder / "raw.results"
    evaluate(EvalConfig(target=folder / SAMPLE.name, data=folder / ROWS.name, out=raw, mode="scripted", concurrency=1))
    out = folder / "multidoc_qa.results.jsonl"
    with open(raw) as src, open(out, "w") as dst:
        for line in src:
            rec = json.loads(line)
            rec["latency_s"] = rec["row"] / 1000
            dst.write(json.dumps(rec) + "\n")
    raw.unlink()
    return out


async def test_run_filter_and_open_a_row_in_the_debugger(eval_workspace: Path) -> None:
    app = StudioApp([eval_workspace], config=load_config())
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press("f5")
        await pilot.pause()
        screen = app.screen
        assert screen.id == "eval-screen"
        assert screen.query_one("#eval-data").value == str(eval_workspace / ROWS.name)
        assert screen.query_one("#eval-target").value == str(eval_workspace / SAMPLE.name)  # picked by the dataset's name
        await pilot.press("r")
        await pilot.app.workers.wait_for_complete()
        await pilot.pause(0.5)
        figures = str(screen.query_one("#eval-figures").render())
        assert "successful: 42 (87.5% [75.3, 94.1])" in figures and "remedied at attempt: #1: 14, #2: 3, #3: 1" in figures
        table = screen.query_one("#eval-rows")
        assert table.row_count == 48
        assert "2 bad row(s) skipped (first: row 9" in str(screen.query_one("#eval-status").render())

        screen.query_one("#eval-filter").value = "fallback"
        await pilot.pause()
        assert table.row_count == 6
        outcomes = {table.get_row_at(i)[evals.COLUMNS.index("outcome")] for i in range(table.row_count)}
        assert outcomes == {"fallback"}
        screen.query_one("#eval-filter").value = "check:post.snippet_budget"
        await pilot.pause()
        failed = evals.COLUMNS.index("failed conditions")
        assert [table.get_row_at(i)[failed] for i in range(table.row_count)] == ["post.snippet_budget"] * 2
        await pilot.press("f")  # the next filter in the list
        await pilot.pause()
        assert screen.query_one("#eval-filter").value == "check:pre.query_present"

        screen.query_one("#eval-filter").value = "fallback"
        await pilot.pause()
        first = table.get_row_at(0)
        table.focus()
        await pilot.press("enter")
        await pilot.pause(0.5)
        debug = app.screen
        assert debug.id == "debug-screen"
        assert str(debug.query_one("#model-select").value).startswith("replay:")
        assert debug.events and debug._input_value() == debug.events[0]["value"]
        assert len([e for e in debug.events if e.type == "llm_request"]) == int(first[4])
        debug.query_one("#timeline").focus()
        await pilot.press("R")  # restart: the recorded call replays from its trace, ready to step
        await pilot.press("g")
        await pilot.app.workers.wait_for_complete()
        await pilot.pause()
        assert debug.session is not None and debug.session.done
        assert debug.session.result.llm_calls == int(first[4])
        assert not [e for e in debug.events if e.type == "replay_divergence"]


@asynccontextmanager
async def results_opened(folder: Path, results: Path) -> AsyncIterator[tuple[StudioApp, Pilot]]:
    """The studio on `folder` with `results` opened (eval mode, or the message why not)."""
    app = StudioApp([folder], config=load_config())
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        app.open_file(results)
        await pilot.pause(0.5)
        yield app, pilot


async def test_a_results_file_opens_in_eval_mode(eval_workspace: Path) -> None:
    results = results_file(eval_workspace)
    async with results_opened(eval_workspace, results) as (app, pilot):
        screen = app.screen
        assert screen.id == "eval-screen"
        assert screen.query_one("#eval-rows").row_count == 48
        assert "fallback: 6" in str(screen.query_one("#eval-figures").render())


async def test_a_pipeline_dataset(tmp_path: Path) -> None:
    folder = tmp_path / "ws"
    folder.mkdir()
    shutil.copy(ROOT / "samples" / "rag_router.pipeline.yaml", folder)
    shutil.copy(ROOT / "samples" / "eval" / "rag_router.rows.jsonl", folder)
    app = StudioApp([folder], config=load_config())
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press("f5")
        await pilot.pause()
        await pilot.press("r")
        await pilot.app.workers.wait_for_complete()
        await pilot.pause(0.5)
        screen = app.screen
        assert "reached an end: 10 (83.3% [55.2, 95.3])" in str(screen.query_one("#eval-figures").render())
        assert screen.query_one("#eval-rows").row_count == 12


class TestEvalMode:
    @pytest.mark.parametrize("size", [pytest.param((80, 24), id="80x24"), pytest.param((120, 40), id="120x40")])
    def test_summary_plots_and_rows(self, snap_compare, eval_workspace, size) -> None:
        results = results_file(eval_workspace)

        async def run_before(pilot) -> None:
            await settle(pilot)
            pilot.app.open_file(results)
            await pilot.pause(0.5)
            pilot.app.screen.query_one("#eval-status").update("multidoc_qa.results.jsonl: 48 rows. Enter opens a row in the debugger.")
            await pilot.pause()

        assert snap_compare(StudioApp([eval_workspace], config=load_config()), terminal_size=size, run_before=run_before)


def rewrite_line(results: Path, index: int, edit: Callable[[dict], None]) -> None:
    """Edit one record of a results file as someone with a text editor could."""
    lines = results.read_text().splitlines(keepends=True)
    rec = json.loads(lines[index])
    edit(rec)
    lines[index] = json.dumps(rec) + "\n"
    results.write_text("".join(lines))


async def test_a_tampered_results_file_is_a_message_not_a_crash(eval_workspace: Path) -> None:
    results = results_file(eval_workspace)
    rewrite_line(results, 2, lambda rec: rec.update(attempts="abc"))
    async with results_opened(eval_workspace, results) as (app, pilot):
        messages = [str(n.message) for n in app._notifications]
        assert f"{results}:3: not a results record: attempts: Input should be a valid integer" in messages
        assert app.is_running and app.return_code is None


async def test_a_row_whose_trace_file_points_out_of_the_folder_is_a_message(eval_workspace: Path) -> None:
    results = results_file(eval_workspace)
    rewrite_line(results, 0, lambda rec: rec.update(trace=None, trace_file="/etc/passwd"))
    async with results_opened(eval_workspace, results) as (app, pilot):
        screen = app.screen
        table = screen.query_one("#eval-rows")
        table.focus()
        table.move_cursor(row=next(i for i in range(table.row_count) if table.get_row_at(i)[0] == "1"))
        await pilot.press("enter")
        await pilot.pause(0.5)
        messages = [str(n.message) for n in app._notifications]
        assert any(f"{results}:1: trace_file '/etc/passwd' is not read: " in m for m in messages), messages
        assert app.screen is screen and app.is_running


async def test_a_contract_name_holding_a_path_never_writes_a_trace_out_of_the_private_folder(eval_workspace: Path,
                                                                                             tmp_path: Path) -> None:
    """Issue 32.2: a row's trace is written under a name the studio makes; a results file's `contract` holding
    `../` is refused with a message, never a file written where the name leads."""
    results = results_file(eval_workspace)
    escape = "../" * 40 + str(tmp_path / "escaped").lstrip("/")
    rewrite_line(results, 0, lambda rec: rec.update(contract=escape))
    async with results_opened(eval_workspace, results) as (app, pilot):
        screen = app.screen
        table = screen.query_one("#eval-rows")
        table.focus()
        table.move_cursor(row=next(i for i in range(table.row_count) if table.get_row_at(i)[0] == "1"))
        await pilot.press("enter")
        await pilot.pause(0.5)
        assert not (tmp_path / "escaped.row-1.jsonl").exists()
        messages = [str(n.message) for n in app._notifications]
        assert any("The trace of row 1 was not written: " in m and "is not a file name inside" in m for m in messages), messages
        assert app.screen is screen and app.is_running


async def test_at_200_columns_plot_labels_are_whole_and_each_row_shows_its_query(eval_workspace: Path) -> None:
    """Issue 19.10: the failed-check bars name whole conditions when there is room; the table shows each row's input."""
    results = results_file(eval_workspace)
    app = StudioApp([eval_workspace], config=load_config())
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        app.open_file(results)
        await pilot.pause(0.5)
        await pilot.resize_terminal(200, 60)  # opened small, then the window grows: the plots and the table follow
        await pilot.pause(0.5)
        screen = app.screen
        plot = screen.query_one("#plot-checks")
        drawn = "\n".join(strip.text for strip in plot.render_lines(plot.size.region))
        failing = [e.check.split(".")[-1] for e in screen.summary.failing_conditions]
        long_names = [n for n in failing[:6] if len(n) > 12]  # the six most failed are plotted
        assert long_names and all(n in drawn for n in long_names), drawn
        table = screen.query_one("#eval-rows")
        for row in (1, 2):  # "What are hybrid search for?" is cut at 80 columns, whole at 200
            rec = next(r for r in screen.rows if r.row == row)
            assert str(table.get_cell(rec.key, "input")) == rec.input["query"]


async def test_judge_shows_a_confusion_matrix_per_condition_and_opens_a_disagreement_in_the_debugger(tmp_path: Path) -> None:
    """Issue 39.1: the studio judges the labelled sample; each condition's matrix is in the summary, its false fails
    and false passes are filters, and Enter opens a disagreeing row's call in the debugger."""
    folder = judged_workspace(tmp_path)
    app = StudioApp([folder], config=load_config())
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await judged(app, pilot, folder)
        figures = str(screen.query_one("#eval-figures").render())
        assert "post.coverage_floor: 24 labelled row(s)" in figures
        assert "    rejects               6           6   (false fails: 6)" in figures
        assert "    accepts               5          18   (false passes: 5)" in figures  # evidence_for_high_coverage
        table = screen.query_one("#eval-rows")
        screen.query_one("#eval-filter").value = "false_fail:post.coverage_floor"
        await pilot.pause()
        assert sorted(int(table.get_row_at(i)[0]) for i in range(table.row_count)) == [13, 14, 15, 16, 17, 18]
        screen.query_one("#eval-filter").value = "false_pass:post.evidence_for_high_coverage"
        await pilot.pause()
        assert table.row_count == 5
        table.focus()
        await pilot.press("enter")
        await pilot.pause(0.5)
        debug = app.screen
        assert debug.id == "debug-screen"
        for _ in range(50):  # the recorded call is read in a worker: wait for it, however loaded the machine is
            if debug.events:
                break
            await pilot.pause(0.1)
        assert [e for e in debug.events if e.type == "condition" and e.id == "evidence_for_high_coverage"]


def judged_workspace(tmp_path: Path) -> Path:
    folder = tmp_path / "ws"
    folder.mkdir()
    shutil.copy(SAMPLE, folder)
    shutil.copy(ROOT / "samples" / "eval" / "multidoc_qa.labelled.jsonl", folder)
    return folder


async def judged(app: StudioApp, pilot: Pilot, folder: Path) -> Any:
    """Eval mode after judging the workspace's labelled rows with the judge model (r): the screen."""
    await settle(pilot)
    await pilot.press("f5")
    await pilot.pause()
    screen = app.screen
    screen.query_one("#eval-data").value = str(folder / "multidoc_qa.labelled.jsonl")
    screen.query_one("#eval-model").value = "judge"
    await pilot.pause()
    await pilot.press("r")
    await pilot.app.workers.wait_for_complete()
    await pilot.pause(0.5)
    return screen


async def swept(app: StudioApp, pilot: Pilot, folder: Path) -> Any:
    """Eval mode after judging the labelled rows and sweeping coverage_floor's threshold (t): the screen."""
    screen = await judged(app, pilot, folder)
    screen.query_one("#eval-filter").value = "false_fail:post.coverage_floor"
    await pilot.pause()
    screen.query_one("#eval-rows").focus()
    await pilot.press("t")
    await pilot.app.workers.wait_for_complete()
    await pilot.pause(0.5)
    return screen


SWEPT = ("post.coverage_floor: output.coverage_score >= 0.4 chosen (now 0.55): false fails 6 -> 0, false passes 0 -> 1. "
         "w writes it (the editor's quick fix).")


async def test_a_sweep_plots_the_trade_off_and_w_writes_the_chosen_threshold_with_the_editors_quick_fix(tmp_path: Path) -> None:
    """Issue 39.2: after judging, t sweeps the filtered condition's threshold (a plot of false fails and false passes
    against the threshold), and w applies the quick fix in the editor: one edit of the number, undoable, not saved."""
    folder = judged_workspace(tmp_path)
    contract = folder / SAMPLE.name
    app = StudioApp([folder], config=load_config())
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await swept(app, pilot, folder)
        assert screen.sweep is not None and screen.sweep[1].chosen == 0.4
        status = str(screen.query_one("#eval-status").render())
        assert "output.coverage_score >= 0.4 chosen (now 0.55): false fails 6 -> 0" in status
        plot = screen.query_one("#plot-cost")
        drawn = "\n".join(strip.text for strip in plot.render_lines(plot.size.region))
        assert "0.20" in drawn and any("\u2800" <= ch <= "\u28ff" for ch in drawn)  # the thresholds' axis, the two lines
        await pilot.press("w")
        await settle(pilot)
        await pilot.pause(0.5)
        assert app.screen.id == "edit-screen"
        assert app.current_text() == SAMPLE.read_text().replace("output.coverage_score >= 0.55", "output.coverage_score >= 0.4")
        assert contract.read_text() == SAMPLE.read_text()  # in the editor, not saved: the author reads it and saves


@pytest.mark.parametrize("size", [(80, 24), (120, 40)], ids=lambda s: f"{s[0]}x{s[1]}")
async def test_the_sweep_s_status_is_read_whole_at_every_width(tmp_path: Path, size: tuple[int, int]) -> None:
    """Issue 35.10 (the tmux walk after it): at 80 columns the sweep's status line was cut before its figures and
    before `w`; it wraps in its row instead (four rows at 80 columns), and the rows table keeps rows to show."""
    folder = judged_workspace(tmp_path)
    app = StudioApp([folder], config=load_config())
    async with app.run_test(size=size) as pilot:
        screen = await swept(app, pilot, folder)
        box = screen.query_one("#eval-status").region
        drawn = [row[box.x:box.right] for row in screen_rows(app)[box.y:box.bottom]]  # the terminal's cells
        assert " ".join(" ".join(drawn).split()) == SWEPT, drawn
        assert screen.query_one("#eval-rows").size.height >= 4  # its header and three rows, at 80x24 too


def test_a_condition_filter_shows_the_rows_the_summary_counts_for_that_condition(eval_workspace: Path) -> None:
    # one walk of a record's failures (evaluation/summary.py): the studio's filter and column ask the summary's
    rows, summary = evals.load_results(results_file(eval_workspace))
    failing = summary.failing_conditions
    assert len(failing) >= 2
    for entry in failing:
        shown = [row for row in rows if evals.matches(row, f"check:{entry.check}")]
        assert len(shown) == entry.rows
        assert all(entry.check in evals.row_cells(row)[-1] for row in shown)  # the "failed conditions" column
    from contractstudio.evaluation.summary import failed_checks

    twice = rows[0].model_copy(update={"failures": checked_record(
        {**rows[0].model_dump(), "failures": [{"attempt": 1, "failed": [{"check": "post.a"}, {"check": "post.b"}]},
                                              {"attempt": 2, "failed": [{"check": "post.b"}, {"check": "post.a"}]}]},
        "contract").failures})

    assert evals.failed_checks(twice) == failed_checks(twice) == ["post.a", "post.b"]  # in order of first failure, once


def test_a_results_file_opened_in_the_studio_has_the_summary_its_run_gave(tmp_path: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    # one summary of a run (evaluation/summary.py: RunTally, results_summary): the studio counts no record itself
    from contractstudio.evaluation import run_summary as summaries
    from contractstudio.evaluation.evaluate import EvalConfig, evaluate

    timeless = ("duration_s", "rows_this_run", "rows_per_s", "latency_s", "bad_rows")  # not held by the file
    for data, mode in (("multidoc_qa.labelled.jsonl", "judge"), ("multidoc_qa.rows.jsonl", "scripted")):
        out = tmp_path / f"{mode}.results.jsonl"
        ran = evaluate(EvalConfig(target=SAMPLE, data=ROOT / "samples" / "eval" / data, out=out, mode=mode)).summary
        rows, shown = evals.load_results(out)
        assert shown.model_dump(exclude=set(timeless)) == ran.model_dump(exclude=set(timeless))
        assert len(rows) == ran.rows and all(row.trace is None for row in rows)
    asked: list[Path] = []

    told_so = summaries.RunTally("pipeline").summary()  # a summary the file could never give: the evaluation's word

    def told(path: Path, keep: Callable[[dict], None] | None = None) -> object:
        asked.append(path)
        return told_so

    monkeypatch.setattr(summaries, "results_summary", told)
    assert evals.load_results(out)[1] is told_so and asked == [out]


def test_a_pipeline_rows_failed_assertion_is_named_as_the_summary_names_it() -> None:
    from contractstudio.evaluation.summary import failed_checks

    rec = checked_record({"kind": "pipeline", "key": "1:x", "row": 1, "id": "1", "contract_sha": "d", "successful": False,
                          "latency_s": 0.0, "outcome": "assertion_failed", "path": ["answer"],
                          "assertion": {"step": "answer", "phase": "requires", "field": "docs"}}, "pipeline")
    assert evals.failed_checks(rec) == failed_checks(rec) == ["answer: requires docs"]
