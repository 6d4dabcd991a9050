"""Every key reaches the text in the order it was pressed, however fast the keys come."""

from __future__ import annotations

import asyncio
import random
from pathlib import Path

from textual import events
from textual.command import CommandInput
from textual.widgets import Input

from contractstudio.studio.widgets.completion import Ask

from .conftest import settle

LETTERS = "abcdefghijklmnopqrstuvwxyz"
MOVES = ("left", "right", "up", "down")


class PlainText:
    """The same keys applied to a list of lines: what the editor must end with."""

    def __init__(self, text: str) -> None:
        self.lines = text.split("\n")
        self.row = self.col = 0
        self.goal = 0  # the column vertical moves aim for (the last one reached across or by typing)

    def press(self, key: str) -> None:
        lines, row, col = self.lines, self.row, self.col
        if len(key) == 1:
            lines[row] = lines[row][:col] + key + lines[row][col:]
            self._at(row, col + 1)
        elif key == "enter":
            lines[row : row + 1] = [lines[row][:col], lines[row][col:]]
            self._at(row + 1, 0)
        elif key == "backspace" and col > 0:
            lines[row] = lines[row][: col - 1] + lines[row][col:]
            self._at(row, col - 1)
        elif key == "backspace" and row > 0:
            self._at(row - 1, len(lines[row - 1]))
            lines[row - 1 : row + 1] = [lines[row - 1] + lines[row]]
        elif key == "delete" and col < len(lines[row]):
            lines[row] = lines[row][:col] + lines[row][col + 1 :]
        elif key == "delete" and row + 1 < len(lines):
            lines[row : row + 2] = [lines[row] + lines[row + 1]]
        elif key == "left" and (col or row):
            self._at(row, col - 1) if col else self._at(row - 1, len(lines[row - 1]))
        elif key == "right" and (col < len(lines[row]) or row + 1 < len(lines)):
            self._at(row, col + 1) if col < len(lines[row]) else self._at(row + 1, 0)
        elif key in ("up", "down"):
            target = row - 1 if key == "up" else row + 1
            if target < 0:
                self.col = 0
            elif target >= len(lines):
                self.col = len(lines[row])
            else:
                self.row, self.col = target, min(max(col, self.goal), len(lines[target]))

    def _at(self, row: int, col: int) -> None:
        self.row, self.col = row, col
        self.goal = col

    @property
    def text(self) -> str:
        return "\n".join(self.lines)


def random_keys(seed: int, count: int) -> list[str]:
    rng = random.Random(seed)
    kinds = [*LETTERS[:8], "backspace", "backspace", "delete", "enter", *MOVES]
    return [rng.choice(kinds) for _ in range(count)]


def key_event(key: str) -> events.Key:
    return events.Key(key, key if len(key) == 1 else ("\r" if key == "enter" else None))


async def test_keys_pressed_without_a_pause_are_applied_in_order(make_app, workspace: Path) -> None:
    start = "first line\nsecond\n\nthe last line of the notes"
    (workspace / "notes.jsonl").write_text(start, encoding="utf-8")
    keys = random_keys(19, 80)
    model = PlainText(start)
    for key in keys:
        model.press(key)
    app = make_app("notes.jsonl")
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        for key in [*keys, "ctrl+s"]:  # as a terminal delivers them: all queued before the first is handled
            app.post_message(key_event(key))
        assert await saved(pilot, workspace / "notes.jsonl", start) == model.text


async def saved(pilot, path: Path, old: str) -> str:
    """The file's text once the last key (Ctrl+S) has saved it (the old text if it never does)."""
    for _ in range(300):
        if (text := path.read_text(encoding="utf-8")) != old:
            return text
        await pilot.pause(0.05)
    return old


async def test_the_palette_field_gets_fast_keys_in_order(make_app) -> None:
    app = make_app("multidoc_qa.contract.yaml")
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await pilot.press("ctrl+p")
        await pilot.pause()
        field = app.screen.query_one(CommandInput)
        keys = [*"Chx", "backspace", "backspace", "backspace", "left", "delete", *"Theme", "right", "backspace"]
        for key in keys:
            app.post_message(key_event(key))
        await pilot.pause(0.1)  # every key posted has reached the app (and is held)
        await app.keys_handled()  # and every one of them has been handled, in order
        # "Chx", three Backspaces, Left and Delete on an empty field, "Theme", Right at the end, one Backspace.
        # (Waiting for "Theme" itself passed on the way there, before the last Backspace: a race, not the result.)
        assert field.value == "Them"


async def typed_after_go_to_line(make_app, workspace: Path, keys: list[str]) -> tuple[list[str], list[str]]:
    """The sample's lines before and after Ctrl+L then `keys`, these posted at once (as a terminal delivers them) as
    soon as the dialog is drawn (a dialog takes no key typed before: studio/keys.py's Dialog) and ending in Ctrl+S;
    the editor must have the focus at the end."""
    path = workspace / "multidoc_qa.contract.yaml"
    old = path.read_text(encoding="utf-8")
    app = make_app(path.name)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await pilot.press("ctrl+l")
        await pilot.pause()
        assert isinstance(app.screen, Ask)
        for key in keys:
            app.post_message(key_event(key))
        text = await saved(pilot, path, old)
        assert app.focused is app.screen.editor
    return old.split("\n"), text.split("\n")


async def test_the_keys_after_the_go_to_line_dialog_go_to_the_editor(make_app, workspace: Path) -> None:
    # All typed at once as the dialog is drawn: End must reach the editor, not the closing dialog's field.
    lines, now = await typed_after_go_to_line(make_app, workspace, ["5", "enter", "end", "X", "enter", "Y", "ctrl+s"])
    assert now[4:6] == [lines[4] + "X", "  Y"]


async def test_a_key_that_takes_seconds_to_handle_still_holds_the_next_key_back(
    make_app, workspace: Path, monkeypatch
) -> None:
    # On a loaded machine (other processes, a collection of a big heap) a key's handling can take longer than any
    # fixed wait: Enter, slowed here to 1.5 s as the dialog takes its answer, must be handled before End is given out.
    submitted = Ask.on_input_submitted

    async def slow_submitted(self: Ask, event: Input.Submitted) -> None:
        await asyncio.sleep(1.5)
        submitted(self, event)

    monkeypatch.setattr(Ask, "on_input_submitted", slow_submitted)
    lines, now = await typed_after_go_to_line(make_app, workspace, ["5", "enter", "end", "X", "ctrl+s"])
    assert now[4] == lines[4] + "X"
