"""Debug mode: step through a contracted call (scripted, replayed or live) and see exactly what was sent.

The stepping is the runtime's `Session` (step, continue past a breakpoint, restart with the model rewound,
breakpoints, which edit the paused event allows); this screen says which to do, in a worker of the studio's one
style (studio/analyses.py), and redraws from the session's trace, which is also what a saved trace file holds.
The set-up pickers are call_setup.py's, the trace files recorded_traces.py's. The runtime is imported lazily.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.message import Message
from textual.widgets import OptionList, Select, Static
from textual.widgets.option_list import Option
from textual.worker import Worker, WorkerState

from contractstudio.runtime.events import STAGES, StageStart
from contractstudio.studio import calls
from contractstudio.studio.screens.dialogs import TextPrompt
from contractstudio.studio.screens.recorded_traces import RecordedTraces
from contractstudio.studio.widgets.events import event_line, event_view, growing_view
from contractstudio.studio.widgets.footer import StudioFooter

REDRAW_EVERY = 8  # events between redraws while a call runs to its end


class Stepped(Message):
    """Posted by the stepping worker: the session has new events to draw."""


class Growing(Message):
    """Posted by the stepping worker while a reply streams in: draw it as it is now (one posted until it is drawn)."""


class DebugScreen(RecordedTraces):
    """The debugger screen (mode `debug`)."""

    BINDINGS = [
        Binding("s,f10", "step", "Step", id="debug.step"),
        Binding("c,f8", "continue_run", "Continue", id="debug.continue"),  # F5 is Eval mode
        Binding("g", "run_to_end", "Run", id="debug.run"),
        Binding("R", "restart", "Restart", id="debug.restart"),
        Binding("b,f9", "toggle_breakpoint", "Breakpoint", id="debug.breakpoint"),
        Binding("e", "edit_pending", "Edit", id="debug.edit"),
        Binding("w", "save_trace", "Save trace", id="debug.save_trace"),
        Binding("o", "open_trace_prompt", "Open trace", id="debug.open_trace"),
    ]

    def __init__(self) -> None:
        super().__init__(id="debug-screen")
        self.contracts: list[tuple[Path, Any]] = []  # (file, contract document)
        self.session: Any = None
        self.events: list[Any] = []
        self.breakpoints: set[str] = {"post"}  # the session's once it starts (Session.toggle_breakpoint)
        self.typed_input: Any = None
        self.typed_text: str | None = None
        self._pending: str | None = None  # a run asked for while the contracts or the model client load
        self._trace_wanted: Path | None = None  # a trace to open once the contracts are known
        self.trace_file: Path | None = None
        self._problem = ""
        self._last_setup: tuple[Any, Any, Any] = (None, None, None)
        self._contracts_ready = False
        self._session_doc: Any = None  # the contract document the session runs
        self._stream: Any = None  # the reply streaming in now (runtime/streaming.py's ReplyStream), set by the worker
        self._growing_posted = False

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
        yield StudioFooter()

    def on_mount(self) -> None:
        self.query_one("#timeline").border_title = "Timeline"
        self.query_one("#event-view").border_title = "Event"
        self.query_one("#perf").border_title = "Perf"

    def on_resize(self) -> None:
        self.set_class(self.size.width < 100, "narrow")
        self._perf()  # the stage table or its packed lines: whichever fits the new width

    def on_screen_resume(self) -> None:
        self.on_resize()
        self._contracts_ready = False
        self.find_contracts()
        self._status()
        if not isinstance(self.focused, Select):
            self.query_one("#timeline").focus()  # the run keys (s, c, g, b) act from here

    def _contracts_loaded(self) -> None:
        wanted, self._trace_wanted = self._trace_wanted, None
        if wanted is not None:
            self.open_trace(wanted)
        pending, self._pending = self._pending, None
        if pending is not None and self.is_current:
            self._drive(pending)

    def open_trace(self, path: Path) -> None:
        """Show a recorded trace's events (once the contracts are known: its replay is then set up)."""
        if not self._contracts_ready:
            self._trace_wanted = path
            return
        super().open_trace(path)

    @on(Select.Changed, "#model-select")
    def _model_changed(self) -> None:
        self._load_client()
        if self._setup_changed():
            self._reset()

    # Running --------------------------------------------------------------------------------

    def _reset(self) -> None:
        self._last_setup = self._setup_key()
        self.session = None
        self.events = []
        self.trace_file = None
        self._show_stages()
        self.query_one("#event-body", Static).update(Text("s steps, c continues to a breakpoint (●), g runs to the end.", style="dim"))
        self.query_one("#perf", Static).update("")
        self._status()

    def _start(self, then: Callable[[], None] | None = None) -> bool:
        """Start a session of the chosen set-up; `then` is what was asked for, done once a trust question is answered."""
        chosen = self.contract_doc
        if chosen is None:
            self.notify(self._problem or "No contract without errors in the workspace.", severity="warning")
            return False
        from contractstudio.runtime.errors import Untrusted

        try:
            from contractstudio.runtime.api import build

            # the loader's build: a contract, or a class imported (its folder trusted, as for hooks), stepped alike
            contract = build(chosen[1], chosen[0], self.studio.trust.allows(chosen[0]))
            options = replace(self.studio.call_options(), on_chunk=self._grown)  # a reply is shown as it streams in
            self.session = contract.session(self._input_value(), self._model(contract), options=options,
                                            breakpoints=set(self.breakpoints))
            self._session_doc = chosen[1]
        except Untrusted as err:  # a hook, or a key sent where only the file says
            self.session = None
            self._ask_trust(chosen[0], str(err), then)
            return False
        except Exception as err:  # noqa: BLE001 - a refused or broken set-up is shown, never a traceback
            self.session = None
            self.query_one("#event-body", Static).update(Text(f"Cannot start the call: {err}", style="bold red"))
            return False
        self.events = []
        self.trace_file = None
        self._last_setup = self._setup_key()
        self._show_stages()  # the outline until the first event: a breakpoint can still be set on a stage
        return True

    def _drive(self, how: str) -> None:
        if self.session is None and self.trace_file is None and self._waiting(how):
            return
        if self.session is None and self.trace_file is None and not self._start(lambda: self._drive(how)):
            return
        if self.session is None:
            self.notify("This is a recorded trace: choose a model and press R to run the call again.", timeout=4)
            return
        if self.session.done:
            self.notify("The call is over: R restarts it.", timeout=3)
            return
        if any(w.group == "debug" and w.is_running for w in self.workers):
            return  # one stepping at a time: the session is not stepped from two threads
        self._status(running=True)
        self.run_call(self.session, how)

    @work(thread=True, exclusive=True, group="debug", exit_on_error=False)
    def run_call(self, session: Any, how: str) -> None:
        """One step, on to the next breakpoint, or to the end: the Session's own stepping."""
        if how == "step":
            session.step()
        elif how == "continue":
            session.continue_()
        else:
            while session.step() is not None:
                if len(session.trace) % REDRAW_EVERY == 0:
                    self.post_message(Stepped())
        self.post_message(Stepped())

    def _waiting(self, how: str) -> bool:
        """Hold a run until the contracts are analyzed and a live model's client is loaded (it starts then, by itself)."""
        if self._contracts_ready and (not self._live_chosen() or calls.client_ready()):
            return False
        self._pending = how
        if self._contracts_ready:
            self._load_client()
        self._status()
        return True

    # The live model's client (litellm) loads in the background (the app starts it after the first screen):
    # never on the UI thread, never in a call's time.

    def _load_client(self) -> None:
        if self._live_chosen() and not calls.client_ready():
            self.studio.load_model_client()
            self._status()

    def client_loaded(self) -> None:
        """The app's background import of the model client finished."""
        self._status()
        if self._pending is not None and self._contracts_ready and self.is_current:
            pending, self._pending = self._pending, None
            self._drive(pending)

    def client_failed(self) -> None:
        """The model client could not be loaded: a held live run is dropped."""
        self._pending = None
        self._status()

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        if event.state != WorkerState.ERROR:
            return
        if event.worker.group == "debug":
            self.studio.worker_failed("The call failed inside the engine", event.worker.error)
        elif event.worker.group == "debug-contracts":
            self._problem = f"analysis failed: {type(event.worker.error).__name__}: {event.worker.error}"
            self._contracts_ready = True
        self._status()

    @on(Stepped)
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
            # Scrolled to once the new rows are laid out: before that the list is as long as it was (issue 35.11)
            self.call_after_refresh(timeline.scroll_to_highlight)
            self._show(self.events[-1])
        self._perf()
        self._status()

    def _grown(self, stream: Any) -> None:
        """A chunk of the reply came (in the stepping worker): one redraw is posted until it is drawn."""
        self._stream = stream
        if not self._growing_posted:
            self._growing_posted = True
            self.post_message(Growing())

    @on(Growing)
    def _draw_growing(self) -> None:
        self._growing_posted = False
        stream = self._stream
        if stream is not None and self.session is not None and not self.session.done:
            self.query_one("#event-body", Static).update(growing_view(stream.text, stream.first_token_s, len(stream.ends)))

    def _show(self, event: Any) -> None:
        self.query_one("#event-body", Static).update(event_view(event, self.events, self._would_send(event)))

    def _would_send(self, event: Any) -> tuple[str, Any] | None:
        """For a request of a scripted run: the structure a live call to the contract's model would ask in."""
        from contractstudio.runtime.events import ModelRequest
        from contractstudio.runtime.models import ScriptedModel

        if self.session is None or not isinstance(event, ModelRequest) or not isinstance(self.session.model, ScriptedModel):
            return None
        from contractstudio.runtime.structured import live_structure

        return live_structure(self.session.plan, event.purpose)

    def _perf(self) -> None:
        if self.session is not None:
            stats = self.session.perf_stats()
        elif self.events:  # a recorded trace: its events say it
            from contractstudio.runtime.perf import PerfStats

            stats = PerfStats.of_events(self.events).as_dict()
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
        timeline.highlighted = 0  # a row to act on: `b` sets a breakpoint on the highlighted stage

    def _status(self, running: bool = False) -> None:
        status = self.query_one("#debug-status", Static)
        bp = ", ".join(s for s in STAGES if s in self.breakpoints) or "none"
        held = " (the call starts when it is ready)" if self._pending else ""
        if running:
            state = "[b yellow]running…[/]"
        elif self.trace_file is not None:
            state = f"trace {self.trace_file.name}: {len(self.events)} events"
        elif not self._contracts_ready:
            state = "[b yellow]analyzing contracts…[/]" + held
        elif self.session is None and self._live_chosen() and not calls.client_ready():
            state = "[b yellow]loading model client…[/]" + held
        elif self.session is None:
            state = "ready" + (f" · {self._problem}" if self._problem else "")
        elif self.session.done:
            r = self.session.result
            state = (f"[b {'green' if r.successful else 'red'}]{'success' if r.successful else 'failed'}[/] · "
                     f"{r.llm_calls} LLM call(s), {r.attempts} remedy attempt(s)")
        else:
            last = self.session.last
            state = f"paused at #{last.seq} {last.stage}/{last.type}" if last else "ready"
        pair = " · replies: the input's own" if self.model_paired() else ""
        status.update(f" {state}{pair} · breakpoints: {bp}")

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
        chosen = self.contract_doc
        running = any(w.group == "debug" and w.is_running for w in self.workers)
        if self.session is not None and not running and chosen is not None and chosen[1] is self._session_doc:
            self.session.restart()  # the same model, its replies from the first again
            self.events = []
            self._show_stages()  # the outline again, as before the first step: breakpoints can be set on it
            self._status()
            return
        self._reset()
        if self._start(self.action_restart):
            self._status()

    def action_toggle_breakpoint(self) -> None:
        """Break before the stage of the selected timeline row."""
        timeline = self.query_one("#timeline", OptionList)
        index = timeline.highlighted
        if index is None:
            return
        stage = self.events[index].stage if self.events else STAGES[index]
        if self.session is not None:
            self.session.toggle_breakpoint(stage)
            self.breakpoints = set(self.session.breakpoints)
        else:
            self.breakpoints ^= {stage}
        if self.events:
            for i, e in enumerate(self.events):
                if isinstance(e, StageStart) and e.stage == stage:
                    timeline.replace_option_prompt_at_index(i, event_line(e, self.breakpoints))
        else:
            self._show_stages()
            timeline.highlighted = index
        self._status()

    def action_edit_pending(self) -> None:
        """Edit the reply (paused at a request) or the error texts (paused at validation errors) before resuming."""
        pending = self.session.pending_edit if self.session is not None else None
        if pending == "reply":
            prompt = TextPrompt("Reply the model gives instead (nothing is sent to the model)", "", language=None,
                                help_text="What if the model had answered this? Ctrl+S uses it, then step on.")
            self.app.push_screen(prompt, self._edited_reply)
        elif pending == "errors":
            errors = "\n".join(str(e) for e in self.session.last.get("errors") or [])
            self.app.push_screen(TextPrompt("Error texts the remedy sends (one per line)", errors, language=None), self._edited_errors)
        else:
            self.notify("Pause at a model request (to write its reply) or at validation errors (to edit them): "
                        "step there first.", timeout=5)

    def _edited_reply(self, text: str | None) -> None:
        if text is not None and self.session is not None:
            self.session.edit_reply(text)
            self.notify("The next step uses your reply.", timeout=3)

    def _edited_errors(self, text: str | None) -> None:
        if text is not None and self.session is not None:
            self.session.edit_errors([line for line in text.splitlines() if line.strip()])
            self.notify("The remedy will send your error text.", timeout=3)
