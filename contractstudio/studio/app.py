"""The studio app: four modes (edit, graph, debug, eval) over one workspace, with safe saving.

The app owns the state (workspace, the open buffer, the latest analysis); screens draw it and
workers only post messages (the Harlequin pattern; one worker style, see studio/analyses.py). The
open file's life (open, save, reload, disk, export, quit) is open_file.py's. The first screen draws
before the analyzer, pydantic or litellm are imported: the edit screen's first analysis imports the
analyzer in its worker, and after it a background worker imports litellm, so the first live call in
the debugger does not pay that import.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from textual import on, work
from textual.app import App
from textual.binding import Binding, BindingsMap
from textual.dom import DOMNode
from textual.message import Message
from textual.notifications import SeverityLevel
from textual.screen import Screen
from textual.timer import Timer
from textual.worker import Worker, WorkerState

from contractstudio.findings.diagnostics import Counts
from contractstudio.reading.project import project_for
from contractstudio.safe_text import shown
from contractstudio.studio.analyses import Analysis
from contractstudio.studio.config import StudioConfig, config_folder, load_config
from contractstudio.studio.keymap import CheckedKeymap, bindings_of, check_keymap, give_priority, normalize, terminal_sensitive
from contractstudio.studio.keys import OrderedKeys
from contractstudio.studio.open_file import OpenFile
from contractstudio.studio.palette import StudioCommands, WorkspaceFiles
from contractstudio.studio.screens.base import Studio
from contractstudio.studio.screens.dialogs import ErrorDialog, HelpScreen
from contractstudio.studio.screens.edit import EditScreen
from contractstudio.studio.textual_internals import class_bindings, own_bindings
from contractstudio.studio.themes import bundled_themes_folder, load_themes
from contractstudio.studio.workspace import Buffer, Workspace
from contractstudio.trust import Trust, hook_folder

if TYPE_CHECKING:
    from contractstudio.analysis.check import Context
    from contractstudio.runtime.call_state import CallOptions

DEFAULT_DARK, DEFAULT_LIGHT = "contractstudio-dark", "contractstudio-light"
DISK_POLL_S = 2.0
WORKSPACE_POLL_S = 5.0  # a walk of the workspace folders for new files: cheap, but not every disk poll
# The model client (litellm) loads in the background once the keys have been quiet this long: its import is seconds
# of the interpreter, which every key typed meanwhile would share.
CLIENT_AFTER_QUIET_S = 2.0
# What analyses build is frozen out of the collector's passes (contractstudio/collector.py); once the keys have been quiet
# this long and the heap was frozen this often since, the whole heap is collected once (a closed screen's cycles).
SWEEP_QUIET_S = 5.0
SWEEP_AFTER_FREEZES = 10
# Nor while these run: the sweep holds the interpreter for as long as it walks the heap (0.4-1.5 s on a 5 MB file), and
# the author waits for their findings (and quiet keys are how the keys pause for them).
SWEEP_WAITS_FOR = ("analysis", "symbols")


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
        return bindings_of(class_bindings(owner))  # a class's own and inherited keys

    modals = [b for d in (dialogs.Choice, dialogs.ErrorDialog, dialogs.PathPrompt, dialogs.HelpScreen, dialogs.TextPrompt)
              for b in of(d)]
    from contractstudio.studio.widgets.files import FileList
    from contractstudio.studio.widgets.findings import FindingsPanel

    lists = [b for widget in (FileList, FindingsPanel) for b in of(widget)]  # Enter on a file or a finding
    return {"Everywhere": bindings_of(app_bindings), "Edit mode": of(EditScreen), "Graph mode": of(GraphScreen),
            "Debug mode": of(DebugScreen), "Eval mode": of(EvalScreen), "Lists": lists, "Dialogs": modals}


class WorkspaceCounted(Message):
    """Posted by the worker that analyzes every workspace file: (errors, warnings) per file."""

    def __init__(self, counts: dict[Path, tuple[int, int]]) -> None:
        super().__init__()
        self.counts = counts


class ModelClientLoaded(Message):
    """Posted by the worker that imports the live model's client (litellm) in the background; `error` when it failed."""

    def __init__(self, error: BaseException | None = None) -> None:
        super().__init__()
        self.error = error


