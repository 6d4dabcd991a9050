"""Driving a call: step by step with breakpoints and edits (the studio), or straight to the end (`call`).

Stepping is pausing the one generator of `engine.run_call`, never a second
implementation; the time a caller holds a session paused is excluded from
every timing.
"""

from __future__ import annotations

import time
from typing import Any

from contractstudio.runtime.compiled import CompiledContract
from contractstudio.runtime.engine import CallOptions, CallState, run_call
from contractstudio.runtime.errors import ContractViolation
from contractstudio.runtime.models import Model
from contractstudio.runtime.perf import PerfStats
from contractstudio.runtime.trace import Event, Trace


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
    """A call that the caller steps through: one event per `step()`, breakpoints per stage, edits before resuming."""

    def __init__(self, plan: CompiledContract, raw_input: Any, model: Model, options: CallOptions | None = None,
                 *, accumulated: PerfStats | None = None, breakpoints: set[str] | None = None) -> None:
        plan.refuse_untrusted()
        prepare = getattr(model, "prepare", None)
        if prepare is not None:
            prepare()  # one-time set-up (litellm's import) happens before the call's clock starts
        self.state = CallState(plan, raw_input, model, options or CallOptions(), accumulated)
        self.breakpoints: set[str] = set(breakpoints or ())
        self._events = run_call(self.state)
        self._send: Any = None
        # Until its first step a new session only waits (the studio restarts, the user reads): not the call's time.
        self._held_since: float | None = time.perf_counter()
        self.last: Event | None = None
        self.done = False
        self._result: Result | None = None

    @property
    def trace(self) -> Trace:
        return self.state.trace

    def edit_reply(self, text: str) -> None:
        """Use this text as the model's reply instead of calling the model (only at an llm_request)."""
        if self.last is None or self.last.type != "llm_request":
            raise RuntimeError("the reply can be edited only while paused at an llm_request event")
        self._send = {**(self._send or {}), "reply": text}

    def edit_messages(self, messages: list[dict[str, str]]) -> None:
        """Send these messages instead (only at an llm_request)."""
        if self.last is None or self.last.type != "llm_request":
            raise RuntimeError("the messages can be edited only while paused at an llm_request event")
        self._send = {**(self._send or {}), "messages": messages}

    def edit_errors(self, errors: list[str]) -> None:
        """Replace the error texts that the next remedy sends (only at a validation_error)."""
        if self.last is None or self.last.type != "validation_error":
            raise RuntimeError("the errors can be edited only while paused at a validation_error event")
        self._send = {"errors": list(errors)}

    def step(self) -> Event | None:
        """Run to the next event and pause there; None once the call is over."""
        if self.done:
            return None
        if self._held_since is not None:
            self.state.paused += time.perf_counter() - self._held_since
        sent, self._send = self._send, None
        try:
            event = self._events.send(sent) if self.last is not None else next(self._events)
        except StopIteration:
            self.done = True
            self._held_since = None
            return None
        self.last = event
        self._held_since = time.perf_counter()
        return event

    def continue_(self) -> Event | None:
        """Run to the next breakpoint (the start of a stage in `breakpoints`), or to the end."""
        while True:
            event = self.step()
            if event is None or (event.type == "stage_start" and event.stage in self.breakpoints):
                return event

    def run(self, raise_on_violation: bool = True) -> Result:
        """Run to the end; raise ContractViolation when the contract says `on_failure: raise` and it failed."""
        if self._send is not None or self.last is None:
            self.step()  # deliver a pending edit (or start the call) through the stepping path
        if not self.done:
            # nobody pauses from here on: drive the generator directly, without pause bookkeeping
            if self._held_since is not None:
                self.state.paused += time.perf_counter() - self._held_since
                self._held_since = None
            for event in self._events:
                self.last = event
            self.done = True
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
        return self._result
