"""The command palette: every action of the studio, searchable by name, with the keys that run it now.

The keys are read from the live bindings of the screen the palette was opened from, so a keymap in config.yaml
that rebinds an action changes its label too; an action without a key shows none.
"""

from __future__ import annotations

import asyncio
from functools import partial
from pathlib import Path

from rich.text import Text
from textual.binding import Binding
from textual.command import DiscoveryHit, Hit, Hits, Provider
from textual.screen import Screen

from contractstudio.safe_text import shown

EXACT = 1.0  # added to a fuzzy score (at most 1) when the query is the file's very name

# The palette's words for each binding, by the binding's id: the action it runs and its keys are the binding's own
# (palette_actions), so an entry can neither name an action nobody binds nor miss one that is bound.
PALETTE: dict[str, tuple[str, str]] = {
    "app.mode_edit": ("Edit mode", "Files, YAML editor and live findings"),
    "app.mode_graph": ("Graph mode", "Pipeline step graph or agent references"),
    "app.mode_debug": ("Debug mode", "Step through a contracted call"),
    "app.mode_eval": ("Eval mode", "Run a contract over a dataset: rates, failures, cost"),
    "edit.save": ("Save file", "Write the open file atomically"),
    "edit.reload": ("Reload file from disk", "Re-read the open file"),
    "edit.export": ("Export validated YAML", "Write the file with comments kept; refused while it has errors"),
    "edit.next_finding": ("Next finding", "Move the cursor to the next diagnostic"),
    "edit.quick_fix": ("Quick fix", "The fixes of the finding under the cursor"),
    "edit.complete": ("Complete", "Completion at the cursor (it also opens as you type)"),
    "edit.rename": ("Rename", "Rename the step, type, field, tool ... under the cursor everywhere"),
    "edit.definition": ("Go to definition", "Where the name under the cursor is declared"),
    "edit.back": ("Go back", "Back to where you were before going to a definition"),
    "edit.find": ("Find", "Search the file"),
    "edit.find_next": ("Find next", "The next match of the search"),
    "edit.go_to_line": ("Go to line", "Move the cursor to LINE or LINE:COLUMN"),
    "edit.new_file": ("New file from a template", "NAME.contract.yaml, .agent, .pipeline or .tools, opened in the editor"),
    "edit.open_in_editor": ("Open in $EDITOR", "Edit the saved file in your editor; reloaded when you come back"),
    "edit.previous_finding": ("Previous finding", "Move the cursor to the previous diagnostic"),
    "edit.files": ("Focus file list", "Choose a workspace file"),
    "edit.findings": ("Focus findings", "The diagnostics panel"),
    "edit.editor": ("Focus editor", "Back to the YAML editor"),
    "edit.toggle_files": ("Toggle file list", "Show or hide the workspace list"),
    "app.toggle_theme": ("Toggle light/dark theme", "Switch between the studio's dark and light themes"),
    "app.help": ("Help: keys", "Every key and its binding id"),
    "graph.jump": ("Graph: jump to step YAML", "Open the selected step in the editor"),
    "graph.simulate": ("Graph: simulate a router reply", "Highlight the path a reply takes"),
    "graph.clear": ("Graph: clear path", "Remove the highlighted path"),
    "graph.export_mermaid": ("Graph: export Mermaid", "Write the graph as a Mermaid file"),
    "graph.export_dot": ("Graph: export DOT", "Write the graph as a Graphviz DOT file"),
    "debug.step": ("Debug: step", "Run the next event of the call"),
    "debug.continue": ("Debug: continue", "Run to the next breakpoint"),
    "debug.run": ("Debug: run to end", "Run the whole call"),
    "debug.restart": ("Debug: restart", "Start the call again"),
    "debug.breakpoint": ("Debug: toggle breakpoint", "Break before the selected stage"),
    "debug.save_trace": ("Debug: save trace", "Write the call's events as JSON Lines"),
    "debug.open_trace": ("Debug: open trace", "Replay or inspect a recorded trace"),
    "debug.edit": ("Debug: edit reply or error", "Change the next reply or remedy error before resuming"),
    "eval.run": ("Eval: run", "Run the contract over the dataset"),
    "eval.filter": ("Eval: next filter", "Show the next kind of rows (all, failed, remedied ...)"),
    "eval.open_row": ("Eval: open in the debugger", "The selected row's recorded call, ready to replay"),
    "eval.sweep": ("Eval: sweep a threshold", "Move the filtered condition's threshold over the labelled rows (judge)"),
    "eval.write_threshold": ("Eval: write the chosen threshold", "The quick fix, in the editor: set the threshold the sweep chose"),
    "app.quit": ("Quit", "Leave the studio (asks when there are unsaved changes)"),
}
# They move in the completion popup only, or choose the focused list's row (the palette has the focus then)
NOT_IN_PALETTE = {"edit.completion_down", "edit.completion_up", "files.open", "findings.jump"}


