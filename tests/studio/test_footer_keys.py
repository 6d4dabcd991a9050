"""The footer says what to press where the focus is (issue 35.6): the focused widget's keys first, then the mode's,
then the global ones; the other modes' keys at every size; focus marked by more than a shade; docs and keys agree."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from .conftest import settle
from .test_focus_and_theme import contrast
from .test_screen_room import SIZES, screen_rows

ROOT = Path(__file__).resolve().parents[2]
OTHER_MODES = {"edit": ["f3 Graph", "f4 Debug", "f5 Eval"], "graph": ["f2 Edit", "f4 Debug", "f5 Eval"],
               "debug": ["f2 Edit", "f3 Graph", "f5 Eval"], "eval": ["f2 Edit", "f3 Graph", "f4 Debug"]}
DEBUG_KEYS = ["s Step", "c Continue", "g Run", "R Restart", "b Breakpoint", "e Edit", "w Save trace", "o Open trace"]


async def footer(app, pilot) -> str:
    """The footer's row as drawn (once it is: the footer is composed again after each change of focus)."""
    for _ in range(50):
        row = screen_rows(app)[-1]
        if "palette" in row and row.split("palette")[0].strip(" ▏"):
            return row
        await pilot.pause(0.1)
    return row


def before(row: str, first: str, then: str) -> bool:
    return first in row and then in row and row.index(first) < row.index(then)


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
async def test_the_footer_shows_the_focused_widget_s_keys_first_and_every_mode_key(make_app, size) -> None:
    app = make_app("rag_router.pipeline.yaml")
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        row = await footer(app, pilot)
        assert "⏎" not in row, row  # the editor: Enter is a new line
        assert "f1 Help" in row and all(key in row for key in OTHER_MODES["edit"]), row
        assert "f2 Edit" not in row, row  # the mode we are in
        await pilot.press("ctrl+o")  # the file list
        await pilot.pause()
        row = await footer(app, pilot)
        assert row.lstrip().startswith("⏎ Open"), row
        assert before(row, "⏎ Open", "^s Save") and before(row, "^s Save", "f1 Help"), row
        assert all(key in row for key in OTHER_MODES["edit"]), row
        await pilot.press("ctrl+g")  # the findings
        await pilot.pause()
        row = await footer(app, pilot)
        assert row.lstrip().startswith("⏎ Jump"), row
        assert all(key in row for key in OTHER_MODES["edit"]), row

        await pilot.press("f4")
        await settle(pilot)
        app.screen.query_one("#timeline").focus()
        await pilot.pause()
        row = await footer(app, pilot)
        assert all(key in row for key in OTHER_MODES["debug"]), row
        assert before(row, "s Step", "f2 Edit"), row  # the mode's keys, then the global ones
        if size[0] >= 120:  # every key of the mode (issue 35.6 and the tmux walk after it: `o` was missing at 120)
            assert all(key in row for key in DEBUG_KEYS), row
        if size[0] >= 200:  # F1 and Ctrl+Q give way first when the mode's keys need the room
            assert "f1 Help" in row and "^q Quit" in row, row

        await pilot.press("f5")
        await pilot.pause()
        row = await footer(app, pilot)
        assert row.lstrip().startswith("⏎ Open in debugger"), row  # the rows have the focus
        assert all(key in row for key in OTHER_MODES["eval"]), row

        await pilot.press("f3")
        await settle(pilot)
        row = await footer(app, pilot)
        assert all(key in row for key in OTHER_MODES["graph"]), row


async def test_a_focused_panel_and_a_focused_one_row_select_are_marked_by_more_than_a_shade(make_app) -> None:
    app = make_app("multidoc_qa.contract.yaml")
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        files = app.screen.query_one("#files")
        unfocused = files.styles.border_title_background
        await pilot.press("ctrl+o")
        await pilot.pause()
        assert files.has_focus
        behind = files.background_colors[0]
        marked = files.styles.border_title_background
        assert contrast(behind.blend(marked.with_alpha(1.0), marked.a), behind.blend(unfocused.with_alpha(1.0), unfocused.a)) >= 2.0

        await pilot.press("f4")
        await settle(pilot)
        select = app.screen.query_one("#contract-select")
        shown = select.query_one("SelectCurrent")
        select.focus()
        await pilot.pause()
        focused = shown.background_colors[1]
        app.screen.query_one("#timeline").focus()
        await pilot.pause()
        blurred = shown.background_colors[1]
        assert contrast(focused, blurred) >= 1.5, (focused.hex, blurred.hex)


def test_the_docs_name_each_letter_key_as_it_is_pressed() -> None:
    """A key table's letters are the bindings' own (`o`, not `O`: Shift+O is another key)."""
    from contractstudio.studio.app import StudioApp, studio_scopes

    keys = {b.id: set(b.key.split(",")) for bindings in studio_scopes(StudioApp._merged_bindings).values() for b in bindings}
    rows = [line.split("|") for line in (ROOT / "docs" / "studio.md").read_text().splitlines() if line.startswith("| ")]
    checked = 0
    for row in rows:
        if len(row) < 4 or "`" not in row[3]:
            continue
        ids = re.findall(r"`([a-z_]+\.[a-z_]+)`", row[3])
        letters = re.findall(r"(?<![\w+])`?([A-Za-z])`?(?![\w+])", row[1].split("(")[0])
        bound = set().union(*(keys[i] for i in ids if i in keys))
        for letter in letters:
            checked += 1
            assert letter in bound, f"docs/studio.md: {row[1].strip()!r} for {ids}, the keys are {sorted(bound)}"
    assert checked >= 8
