"""The command palette: every action of the studio, searchable by name, with the keys that run it now.

The keys are read from the live bindings of the screen the palette was opened from, so a keymap in config.yaml
that rebinds an action changes its label too; an action without a key shows none.
"""

from __future__ import annotations

import asyncio
from functools import partial
from pathlib import Path

from rich.text import Text
from textual.command import DiscoveryHit, Hit, Hits, Provider
from textual.screen import Screen

from contractstudio.safe_text import shown

EXACT = 1.0  # added to a fuzzy score (at most 1) when the query is the file's very name

# (title, help, action string run on the app; "screen." actions run on the current mode's screen); the keys are added
ACTIONS: list[tuple[str, str, str]] = [
    ("Edit mode", "Files, YAML editor and live findings", "app.mode('edit')"),
    ("Graph mode", "Pipeline step graph or agent references", "app.mode('graph')"),
    ("Debug mode", "Step through a contracted call", "app.mode('debug')"),
    ("Eval mode", "Run a contract over a dataset: rates, failures, cost", "app.mode('eval')"),
    ("Save file", "Write the open file atomically", "app.save"),
    ("Reload file from disk", "Re-read the open file", "app.reload"),
    ("Export validated YAML", "Write the file with comments kept; refused while it has errors", "app.export"),
    ("Next finding", "Move the cursor to the next diagnostic", "screen.next_finding"),
    ("Quick fix", "The fixes of the finding under the cursor", "screen.quick_fix"),
    ("Complete", "Completion at the cursor (it also opens as you type)", "screen.complete"),
    ("Rename", "Rename the step, type, field, tool ... under the cursor everywhere", "screen.rename"),
    ("Go to definition", "Where the name under the cursor is declared", "screen.definition"),
    ("Go back", "Back to where you were before going to a definition", "screen.back"),
    ("Find", "Search the file", "screen.find"),
    ("Find next", "The next match of the search", "screen.find_next"),
    ("Go to line", "Move the cursor to LINE or LINE:COLUMN", "screen.go_to_line"),
    ("New file from a template", "NAME.contract.yaml, .agent, .pipeline or .tools, opened in the editor", "screen.new_file"),
    ("Open in $EDITOR", "Edit the saved file in your editor; reloaded when you come back", "screen.open_in_editor"),
    ("Previous finding", "Move the cursor to the previous diagnostic", "screen.previous_finding"),
    ("Focus file list", "Choose a workspace file", "screen.focus_files"),
    ("Focus findings", "The diagnostics panel", "screen.focus_findings"),
    ("Toggle file list", "Show or hide the workspace list", "screen.toggle_files"),
    ("Toggle light/dark theme", "Switch between the studio's dark and light themes", "app.toggle_dark"),
    ("Help: keys", "Every key and its binding id", "app.help"),
    ("Graph: jump to step YAML", "Open the selected step in the editor", "screen.jump"),
    ("Graph: simulate a router reply", "Highlight the path a reply takes", "screen.simulate"),
    ("Graph: export Mermaid", "Write the graph as a Mermaid file", "screen.export('mermaid')"),
    ("Graph: export DOT", "Write the graph as a Graphviz DOT file", "screen.export('dot')"),
    ("Debug: step", "Run the next event of the call", "screen.step"),
    ("Debug: continue", "Run to the next breakpoint", "screen.continue_run"),
    ("Debug: run to end", "Run the whole call", "screen.run_to_end"),
    ("Debug: restart", "Start the call again", "screen.restart"),
    ("Debug: toggle breakpoint", "Break before the selected stage", "screen.toggle_breakpoint"),
    ("Debug: save trace", "Write the call's events as JSON Lines", "screen.save_trace"),
    ("Debug: open trace", "Replay or inspect a recorded trace", "screen.open_trace_prompt"),
    ("Debug: edit reply or error", "Change the next reply or remedy error before resuming", "screen.edit_pending"),
    ("Eval: run", "Run the contract over the dataset", "screen.run_eval"),
    ("Eval: open in the debugger", "The selected row's recorded call, ready to replay", "screen.open_row"),
    ("Quit", "Leave the studio (asks when there are unsaved changes)", "app.quit"),
]


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
        for title, help_text, action in ACTIONS:
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
