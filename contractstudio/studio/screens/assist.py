"""The editing help of the edit screen: completion as you type, quick fixes, rename, definition and back,
find, go to line, a detail line for what is under the cursor. All answers come from contractstudio.editing."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from textual.actions import SkipAction
from textual.app import SuspendNotSupported
from textual.binding import Binding
from textual.widgets import Static
from textual.widgets.text_area import Selection

from contractstudio import editing
from contractstudio.editing.row_scan import BlockMemo, Rows
from contractstudio.findings.diagnostics import Span
from contractstudio.runtime.child_processes import child_environment
from contractstudio.storage.atomic import write_atomic
from contractstudio.studio.widgets.completion import Ask, CompletionMenu, QuickFixes

if TYPE_CHECKING:  # the analyzer and the cursor facts load with the first analysis, after the first screen
    from contractstudio.analysis.check import FileReport
    from contractstudio.editing.items import CompletionItem, TextEdit
    from contractstudio.editing.live import LiveDocument

# Characters after which completion opens by itself (besides word characters).
# Not after a quote: a quoted string is the user's own text, and Enter after it must be a new line.
TRIGGERS = set(".:[{, -")

ASSIST_BINDINGS = [
    Binding("ctrl+space,ctrl+@", "complete", "Complete", show=False, id="edit.complete"),  # ctrl+@: NUL, as tmux sends it
    Binding("f9,ctrl+full_stop", "quick_fix", "Quick fix", id="edit.quick_fix"),
    Binding("shift+f6", "rename", "Rename", show=False, id="edit.rename"),
    Binding("f12", "definition", "Definition", show=False, id="edit.definition"),
    Binding("alt+left", "back", "Back", show=False, id="edit.back"),
    Binding("ctrl+f", "find", "Find", show=False, priority=True, id="edit.find"),
    Binding("ctrl+n", "find_next", "Find next", show=False, id="edit.find_next"),
    Binding("ctrl+l", "go_to_line", "Go to line", show=False, id="edit.go_to_line"),
    # Not Alt+N: a terminal sends ESC n, which the editor types as `n` (every Ctrl+letter and free F-key is taken)
    Binding("ctrl+right_square_bracket", "new_file", "New file", show=False, id="edit.new_file"),
    Binding("f10", "open_in_editor", "Open in $EDITOR", show=False, id="edit.open_in_editor"),
    # While the completion popup is open these keys move in it; otherwise they go to the editor as usual
    # (Tab / Enter accept and Escape closes through the editor's key_hook: the editor consumes them first).
    Binding("down", "popup('down')", "Down", show=False, priority=True, id="edit.completion_down"),
    Binding("up", "popup('up')", "Up", show=False, priority=True, id="edit.completion_up"),
]


class EditingAssist:
    """Mixed into EditScreen: needs `editor`, `analysis` (the newest finished one) and `studio`."""

    # Provided by the Screen it is mixed into (typed loosely: this mixin must not import the screen).
    editor: Any
    analysis: Any
    studio: Any
    app: Any
    region: Any
    notify: Any
    query_one: Any
    live: LiveDocument
    back_stack: list[tuple[int, int]]
    _debounce: Any
    start_analysis: Any
    search: str
    menu_place: tuple[int, int]
    row_blocks: BlockMemo

    def init_assist(self) -> None:
        self.back_stack = []
        self.search = ""
        self.menu_place = (0, 0)
        self.row_blocks = BlockMemo()  # the editor's rows joined and searched, kept from one key to the next

    @property
    def menu(self) -> CompletionMenu:
        return self.query_one(CompletionMenu)

    def with_current_report(self, then: Callable[[FileReport], None], symbols: bool = False) -> None:
        """Run `then` with the analysis of the editor's text as it is now (and its symbols, `symbols`): at once when
        it is current, else when the analysis that starts now (in its worker, never here) is done."""
        if self.live.wait(then, symbols):  # current: done now; else the newest request waits
            return
        if self.live.current is not None:
            return  # analyzed: its symbols are being collected (in their worker), and `then` runs after them
        if self._debounce is not None:
            self._debounce.stop()
        self.start_analysis()

    # Completion -------------------------------------------------------------------------

    def typed(self, character: str | None) -> None:
        """After a keystroke in the editor: open, refine or close the popup."""
        if character is None:
            self.menu.hide()
            return
        buffer = self.studio.buffer
        if buffer is not None and buffer.path.suffix == ".jsonl":
            return  # traces, datasets, results: JSON Lines, not YAML; nothing to complete
        if character in "'\"":
            self.menu.hide()
            return
        if not (character.isalnum() or character == "_" or character in TRIGGERS) and not self.menu.display:
            return
        # After the key is drawn, not before: completion reads the whole `---` document around the cursor. A newer
        # key (typed or already waiting) supersedes it, so a burst of keys in a big file computes it once.
        self.app.call_after_refresh(self._complete_typed, self.live.version)

    def _complete_typed(self, version: int) -> None:
        # Not before the file's first analysis: completion's facts come from one, and until it is done (2 s of a
        # 5 MB file) each key would read the whole file for its `kind:` and the first import the editing help on the
        # screen's thread. Asked for (Ctrl+Space), it completes at once.
        if version == self.live.version and not self.app.keys_waiting() and self.live.report is not None:
            self.action_complete(automatic=True)

    def action_complete(self, automatic: bool = False) -> None:
        row, col = self.editor.cursor_location
        # the editor's own lines (the text is not joined and split again), each block of them joined once for both
        # questions below and kept for the next key while its rows stay the same (editing/row_scan.py)
        lines = Rows(self.editor.document.lines, self.row_blocks)
        facts = self.live.facts_at(lines, row)
        items = editing.complete(facts, row + 1, col + 1, lines)
        if automatic:
            line = self.editor.document[row][:col]
            if not items or (line.endswith(" ") and not line.rstrip().endswith((":", "-", ","))):
                self.menu.hide()
                return
            first = items[0].replace
            word = line[first.column - 1 :] if first is not None and first.line == row + 1 else ""
            if word and any(word in (i.label, i.text) for i in items):
                self.menu.hide()  # the word is already complete: nothing to offer, and Enter stays a new line
                return
        if not items:
            self.menu.hide()
            if not automatic:
                self.notify("Nothing to complete here.", timeout=2)
            return
        x, y = self.editor.cursor_screen_offset
        region = self.region
        self.menu.show_items(items, x - region.x, y - region.y + 1, automatic=automatic)
        first = items[0].replace
        self.menu_place = (row, first.column - 1 if first is not None and first.line == row + 1 else col)

    def cursor_moved(self) -> None:
        """Close the popup when the cursor left the word it completes (a click, Home, another line)."""
        if not self.menu.display:
            return
        row, col = self.editor.cursor_location
        if row != self.menu_place[0] or col < self.menu_place[1]:
            self.menu.hide()

    def popup_key(self, key: str) -> bool:
        """The editor's key hook: Tab / Enter accept and Escape closes while the popup is open."""
        if not self.menu.display or key not in ("tab", "enter", "escape"):
            return False
        if key == "enter" and self.menu.automatic and not self.menu.moved:
            self.menu.hide()  # a popup the user did not ask for never takes Enter: a new line, as typed
            return False
        self.action_popup("close" if key == "escape" else "accept")
        return True

    def action_popup(self, what: str) -> None:
        menu = self.menu
        if not menu.display:
            raise SkipAction()
        if what == "close":
            menu.hide()
        elif what in ("down", "up"):
            menu.move(1 if what == "down" else -1)
        elif (item := menu.chosen) is not None:
            menu.hide()
            self.accept(item)

    def accept(self, item: CompletionItem) -> None:
        row, col = self.editor.cursor_location
        span = item.replace or Span(row + 1, col + 1, row + 1, col + 1)
        self.editor.replace(item.text, (span.line - 1, span.column - 1), (span.end_line - 1, span.end_column - 1))
        if item.text.endswith(" "):
            self.editor.type_over(" ")  # the author's own space right after is not a second one

    # Quick fixes, rename, definition ------------------------------------------------------

    def apply(self, edits: tuple[TextEdit, ...] | list[TextEdit]) -> None:
        """Apply edits to the editor from the last to the first (their spans are of the text before any), as one
        step of undo."""
        with self.editor.one_undo():
            for e in sorted(edits, key=lambda e: (e.span.line, e.span.column), reverse=True):
                s = e.span
                end = (s.end_line - 1, s.end_column - 1)
                if s.end_line - 1 >= self.editor.document.line_count:  # an edit that ends past the last line
                    end = (self.editor.document.line_count - 1, len(self.editor.document[-1]))
                self.editor.replace(e.new_text, (s.line - 1, s.column - 1), end)

    def action_quick_fix(self) -> None:
        self.with_current_report(self._quick_fix)

    def _threshold_fix(self, report: FileReport) -> Any:
        """The quick fix of the threshold Eval mode's sweep chose for this file (editing/thresholds.py), or None."""
        choice = getattr(self.studio, "threshold_choice", None)
        buffer = self.studio.buffer
        if choice is None or buffer is None or buffer.path.resolve() != choice[0].resolve():
            return None
        from contractstudio.editing.thresholds import threshold_action

        return threshold_action(report, choice[1], choice[2], choice[3])

    def apply_threshold_choice(self) -> None:
        """Apply the sweep's chosen threshold to the editor's text (Eval mode's w): one step of undo, not saved."""

        def then(report: FileReport) -> None:
            action = self._threshold_fix(report)
            if action is None:
                self.notify("The threshold is not where a quick fix can change it: change it by hand.", severity="warning")
                return
            self.apply(action.edits)
            self.editor.move_cursor((action.edits[0].span.line - 1, action.edits[0].span.column - 1), center=True)
            self.notify(action.title, timeout=3)

        self.with_current_report(then)

    def _quick_fix(self, report: FileReport) -> None:
        row, _ = self.editor.cursor_location
        actions = editing.code_actions(report, span=Span(row + 1, 1, row + 1, 1))
        threshold = self._threshold_fix(report)
        if threshold is not None and threshold.edits[0].span.line == row + 1:  # the sweep's choice, on its line
            actions.insert(0, threshold)
        if not actions:
            self.notify("No quick fix for this line.", timeout=2)
            return

        def chosen(index: int | None) -> None:
            if index is not None:
                self.apply(actions[index].edits)
                self.notify(actions[index].title, timeout=2)

        self.app.push_screen(QuickFixes(actions), chosen)

    def action_rename(self) -> None:
        self.with_current_report(self._rename, symbols=True)

    def _rename(self, report: FileReport) -> None:
        row, col = self.editor.cursor_location
        occ = editing.prepare_rename(report, row + 1, col + 1)
        if occ is None:
            self.notify("Nothing to rename here (a step, type, field, tool, policy, task, router, action or parameter).",
                        timeout=3)
            return

        def renamed(name: str | None) -> None:
            if not name:
                return
            result = editing.rename(report, row + 1, col + 1, name)
            if result.refused:
                self.notify(f"Not renamed: {result.refused}", severity="warning", timeout=6)
                return
            self.apply(result.edits)
            self.notify(f"Renamed '{occ.name}' to '{name}' in {len(result.edits)} places", timeout=3)

        self.app.push_screen(Ask(f"Rename {occ.kind} '{occ.name}' to", occ.name), renamed)

    def action_definition(self) -> None:
        self.with_current_report(self._definition, symbols=True)

    def _definition(self, report: FileReport) -> None:
        row, col = self.editor.cursor_location
        found = editing.definition(report, row + 1, col + 1)
        if not found:
            self.notify("No definition here.", timeout=2)
            return
        if found[0].file != report.path:  # inherited through extends: declared in the base, not in this text
            self.notify(f"Declared in {found[0].file}, line {found[0].span.line}.", timeout=4)
            return
        self.back_stack.append((row, col))
        target = found[0].span
        self.editor.move_cursor((target.line - 1, target.column - 1), center=True)

    def action_back(self) -> None:
        if not self.back_stack:
            self.notify("Nowhere to go back to.", timeout=2)
            return
        self.editor.move_cursor(self.back_stack.pop(), center=True)

    # Find and go to line ------------------------------------------------------------------

    def action_find(self) -> None:
        def search(text: str | None) -> None:
            if text:
                self.search = text
                self.action_find_next()

        self.app.push_screen(Ask("Find", self.search), search)

    def action_find_next(self) -> None:
        if not self.search:
            self.action_find()
            return
        doc = self.editor.document
        row, col = self.editor.cursor_location
        lines = doc.lines
        order = [(row, col + 1)] + [(r, 0) for r in range(row + 1, len(lines))] + [(r, 0) for r in range(0, row + 1)]
        needle = self.search.lower()
        for r, start in order:
            at = lines[r].lower().find(needle, start)
            if at >= 0:
                self.editor.move_cursor((r, at), center=True)
                self.editor.selection = Selection((r, at), (r, at + len(self.search)))
                return
        self.notify(f"'{self.search}' is not in the file.", timeout=2)

    def action_go_to_line(self) -> None:
        def go(answer: str | None) -> None:
            if not answer:
                return
            parts = answer.replace(",", ":").split(":")
            try:
                line = int(parts[0])
                column = int(parts[1]) if len(parts) > 1 and parts[1] else 1
            except ValueError:
                self.notify(f"Not a line number: {answer}", severity="warning", timeout=3)
                return
            row = max(0, min(line - 1, self.editor.document.line_count - 1))
            self.editor.move_cursor((row, max(0, column - 1)), center=True)

        self.app.push_screen(Ask("Go to line (LINE or LINE:COLUMN)"), go)

    # What is under the cursor ---------------------------------------------------------------

    def show_detail(self) -> None:
        """The first line of the hover text (a finding's rule, a name's type) in the detail line."""
        detail = self.query_one("#detail", Static)
        report = self.live.current  # the analysis of the text shown, by version: no text compared
        if self.analysis is None or report is None or report is not self.analysis.report:
            return
        row, col = self.editor.cursor_location
        # The names under the cursor once the symbols are collected (in their worker); its findings at once.
        h = editing.hover(report, row + 1, col + 1, names=self.live.named is report)
        first = next((ln for ln in h.markdown.splitlines() if ln.strip() and not ln.startswith("```")), "") if h else ""
        plain = first.replace("[", "\\[")
        plain = re.sub(r"\*\*(.+?)\*\*", r"[b]\1[/b]", plain).replace("`", "")  # the hover's markdown, as Rich markup
        detail.update(plain, layout=False)  # one row high whatever it says: only its showing or not changes the layout
        detail.display = bool(first)  # no empty row when there is nothing to say

    # New file, $EDITOR ---------------------------------------------------------------------

    def action_new_file(self) -> None:
        """A new NAME.<kind>.yaml from the kind's template, in the workspace's first folder."""
        def create(name: str | None) -> None:
            if not name:
                return
            from contractstudio.editing.templates import TEMPLATES, kind_of_name, template

            kind = kind_of_name(Path(name).name)
            if kind is None:
                self.notify(f"Name it NAME.<kind>.yaml (kind: {', '.join(TEMPLATES)}), not '{name}'.", severity="warning", timeout=5)
                return
            roots = [r for r in self.studio.workspace.roots if r.is_dir()] or [Path.cwd()]
            path = Path(name) if Path(name).is_absolute() else roots[0] / name
            if path.exists():
                self.notify(f"{path} already exists.", severity="warning", timeout=4)
                return
            try:
                write_atomic(path, template(kind, Path(name).name.split(".")[0]))
            except OSError as err:
                self.notify(f"Cannot create {path}: {err.strerror or err}", severity="error", timeout=6)
                return
            self.studio.open_file(path)

        self.app.push_screen(Ask("New file (NAME.contract.yaml, .agent, .pipeline or .tools)", "new.contract.yaml"), create)

    def action_open_in_editor(self) -> None:
        """Edit the file in $VISUAL / $EDITOR; back in the studio it is reloaded, the cursor where it was."""
        buffer = self.studio.buffer
        command = os.environ.get("VISUAL") or os.environ.get("EDITOR")
        if buffer is None:
            return
        if not command:
            self.notify("Set $EDITOR (or $VISUAL) to open the file in your editor.", severity="warning", timeout=4)
            return
        if self.studio.is_dirty():
            self.notify("Save first (Ctrl+S): the editor would not see your unsaved changes.", severity="warning", timeout=4)
            return
        argv = [*shlex.split(command), str(buffer.path)]
        env = child_environment()  # the user's editor, with no relative PYTHONPATH entry (an editor may be Python)
        try:
            with self.app.suspend():
                subprocess.run(argv, check=False, env=env)
        except SuspendNotSupported:  # no terminal to hand over (headless): run it as is
            subprocess.run(argv, check=False, stdin=subprocess.DEVNULL, capture_output=True, env=env)
        except OSError as err:
            self.notify(f"Cannot run {command}: {err.strerror or err}", severity="error", timeout=6)
            return
        self.studio.action_reload()
