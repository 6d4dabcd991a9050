"""Driving a call: step by step with breakpoints and edits (the studio), or straight to the end (`call`).

Stepping is pausing the one generator of `engine.run_call`, never a second
implementation; the time a caller holds a session paused is excluded from
every timing.
"""

from __future__ import annotations

from typing import Any

from contractstudio.expressions.sandbox import shared_expression_budget
from contractstudio.runtime import otel
from contractstudio.runtime.asking import ModelCall, Pause, pause
from contractstudio.runtime.call_state import CallOptions, CallState
from contractstudio.runtime.compiled import CompiledContract
from contractstudio.runtime.engine import run_call
from contractstudio.runtime.errors import ContractViolation
from contractstudio.runtime.events import STAGES, Event, ModelRequest, Row, StageStart, ValidationFailure
from contractstudio.runtime.models import Model
from contractstudio.runtime.perf import PerfStats
from contractstudio.runtime.trace import Trace


class Result:
    """What a call returned: success, the output, every error, the attempts, the trace and perf stats."""

    def __init__(self, state: CallState) -> None:
        self.successful: bool = state.successful
        self.output: Any = state.final
        self.errors: list[str] = list(state.errors)
        self.attempts: int = state.remedy_attempts
        self.llm_calls: int = state.llm_calls
        self.trace: Trace = state.trace
        self.violation: ContractViolation | None = state.violation
        self._state = state
        self._accumulated = state.accumulated
        self._output_shape = state.plan.output

    @property
    def output_data(self) -> Any:
        """The output as plain JSON data."""
        return None if self.output is None else self._output_shape.dump(self.output)

    @property
    def duration_s(self) -> float:
        """The call's own time in seconds (time a debugger held it paused excluded): eval's latency of a row."""
        return float(self._state.total or 0.0)

    def perf_stats(self, cumulative: bool = True) -> dict[str, Any]:
        """Perf stats of every call of this contract object so far (or of this call only)."""
        if cumulative and self._accumulated is not None:
            return self._accumulated.as_dict()
        return self._state.perf.as_dict()

    def __repr__(self) -> str:
        from contractstudio.runtime.trace import redact

        return redact(f"Result(successful={self.successful}, attempts={self.attempts}, llm_calls={self.llm_calls}, "
                      f"output={self.output_data!r:.200})")


