"""The keymap of config.yaml: a remap works, or is refused with a message at start; no action is left without a key."""

from __future__ import annotations

import os
from pathlib import Path

from .conftest import settle

CONTRACT = "multidoc_qa.contract.yaml"


def write_config(text: str) -> None:
    config = Path(os.environ["XDG_CONFIG_HOME"]) / "contractstudio" / "config.yaml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text(text)


def warnings(app) -> list[str]:
    return [str(n.message) for n in app._notifications]


async def test_the_documented_example_saves_and_deletes_nothing(make_app, workspace: Path) -> None:
    write_config("keymap:\n  edit.save: ctrl+w\n")
    app = make_app(CONTRACT)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press(*"# kept words")
        await pilot.press("ctrl+w")  # the editor's own ctrl+w deletes the previous word; the remap wins
        await pilot.pause()
        assert app.screen.editor.text.startswith("# kept words")
        assert (workspace / CONTRACT).read_text().startswith("# kept words")
        assert warnings(app) == ["Saved multidoc_qa.contract.yaml"]


async def test_a_list_of_keys_binds_each_of_them(make_app, workspace: Path) -> None:
    write_config("keymap:\n  edit.save: [f11, alt+s]\n")  # F9 and Ctrl+N are the editing help's
    app = make_app(CONTRACT)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press(*"# one")
        await pilot.press("f11")
        await pilot.pause()
        assert (workspace / CONTRACT).read_text().startswith("# one")
        await pilot.press(*" two")
        await pilot.press("alt+s")
        await pilot.pause()
        assert (workspace / CONTRACT).read_text().startswith("# one two")


async def test_bad_entries_are_reported_at_start_and_no_action_loses_its_key(make_app, workspace: Path) -> None:
    write_config("keymap:\n  edit.sav: f12\n  edit.save: ctrl+o\n  edit.next_finding: w\n  app.mode_graph: f99\n")
    app = make_app(CONTRACT)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        shown = warnings(app)
        assert any("unknown binding id 'edit.sav'" in m and "did you mean 'edit.save'" in m for m in shown)
        assert any("edit.save: ctrl+o is already the key of edit.files" in m for m in shown)
        assert any("edit.next_finding: 'w' types text in the editor" in m for m in shown)
        assert any("app.mode_graph: 'f99' is not a key name" in m for m in shown)
        await pilot.press(*"# w")  # w still types
        await pilot.press("ctrl+s")  # the refused remap left ctrl+s to save
        await pilot.pause()
        assert (workspace / CONTRACT).read_text().startswith("# w")
        await pilot.press("ctrl+o")  # and ctrl+o still focuses the file list
        await pilot.pause()
        assert app.screen.query_one("#files").has_focus
        await pilot.press("f3")
        await pilot.pause()
        assert app.current_mode == "graph"


def test_check_keymap_rules() -> None:
    from textual.binding import Binding

    from contractstudio.studio.keymap import check_keymap

    scopes = {
        "Everywhere": [Binding("ctrl+q", "quit", id="app.quit"), Binding("f1,question_mark", "help", id="app.help")],
        "Edit mode": [Binding("ctrl+s", "save", id="edit.save"), Binding("ctrl+o", "files", id="edit.files")],
        "Debug mode": [Binding("s,f10", "step", id="debug.step"), Binding("c,f5", "continue", id="debug.continue")],
    }
    checked = check_keymap({"edit.save": "ctrl+o", "edit.files": "ctrl+e", "debug.step": ["x", "F11"],
                            "debug.continue": "s", "app.help": "ctrl+e"}, scopes)
    # edit.files gives ctrl+o up, so edit.save may take it; debug.step gives s up, so debug.continue may take it
    assert checked.keys == {"edit.save": "ctrl+o", "edit.files": "ctrl+e", "debug.step": "x,f11", "debug.continue": "s"}
    assert checked.priority == {"edit.save", "edit.files"}
    assert checked.problems == ["keymap: app.help: ctrl+e is already the key of edit.files; remap that one too, "
                                "or choose another key; the default (f1,question_mark) is kept"]
    empty = check_keymap({"edit.save": [], "debug.step": 3, "debug.continue": "enter"}, scopes)
    assert empty.keys == {}
    assert [p.split(":")[1].strip() for p in empty.problems] == ["edit.save would have no key; the default (ctrl+s) is kept",
                                                                 "debug.step", "debug.continue"]


async def palette_help(app, pilot, query: str) -> list[str]:
    """The command palette's lines for a search, as a user reads them (title, then help with the keys)."""
    from textual.command import CommandList

    await pilot.press("ctrl+p")
    await pilot.pause()
    await pilot.press(*query)
    await pilot.pause(0.5)
    commands = app.screen.query_one(CommandList)
    return [str(commands.get_option_at_index(i).prompt) for i in range(commands.option_count)]


async def test_the_command_palette_shows_the_keys_a_keymap_binds(make_app) -> None:
    write_config("keymap:\n  edit.next_finding: f7\n  app.mode_graph: [f3, alt+g]\n")
    app = make_app(CONTRACT)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        [line] = [ln for ln in await palette_help(app, pilot, "next finding") if ln.startswith("Next finding")]
        assert "(F7)" in line and "F8" not in line
        await pilot.press("escape")
        await pilot.pause()
        [line] = [ln for ln in await palette_help(app, pilot, "graph mode") if ln.startswith("Graph mode")]
        assert line.endswith("(F3 / Alt+G)")


async def test_without_a_keymap_the_palette_shows_the_default_keys(make_app) -> None:
    app = make_app(CONTRACT)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        [line] = [ln for ln in await palette_help(app, pilot, "next finding") if ln.startswith("Next finding")]
        assert line.endswith("(F8)")


async def test_every_action_of_every_screen_and_the_palette_has_a_key_tmux_can_send_and_f1_marks_the_touchy_ones(make_app) -> None:
    """Issue 19.5: an action whose only key a terminal cannot send (Ctrl+.) cannot be used in tmux at all."""
    from textual.command import CommandPalette

    from contractstudio.studio.keymap import bindings_of, normalize, terminal_sensitive, tmux_name

    app = make_app(CONTRACT)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        scopes = dict(app.binding_scopes())
        scopes["Command palette"] = bindings_of(CommandPalette._merged_bindings)  # its keys, as for a screen
        assert len(scopes["Edit mode"]) > 10 and scopes["Command palette"]  # the enumeration sees the bindings
        unsendable = [f"{scope}: {b.id or b.action} ({b.key})" for scope, bindings in scopes.items() for b in bindings
                      if not any(tmux_name(normalize(k)) for k in b.key.split(","))]
        assert unsendable == []
        touchy = {normalize(k) for bindings in scopes.values() for b in bindings for k in b.key.split(",")
                  if terminal_sensitive(normalize(k))}
        assert {"alt+left", "shift+f8", normalize("ctrl+@")} <= touchy
        await pilot.press("f1")
        await pilot.pause()
        help_text = str(app.screen.query_one("#help-text").render())
        for line in help_text.splitlines():  # each row whose key is terminal-sensitive is marked as such
            key = line.split()[0] if line.startswith("  ") and line.split() else ""
            if key and terminal_sensitive(normalize(key.split(",")[0])):
                assert "~" in line, line
        assert "~ terminal-sensitive" in help_text