def palette_actions(scopes: dict[str, list[Binding]]) -> list[tuple[str, str, str, str]]:
    """(binding id, title, help, action run on the app; "screen." on the mode screen) in PALETTE's order."""
    found: dict[str, str] = {}
    for scope, bindings in scopes.items():
        for binding in bindings:
            if binding.id in PALETTE and binding.id not in found:
                app_wide = scope == "Everywhere" or binding.action.startswith("app.")
                found[binding.id] = ("app." if app_wide else "screen.") + binding.action.removeprefix("app.")
    return [(binding_id, *PALETTE[binding_id], found[binding_id]) for binding_id in PALETTE if binding_id in found]


def keys_of(screen: Screen[object], action: str) -> list[str]:
    """The keys that run a palette action on this screen now (after the keymap), as the footer shows them."""
    app = screen.app
    keys: list[str] = []
    for active in screen.active_bindings.values():
        binding = active.binding
        if active.node is app:
            bound = binding.action if binding.action.startswith("app.") else f"app.{binding.action}"
        elif active.node is screen:
            bound = binding.action if binding.action.startswith("app.") else f"screen.{binding.action}"
        else:
            continue  # a widget's own keys (the editor's) are not palette actions
        shown = "+".join(part[:1].upper() + part[1:] for part in app.get_key_display(binding).split("+"))  # F8, Ctrl+S
        if bound == action and shown not in keys:
            keys.append(shown)
    return keys


def label(screen: Screen[object], help_text: str, action: str) -> str:
    """An action's help with its keys, e.g. `Move the cursor to the next diagnostic (F8)`."""
    keys = keys_of(screen, action)
    return f"{help_text} ({' / '.join(keys)})" if keys else help_text


class StudioCommands(Provider):
    """Every studio action in the command palette (Ctrl+P)."""

    def _available(self) -> list[tuple[str, str, str]]:
        screen = self.screen
        found = []
        scopes = self.app.binding_scopes()  # type: ignore[attr-defined]  # the studio's bindings, after the keymap
        for _, title, help_text, action in palette_actions(scopes):
            if action.startswith("screen."):
                name = action.removeprefix("screen.").split("(")[0]
                if not hasattr(screen, f"action_{name}"):
                    continue  # an action of another mode
            found.append((title, label(screen, help_text, action), action))
        return found

    async def _run(self, action: str) -> None:
        # Run on the mode screen the palette was opened from, not on the palette itself.
        await self.app.run_action(action.removeprefix("screen."), self.screen)

    async def discover(self) -> Hits:
        for title, help_text, action in self._available():
            yield DiscoveryHit(title, partial(self._run, action), help=help_text)

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for title, help_text, action in self._available():
            score = matcher.match(title)
            if score > 0:
                yield Hit(score, matcher.highlight(title), partial(self._run, action), help=help_text)


class WorkspaceFiles(Provider):
    """Every workspace file in the command palette: type part of its name, Enter opens it (as the file list does)."""

    def _files(self) -> list[tuple[str, str, Path]]:
        workspace = getattr(self.app, "workspace", None)
        if workspace is None:
            return []
        return [(f"Open {workspace.display(f.path)}", f"{f.kind or 'file'} · {f.path}", f.path) for f in workspace.files]

    def _open(self, path: Path) -> None:
        opener = getattr(self.app, "open_file", None)
        if opener is not None:
            opener(path)

    async def startup(self) -> None:
        """Look at the workspace again as the palette opens: a file created since is offered (and listed)."""
        workspace = getattr(self.app, "workspace", None)
        if workspace is not None and await asyncio.to_thread(workspace.scan):
            self.app.workspace_changed()  # type: ignore[attr-defined]

    async def search(self, query: str) -> Hits:
        workspace = getattr(self.app, "workspace", None)
        typed = workspace.typed_path(query) if workspace is not None else None
        files = self._files()
        if typed is not None and all(path.resolve() != typed.resolve() for _, _, path in files):  # a path: opened as it is
            yield Hit(EXACT + 1, Text(f"Open {shown(str(typed))}"), partial(self._open, typed), help="the path typed")
        matcher = self.matcher(query)
        wanted = query.strip().lower()
        for title, help_text, path in files:
            if typed is not None and path.resolve() == typed.resolve():  # its path typed: this file, first
                yield Hit(EXACT + 1, Text(title), partial(self._open, path), help=help_text)
                continue
            score = matcher.match(title)
            if score > 0:
                if wanted in (path.name.lower(), path.name.split(".")[0].lower()):
                    score += EXACT  # the file of that very name before look-alikes in other folders (broken/)
                yield Hit(score, matcher.highlight(title), partial(self._open, path), help=help_text)