class Session:
    """A call that the caller steps through: one event per `step()`, breakpoints per stage, edits before resuming.

    Everything a debugger needs to step lives here: `step`, `continue_` (to the next breakpoint, leaving the one
    paused at), `run`, `restart`, the breakpoints (`toggle_breakpoint`, `at_breakpoint`) and which edit the event
    paused at allows (`pending_edit`); a screen only draws the trace and says which of these to do.
    """

    def __init__(self, plan: CompiledContract, raw_input: Any, model: Model, options: CallOptions | None = None,
                 *, accumulated: PerfStats | None = None, breakpoints: set[str] | None = None) -> None:
        plan.refuse_untrusted()
        prepare = getattr(model, "prepare", None)
        if prepare is not None:
            prepare()  # one-time set-up (litellm's import) happens before the call's clock starts
        self.plan, self.raw_input, self.model, self.options = plan, raw_input, model, options or CallOptions()
        self.accumulated = accumulated
        self.breakpoints: set[str] = set()
        for stage in breakpoints or ():
            self.toggle_breakpoint(stage)
        self._begin()

    def _begin(self) -> None:
        self.state = CallState(self.plan, self.raw_input, self.model, self.options, self.accumulated)
        self._events = run_call(self.state)
        self._send: Any = None
        # Until its first step a new session only waits (the studio restarts, the user reads): not the call's time.
        self._held_since: float | None = self.options.clock()
        self._last: Row | Event | None = None  # the event paused at, as the engine recorded it (a row until read)
        self.done = False
        self._result: Result | None = None

    @property
    def trace(self) -> Trace:
        return self.state.trace

    @property
    def last(self) -> Event | None:
        """The event the call is paused at (the last one, once it is over)."""
        item = self._last  # not written back: the UI thread asks while a worker steps (the trace keeps the event)
        return item if item is None or isinstance(item, Event) else self.state.trace.event_of(item)

    # Breakpoints and edits -----------------------------------------------------------------

    def toggle_breakpoint(self, stage: str) -> bool:
        """Break (or stop breaking) at the start of a stage; whether it is set now."""
        if stage not in STAGES:
            raise ValueError(f"no stage {stage!r}; the stages are {', '.join(STAGES)}")
        self.breakpoints ^= {stage}
        return stage in self.breakpoints

    @property
    def at_breakpoint(self) -> bool:
        """Paused at the start of a stage that has a breakpoint."""
        return not self.done and isinstance(self.last, StageStart) and self.last.stage in self.breakpoints

    @property
    def pending_edit(self) -> str | None:
        """What the event paused at lets the caller change before resuming: 'reply' (and the messages), 'errors', or None."""
        if self.done:
            return None
        if isinstance(self.last, ModelRequest):
            return "reply"
        if isinstance(self.last, ValidationFailure):
            return "errors"
        return None

    def edit_reply(self, text: str) -> None:
        """Use this text as the model's reply instead of calling the model (only at an llm_request)."""
        if self.pending_edit != "reply":
            raise RuntimeError("the reply can be edited only while paused at an llm_request event")
        self._send = {**(self._send or {}), "reply": text}

    def edit_messages(self, messages: list[dict[str, str]]) -> None:
        """Send these messages instead (only at an llm_request)."""
        if self.pending_edit != "reply":
            raise RuntimeError("the messages can be edited only while paused at an llm_request event")
        self._send = {**(self._send or {}), "messages": messages}

    def edit_errors(self, errors: list[str]) -> None:
        """Replace the error texts that the next remedy sends (only at a validation_error)."""
        if self.pending_edit != "errors":
            raise RuntimeError("the errors can be edited only while paused at a validation_error event")
        self._send = {"errors": list(errors)}

    # Driving -------------------------------------------------------------------------------

    def step(self) -> Event | None:
        """Run to the next event and pause there; None once the call is over."""
        return self.last if self._step() else None

    def _step(self) -> bool:
        """Run to the next event (kept as recorded in `_last`); False once the call is over."""
        if self.done:
            return False
        if self._held_since is not None:
            self.state.paused += self.options.clock() - self._held_since
        sent, self._send = self._send, None
        try:
            with shared_expression_budget(self.state.expressions):  # every evaluation of the call draws on it
                item = self._next(sent if self._last is not None else None)
        except StopIteration:
            self.done = True
            self._held_since = None
            return False
        self._last = item
        self._held_since = self.options.clock()
        return True

    def continue_(self) -> Event | None:
        """Run to the next breakpoint (the start of a stage in `breakpoints`), or to the end.

        Paused at a breakpoint, the first step leaves it: continuing never stays where it is.
        """
        while True:
            event = self.step()
            if event is None or self.at_breakpoint:
                return event

    def restart(self) -> None:
        """Start the call over: the same contract, input, model (its replies from the first again) and breakpoints.

        The old call's events are dropped; a call already finished stays counted in the contract's perf stats.
        """
        rewind = getattr(self.model, "rewind", None)
        if rewind is not None:
            rewind()
        self._begin()

    def perf_stats(self) -> dict[str, Any]:
        """This call's perf stats so far (live while stepping; the same table `run` prints)."""
        return self.state.perf.as_dict()

    def run(self, raise_on_violation: bool = True) -> Result:
        """Run to the end; raise ContractViolation when the contract says `on_failure: raise` and it failed."""
        if not self.done:
            # Nobody pauses from here on: the engine records its events without yielding them, and yields only what
            # this thread must do (a model's reply, a wait); a pending edit is delivered where the call is paused.
            self.state.watched = False
            if self._held_since is not None:
                self.state.paused += self.options.clock() - self._held_since
                self._held_since = None
            sent, self._send = (self._send if self._last is not None else None), None
            send, drive = self._events.send, self._drive
            with shared_expression_budget(self.state.expressions):
                try:
                    item = send(sent)
                    while True:  # `_next` inlined
                        while isinstance(item, _DRIVER_WORK):
                            item = drive(item)
                        item = send(None)  # not reached: an unwatched call yields nothing else
                except StopIteration:
                    pass
            self._last = self.state.trace.last()  # the event it ended at
            self.done = True
        return self._finish(raise_on_violation)

    async def arun(self, raise_on_violation: bool = True) -> Result:
        """`run` on an event loop: the model's replies and the waits are awaited, so one thread drives many calls.

        The same engine as `run`, driven to the end: a model with `acomplete` is awaited, one without (scripted,
        replayed) answers at once; waits are `asyncio.sleep` unless the options carry a sleep of their own (tests).
        """
        if self._held_since is not None:
            self.state.paused += self.options.clock() - self._held_since
            self._held_since = None
        self.state.watched = False  # driven to its end: events are recorded, not yielded (as in `run`)
        events, sent, error = self._events, (self._send if self._last is not None else None), None
        self._send = None
        with shared_expression_budget(self.state.expressions):
            try:
                while True:
                    item = events.throw(error) if error is not None else events.send(sent)
                    sent = error = None
                    if isinstance(item, ModelCall):
                        try:
                            sent = await _areply(item)
                        except Exception as err:  # noqa: BLE001 - the engine's own handlers decide, as in `run`
                            error = err
                    elif isinstance(item, Pause):
                        await pause(self.options.sleep, item.seconds)
                    else:
                        self._last = item
            except StopIteration:
                pass
        self._last = self.state.trace.last()
        self.done = True
        return self._finish(raise_on_violation)

    def _next(self, sent: Any) -> Row | Event:
        """The engine's next event (as it recorded it), doing the calls and waits it asks for on the way (this thread
        waits for them)."""
        item = self._events.send(sent)
        while isinstance(item, _DRIVER_WORK):
            item = self._drive(item)
        return item

    def _drive(self, item: ModelCall | Pause) -> Any:
        """Do what the engine asked (a model's reply, a wait) in this thread; the engine's next item."""
        if isinstance(item, ModelCall):
            try:
                reply = item.model.complete(item.request) if item.stream is None else item.model.stream(item.request, item.stream)
            except Exception as err:  # noqa: BLE001 - thrown into the engine, whose handlers decide
                return self._events.throw(err)
            return self._events.send(reply)
        self.options.sleep(item.seconds)
        return self._events.send(None)

    def _finish(self, raise_on_violation: bool) -> Result:
        result = self.result
        assert result is not None
        if result.violation is not None and raise_on_violation:
            result.violation.result = result
            raise result.violation
        return result

    @property
    def result(self) -> Result | None:
        """The result, once the call is over."""
        if self._result is None and self.state.finished:
            self._result = Result(self.state)
            if otel.active():  # spans from the finished trace, when an exporter is configured (runtime/otel.py)
                otel.export_call(self.state.trace.to_dicts(), self._result.duration_s)
        return self._result


_DRIVER_WORK = (ModelCall, Pause)  # what the engine yields for its driver to do (everything else is an event)


async def _areply(call: ModelCall) -> Any:
    """The reply to a model call on an event loop: streamed into the call's stream when it has one, awaited when the
    model can be (acomplete, astream), else asked in this thread (scripted, replayed)."""
    model = call.model
    if call.stream is not None:
        streaming = getattr(model, "astream", None)
        return await streaming(call.request, call.stream) if streaming is not None else model.stream(call.request, call.stream)
    asking = getattr(model, "acomplete", None)
    return await asking(call.request) if asking is not None else model.complete(call.request)
