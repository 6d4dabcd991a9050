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


def footer(screen: str) -> str:
    return screen.rstrip("\n").splitlines()[-1]


def status_line(screen: str) -> str:
    return screen.rstrip("\n").splitlines()[-2]


def dialog(term: Terminal, key: str, title: str) -> None:
    """A key that opens a dialog: it shows, and one Escape closes it."""
    term.press(key)
    term.wait_dialog(title)
    term.press("Escape")
    term.wait(lambda s: title not in s, what=f"{title!r} closed by Escape")


# binding id -> what pressing its key shows (a dialog's title; a text; a check of the screen), in the walk's order.
# Keys whose effect needs the state an earlier key left are walked after it; each check is one a user reads.
EDIT_WALK: list[tuple[str, str]] = [
    ("edit.files", "⏎ Open"),  # the file list has the focus: its Enter in the footer
    ("edit.editor", "^s Save"),
    ("edit.findings", "⏎ Jump"),
    ("edit.editor", "^s Save"),
    ("edit.next_finding", "PIP201"),
    ("edit.go_to_line", "Go to line (LINE or LINE:COLUMN)"),
    ("edit.find", "Enter to accept, Escape to cancel."),  # the Find dialog (its title is a word of the screen)
    ("edit.new_file", "New file (NAME.contract.yaml"),
    ("edit.export", "as validated YAML to:"),
    ("app.help", "app.mode_graph"),  # the keys with their binding ids
]
DIALOG_IDS = {"edit.go_to_line", "edit.find", "edit.new_file", "edit.export", "app.help"}


@pytest.mark.parametrize("size", [(80, 24), (120, 40), (200, 60)], ids=lambda s: f"{s[0]}x{s[1]}")
def test_a_walk_through_the_documented_keys_of_each_mode(workspace: Path, tmp_path: Path, size: tuple[int, int]) -> None:
    """Issue 35's "done when": the keys the docs and the footer name do what they say at every size, sent by tmux."""
    pipeline = workspace / "maybe_unset.pipeline.yaml"
    term = Terminal.studio([pipeline, workspace], tmp_path / "config", size)
    try:
        term.wait("1 error")
        for binding_id, shows in EDIT_WALK:
            key = sendable(binding_id)[0]
            if binding_id in DIALOG_IDS:
                dialog(term, key, shows)
            else:
                term.press(key)
                term.wait(lambda s, shows=shows, b=binding_id: shows in (footer(s) if b.startswith("edit.") and "Save" in shows
                                                                             or "⏎" in shows else s), what=f"{binding_id}: {shows}")
        [toggle] = sendable("edit.toggle_files")[:1]
        term.press(toggle)
        term.wait(lambda s: not file_list_shown(s), what="edit.toggle_files hides the list")
        term.press(toggle)
        term.wait(file_list_shown, what="edit.toggle_files shows the list")

        term.press(sendable("app.mode_graph")[0])
        term.wait("▶ entry")
        term.press(sendable("graph.simulate")[0], *"[DIRECT:] hi", "Enter")
        term.wait("simulated", what="graph.simulate: the simulated path")
        term.press(sendable("graph.clear")[0])
        term.wait(lambda s: "simulated" not in s, what="graph.clear: the path cleared")
        dialog(term, sendable("graph.export_mermaid")[0], "Export the graph as mermaid")
        dialog(term, sendable("graph.export_dot")[0], "Export the graph as dot")

        term.press(sendable("app.mode_debug")[0])
        term.wait("breakpoints: post")
        term.press(sendable("debug.step")[0])
        term.wait("paused at #1", what="debug.step: paused at the first event")
        term.press(sendable("debug.continue")[0])
        term.wait("post/stage_start", what="debug.continue: on to the breakpoint on post")
        term.press(sendable("debug.run")[0])
        term.wait(lambda s: "success" in status_line(s) or "failed" in status_line(s), what="debug.run: the call's end")
        dialog(term, sendable("debug.save_trace")[0], "Save the trace")
        dialog(term, sendable("debug.open_trace")[0], "Open a trace")
        term.press(sendable("debug.restart")[0])
        term.wait(lambda s: "ready" in status_line(s), what="debug.restart: ready again")
        term.press(sendable("debug.breakpoint")[0])  # the outline's first row: input
        term.wait("breakpoints: input, post", what="debug.breakpoint on the selected stage")

        term.press(sendable("app.mode_eval")[0])
        term.wait("Rows")
        term.press(sendable("app.mode_edit")[0])
        term.wait(lambda s: "^s Save" in footer(s))
        term.press(sendable("app.quit")[0])
        term.wait(lambda s: "Rows" not in s and "^s Save" not in s, what="app.quit: the studio gone")
    finally:
        term.close()
