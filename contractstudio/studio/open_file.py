"""The studio's open file: opening (or handing a trace or a dataset to its mode), saving safely, reloading,
changes on disk, export, and quitting without losing edits. A base class of StudioApp (studio/app.py).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from textual.app import App
from textual.screen import Screen

from contractstudio.studio.screens.dialogs import PathPrompt, changed_on_disk, unsaved_changes
from contractstudio.studio.screens.edit import EditScreen
from contractstudio.studio.widgets.findings import Place
from contractstudio.studio.workspace import (
    BOM,
    Buffer,
    ChangedOnDisk,
    ReadOnlyFile,
    Workspace,
    kind_of_path,
    write_atomic,
)


class OpenFile(App[None]):
    """The open file's life in the studio (the state is StudioApp's: `workspace`, `buffer`)."""

    workspace: Workspace
    buffer: Buffer | None
    _disk_warned: bool

    def mode_screens(self, mode: str) -> list[Screen[Any]]:
        """A mode's screens, bottom first (none while the mode has not started)."""
        try:
            return self.get_screen_stack(mode)
        except KeyError:
            return []

    @property
    def edit_screen(self) -> EditScreen:
        stack = self.mode_screens("edit")
        if not stack:
            raise LookupError("edit mode is not started")
        screen = stack[0]
        assert isinstance(screen, EditScreen)
        return screen

    def action_mode(self, mode: str) -> None:
        """Switch to edit, graph, debug or eval mode."""
        if self.current_mode != mode:
            self.switch_mode(mode)

    def is_dirty(self) -> bool:
        try:
            return self.edit_screen.is_dirty()
        except LookupError:
            return False

    def current_text(self) -> str:
        """The editor's text (unsaved edits included)."""
        if self.buffer is None:
            return ""
        try:
            return self.edit_screen.editor.text
        except LookupError:
            return self.buffer.saved_text

    def open_file(self, path: Path) -> None:
        """Open a file in the editor, asking first when the current one has unsaved changes."""
        if self.buffer is not None and path.resolve() == self.buffer.path.resolve():
            self.action_mode("edit")
            self.edit_screen.editor.focus()
            return
        if path.suffix == ".jsonl" and kind_of_path(path) in ("dataset", "results"):
            self.action_mode("eval")
            self.call_after_refresh(self._open_in_mode, path)
            return
        if path.suffix == ".jsonl":
            self.action_mode("debug")
            # The debugger may be composing for the first time: open the trace once it is drawn.
            self.call_after_refresh(self._open_in_mode, path)
            return

        def go(answer: str | None = "discard") -> None:
            if answer == "cancel":
                return
            if answer == "save" and not self._save(force=False):
                return
            buffer = self._load_or_notify(path)
            if buffer is None:
                return
            self.buffer = buffer
            self.workspace.add(path)
            self._disk_warned = False
            self.action_mode("edit")
            self.edit_screen.show_text(buffer.saved_text)
            self.edit_screen.refresh_files()

        if self.is_dirty():
            self.push_screen(unsaved_changes(self.workspace.display(self.buffer.path), "open another file"), go)  # type: ignore[union-attr]
        else:
            go()

    def _open_in_mode(self, path: Path) -> None:
        """A dataset or results file in eval mode, a trace in the debugger (once the mode's screen is drawn)."""
        from contractstudio.studio.screens.debug import DebugScreen
        from contractstudio.studio.screens.eval import EvalScreen

        screen = self.screen
        if isinstance(screen, EvalScreen):
            screen.open_data(path)
        elif isinstance(screen, DebugScreen):
            screen.open_trace(path)

    def _load_or_notify(self, path: Path) -> Buffer | None:
        try:
            return Buffer.load(path)
        except OSError as err:
            self.notify(f"Cannot open {path}: {err.strerror or err}", severity="error")
            return None

    def go_to(self, place: Place) -> None:
        """Jump to a place, opening its file first when it is another one."""
        if self.buffer is not None and place.file and Path(place.file).resolve() != self.buffer.path.resolve():
            target = Path(place.file)
            if target.is_file():
                self.open_file(target)
                if self.buffer.path.resolve() != target.resolve():
                    return  # the user was asked first; the jump happens after they chose
        self.action_mode("edit")
        self.edit_screen.go_to(place)

    def action_save(self) -> None:
        """Save the open file atomically (asks when it changed on disk)."""
        self._save(force=False)

    def _save(self, force: bool) -> bool:
        if self.buffer is None:
            self.notify("No file is open.", severity="warning")
            return False
        text = self.edit_screen.editor.text
        name = self.workspace.display(self.buffer.path)
        try:
            saved = self.buffer.save(text, force=force)
        except ChangedOnDisk:
            self.push_screen(changed_on_disk(name), self._resolve_conflict)
            return False
        except ReadOnlyFile as err:
            self.notify(f"Not saved: {err}", severity="error", timeout=12)
            return False
        except OSError as err:
            self.notify(f"Could not save {name}: {err.strerror or err}. Your text is still in the editor.", severity="error", timeout=10)
            return False
        self._disk_warned = False
        self.notify(f"Saved {name}", timeout=2)
        for note in saved.notes:
            self.notify(note, severity="warning", timeout=8)
        self.edit_screen.update_status()
        self.edit_screen.refresh_files()
        return True

    def _resolve_conflict(self, answer: str | None) -> None:
        if answer == "overwrite":
            self._save(force=True)
        elif answer == "reload":
            self._reload()

    def action_reload(self) -> None:
        """Re-read the open file from disk (asks first when there are unsaved changes)."""
        if self.buffer is None:
            return
        if self.is_dirty():
            self.push_screen(unsaved_changes(self.workspace.display(self.buffer.path), "reload it from disk"),
                             self._after_reload_question)
        else:
            self._reload()

    def _after_reload_question(self, answer: str | None) -> None:
        if answer == "discard":
            self._reload()
        elif answer == "save":
            self._save(False)

    def _reload(self) -> None:
        if self.buffer is None:
            return
        buffer = self._load_or_notify(self.buffer.path)
        if buffer is not None:
            self.buffer = buffer
            self._disk_warned = False
            self.edit_screen.show_text(buffer.saved_text, cursor=self.edit_screen.editor.cursor_location)  # same file: same place
            self.edit_screen.refresh_files()

    def check_disk(self) -> None:
        """Poll the open file: reload a clean buffer, warn (once) about a modified one."""
        if self.buffer is None or not self.buffer.changed_on_disk():
            return
        name = self.workspace.display(self.buffer.path)
        if not self.is_dirty():
            if self.buffer.path.exists():
                self._reload()
                self.notify(f"{name} changed on disk and was reloaded.", timeout=4)
            elif not self._disk_warned:
                self._disk_warned = True
                self.notify(f"{name} was deleted on disk; Ctrl+S writes it again.", severity="warning", timeout=8)
            return
        if not self._disk_warned:
            self._disk_warned = True
            self.notify(f"{name} changed on disk while you have unsaved edits. Saving will ask before overwriting; "
                        "Ctrl+R reloads.", severity="warning", timeout=10)

    def action_export(self) -> None:
        """Write validated YAML (comments and key order kept); refused while the file has errors."""
        if self.buffer is None:
            self.notify("No file is open.", severity="warning")
            return
        path = self.buffer.path
        default = str(path.with_name(path.name.replace(".yaml", ".export.yaml").replace(".yml", ".export.yml")))
        self.push_screen(PathPrompt(f"Export {path.name} as validated YAML to:", default), self._export_to)

    def _export_to(self, target: str | None) -> None:
        if not target or self.buffer is None:
            return
        text = self.current_text()
        from contractstudio.export import export_text

        exported, errors = export_text(text, str(self.buffer.path))
        if exported is None:
            listing = "; ".join(f"{d.line}:{d.column} {d.code} {d.message}" for d in errors[:5])
            more = f" (and {len(errors) - 5} more)" if len(errors) > 5 else ""
            self.notify(f"Export refused: the file has {len(errors)} error(s): {listing}{more}", severity="error", timeout=12)
            return
        out = Path(target)
        if self.buffer is not None and out.resolve() == self.buffer.path.resolve():
            self.notify("Export refused: choose another file than the one you are editing.", severity="error")
            return
        try:
            saved = write_atomic(out, (BOM if self.buffer.bom else "") + exported)
        except OSError as err:
            self.notify(f"Could not write {out}: {err.strerror or err}", severity="error")
            return
        self.notify(f"Exported validated YAML to {out}", timeout=4)
        for note in saved.notes:
            self.notify(note, severity="warning", timeout=8)

    async def action_quit(self) -> None:
        """Quit; asks first when there are unsaved changes."""
        if not self.is_dirty():
            self.exit()
            return

        def answer(choice: str | None) -> None:
            if choice == "discard" or (choice == "save" and self._save(force=False)):
                self.exit()

        self.push_screen(unsaved_changes(self.workspace.display(self.buffer.path), "quit"), answer)  # type: ignore[union-attr]
