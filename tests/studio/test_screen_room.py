"""What each screen shows at 80x24, 120x40 and 200x60 (issue 35.9, 35.10): names that can be told apart, a list
that grows with the terminal, the status line's file name, every table column and the whole eval summary."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from contractstudio.studio.app import StudioApp
from contractstudio.studio.config import load_config
from contractstudio.studio.widgets.files import FileList

from .conftest import settle

ROOT = Path(__file__).resolve().parents[2]
SIZES = [(80, 24), (120, 40), (200, 60)]


def screen_rows(app) -> list[str]:
    """The screen's rows as the terminal shows them."""
    return [strip.text for strip in app.screen._compositor.render_strips()]


async def redrawn(pilot, widget, before: list[str] | None) -> list[str]:
    """The rows of a scrolled widget's content once the screen shows its new page: changed from `before` and the
    same on two reads (a loaded machine composes the screen a few frames after the scroll)."""
    last: list[str] | None = None
    for _ in range(200):  # at most ~4 s
        await pilot.pause(0.02)
        region = widget.scrollable_content_region
        rows = [row[region.x:region.right].rstrip() for row in screen_rows(pilot.app)[region.y:region.bottom]]
        if rows == last and (before is None or rows != before):
            return rows
        last = rows
    raise AssertionError(f"the screen did not show the scrolled page: {last}")


def region_rows(app, widget) -> list[str]:
    """The rows of the screen inside a widget's region (border included)."""
    region = widget.region
    return [row[region.x:region.right] for row in screen_rows(app)[region.y:region.bottom]]


@pytest.fixture
def samples(tmp_path: Path) -> Path:
    target = tmp_path / "samples"
    shutil.copytree(ROOT / "samples", target)
    return target


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
async def test_the_file_list_tells_every_file_apart_at_every_size(samples: Path, size: tuple[int, int]) -> None:
    app = StudioApp([samples], config=load_config())
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        files = app.edit_screen.query_one(FileList)
        shown: dict[int, str] = {}  # every line of the list as drawn, scrolled through page by page
        rows: list[str] = []
        for top in range(0, files.virtual_size.height, max(files.scrollable_content_region.height, 1)):
            was = files.scroll_offset.y
            files.scroll_to(y=top, animate=False)  # a list that fits does not move: its page is only read again
            rows = await redrawn(pilot, files, rows if files.scroll_offset.y != was else None)
            shown.update({int(files.scroll_offset.y) + i: row for i, row in enumerate(rows)})
        names = [row for row in shown.values() if row.startswith(("  ", "● ", "▲ "))]
        titles = sum(1 for i in range(files.option_count) if files.get_option_at_index(i).disabled)
        assert len(names) == files.option_count - titles, names  # every file once
        assert len(names) == len(set(names)), sorted(n for n in names if names.count(n) > 1)
        if size[0] >= 200:  # whole where there is room
            assert "  localai_rag/pipelines/base/repo_qa_base.yaml" in names, names


async def test_the_file_list_grows_with_a_wide_terminal(samples: Path) -> None:
    widths = {}
    for size in SIZES:
        app = StudioApp([samples], config=load_config())
        async with app.run_test(size=size) as pilot:
            await settle(pilot)
            widths[size[0]] = app.edit_screen.query_one(FileList).size.width
    assert widths[80] <= widths[120] < widths[200], widths
    assert widths[200] >= 44, widths  # a long workspace name is read whole at 200 columns
    assert widths[80] <= 24, widths  # the editor keeps the room of a small terminal


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
async def test_the_status_line_keeps_the_file_name(samples: Path, size: tuple[int, int]) -> None:
    path = samples / "broken" / "multidoc_qa_typos.contract.yaml"
    app = StudioApp([samples, path], config=load_config())
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        await pilot.press("x")  # modified, and checking…
        await pilot.pause()
        status = region_rows(app, app.edit_screen.query_one("#status"))[0]
        assert "multidoc_qa_typos.contract.yaml" in status, status
        assert "modified" in status, status


