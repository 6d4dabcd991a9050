"""The command palette: every action of the studio, searchable by name."""

from __future__ import annotations

from functools import partial

from textual.command import DiscoveryHit, Hit, Hits, Provider

# (title, help, action string run on the app; "screen." actions run on the current mode's screen)
ACTIONS: list[tuple[str, str, str]] = [
    ("Edit mode", "Files, YAML editor and live findings (F2)", "app.mode('edit')"),
    ("Graph mode", "Pipeline step graph or agent references (F3)", "app.mode('graph')"),
    ("Debug mode", "Step through a contracted call (F4)", "app.mode('debug')"),
    ("Eval mode", "Run a contract over a dataset: rates, failures, cost (F5)", "app.mode('eval')"),
    ("Save file", "Write the open file atomically (Ctrl+S)", "app.save"),
    ("Reload file from disk", "Re-read the open file (Ctrl+R)", "app.reload"),
    ("Export validated YAML", "Write the file with comments kept; refused while it has errors (F6)", "app.export"),
    ("Next finding", "Move the cursor to the next diagnostic (F8)", "screen.next_finding"),
    ("Quick fix", "The fixes of the finding under the cursor (F9 / Ctrl+.)", "screen.quick_fix"),
    ("Complete", "Completion at the cursor (Ctrl+Space; it also opens as you type)", "screen.complete"),
    ("Rename", "Rename the step, type, field, tool ... under the cursor everywhere (Shift+F6)", "screen.rename"),
    ("Go to definition", "Where the name under the cursor is declared (F12)", "screen.definition"),
    ("Go back", "Back to where you were before going to a definition (Alt+Left)", "screen.back"),
    ("Find", "Search the file (Ctrl+F)", "screen.find"),
    ("Find next", "The next match of the search (Ctrl+N)", "screen.find_next"),
    ("Go to line", "Move the cursor to LINE or LINE:COLUMN (Ctrl+L)", "screen.go_to_line"),
    ("New file from a template", "NAME.contract.yaml, .agent, .pipeline or .tools, opened in the editor (Alt+N)", "screen.new_file"),
    ("Open in $EDITOR", "Edit the saved file in your editor; reloaded when you come back (F10)", "screen.open_in_editor"),
    ("Previous finding", "Move the cursor to the previous diagnostic (Shift+F8)", "screen.previous_finding"),
    ("Focus file list", "Choose a workspace file (Ctrl+O)", "screen.focus_files"),
    ("Focus findings", "The diagnostics panel (Ctrl+G)", "screen.focus_findings"),
    ("Toggle file list", "Show or hide the workspace list (Ctrl+B)", "screen.toggle_files"),
    ("Toggle light/dark theme", "Switch between the studio's dark and light themes (Ctrl+T)", "app.toggle_dark"),
    ("Help: keys", "Every key and its binding id (F1)", "app.help"),
    ("Graph: jump to step YAML", "Open the selected step in the editor (J)", "screen.jump"),
    ("Graph: simulate a router reply", "Highlight the path a reply takes (/)", "screen.simulate"),
    ("Graph: export Mermaid", "Write the graph as a Mermaid file (M)", "screen.export('mermaid')"),
    ("Graph: export DOT", "Write the graph as a Graphviz DOT file (D)", "screen.export('dot')"),
    ("Debug: step", "Run the next event of the call (S / F10)", "screen.step"),
    ("Debug: continue", "Run to the next breakpoint (C / F8)", "screen.continue_run"),
    ("Debug: run to end", "Run the whole call (G)", "screen.run_to_end"),
    ("Debug: restart", "Start the call again (Shift+R)", "screen.restart"),
    ("Debug: toggle breakpoint", "Break before the selected stage (B / F9)", "screen.toggle_breakpoint"),
    ("Debug: save trace", "Write the call's events as JSON Lines (W)", "screen.save_trace"),
    ("Debug: open trace", "Replay or inspect a recorded trace (O)", "screen.open_trace_prompt"),
    ("Debug: edit reply or error", "Change the next reply or remedy error before resuming (E)", "screen.edit_pending"),
    ("Eval: run", "Run the contract over the dataset (R)", "screen.run_eval"),
    ("Eval: open in the debugger", "The selected row's recorded call, ready to replay (Enter)", "screen.open_row"),
    ("Quit", "Leave the studio (asks when there are unsaved changes) (Ctrl+Q)", "app.quit"),
]


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
            found.append((title, help_text, action))
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
