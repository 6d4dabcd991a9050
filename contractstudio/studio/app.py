"""The studio app: four modes (edit, graph, debug, eval) over one workspace, with safe saving.

The app owns the state (workspace, the open buffer, the latest analysis); screens draw it and
workers only post messages (the Harlequin pattern). Nothing here imports the runtime: debug mode
does, lazily, the first time it is opened, so the first screen appears before litellm is imported.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from textual.app import App
from textual.binding import Binding, BindingsMap
from textual.dom import DOMNode
from textual.screen import Screen
from textual.worker import Worker, WorkerState

from contractstudio.findings.diagnostics import Counts
from contractstudio.studio.config import StudioConfig, config_folder, load_config
from contractstudio.studio.keymap import CheckedKeymap, bindings_of, check_keymap, give_priority
from contractstudio.studio.palette import StudioCommands
from contractstudio.studio.screens.dialogs import ErrorDialog, HelpScreen, PathPrompt, changed_on_disk, unsaved_changes
from contractstudio.studio.screens.edit import Analysis, EditScreen
from contractstudio.studio.themes import bundled_themes_folder, load_themes
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
from contractstudio.trust import Trust, folder_of

DEFAULT_DARK, DEFAULT_LIGHT = "contractstudio-dark", "contractstudio-light"
DISK_POLL_S = 2.0


def _graph_screen() -> Screen[None]:
    from contractstudio.studio.screens.graph import GraphScreen

    return GraphScreen()


def _debug_screen() -> Screen[None]:
    from contractstudio.studio.screens.debug import DebugScreen

    return DebugScreen()


def _eval_screen() -> Screen[None]:
    from contractstudio.studio.screens.eval import EvalScreen

    return EvalScreen()


def studio_scopes(app_bindings: BindingsMap) -> dict[str, list[Binding]]:
    """Every binding of the studio by where it is active (the mode screens are imported only for a keymap)."""
    from contractstudio.studio.screens import dialogs
    from contractstudio.studio.screens.debug import DebugScreen
    from contractstudio.studio.screens.eval import EvalScreen
    from contractstudio.studio.screens.graph import GraphScreen

    def of(owner: type[DOMNode]) -> list[Binding]:
        return bindings_of(owner._merged_bindings or BindingsMap())  # noqa: SLF001 - a class's own and inherited keys

    modals = [b for d in (dialogs.Choice, dialogs.ErrorDialog, dialogs.PathPrompt, dialogs.HelpScreen, dialogs.TextPrompt)
              for b in of(d)]
    return {"Everywhere": bindings_of(app_bindings), "Edit mode": of(EditScreen), "Graph mode": of(GraphScreen),
            "Debug mode": of(DebugScreen), "Eval mode": of(EvalScreen), "Dialogs": modals}


class StudioApp(App[None]):
    """ContractStudio: edit with live findings, graph pipelines and agents, step through calls."""

    TITLE = "ContractStudio"
    CSS_PATH = "studio.tcss"
    COMMANDS = App.COMMANDS | {StudioCommands}
    MODES = {"edit": EditScreen, "graph": _graph_screen, "debug": _debug_screen, "eval": _eval_screen}
    BINDINGS = [
        Binding("ctrl+q", "quit", "Quit", priority=True, id="app.quit"),
        Binding("f1,question_mark", "help", "Help", id="app.help"),
        Binding("f2", "mode('edit')", "Edit", show=False, priority=True, id="app.mode_edit"),
        Binding("f3", "mode('graph')", "Graph", priority=True, id="app.mode_graph"),
        Binding("f4", "mode('debug')", "Debug", priority=True, id="app.mode_debug"),
        Binding("f5", "mode('eval')", "Eval", show=False, priority=True, id="app.mode_eval"),
        Binding("ctrl+t", "toggle_dark", "Light/dark", show=False, id="app.toggle_theme"),
    ]

    def __init__(self, paths: list[str | Path] | None = None, *, trusted: bool = False,
                 config: StudioConfig | None = None, workspace: Workspace | None = None, dialect: str | None = None) -> None:
        super().__init__()
        self.dialect = dialect  # --dialect: how every file is read (None: by .contractstudio.yaml and shape)
        self.config = config or load_config()
        self.workspace = workspace or Workspace.open(list(paths or []))
        # Per folder, as in every face: --trust trusts the folders it was given; remembered folders stay trusted.
        self.trust = Trust(self.workspace.roots if trusted else ())
        self.buffer: Buffer | None = None
        self.analysis: Analysis | None = None
        self.counts: dict[Path, tuple[int, int]] = {}
        self._startup_notes: list[tuple[str, str]] = list(("warning", p) for p in self.config.problems)
        self._disk_warned = False
        themes, problems = load_themes([bundled_themes_folder(), self.config.themes_folder])
        for theme in themes:
            self.register_theme(theme)
        self._startup_notes += [("warning", f"{p}; skipped") for p in problems]
        wanted = self.config.theme or DEFAULT_DARK
        if wanted in self.available_themes:
            self.theme = wanted
        elif wanted != DEFAULT_DARK:
            self._startup_notes.append(("warning", f"theme {wanted!r} is not known; using the default"))
            if DEFAULT_DARK in self.available_themes:
                self.theme = DEFAULT_DARK
        self.keymap = CheckedKeymap()
        if self.config.keymap:
            self.keymap = check_keymap(self.config.keymap, studio_scopes(self._bindings))
            self._startup_notes += [("warning", p) for p in self.keymap.problems]
            give_priority(self, self.keymap.priority)
        first = self._first_file(paths or [])
        if first is not None:
            self.buffer = self._load(first)

    def _first_file(self, paths: list[str | Path]) -> Path | None:
        for p in paths:
            if Path(p).is_file():
                return Path(p)
        yaml_files = [f for f in self.workspace.files if f.kind != "trace"]
        return yaml_files[0].path if yaml_files else None

    def _load(self, path: Path) -> Buffer | None:
        try:
            return Buffer.load(path)
        except OSError as err:
            self._startup_notes.append(("error", f"cannot open {path}: {err.strerror or err}"))
            return None

    def on_mount(self) -> None:
        if self.keymap.keys:
            self.set_keymap(self.keymap.keys)
        self.switch_mode("edit")
        for severity, note in self._startup_notes:
            self.notify(note, severity=severity, timeout=8)  # type: ignore[arg-type]
        self.set_interval(DISK_POLL_S, self.check_disk)
        self.set_timer(0.5, lambda: self.run_worker(self._count_workspace, thread=True, group="workspace", exit_on_error=False))

    def context_for(self, path: Path | None) -> Any:
        """The analysis context of a file: its own folder's trust, hooks looked up where the file really is."""
        from contractstudio.analysis.check import Context

        return Context(trusted=self.trust.allows(path), root=folder_of(path) if path is not None else None, dialect=self.dialect)

    def _count_workspace(self) -> None:
        # Counts for the file list; the open file's counts come from live analysis instead.
        from contractstudio.analysis.check import KNOWN_KINDS, check_file

        counts: dict[Path, tuple[int, int]] = {}
        for f in list(self.workspace.files):
            if f.kind not in KNOWN_KINDS:  # traces, datasets and results are JSON Lines, not documents to analyze
                continue
            report = check_file(f.path, self.context_for(f.path))
            c = Counts.of(report.diagnostics)
            counts[f.path] = (c.error, c.warning)
        self.call_from_thread(self._counted, counts)

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        if event.state == WorkerState.ERROR and event.worker.group == "workspace":
            self.notify(f"Could not check every workspace file: {event.worker.error}", severity="warning", timeout=6)

    def _counted(self, counts: dict[Path, tuple[int, int]]) -> None:
        for path, value in counts.items():
            if self.buffer is None or path != self.buffer.path:
                self.counts[path] = value
        self.edit_screen.refresh_files()

    # Screens ---------------------------------------------------------------------------

    @property
    def edit_screen(self) -> EditScreen:
        stack = self._screen_stacks.get("edit") or []
        if not stack:
            raise LookupError("edit mode is not started")
        return stack[0]  # type: ignore[return-value]

    def action_mode(self, mode: str) -> None:
        """Switch to edit, graph, debug or eval mode."""
        if self.current_mode != mode:
            self.switch_mode(mode)

    def action_help(self) -> None:
        """List every key of the app and of the current mode, with binding ids for the keymap."""
        if isinstance(self.screen, HelpScreen):
            return
        rows: list[tuple[str, str, str, str]] = []
        mode = f"{self.current_mode.capitalize()} mode"
        for _key, active in self.screen.active_bindings.items():
            b = active.binding
            if b.system or not b.description or not b.id:  # ours all have ids; the rest is the editor's own keys
                continue
            where = "Everywhere" if active.node is self else mode
            rows.append((where, self.get_key_display(b), b.description, b.id or ""))
        rows.append(("Everywhere", "ctrl+p", "Command palette: every action", ""))
        if self.current_mode == "edit":
            rows += [(mode, "ctrl+z / ctrl+y", "Undo / redo", ""), (mode, "ctrl+x/c/v", "Cut / copy / paste", ""),
                     (mode, "enter", "On a finding: jump to it", "")]
        rows.sort(key=lambda r: r[0] != "Everywhere")  # stable: keeps each scope's own order
        self.push_screen(HelpScreen(rows, str(config_folder() / "config.yaml")))

    def action_toggle_dark(self) -> None:
        """Switch between the dark and light studio themes."""
        dark = self.current_theme.dark
        target = DEFAULT_LIGHT if dark else DEFAULT_DARK
        if target in self.available_themes:
            self.theme = target

    # Files -----------------------------------------------------------------------------

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
            self.call_after_refresh(lambda: self.screen.open_data(path))  # type: ignore[attr-defined]
            return
        if path.suffix == ".jsonl":
            self.action_mode("debug")
            # The debugger may be composing for the first time: open the trace once it is drawn.
            self.call_after_refresh(lambda: self.screen.open_trace(path))  # type: ignore[attr-defined]
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
        from contractstudio.export import export_text  # ruamel, which export checks with, loads only here

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

    # Analysis and workers --------------------------------------------------------------

    def analysis_finished(self, analysis: Analysis) -> None:
        """Called by edit mode with each fresh analysis; other modes read `self.analysis`."""
        self.analysis = analysis
        if analysis.path is not None:
            c = Counts.of(analysis.diagnostics)
            if self.counts.get(analysis.path) != (c.error, c.warning):
                self.counts[analysis.path] = (c.error, c.warning)
                self.edit_screen.refresh_files()

    def worker_failed(self, title: str, error: BaseException | None) -> None:
        """Show a failed worker as a modal (what failed and why), never as a traceback."""
        reason = f"{type(error).__name__}: {error}" if error is not None else "unknown error"
        self.push_screen(ErrorDialog(title, f"{reason}\n\nThe studio keeps running; your text is unchanged."))

    def _handle_exception(self, error: Exception) -> None:
        """A bug in a handler: in a real terminal, a modal and a traceback file, never a crash that loses the text.

        Headless runs (tests) keep Textual's behaviour, so that a bug fails its test.
        """
        if self.is_headless or not self.is_running or not isinstance(error, Exception):
            super()._handle_exception(error)
            return
        from contractstudio.runtime.crash import (
            crash_report,  # redacted: a crash report is meant to be pasted into an issue
        )

        path, text = crash_report(error, "contractstudio-studio-crash-")
        try:
            last = text.strip().splitlines()[-1]
            self.push_screen(ErrorDialog("Internal error", f"{last}\n\nThe traceback was written to {path}; "
                                         "please report it. Save your work (Ctrl+S) if you can."))
        except Exception:  # noqa: BLE001 - the modal itself failed: fall back to Textual's handling
            super()._handle_exception(error)

    # Quitting --------------------------------------------------------------------------

    async def action_quit(self) -> None:
        """Quit; asks first when there are unsaved changes."""
        if not self.is_dirty():
            self.exit()
            return

        def answer(choice: str | None) -> None:
            if choice == "discard" or (choice == "save" and self._save(force=False)):
                self.exit()

        self.push_screen(unsaved_changes(self.workspace.display(self.buffer.path), "quit"), answer)  # type: ignore[union-attr]
