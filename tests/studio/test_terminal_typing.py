"""Keys sent by a real terminal (tmux) one every 10 ms, as key repeat sends them, all reach the file in order."""

from __future__ import annotations

import sys
import time
import uuid
from pathlib import Path

import pytest

from .test_ordered_keys import PlainText, random_keys
from .test_terminal import pytestmark as needs_tmux
from .test_terminal import tmux, wait_for

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
    session = f"cs-typing-{uuid.uuid4().hex[:8]}"
    command = f"XDG_CONFIG_HOME={tmp_path / 'config'} {sys.executable} -m contractstudio {path} {workspace}"
    for _attempt in range(3):  # a fresh tmux server can exit while it starts ("server exited unexpectedly")
        started = tmux("new-session", "-d", "-s", session, "-x", "120", "-y", "40", command)
        if started.returncode == 0:
            break
        time.sleep(0.5)
    assert started.returncode == 0, started.stderr
    try:
        wait_for(session, "0 errors")  # the file is open and analyzed: the editor has the keys from here on
        for key in keys:
            tmux("send-keys", "-t", session, TMUX_NAMES.get(key, key), check=True)
            time.sleep(0.01)
        tmux("send-keys", "-t", session, "C-s", check=True)
        deadline = time.monotonic() + 60
        while path.read_text(encoding="utf-8") == start and time.monotonic() < deadline:
            time.sleep(0.1)
        assert path.read_text(encoding="utf-8") == model.text
    finally:
        tmux("kill-server")
