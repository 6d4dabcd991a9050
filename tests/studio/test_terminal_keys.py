"""Every documented key does what it says in a real terminal (tmux), at 80x24, 120x40 and 200x60 (issue 35.2).

The keys sent are the bindings' own (tests/studio/terminal.py), and docs/studio.md's key tables must name exactly those
keys: a key that a terminal sends as something else (Alt+B arrives as Ctrl+Left, word left) or that the editor takes
as text (Alt+N typed `n`) fails here."""

from __future__ import annotations

from pathlib import Path

import pytest

from .terminal import Terminal, sendable
from .test_terminal import pytestmark as needs_tmux

pytestmark = [needs_tmux, pytest.mark.slow]

PIPELINE = "rag_router.pipeline.yaml"


def file_list_shown(screen: str) -> bool:
    return "Workspace" in screen.splitlines()[0]


def test_the_file_list_and_new_file_keys_reach_the_studio_from_the_editor_and_the_list(workspace: Path, tmp_path: Path) -> None:
    before = (workspace / PIPELINE).read_text()
    term = Terminal.studio([workspace / PIPELINE, workspace], tmp_path / "config", (120, 40))
    try:
        term.wait("0 errors")
        [toggle] = sendable("edit.toggle_files")[:1]
        term.press(toggle)
        term.wait(lambda s: not file_list_shown(s), what="the file list hidden (from the editor)")
        term.press(toggle)
        term.wait(file_list_shown, what="the file list shown again")
        term.press(*sendable("edit.files")[:1])  # the list has the focus: the same key hides it
        term.wait("⏎ Open")
        term.press(toggle)
        term.wait(lambda s: not file_list_shown(s), what="the file list hidden (from the list)")
        term.press(toggle)
        term.wait(file_list_shown)
        term.press(*sendable("edit.editor")[:1])
        term.press(*sendable("edit.new_file")[:1])
        term.wait_dialog("New file (NAME.contract.yaml")
        term.press("Escape")
        term.wait(lambda s: "New file (NAME" not in s, what="the dialog closed by one Escape")
        assert "modified" not in term.screen()  # no key was typed into the file
    finally:
        term.close()
    assert (workspace / PIPELINE).read_text() == before
