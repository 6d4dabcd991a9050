"""Edit mode: file list, YAML editor with live findings, diagnostics panel, status line."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from rich.markup import escape
from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.timer import Timer
from textual.widgets import Static
from textual.worker import Worker, WorkerState

from contractstudio.editing.live import DEBOUNCE_S, LiveDocument
from contractstudio.findings.diagnostics import Counts, Diagnostic
from contractstudio.studio import give_way
from contractstudio.studio.analyses import Analysis, AnalysisDone, SymbolsDone
from contractstudio.studio.keymap import give_priority
from contractstudio.studio.screens.assist import ASSIST_BINDINGS, EditingAssist
from contractstudio.studio.screens.base import StudioScreen
from contractstudio.studio.stoppable import Stoppable
from contractstudio.studio.widgets.completion import CompletionMenu
from contractstudio.studio.widgets.editor import MAX_HIGHLIGHT_INDENT, ContractEditor
from contractstudio.studio.widgets.files import FileList, elide_middle
from contractstudio.studio.widgets.findings import FindingsPanel, Place
from contractstudio.studio.widgets.footer import StudioFooter
from contractstudio.studio.workspace import kind_of_path, kind_of_text

if TYPE_CHECKING:
    from contractstudio.analysis.check import FileReport


# A whole collection of a big text's symbols starts once the keys have been quiet this long (LiveDocument.symbols_are_long).
LONG_SYMBOLS_QUIET_S = 1.0


def counted(n: int, noun: str) -> str:
    """`1 error`, `2 errors`: what the status line says."""
    return f"{n} {noun}{'' if n == 1 else 's'}"


class EditScreen(EditingAssist, StudioScreen):
    """The editor screen (mode `edit`)."""

    BINDINGS = [
        Binding("ctrl+s", "app.save", "Save", id="edit.save"),
        Binding("f6", "app.export", "Export", show=False, priority=True, id="edit.export"),
        Binding("f8", "next_finding", "Next", id="edit.next_finding"),
        Binding("shift+f8", "previous_finding", "Prev finding", show=False, id="edit.previous_finding"),
        Binding("ctrl+o", "focus_files", "Files", show=False, id="edit.files"),
        Binding("ctrl+g", "focus_findings", "Findings", show=False, id="edit.findings"),
        Binding("escape", "focus_editor", "Editor", show=False, id="edit.editor"),
        Binding("ctrl+r", "app.reload", "Reload", show=False, id="edit.reload"),
        # Not Ctrl+B (tmux's prefix) nor Alt+B (a terminal sends ESC b, read as Ctrl+Left: word left in the editor)
        Binding("ctrl+backslash", "toggle_files", "Toggle files", show=False, id="edit.toggle_files"),
        *ASSIST_BINDINGS,
    ]

    def __init__(self) -> None:
        super().__init__(id="edit-screen")
        # The file's versions, analyses, completion facts and waiting action (the language server drives the same
        # class); this screen is its scheduler: a debounce timer and an analysis worker.
        self.live = LiveDocument()
        self.analysis: Analysis | None = None
        self._json_lines_kinds: dict[Path, str] = {}
        self._saved_kind: tuple[str, str | None] = ("", None)  # (saved text, its kind): read once per saved text
        self._debounce: Timer | None = None
        self._analyzing = False  # an analysis worker is running (one at a time: see start_analysis)
        self._analyze_again = False  # asked for while one ran
        self.running_analysis = Stoppable()  # an edit stops the analysis of the text before it (studio/stoppable.py)
        self.running_symbols = Stoppable()  # and the collection of its symbols, which comes after its findings
        self._collecting = False  # a symbols worker is running
        self._symbols_timer: Timer | None = None  # collects them again once the keys that stopped them pause
        self._not_on_keys: Callable[[], None] = lambda: None  # stops listening for keys (on_mount sets it)
        self._loading = False
        self._last_failure = ""
        self._status_line = ""
        self._detail_timer: Timer | None = None
        self._listed_dirty = False  # whether the file list shows the open file's `*`
        self._opened = ("", "")  # (the buffer's text, the editor's text) as the file was shown
        self._analysed_as: tuple[str | None, Counts] = (None, Counts())  # the analysis's kinds and counts
        self.init_assist()

    def compose(self) -> ComposeResult:
        with Horizontal(id="edit-main"):
            yield FileList(id="files")
            with Vertical(id="edit-right"):
                buffer = self.studio.buffer  # the first file's text from the start: its document is built once
                yield ContractEditor(buffer.saved_text if buffer is not None and buffer.unreadable is None else "", id="editor")
                yield Static("", id="detail")
                yield FindingsPanel(id="findings")
        yield Static("", id="status")
        yield CompletionMenu()
        yield StudioFooter()

    @property
    def editor(self) -> ContractEditor:
        return self.query_one(ContractEditor)

    @property
    def findings(self) -> FindingsPanel:
        return self.query_one(FindingsPanel)

    def on_mount(self) -> None:
        give_priority(self, self.studio.keymap.priority)  # a remapped key beats the editor's own use of it
        self.editor.key_hook = self.popup_key
        # A key stops the running analysis as it arrives, before its own handling (a 5 MB document's highlighting,
        # a second of the interpreter) would share the interpreter with it; it starts again once the keys pause.
        self._not_on_keys = give_way.on_each_key(self._key_arrived)
        self.findings.border_title = "Findings"
        self.query_one(FileList).border_title = "Workspace"
        self.refresh_files()
        app = self.studio
        if app.buffer is not None:
            self.show_text(app.buffer.saved_text)
        else:
            self.editor.disabled = True
            self.update_status()

    def _stops_analysis(self) -> bool:
        """Whether a key stops the running analysis: not before the file's first analysis is shown. Stopped, it kept
        nothing to build on (a one-document file's first analysis keeps nothing; in the 655-document file the one
        after the stops cost as much CPU as a first one), so the keys after opening a 5 MB file stopped it again and
        again and the findings came 8-13 s after the last key (issue 35.1, bench_typing --trace); the edits' analyses,
        per entry or per document, come after it."""
        return self.live.report is not None

    def _key_arrived(self) -> None:
        if self.running_symbols.stop():  # any key: a rename's or a move's too; they go on once the keys pause
            self._symbols_later()
        if self._stops_analysis() and self.running_analysis.stop():
            self._analyze_again = True
            if self._debounce is not None:
                self._debounce.stop()
            self._debounce = self.set_timer(DEBOUNCE_S, self.start_analysis)

    def on_unmount(self) -> None:
        self._not_on_keys()
        self.live.close()  # quitting never waits for a big file's analysis: it stops at its next document
        self.running_analysis.stop()  # or at once, wherever it is (studio/stoppable.py)
        self.running_symbols.stop()

    def on_resize(self) -> None:
        self.set_class(self.size.width < 100, "narrow")
        if self.studio.buffer is not None:
            self.update_status(pending=self._debounce is not None)  # the name gets the new width's room

    # Loading and analysis -----------------------------------------------------------

    def show_text(self, text: str, cursor: tuple[int, int] | None = None) -> None:
        """Put a file's text in the editor (no undo history across files) and analyze it now.

        `cursor` keeps a place (a reload of the same file), clamped to the new text.
        """
        self.editor.disabled = False
        buffer = self.studio.buffer
        self.editor.read_only = buffer is not None and buffer.unreadable is not None  # bytes it could not decode stay as they are
        if self.editor.text != text or self.editor.history.undo_stack:
            self._loading = True  # load_text posts Changed, which is no edit
            self.editor.load_text(text)
        # The editor's own form of the text: it takes \x0c, \x1c, \x85 … as line breaks, which opening is no edit of.
        self._opened = (text, self.editor.text)
        if cursor is None:
            self.editor.move_cursor((0, 0))
            self.editor.scroll_home(animate=False)
        else:
            row = min(cursor[0], self.editor.document.line_count - 1)
            self.editor.move_cursor((row, min(cursor[1], len(self.editor.document[row]))), center=True)
        self.live.load(text, str(buffer.path) if buffer is not None else "")  # no analysis or waiter of the previous text
        self.analysis = None
        self._analysed_as = (None, Counts())
        self.back_stack = []
        self.menu.hide()
        self.editor.set_findings([])
        self.findings.show([])
        # After the paint: the first analysis imports every rule module, which would hold up the first screen.
        self.call_after_refresh(self.start_analysis)
        self.update_status(pending=True)
        self.editor.focus()

    @on(ContractEditor.Changed)
    def _edited(self, event: ContractEditor.Changed) -> None:
        if self._loading:  # load_text posts Changed too; it is not an edit
            self._loading = False
            return
        self.live.edit()  # the text is read from the editor when it is analyzed, not per keystroke
        if self._stops_analysis():  # of a text that is no more: it would share the interpreter with the keys for nothing
            self.running_analysis.stop()
        self.running_symbols.stop()
        if self._debounce is not None:
            self._debounce.stop()
        self._debounce = self.set_timer(DEBOUNCE_S, self.start_analysis)
        self.update_status(pending=True)
        self.typed(self.editor.take_typed())

    def start_analysis(self) -> None:
        """Analyze the current text in a worker; a newer edit makes this result stale.

        One analysis at a time: two analyses of a big file side by side would share the interpreter with each other
        and with the keys. An edit stops the running one (`_edited`); a request while one runs (or stops) is kept,
        and the text as it is when that one ends is analyzed then (every edit in between is superseded).
        """
        self._debounce = None
        if self._analyzing:
            self._analyze_again = True
            return
        self._analyzing, self._analyze_again = True, False
        buffer = self.studio.buffer
        path = buffer.path if buffer else None
        self.analyze(path, self.editor.text_snapshot(), self.live.version, buffer.unreadable if buffer else None)

    # Not exclusive: Textual's cancel leaves a thread running (`running_analysis` stops it). The description is fixed: Textual's default
    # is the repr of every argument, the whole text on every analysis.
    @work(thread=True, group="analysis", exit_on_error=False, description="analysis of the editor's text")
    def analyze(self, path: Path | None, snapshot: Callable[[], str], generation: int, unreadable: Diagnostic | None) -> None:
        """The analyzer's findings for one version of the text (`snapshot` joins it, here: not on the screen's thread),
        posted as AnalysisDone (the analyzer loads here)."""
        from contractstudio.analysis.check import FileReport

        text = snapshot()
        name = str(path) if path else "<text>"
        # Bytes that are not UTF-8 get the finding `check` gives them, and no analysis of a guessed text.
        if unreadable is not None:
            done = Analysis(path, text, FileReport(name, "", None, [], [unreadable]), generation)
        elif path is not None and path.suffix == ".jsonl":  # traces, datasets, results: not YAML documents
            done = Analysis(path, text, FileReport(name, text, None, [], []), generation)
        else:
            from contractstudio.analysis.incremental import AnalysisStopped

            context = self.studio.context_for(path)
            try:
                report = self.running_analysis.run(lambda: self.live.analyze(text, context, name, symbols=False))
            except AnalysisStopped:
                return  # the file or the studio was closed meanwhile: nobody waits for it
            if report is None:
                return  # stopped: the text was edited meanwhile, and its analysis comes after this one
            done = Analysis(path, text, report, generation)
        self.post_message(AnalysisDone(done))

    @on(AnalysisDone)
    def _analysis_done(self, message: AnalysisDone) -> None:
        analysis = message.analysis
        if not self.live.accept(analysis.generation, analysis.report):
            return  # the text changed since: a newer analysis is on its way
        self.analysis = analysis
        # What the status line says of it, worked out once (in the worker): the line is redrawn on every key and move.
        self._analysed_as = analysis.status
        self.show_detail()
        self.editor.set_findings(analysis.diagnostics)
        self.findings.show(analysis.diagnostics)
        self.studio.analysis_finished(analysis)
        self.update_status()
        self.live.wake()  # a quick fix asked for before it was current (a rename or definition waits for the symbols)
        self.start_symbols()

    def _symbols_later(self, seconds: float = DEBOUNCE_S) -> None:
        if self._symbols_timer is not None:
            self._symbols_timer.stop()
        self._symbols_timer = self.set_timer(seconds, self.start_symbols)

    def start_symbols(self) -> None:
        """Collect the current analysis's symbols in a worker (one at a time), unless they are already."""
        self._symbols_timer = None
        report = self.live.current
        if report is None or self.live.named is report:
            return  # no analysis of this text yet (its own comes after it), or done
        if self._collecting:
            self._symbols_later()  # a stopped one is still ending
            return
        quiet = time.monotonic() - self.studio.last_key_at
        if quiet < LONG_SYMBOLS_QUIET_S and self.live.symbols_are_long(report):
            self._symbols_later(LONG_SYMBOLS_QUIET_S - quiet)
            return
        self._collecting = True
        self.collect_symbols(report)

    # After the findings are shown, never before them: a pass over the whole document (seconds in a 5 MB one).
    @work(thread=True, group="symbols", exit_on_error=False, description="symbols of the editor's text")
    def collect_symbols(self, report: FileReport) -> None:
        if self.running_symbols.run(lambda: self.live.collect_symbols(report) or True):
            self.post_message(SymbolsDone(report))

    @on(SymbolsDone)
    def _symbols_done(self, message: SymbolsDone) -> None:
        if self.live.symbols_done(message.report):  # else the text changed since: its own symbols come later
            self.show_detail()
            self.live.wake()  # a rename or definition asked for before them

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        if event.worker.group == "symbols" and event.state in (WorkerState.SUCCESS, WorkerState.ERROR, WorkerState.CANCELLED):
            self._collecting = False
        if event.worker.group == "analysis" and event.state in (WorkerState.SUCCESS, WorkerState.ERROR, WorkerState.CANCELLED):
            self._analyzing = False
            if self._analyze_again and self._debounce is None:  # else the pending debounce starts it
                self.start_analysis()
        if event.state == WorkerState.ERROR and event.worker.group == "analysis":
            error = event.worker.error
            reason = f"{type(error).__name__}: {error}"
            self._status_line = ""
            self.query_one("#status", Static).update(f" [b red]analysis failed[/]: {reason}")
            if reason != self._last_failure:  # one modal per distinct failure, not one per keystroke
                self._last_failure = reason
                self.studio.worker_failed("Analysis failed", error)

    # Status --------------------------------------------------------------------------

    def update_status(self, pending: bool = False) -> None:
        status = self.query_one("#status", Static)
        buffer = self.studio.buffer
        if buffer is None:
            status.update(" No file open: choose one in the workspace list (Ctrl+O).")
            return
        name = self.studio.workspace.display(buffer.path)
        kind, counts = self._analysed_as
        if buffer.path.suffix == ".jsonl":  # read once per file: the status line is redrawn on every cursor move
            if buffer.path not in self._json_lines_kinds:
                self._json_lines_kinds[buffer.path] = kind_of_path(buffer.path) or "trace"
            kind = f"{self._json_lines_kinds[buffer.path]} (JSON Lines)"
        if not kind:  # not analyzed yet, or a format whose documents name no kind: the saved text's, read once
            if self._saved_kind[0] is not buffer.saved_text:
                self._saved_kind = (buffer.saved_text, kind_of_text(buffer.saved_text))
            kind = self._saved_kind[1]
        kind = kind or "unknown kind"
        modified = self.is_dirty()
        if modified != self._listed_dirty:
            self.refresh_files()  # the file list's `*` follows every edit (typing, a rename, a quick fix) and a save
        dirty = " [b]modified[/b]" if modified else (" [b]read-only[/b]" if buffer.unreadable is not None else "")
        row, col = self.editor.cursor_location
        state = " [dim]checking…[/dim]" if pending else ""
        if not self.editor.highlighting:
            state += f" · [b yellow]highlighting off[/] (indented past {MAX_HIGHLIGHT_INDENT} levels)"
        errors = f"[b red]{counted(counts.error, 'error')}[/]" if counts.error else "0 errors"
        warnings = f"[b yellow]{counted(counts.warning, 'warning')}[/]" if counts.warning else "0 warnings"
        # Position and counts first, then the name, its folders cut in the middle to what the line leaves it; when
        # even the file's own name would not fit, the kind (mostly its suffix) makes room: the name and `modified`
        # stay on the one row at 80 columns, and only `checking…` may be cut at its end.
        tail = f"{dirty}{state}"
        for head in (f" {row + 1}:{col + 1} · {kind} · {errors} · {warnings} · ", f" {row + 1}:{col + 1} · {errors} · {warnings} · "):
            room = self.size.width - Text.from_markup(head + tail).cell_len
            if room >= len(buffer.path.name):
                break
        shown = name if len(name) <= room else (elide_middle(name, room) if room > len(buffer.path.name) else buffer.path.name)
        line = head + escape(shown) + tail
        if line != self._status_line:
            self._status_line = line
            status.update(line, layout=False)  # one fixed-height row: no need to lay out the screen per keystroke

    @on(ContractEditor.SelectionChanged)
    def _moved(self) -> None:
        self.update_status(pending=self._debounce is not None)
        self.cursor_moved()
        if self._detail_timer is not None:
            self._detail_timer.stop()
        self._detail_timer = self.set_timer(0.1, self.show_detail)

    def is_dirty(self) -> bool:
        buffer = self.studio.buffer
        if buffer is None or self.editor.disabled:
            return False
        opened_from, opened_as = self._opened
        # Lengths first: kept by the editor, so typing in a big file joins its text only when a length matches.
        length = self.editor.text_length
        if length != len(buffer.saved_text) and not (opened_from is buffer.saved_text and length == len(opened_as)):
            return True
        text = self.editor.text
        return text != buffer.saved_text and not (opened_from is buffer.saved_text and text == opened_as)

    def refresh_files(self) -> None:
        """Draw the app's files, counts and the open file's `*` in the file list.

        Background work (a count of every file, a folder scan) ends when it ends: before this screen's widgets are
        composed, or after quitting removed them. There is then no list to draw: nothing is drawn, and the state it
        reads stays in the app, so the list shows it once it is mounted (on_mount draws it).
        """
        files = self.query_one_optional(FileList)
        if files is None:
            return
        app = self.studio
        dirty = {app.buffer.path} if app.buffer is not None and self.is_mounted and self.is_dirty() else set()
        self._listed_dirty = bool(dirty)
        files.show(app.workspace, app.buffer.path if app.buffer else None, dirty, app.counts)

    # Navigation ----------------------------------------------------------------------

    @on(FileList.Open)
    def _open(self, event: FileList.Open) -> None:
        self.studio.open_file(event.path)

    @on(FindingsPanel.Jump)
    def _jump(self, event: FindingsPanel.Jump) -> None:
        self.studio.go_to(event.place)

    def go_to(self, place: Place) -> None:
        """Move the cursor to a 1-based line and column and focus the editor."""
        row = max(0, min(place.line - 1, self.editor.document.line_count - 1))
        col = max(0, place.column - 1)
        self.editor.move_cursor((row, col), center=True)
        self.editor.focus()

    def action_next_finding(self, step: int = 1) -> None:
        diagnostics = self.analysis.diagnostics if self.analysis else []
        if not diagnostics:
            self.notify("No findings.", timeout=2)
            return
        here = self.editor.cursor_location
        places = sorted({(d.line - 1, d.column - 1) for d in diagnostics})
        if step > 0:
            after = [p for p in places if p > here]
            target = after[0] if after else places[0]
        else:
            before = [p for p in places if p < here]
            target = before[-1] if before else places[-1]
        self.go_to(Place("", target[0] + 1, target[1] + 1))

    def action_previous_finding(self) -> None:
        self.action_next_finding(-1)

    def action_focus_files(self) -> None:
        files = self.query_one(FileList)
        files.display = True
        files.focus()

    def action_focus_findings(self) -> None:
        findings = self.findings
        if findings.highlighted is None and findings.diagnostics:
            findings.highlighted = 0  # the worst finding: Enter acts on the row the panel shows highlighted
        findings.focus()

    def action_focus_editor(self) -> None:
        if not self.editor.disabled:
            self.editor.focus()

    def action_toggle_files(self) -> None:
        files = self.query_one(FileList)
        files.display = not files.display
