"""The debugger's recorded calls: save a call's trace, open a trace file, and set up its replay.

A trace opened from a file has no session: the file is the source, and R runs the recorded call again with its
recorded input and replies. A base class of DebugScreen.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from textual.widgets import OptionList, Select
from textual.widgets.option_list import Option

from contractstudio.runtime.events import StageStart
from contractstudio.studio.screens.call_setup import CallSetup
from contractstudio.studio.screens.dialogs import PathPrompt
from contractstudio.studio.textual_internals import offered_values
from contractstudio.studio.widgets.events import event_line


class RecordedTraces(CallSetup):
    """Saving and opening traces; an opened trace sets the pickers to replay it (needs `events`, `breakpoints`, ...)."""

    events: list[Any]
    breakpoints: set[str]

    def _show(self, event: Any) -> None:
        """DebugScreen's: draw one event."""

    def _perf(self) -> None:
        """DebugScreen's: draw the perf table."""

    def action_save_trace(self) -> None:
        """Write the call's events as JSON Lines."""
        if self.session is None or not self.events:
            self.notify("No call to save yet: step first.", severity="warning")
            return
        chosen = self.contract_doc
        default = str((chosen[0].parent if chosen else Path.cwd()) / f"{chosen[1].name if chosen else 'call'}.trace.jsonl")
        self.app.push_screen(PathPrompt("Save the trace (JSON Lines) to:", default), self._save_trace)

    def _save_trace(self, target: str | None) -> None:
        if not target or self.session is None:
            return
        try:
            self.session.trace.write(target)
        except OSError as err:
            self.notify(f"Could not write {target}: {err.strerror or err}", severity="error")
            return
        self.studio.workspace.add(Path(target))
        self.notify(f"Saved the trace to {target}", timeout=4)

    def action_open_trace_prompt(self) -> None:
        """Open a recorded trace to inspect it."""
        traces = self.studio.workspace.of_kind("trace")
        default = str(traces[0].path) if traces else ""
        self.app.push_screen(PathPrompt("Open a trace (JSON Lines):", default, action="open"),
                             lambda p: self.open_trace(Path(p)) if p else None)

    def open_trace(self, path: Path) -> None:
        """Show a recorded trace's events (no session: the file is the source)."""
        from contractstudio.runtime.trace import Trace

        try:
            trace = Trace.read(path)
        except (OSError, ValueError) as err:
            self.notify(f"Cannot read the trace {path}: {err}", severity="error")
            return
        self.session = None
        self.trace_file = path
        self.events = list(trace)
        self._match_trace(path)
        timeline = self.query_one("#timeline", OptionList)
        timeline.clear_options()
        timeline.add_options([Option(event_line(e, self.breakpoints)) for e in self.events])
        if self.events:
            timeline.highlighted = 0
            self._show(self.events[0])
        self._perf()
        self._status()

    def _match_trace(self, path: Path) -> None:
        """Select the trace's contract and its replay, so R re-runs the recorded call."""
        name = next((e.get("contract") for e in self.events if e.get("contract")), None)
        index = next((i for i, (_, doc) in enumerate(self.contracts) if doc.name == name), None)
        if index is None:
            return
        self.query_one("#contract-select", Select).value = index
        self._fill_choices()
        for select, value in (("#input-select", f"trace:{path}"), ("#model-select", f"replay:{path}")):
            widget = self.query_one(select, Select)
            if value in offered_values(widget):
                widget.value = value  # its recorded input with its recorded replies: the replay does not diverge
        if self.query_one("#input-select", Select).value != f"trace:{path}":  # a trace from outside the workspace
            recorded = next((e.value for e in self.events if isinstance(e, StageStart) and e.stage == "input"), None)
            if recorded is not None:
                self.typed_input = recorded
                self.query_one("#input-select", Select).value = "typed"
        self._last_setup = self._setup_key()