class StudioApp(OrderedKeys, OpenFile):
    """ContractStudio: edit with live findings, graph pipelines and agents, step through calls."""

    TITLE = "ContractStudio"
    CSS_PATH = "studio.tcss"
    COMMANDS = App.COMMANDS | {StudioCommands, WorkspaceFiles}
    MODES = {"edit": EditScreen, "graph": _graph_screen, "debug": _debug_screen, "eval": _eval_screen}
    BINDINGS = [
        Binding("ctrl+q", "quit", "Quit", priority=True, id="app.quit"),
        Binding("f1,question_mark", "help", "Help", id="app.help"),
        Binding("f2", "mode('edit')", "Edit", priority=True, id="app.mode_edit"),
        Binding("f3", "mode('graph')", "Graph", priority=True, id="app.mode_graph"),
        Binding("f4", "mode('debug')", "Debug", priority=True, id="app.mode_debug"),
        Binding("f5", "mode('eval')", "Eval", priority=True, id="app.mode_eval"),
        Binding("ctrl+t", "toggle_dark", "Light/dark", show=False, id="app.toggle_theme"),
    ]

    def notify(self, message: str, *, title: str = "", severity: SeverityLevel = "information",
               timeout: float | None = None, markup: bool = True) -> None:
        """Every toast of the studio (screens and widgets call the app's): redacted and escaped, never read as markup."""
        # A file name, a server's message or an error text may hold terminal escapes, a key or markup: one path.
        super().notify(shown(message), title=shown(title), severity=severity, timeout=timeout, markup=False)

    def binding_scopes(self) -> dict[str, list[Binding]]:
        """Every binding of the studio by where it is active (the palette's actions are read from them)."""
        return studio_scopes(own_bindings(self))

    def __init__(self, paths: list[str | Path] | None = None, *, trusted: bool = False,
                 config: StudioConfig | None = None, workspace: Workspace | None = None, dialect: str | None = None,
                 call_options: Callable[[], CallOptions] | None = None, debug_trace: Path | None = None) -> None:
        super().__init__()
        self._debug_trace = debug_trace  # a trace to open in the debugger at start, ready to replay (studio --trace)
        self._call_options = call_options  # how the debugger's calls behave (a test passes its clock); None: the defaults
        self.dialect = dialect  # --dialect: how every file is read (None: by .contractstudio.yaml and shape)
        self.config = config or load_config()
        self.workspace = workspace or Workspace.open(list(paths or []))
        # Per folder, as in every face: --trust trusts the folders it was given; remembered folders stay trusted.
        self.trust = Trust(self.workspace.roots if trusted else ())
        self.buffer: Buffer | None = None
        self.threshold_choice: tuple[Path, str, float, str] | None = None  # Eval mode's sweep: the editor's quick fix
        self.analysis: Analysis | None = None
        self.counts: dict[Path, tuple[int, int]] = {}
        self._again: set[str] = set()  # worker groups to run once more when the one under way ends
        self._startup_notes: list[tuple[str, str]] = list(("warning", p) for p in self.config.problems)
        self._disk_warned = False
        self._client_asked = False  # the background import of litellm was started
        self._client_timer: Timer | None = None  # it waits for the keys to be quiet
        self._client_waits_from: float | None = None
        self._freezes_after_sweep = 0
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
            self.keymap = check_keymap(self.config.keymap, studio_scopes(own_bindings(self)))
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
        self.set_interval(WORKSPACE_POLL_S, self.rescan_workspace)  # files created meanwhile appear in the list
        self.set_interval(1.0, self._sweep_when_quiet)
        self.set_timer(0.5, self.count_workspace)
        if self.buffer is None:  # no first analysis to wait for: the client loads after the first screen
            self.call_after_refresh(self._load_client_when_quiet)
        if self._debug_trace is not None:
            self.workspace.add(self._debug_trace)  # its replay is offered among the workspace's traces
            self.call_later(self._open_in_debugger, self._debug_trace)

    async def _open_in_debugger(self, path: Path) -> None:
        await self.switch_mode("debug")
        self.screen.open_trace(path)  # type: ignore[attr-defined]  # the debug screen: once its contracts are known

    def context_for(self, path: Path | None) -> Context:
        """The analysis context of a file: its own folder's trust, hooks looked up where the file really is, its folder's
        settings (from its project, read again only when they change)."""
        from contractstudio.analysis.check import Context

        settings = project_for(path).settings_of(path.parent) if path is not None else None
        return Context(hooks=hook_folder(path, self.trust), dialect=self.dialect, api_bases=self.config.api_bases,
                       settings=settings)

    def count_workspace(self) -> None:
        """Take every workspace file's counts again: now, or when the count under way ends."""
        self._run_alone("workspace")

    def _run_alone(self, group: str) -> None:
        """Start the worker of `group` unless one is under way; then it starts again once that one ends.

        Never `exclusive`: a thread cannot be stopped midway, so a cancelled count would still finish, perhaps
        after the newer one, and put back older counts (and a cancelled worker fails every wait for the workers).
        """
        if any(w.group == group and w.state in (WorkerState.PENDING, WorkerState.RUNNING) for w in self.workers):
            self._again.add(group)
            return
        self._again.discard(group)
        (self._count_files if group == "workspace" else self._scan_folders)()

    @work(thread=True, group="workspace", exit_on_error=False)
    def _count_files(self) -> None:
        """Errors and warnings of every workspace file, for the file list (the open file's come from live analysis)."""
        from contractstudio.analysis.check import KNOWN_KINDS, check_file

        counts: dict[Path, tuple[int, int]] = {}
        for f in list(self.workspace.files):
            if f.kind not in KNOWN_KINDS:  # traces, datasets and results are JSON Lines, not documents to analyze
                continue
            if self.buffer is not None and f.path == self.buffer.path:
                continue  # its live analysis counts it (and a big file analyzed again here competed with the keys)
            report = check_file(f.path, self.context_for(f.path))
            c = Counts.of(report.diagnostics)
            counts[f.path] = (c.error, c.warning)
        self.post_message(WorkspaceCounted(counts))

    def rescan_workspace(self) -> None:
        """Look for files created or removed in the workspace's folders: now, or when the look under way ends."""
        self._run_alone("workspace-scan")

    @work(thread=True, group="workspace-scan", exit_on_error=False)
    def _scan_folders(self) -> None:
        """The folder walk, in a worker."""
        if self.workspace.scan():
            self.call_from_thread(self.workspace_changed)

    def workspace_changed(self) -> None:
        """Files came or went: the file list shows them, and their counts are taken again."""
        self.files_changed()
        self.count_workspace()

    def files_changed(self) -> None:
        """The file list draws the workspace again, if there is one to draw: background work may end before edit mode
        is started or after quitting closed it (the list draws the app's state when it is mounted)."""
        try:
            screen = self.edit_screen
        except LookupError:
            return
        screen.refresh_files()

    def on_app_focus(self) -> None:
        """Back from another window (where files may have been made): look again at once."""
        self.rescan_workspace()

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        if event.worker.is_finished and event.worker.group in self._again:
            self._run_alone(event.worker.group)
        if event.state == WorkerState.ERROR and event.worker.group == "workspace":
            self.notify(f"Could not check every workspace file: {event.worker.error}", severity="warning", timeout=6)

    @on(WorkspaceCounted)
    def _counted(self, message: WorkspaceCounted) -> None:
        for path, value in message.counts.items():
            if self.buffer is None or path != self.buffer.path:
                self.counts[path] = value
        self.files_changed()

    # Screens ---------------------------------------------------------------------------

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
            touchy = any(terminal_sensitive(normalize(k)) for k in b.key.split(","))
            rows.append((where, self.get_key_display(b) + (" ~" if touchy else ""), b.description, b.id or ""))
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

    # Analysis and workers --------------------------------------------------------------

    def analysis_finished(self, analysis: Analysis) -> None:
        """Called by edit mode with each fresh analysis; other modes read `self.analysis`."""
        self.analysis = analysis
        self._load_client_when_quiet()  # after the first screen and its first analysis, so neither waits for it
        if analysis.path is not None:
            c = Counts.of(analysis.diagnostics)
            if self.counts.get(analysis.path) != (c.error, c.warning):
                self.counts[analysis.path] = (c.error, c.warning)
                self.edit_screen.refresh_files()

    def write_threshold_choice(self) -> None:
        """Open the file of Eval mode's sweep in the editor and apply the quick fix of its chosen threshold."""
        if self.threshold_choice is None:
            return
        self.open_file(self.threshold_choice[0])
        self.call_after_refresh(self.edit_screen.apply_threshold_choice)

    def call_options(self) -> CallOptions:
        """A new call's options in the debugger: waits shown, not slept; the clock and randomness the studio was given."""
        if self._call_options is not None:
            return self._call_options()
        from contractstudio.runtime.call_state import CallOptions  # the runtime loads when the debugger starts a call

        return CallOptions(wait=False)

    def _sweep_when_quiet(self) -> None:
        """Collect the whole heap once the keys have been quiet a while, if enough was frozen since the last time."""
        from contractstudio import collector

        if (collector.freezes - self._freezes_after_sweep < SWEEP_AFTER_FREEZES
                or time.monotonic() - self.last_key_at < SWEEP_QUIET_S
                or any(w.group in SWEEP_WAITS_FOR and not w.is_finished for w in self.workers)):
            return
        took = collector.sweep()
        self._freezes_after_sweep = collector.freezes
        self.log.debug(f"heap swept in {took:.2f} s")

    def _load_client_when_quiet(self) -> None:
        """Load the model client once no key has come for CLIENT_AFTER_QUIET_S: its import shares the interpreter with
        the keys for seconds, so it waits for the author to stop typing (the debugger asks for it at once)."""
        if self._client_asked or self._client_timer is not None:
            return
        if self._client_waits_from is None:
            self._client_waits_from = time.monotonic()  # the first analysis: the author may start typing now
        quiet = time.monotonic() - max(self.last_key_at, self._client_waits_from)
        if quiet >= CLIENT_AFTER_QUIET_S:
            self.load_model_client()
            return

        def again() -> None:
            self._client_timer = None
            self._load_client_when_quiet()

        self._client_timer = self.set_timer(CLIENT_AFTER_QUIET_S - quiet, again)

    def load_model_client(self) -> None:
        """Import the live model's client (litellm) in the background, once: the first live call never waits for it."""
        if not self._client_asked:
            self._client_asked = True
            self.import_model_client()

    @work(thread=True, exclusive=True, group="model-client", exit_on_error=False)
    def import_model_client(self) -> None:
        """litellm's import and set-up (seconds of CPU), off the UI thread."""
        from contractstudio.studio import calls

        try:
            calls.load_client()
        except Exception as err:  # noqa: BLE001 - told to the debugger, which shows it; the studio runs on
            self._client_asked = False  # asked again when a live model is chosen
            self.post_message(ModelClientLoaded(err))
            return
        self.post_message(ModelClientLoaded())

    @on(ModelClientLoaded)
    def _client_loaded(self, message: ModelClientLoaded) -> None:
        stack = self.mode_screens("debug")
        if not stack:
            return  # the debugger asks `calls.client_ready()` when it opens
        from contractstudio.studio.screens.debug import DebugScreen

        debuggers = [s for s in stack if isinstance(s, DebugScreen)]
        if message.error is not None and debuggers and debuggers[0].is_current:
            self.notify(f"Could not load the model client: {message.error}", severity="error", timeout=8)
        for debugger in debuggers:
            debugger.client_failed() if message.error is not None else debugger.client_loaded()

    def worker_failed(self, title: str, error: BaseException | None) -> None:
        """Show a failed worker as a modal (what failed and why), never as a traceback."""
        reason = f"{type(error).__name__}: {error}" if error is not None else "unknown error"
        self.push_screen(ErrorDialog(title, f"{reason}\n\nThe studio keeps running; your text is unchanged."))

    def exception_in_handler(self, error: Exception) -> None:
        """A bug in a handler: in a real terminal, a modal and a traceback file, never a crash that loses the text.

        Headless runs (tests) keep Textual's behaviour, so that a bug fails its test.
        """
        if self.is_headless or not self.is_running or not isinstance(error, Exception):
            super().exception_in_handler(error)
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
            super().exception_in_handler(error)

def as_studio(app: StudioApp) -> Studio:
    """The app as the screens see it (mypy checks here that StudioApp has everything `Studio` names)."""
    return app
