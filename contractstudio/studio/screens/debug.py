"""Debug mode: step through a contracted call (scripted, replayed or live) and see exactly what was sent.

The runtime is imported here, lazily, when the first session starts: never at studio start-up.
Stepping runs in a thread worker (a live call may take seconds); the screen only redraws from
the session's trace, which is also what a saved trace file holds (the Memray pattern).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.screen import Screen
from textual.widgets import Footer, OptionList, Select, Static
from textual.widgets.option_list import Option
from textual.worker import Worker, WorkerState

from contractstudio.studio import calls
from contractstudio.studio.screens.dialogs import PathPrompt, TextPrompt
from contractstudio.studio.widgets.events import event_line, event_view

STAGES = ("input", "pre", "act", "generate", "post", "forward", "finalize")


class DebugScreen(Screen[None]):
    """The debugger screen (mode `debug`)."""

    BINDINGS = [
        Binding("s,f10", "step", "Step", id="debug.step"),
        Binding("c,f8", "continue_run", "Continue", id="debug.continue"),  # F5 is Eval mode
        Binding("g", "run_to_end", "Run", id="debug.run"),
        Binding("R", "restart", "Restart", id="debug.restart"),
        Binding("b,f9", "toggle_breakpoint", "Breakpoint", id="debug.breakpoint"),
        Binding("e", "edit_pending", "Edit", id="debug.edit"),
        Binding("w", "save_trace", "Save trace", show=False, id="debug.save_trace"),
        Binding("o", "open_trace_prompt", "Open trace", show=False, id="debug.open_trace"),
    ]

    def __init__(self) -> None:
        super().__init__(id="debug-screen")
        self.contracts: list[tuple[Path, Any]] = []  # (file, contract document)
        self.session: Any = None
        self.events: list[Any] = []
        self.breakpoints: set[str] = {"post"}
        self.typed_input: Any = None
        self.typed_text: str | None = None
        self._pending: str | None = None  # a run asked for while the model client loads
        self.trace_file: Path | None = None
        self._problem = ""
        self._last_setup: tuple[Any, Any, Any] = (None, None, None)

    def compose(self) -> ComposeResult:
        with Horizontal(id="debug-setup"):
            yield Select([], prompt="contract", id="contract-select", compact=True)
            yield Select([], prompt="input", id="input-select", compact=True)
            yield Select([], prompt="model", id="model-select", compact=True)
        with Horizontal(id="debug-main"):
            yield OptionList(id="timeline")
            with VerticalScroll(id="event-view"):
                yield Static("", id="event-body")
        yield Static("", id="perf")
        yield Static("", id="debug-status")
        yield Footer(compact=True)

    def on_mount(self) -> None:
        self.query_one("#timeline").border_title = "Timeline"
        self.query_one("#event-view").border_title = "Event"
        self.query_one("#perf").border_title = "Perf"

    def on_resize(self) -> None:
        self.set_class(self.size.width < 100, "narrow")

    def on_screen_resume(self) -> None:
        self.on_resize()
        self._load_contracts()
        if not isinstance(self.focused, Select):
            self.query_one("#timeline").focus()  # the run keys (s, c, g, b) act from here

    # Set-up: contract, input, model ----------------------------------------------------------

    def _load_contracts(self) -> None:
        app = self.app
        files = [f.path for f in app.workspace.of_kind("contract")]  # type: ignore[attr-defined]
        if app.buffer is not None and app.buffer.path not in files and "kind: contract" in app.current_text():  # type: ignore[attr-defined]
            files.insert(0, app.buffer.path)  # type: ignore[attr-defined]
        def text_of(path: Path) -> str:
            return app.current_text() if app.buffer is not None and app.buffer.path == path else calls.read_text(path)  # type: ignore[attr-defined]

        contracts, self._problem = calls.runnable_contracts(files, text_of, app.context_for)  # type: ignore[attr-defined]
        unchanged = calls.signature(contracts) == calls.signature(self.contracts)
        self.contracts = contracts  # fresh documents for the next session, even when the choices stay the same
        if unchanged and self.query_one("#contract-select", Select).value != Select.NULL:
            self._status()
            return  # coming back from a dialog or another mode keeps the session where it was
        select = self.query_one("#contract-select", Select)
        current = select.value
        options = [(doc.name, i) for i, (path, doc) in enumerate(self.contracts)]
        select.set_options(options)
        preferred = next((i for i, (p, _) in enumerate(self.contracts) if app.buffer is not None and p == app.buffer.path), 0)  # type: ignore[attr-defined]
        if options:
            select.value = current if isinstance(current, int) and current < len(options) else preferred
            self._fill_choices()
        if self.session is None and self.trace_file is None:
            self._reset()
        self._last_setup = self._setup_key()  # the Select.Changed messages still queued are not user choices
        self._status()

    @property
    def contract_doc(self) -> tuple[Path, Any] | None:
        value = self.query_one("#contract-select", Select).value
        return self.contracts[value] if isinstance(value, int) and value < len(self.contracts) else None

    def _setup_key(self) -> tuple[Any, Any, Any]:
        return tuple(self.query_one(f"#{name}-select", Select).value for name in ("contract", "input", "model"))  # type: ignore[return-value]

    def _setup_changed(self) -> bool:
        # Select.Changed arrives after the fact (also for values set by code): only a real change resets the call.
        return self._setup_key() != self._last_setup

    @on(Select.Changed, "#contract-select")
    def _contract_changed(self) -> None:
        if self._setup_changed():
            self._fill_choices()
            self._reset()

    def _fill_choices(self) -> None:
        chosen = self.contract_doc
        traces = [f.path for f in self.app.workspace.of_kind("trace")]  # type: ignore[attr-defined]
        inputs = calls.input_choices(chosen[1], traces) if chosen else [("typed YAML…", "typed")]
        models = calls.model_choices(chosen[1], traces) if chosen else []
        self.query_one("#input-select", Select).set_options(inputs)
        self.query_one("#model-select", Select).set_options(models)
        if inputs:
            self.query_one("#input-select", Select).value = inputs[0][1]
        if models:
            self.query_one("#model-select", Select).value = models[0][1]

    @on(Select.Changed, "#input-select")
    def _input_changed(self, event: Select.Changed) -> None:
        if not self._setup_changed():
            return
        if event.value == "typed":
            chosen = self.contract_doc
            start = self.typed_text if self.typed_text is not None else (calls.input_skeleton(chosen[1]) if chosen else "{}\n")
            self.app.push_screen(TextPrompt("Input for the call (YAML or JSON)", start, check=calls.yaml_problem), self._typed)
        self._reset()

    def _typed(self, text: str | None) -> None:
        if text is None:
            return
        from contractstudio.reading.source import read_value  # the documents' reader and limits (depth, aliases, tags)

        self.typed_text = text  # reopening the dialog shows what was typed, comments and all
        try:
            self.typed_input = read_value(text, "input")  # the dialog accepted only text this reads
        except ValueError as err:
            self.notify(f"The input cannot be used: {err}", severity="error")

    @on(Select.Changed, "#model-select")
    def _model_changed(self) -> None:
        self._load_client()
        if self._setup_changed():
            self._reset()

    def _input_value(self) -> Any:
        chosen = self.contract_doc
        value = self.query_one("#input-select", Select).value
        if chosen is None or not isinstance(value, str):
            return None
        return calls.input_value(chosen[1], value, self.typed_input)

    def _model(self, contract: Any) -> Any:
        return calls.make_model(contract, str(self.query_one("#model-select", Select).value))

    # Running --------------------------------------------------------------------------------

    def _reset(self) -> None:
        self._last_setup = self._setup_key()
        self.session = None
        self.events = []
        self.trace_file = None
        self._show_stages()
        self.query_one("#event-body", Static).update(Text("S steps, C continues to a breakpoint (●), G runs to the end.", style="dim"))
        self.query_one("#perf", Static).update("")
        self._status()

    def _start(self) -> bool:
        chosen = self.contract_doc
        if chosen is None:
            self.notify(self._problem or "No contract without errors in the workspace.", severity="warning")
            return False
        from contractstudio.runtime.errors import Untrusted

        try:
            from contractstudio.runtime.api import Contract

            contract = Contract(chosen[1], path=str(chosen[0]), trusted=self.app.trust.allows(chosen[0]))  # type: ignore[attr-defined]
            self.session = contract.session(self._input_value(), self._model(contract), breakpoints=set(self.breakpoints))
        except Untrusted as err:  # a hook, or a key sent where only the file says
            self.session = None
            self._ask_trust(chosen[0], str(err))
            return False
        except Exception as err:  # noqa: BLE001 - a refused or broken set-up is shown, never a traceback
            self.session = None
            self.query_one("#event-body", Static).update(Text(f"Cannot start the call: {err}", style="bold red"))
            return False
        self.events = []
        self.trace_file = None
        self._last_setup = self._setup_key()
        self.query_one("#timeline", OptionList).clear_options()
        return True

    def _ask_trust(self, path: Path, why: str) -> None:
        """Hooks (and keys sent where a file says) need the file's folder trusted: ask; the answer is for that folder only."""
        from contractstudio.studio.screens.dialogs import Choice
        from contractstudio.trust import folder_of

        folder = folder_of(path)
        trust = self.app.trust  # type: ignore[attr-defined]

        def answer(choice: str | None) -> None:
            if choice == "once":
                trust.grant(folder)  # this session, this folder (and its subfolders) only
            elif choice == "always":
                try:
                    trust.remember(folder)
                except OSError as err:
                    trust.grant(folder)
                    self.notify(f"Could not remember the trust: {err}; trusted for this session", severity="warning")
            if choice in ("once", "always"):
                self.notify(f"Trusted {folder}: press S, C or G again to run the call.", timeout=4)

        self.app.push_screen(Choice("Trust this folder?", f"{why}\n\nTrust {folder} (and its subfolders) to run its Python "
                                    "hooks and send keys where its files say?",
                                    [("once", "Trust now"), ("always", "Always"), ("cancel", "Cancel")]), answer)

    def _drive(self, how: str) -> None:
        if self.session is None and self.trace_file is None and self._waiting_for_client(how):
            return
        if self.session is None and self.trace_file is None and not self._start():
            return
        if self.session is None:
            self.notify("This is a recorded trace: choose a model and press R to run the call again.", timeout=4)
            return
        if self.session.done:
            self.notify("The call is over: R restarts it.", timeout=3)
            return
        session = self.session

        def work() -> None:
            if how == "step":
                session.step()
            elif how == "continue":
                session.breakpoints = set(self.breakpoints)
                session.step()  # leave the breakpoint we are paused at
                if not session.done and not (session.last and session.last.type == "stage_start" and session.last.stage in session.breakpoints):
                    session.continue_()
            else:
                while session.step() is not None:
                    if len(session.trace) % 8 == 0:
                        self.app.call_from_thread(self._sync)
            self.app.call_from_thread(self._sync)

        self._status(running=True)
        self.run_worker(work, name=f"debug-{how}", group="debug", thread=True, exclusive=True, exit_on_error=False)

    # The live model's client (litellm) loads in the background: never on the UI thread, never in a call's time.

    def _live_chosen(self) -> bool:
        return self.query_one("#model-select", Select).value == "live"

    def _load_client(self) -> None:
        if self._live_chosen() and not calls.client_ready() and not any(w.group == "model-client" for w in self.workers):

            def load() -> None:
                calls.load_client()
                self.app.call_from_thread(self._client_loaded)

            self.run_worker(load, name="model-client", group="model-client", thread=True, exit_on_error=False)
            self._status()

    def _client_loaded(self) -> None:
        self._status()
        pending, self._pending = self._pending, None
        if pending is not None and self.is_current:
            self._drive(pending)

    def _waiting_for_client(self, how: str) -> bool:
        """Hold a live run until the model client is loaded (the call starts then, by itself)."""
        if not self._live_chosen() or calls.client_ready():
            return False
        self._pending = how
        self._load_client()
        self._status()
        return True

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        if event.worker.group == "model-client" and event.state == WorkerState.ERROR:
            self._pending = None
            self.notify(f"Could not load the model client: {event.worker.error}", severity="error", timeout=8)
            self._status()
        if event.worker.group == "debug" and event.state == WorkerState.ERROR:
            self.app.worker_failed("The call failed inside the engine", event.worker.error)  # type: ignore[attr-defined]
            self._status()

    def _sync(self) -> None:
        """Redraw from the session's trace: new timeline rows, the paused-at event, perf."""
        if self.session is None:
            return
        trace = list(self.session.trace)
        timeline = self.query_one("#timeline", OptionList)
        if timeline.option_count and not self.events:
            timeline.clear_options()
        new = trace[len(self.events):]
        self.events = trace
        timeline.add_options([Option(event_line(e, self.breakpoints)) for e in new])
        if self.events:
            timeline.highlighted = len(self.events) - 1
            self._show(self.events[-1])
        self._perf()
        self._status()

    def _show(self, event: Any) -> None:
        self.query_one("#event-body", Static).update(event_view(event, self.events))

    def _perf(self) -> None:
        if self.session is not None:
            stats = self.session.state.perf.as_dict()
        elif self.events:  # a recorded trace: rebuilt from its events
            stats = calls.stats_of_events(self.events)
        else:
            return
        perf = self.query_one("#perf", Static)
        perf.update(calls.perf_text(stats, self.size.width - perf.styles.gutter.width))

    def _show_stages(self) -> None:
        timeline = self.query_one("#timeline", OptionList)
        timeline.clear_options()
        for stage in STAGES:
            t = Text("    ")
            t.append("● " if stage in self.breakpoints else "  ", style="bold red")
            t.append(stage, style="bold")
            timeline.add_option(Option(t))

    def _status(self, running: bool = False) -> None:
        status = self.query_one("#debug-status", Static)
        bp = ", ".join(s for s in STAGES if s in self.breakpoints) or "none"
        if running:
            state = "[b yellow]running…[/]"
        elif self.trace_file is not None:
            state = f"trace {self.trace_file.name}: {len(self.events)} events"
        elif self.session is None and self._live_chosen() and not calls.client_ready():
            state = "[b yellow]loading model client…[/]" + (" (the call starts when it is ready)" if self._pending else "")
        elif self.session is None:
            state = "ready" + (f" · {self._problem}" if self._problem else "")
        elif self.session.done:
            r = self.session.result
            state = f"[b {'green' if r.successful else 'red'}]{'success' if r.successful else 'failed'}[/] · {r.llm_calls} LLM call(s), {r.attempts} remedy attempt(s)"
        else:
            last = self.session.last
            state = f"paused at #{last.seq} {last.stage}/{last.type}" if last else "ready"
        status.update(f" {state} · breakpoints: {bp}")

    @on(OptionList.OptionHighlighted, "#timeline")
    def _selected(self, event: OptionList.OptionHighlighted) -> None:
        if self.events and 0 <= event.option_index < len(self.events):
            self._show(self.events[event.option_index])

    # Actions -------------------------------------------------------------------------------

    def action_step(self) -> None:
        """Run the call to its next event."""
        self._drive("step")

    def action_continue_run(self) -> None:
        """Run to the start of the next stage with a breakpoint."""
        self._drive("continue")

    def action_run_to_end(self) -> None:
        """Run the whole call."""
        self._drive("run")

    def action_restart(self) -> None:
        """Start the call again with the same contract, input, model and breakpoints."""
        self._reset()
        if self._start():
            self._status()

    def action_toggle_breakpoint(self) -> None:
        """Break before the stage of the selected timeline row."""
        timeline = self.query_one("#timeline", OptionList)
        index = timeline.highlighted
        if index is None:
            return
        stage = self.events[index].stage if self.events else STAGES[index]
        self.breakpoints ^= {stage}
        if self.session is not None:
            self.session.breakpoints = set(self.breakpoints)
        if self.events:
            for i, e in enumerate(self.events):
                if e.type == "stage_start" and e.stage == stage:
                    timeline.replace_option_prompt_at_index(i, event_line(e, self.breakpoints))
        else:
            self._show_stages()
            timeline.highlighted = index
        self._status()

    def action_edit_pending(self) -> None:
        """Edit the reply (paused at a request) or the error texts (paused at validation errors) before resuming."""
        last = self.session.last if self.session is not None and not self.session.done else None
        if last is not None and last.type == "llm_request":
            self.app.push_screen(TextPrompt("Reply the model gives instead (nothing is sent to the model)", "", language=None,
                                            help_text="What if the model had answered this? Ctrl+S uses it, then step on."), self._edited_reply)
        elif last is not None and last.type == "validation_error":
            errors = "\n".join(str(e) for e in last.get("errors") or [])
            self.app.push_screen(TextPrompt("Error texts the remedy sends (one per line)", errors, language=None), self._edited_errors)
        else:
            self.notify("Pause at a model request (to write its reply) or at validation errors (to edit them): step there first.", timeout=5)

    def _edited_reply(self, text: str | None) -> None:
        if text is not None and self.session is not None:
            self.session.edit_reply(text)
            self.notify("The next step uses your reply.", timeout=3)

    def _edited_errors(self, text: str | None) -> None:
        if text is not None and self.session is not None:
            self.session.edit_errors([line for line in text.splitlines() if line.strip()])
            self.notify("The remedy will send your error text.", timeout=3)

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
        self.app.workspace.add(Path(target))  # type: ignore[attr-defined]
        self.notify(f"Saved the trace to {target}", timeout=4)

    def action_open_trace_prompt(self) -> None:
        """Open a recorded trace to inspect it."""
        traces = self.app.workspace.of_kind("trace")  # type: ignore[attr-defined]
        default = str(traces[0].path) if traces else ""
        self.app.push_screen(PathPrompt("Open a trace (JSON Lines):", default), lambda p: self.open_trace(Path(p)) if p else None)

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
            if any(v == value for _, v in widget._options):  # noqa: SLF001 - no public accessor
                widget.value = value  # its recorded input with its recorded replies: the replay does not diverge
        if self.query_one("#input-select", Select).value != f"trace:{path}":  # a trace from outside the workspace
            recorded = next((e.get("value") for e in self.events if e.type == "stage_start" and e.stage == "input"), None)
            if recorded is not None:
                self.typed_input = recorded
                self.query_one("#input-select", Select).value = "typed"
        self._last_setup = self._setup_key()
