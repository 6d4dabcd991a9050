"""Keys sent by a real terminal (tmux) one every 10 ms, as key repeat sends them, all reach the file in order."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from .terminal import Terminal, needs_tmux
from .test_ordered_keys import PlainText, random_keys

pytestmark = [needs_tmux, pytest.mark.slow]  # a real terminal, 200 keys sent one by one

TMUX_NAMES = {"backspace": "BSpace", "delete": "DC", "enter": "Enter", "left": "Left", "right": "Right",
              "up": "Up", "down": "Down"}


def test_two_hundred_keys_at_key_repeat_speed_are_saved_in_order(workspace: Path, tmp_path: Path) -> None:
    start = "first line\nsecond\n\nthe last line of the notes"
    path = workspace / "notes.jsonl"
    path.write_text(start, encoding="utf-8")
    keys = random_keys(7, 200)
    model = PlainText(start)
    for key in keys:
        model.press(key)
    term = Terminal.studio([path, workspace], tmp_path / "config", (120, 40))
    try:
        term.wait("0 errors")  # the file is open and analyzed: the editor has the keys from here on
        for key in keys:
            term.press(TMUX_NAMES.get(key, key))
            time.sleep(0.01)
        term.press("C-s")
        deadline = time.monotonic() + 60
        while path.read_text(encoding="utf-8") == start and time.monotonic() < deadline:
            time.sleep(0.1)
        assert path.read_text(encoding="utf-8") == model.text
    finally:
        term.close()