def eval_folder(tmp_path: Path) -> Path:
    from .test_eval_mode import ROWS, SAMPLE

    folder = tmp_path / "ws"
    folder.mkdir()
    shutil.copy(SAMPLE, folder)
    shutil.copy(ROWS, folder)
    shutil.copy(ROWS, folder / "other.rows.jsonl")
    return folder


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
async def test_eval_shows_every_column_the_whole_summary_and_the_results_it_shows(tmp_path: Path, size) -> None:
    from .test_eval_mode import results_file

    folder = eval_folder(tmp_path)
    results = results_file(folder)
    app = StudioApp([folder], config=load_config())
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        await pilot.press("f5")
        await pilot.pause()
        screen = app.screen
        screen.query_one("#eval-data").value = str(folder / "other.rows.jsonl")
        await pilot.pause()
        app.open_file(results)
        await pilot.pause(0.5)
        assert app.screen is screen
        # The dataset box no longer names a dataset these rows did not come from.
        data_box = region_rows(app, screen.query_one("#eval-data"))[0]
        assert "other.rows" not in data_box and "multidoc_qa.res" in data_box, data_box
        # Every column's header is on screen, `ms` too.
        rows = screen.query_one("#eval-rows")
        header = region_rows(app, rows)[1]
        assert all(column in header for column in ("row", "input", "outcome", "calls", "ms")), header
        # The summary scrolls to its last lines (structured output).
        summary = screen.query_one("#eval-figures-box")
        summary.focus()
        await pilot.press("end")
        await pilot.wait_for_scheduled_animations()  # End scrolls with an animation
        assert summary.scroll_offset.y == summary.max_scroll_y > 0
        rows = await redrawn(pilot, summary, None)  # the screen composed after the scroll (late on a loaded machine)
        drawn = " ".join(" ".join(row.replace("│", " ").split()) for row in rows)
        assert "structured output: off 46" in drawn, drawn  # wrapped at 80 columns: read as the lines run on
        # Count axes have whole-number ticks only.
        for plot in ("#plot-attempts", "#plot-checks"):
            widget = screen.query_one(plot)
            if widget.display and widget.size.width:
                ticks = region_rows(app, widget)[-1]
                assert not re.search(r"\d\.\d", ticks), (plot, ticks)


async def test_the_graph_file_list_tells_every_file_apart_with_the_edit_list_s_labels(samples: Path) -> None:
    """Leftover of issue 35.9: the Graph mode's list cut its names itself (`localai_rag/p…` twice at 80 columns)."""
    from textual.widgets import OptionList

    app = StudioApp([samples / "rag_router.pipeline.yaml", samples], config=load_config())
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await pilot.press("f3")
        await settle(pilot)
        chooser = app.screen.query_one("#graph-files", OptionList)
        room = chooser.scrollable_content_region.width
        labels = [str(chooser.get_option_at_index(i).prompt).strip() for i in range(chooser.option_count)]
        assert len(labels) > 4 and len(labels) == len(set(labels)), labels
        assert all(len(label) <= room for label in labels), (room, labels)


async def test_the_file_list_stays_where_it_was_scrolled_when_its_marks_are_drawn_again(samples: Path) -> None:
    # A file list drawn again (the workspace's counts arriving, a file saved) jumped back to the current file: a late
    # count under load scrolled the list away from the page being read (a test of this file saw it in CI).
    app = StudioApp([samples], config=load_config())
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        files = app.edit_screen.query_one(FileList)
        assert files.virtual_size.height > files.scrollable_content_region.height  # the list needs scrolling here
        files.scroll_to(y=files.scrollable_content_region.height, animate=False)
        await pilot.pause()
        page = files.scroll_offset.y
        assert page > 0
        app.files_changed()  # as the workspace's counts do when they arrive
        await pilot.pause()
        assert files.scroll_offset.y == page
