"""The real app in a real terminal (tmux): it starts, draws its first screen, and quits on Ctrl+Q."""

from __future__ import annotations

import time
from pathlib import Path

from .terminal import Terminal, needs_tmux

pytestmark = needs_tmux


def test_the_real_app_starts_in_tmux_and_quits(workspace: Path, tmp_path: Path) -> None:
    before = {p: p.read_bytes() for p in workspace.iterdir()}
    done = tmp_path / "exit-code"
    term = Terminal.studio([workspace / "maybe_unset.pipeline.yaml", workspace], tmp_path / "config", (120, 40),
                           then=f"; echo $? > {done}")
    try:
        term.wait("PIP201")  # the broken pipeline's finding, live
        screen = term.wait("1 error ·")  # and the status line that counts it (drawn a moment later under load)
        assert "maybe_unset.pipeline.yaml" in screen
        term.press("F3")
        term.wait("▶ entry")
        term.press("C-q")
        deadline = time.monotonic() + 15
        while not done.exists() and time.monotonic() < deadline:
            time.sleep(0.1)
        assert done.exists(), term.screen()
        assert done.read_text().strip() == "0"
    finally:
        term.close()
    assert {p: p.read_bytes() for p in workspace.iterdir()} == before  # quitting changed no file
