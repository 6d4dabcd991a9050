"""What each screen shows at 80x24, 120x40 and 200x60 (issue 35.9, 35.10): names that can be told apart, a list
that grows with the terminal, the status line's file name, every table column and the whole eval summary."""

from __future__ import annotations

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
        for top in range(0, files.virtual_size.height, max(files.scrollable_content_region.height, 1)):
            files.scroll_to(y=top, animate=False)
            await pilot.pause()
            region = files.scrollable_content_region
            rows = [row[region.x:region.right].rstrip() for row in screen_rows(app)[region.y:region.bottom]]
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
