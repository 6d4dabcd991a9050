"""One call's options (waits, transport retries, randomness) and its state: nothing in it outlives the call."""

from __future__ import annotations

import math
import random
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from contractstudio.expressions.sandbox import ExpressionBudget
from contractstudio.runtime.compiled import CompiledContract
from contractstudio.runtime.errors import ContractViolation
from contractstudio.runtime.events import E, Event, Row, StageEnd, StageStart
from contractstudio.runtime.models import Model
from contractstudio.runtime.perf import PerfStats, new_llm_counts
from contractstudio.runtime.streaming import ReplyStream, WatchFor, default_watch_for
from contractstudio.runtime.trace import Trace


@dataclass(slots=True)
class TransportRetry:
    """Backoff for transport faults (429, 5xx, timeouts, refused connections): separate from remedies."""

    tries: int = 4
    delay: float = 1.0
    backoff: float = 2.0
    max_delay: float = 30.0

    def wait(self, retry: int, retry_after: float | None = None) -> float:
        """Seconds before transport retry `retry` (1-based): the server's Retry-After or the backoff, never above max_delay."""
        base = retry_after if retry_after is not None else self.delay * self.backoff ** (retry - 1)
        return min(base, self.max_delay)

    def budget(self) -> float:
        """The longest a call may wait for its transport retries, all of them together."""
        return self.tries * self.max_delay

    def too_long(self, retry_after: float | None) -> str | None:
        """Why a server's Retry-After cannot be honoured by retrying (beyond every wait this call may make), or None."""
        if retry_after is None or retry_after <= self.budget():  # NaN is not <=: it is refused as well
            return None
        asked = f"{retry_after:,.0f} s" if math.isfinite(retry_after) else "forever"
        return f"the server asks to wait {asked}, more than the {self.budget():,.0f} s all retries may wait"


@dataclass(slots=True)
class CallOptions:
    """How one call behaves beyond the contract: waits, transport retries, randomness, sleeping, the clock."""

    wait: bool = True  # False: remedy and transport waits are computed and shown, not slept (tests, stepping)
    transport: TransportRetry = field(default_factory=TransportRetry)
    rng: random.Random | None = None
    sleep: Callable[[float], None] = time.sleep
    # Seconds from an arbitrary start: every time the call records (event times, stage times, the model's latency,
    # the pauses of a stepped call) is read from it, so a caller can make the timings reproducible.
    clock: Callable[[], float] = time.perf_counter
    structured_output: str | None = None  # eval's --structured: overrides the contract's llm.structured_output
    # The prefix watch of an output's clauses (runtime/prefix_watch.py's watch_for); None: replies are never cut early
    watch_for: WatchFor | None = default_watch_for
    # Called with the ReplyStream at each chunk of a streamed reply (the debugger shows the reply growing); a model
    # that streams streams every reply while it is set
    on_chunk: Callable[[ReplyStream], None] | None = None
    remedies: bool = True  # False (eval --judge): the first reply is judged and nothing is asked again


# The jitter of calls given no `rng`: the operating system's randomness, which keeps no state between calls (a
# seeded `random.Random()` per call cost more than the rest of a retry's own work: os.urandom plus seeding).
_SYSTEM_RANDOM = random.SystemRandom()


def remedy_wait(retry: Any, attempt: int, u: float) -> float:
    """Seconds before remedy attempt `attempt` (1-based): the formula lives with the retry settings (Retry.wait)."""
    return float(retry.wait(attempt, u))


class CallState:
    """Per-call state: nothing here outlives the call, nothing is shared between calls.

    What every call starts with the same (no errors yet, no attempts, not failed) is a class default, read until the
    call sets its own: a call's state is made once per call, and its dict stays small.
    """

    total: float | None = None
    stage_started = 0.0
    in_stages = 0.0
    failed = False
    invalid_input = False  # the input is not a valid value of the input type (and not repaired)
    successful = False
    final: Any = None
    violation: ContractViolation | None = None
    remedy_attempts = 0
    llm_calls = 0
    act_data: Any = None  # the act value as JSON, dumped once for the event and the messages
    failed_on: str | None = None  # the last validation failure: type (the reply), pre or post (a condition)
    forward_error: Exception | None = None  # what a Python contract's forward raised (re-raised after the call)
    structure: Any = None  # the structure this call's output requests ask for (runtime/structured.py), once chosen
    structure_fell_back = False  # a call falls back to the next structure mode once
    asked: Any = None  # the structure the last request asked for (its reply is read back through it)
    finished = False
    # A session steps the call: each event is yielded, so the caller can pause there and send an edit back. A call
    # driven to its end sets it False: its events are only recorded (the trace), none is yielded.
    watched = True

    def __init__(self, plan: CompiledContract, raw_input: Any, model: Model, options: CallOptions, accumulated: PerfStats | None) -> None:
        self.plan = plan
        self.raw_input = raw_input
        self.model = model
        self.options = options
        self._rng = options.rng
        self.trace = Trace()
        self._pending = self.trace.pending  # emit appends to it directly
        self._recorded = 0  # events recorded so far: the next one's seq (a reader may be building rows meanwhile)
        # Every condition and message placeholder of this call (remedy attempts included) shares one budget.
        self.expressions = ExpressionBudget(what="this call")
        self.stage_times: list[tuple[str, float]] = []
        self.llm = new_llm_counts()
        self.accumulated = accumulated
        self.clock = options.clock
        # The time an event is stamped with is the clock less `_origin`: the call's start plus the time the caller held
        # the session paused (`paused`), added once when it changes rather than subtracted at every event.
        self.started = self._origin = self.clock()
        self._paused = 0.0
        self.errors: list[str] = []
        # a condition with `remedy: false` failed, or the caller judges one reply only: the call ends without a remedy
        self.no_remedy = not options.remedies

    @property
    def paused(self) -> float:
        """Seconds the caller held the session paused; excluded from every timing."""
        return self._paused

    @paused.setter
    def paused(self, seconds: float) -> None:
        self._paused = seconds
        self._origin = self.started + seconds

    @property
    def rng(self) -> random.Random:
        """This call's randomness (jitter): the caller's `rng`, else the system's (no state, nothing to seed)."""
        return self._rng if self._rng is not None else _SYSTEM_RANDOM

    def now(self) -> float:
        """Seconds of this call so far, the time it was held paused left out."""
        return self.clock() - self._origin

    def emit(self, kind: type[Event], stage: str, *values: Any) -> Row:
        """Record an event now (numbered and timed) as a row: `values` are the class's data fields in their order
        (runtime/events.py), the trailing defaults left out. It becomes an `Event` when something reads it."""
        self._recorded = seq = self._recorded + 1
        row = (kind, seq, self.clock() - self._origin, stage, values)
        self._pending.append(row)
        return row

    def emit_event(self, event: E) -> E:
        """Number and time an event built already (the rare ones, written with their field names), and keep it."""
        self._recorded = event.seq = self._recorded + 1
        event.t = self.clock() - self._origin
        self._pending.append(event)
        return event

    def start(self, stage: str, *values: Any) -> Row:
        """A stage starts: a `StageStart` row (attempt, contract, model, value); `emit`'s work, without a second call."""
        self._recorded = seq = self._recorded + 1
        self.stage_started = t = self.clock() - self._origin
        row = (StageStart, seq, t, stage, values)
        self._pending.append(row)
        return row

    def end(self, stage: str, ok: bool) -> Row:
        """A stage ends: a `StageEnd` row with its duration since the stage started."""
        self._recorded = seq = self._recorded + 1
        t = self.clock() - self._origin
        duration = t - self.stage_started
        row = (StageEnd, seq, t, stage, (ok, duration))
        self._pending.append(row)
        self.stage_times.append((stage, duration))
        self.in_stages += duration
        return row

    @property
    def perf(self) -> PerfStats:
        """This call's perf stats so far (built on demand: the studio shows them live)."""
        stats = PerfStats()
        stats.record(self.stage_times, self.llm, self.total, self.in_stages)
        return stats

    def failure(self, last_failure_known: bool = True) -> ContractViolation:
        """The exception of this failed call, its class saying what failed last (seed 004's classes: a reply that
        never became a valid output is a ValueError, InvalidOutput; a failed rule a RuntimeError, ConditionFailed);
        a plain ContractViolation when something after the validations failed last (`last_failure_known` False)."""
        from contractstudio.runtime.errors import ConditionFailed, InvalidOutput

        kinds = {"type": InvalidOutput, "pre": ConditionFailed, "post": ConditionFailed}
        kind = kinds.get(self.failed_on or "", ContractViolation) if last_failure_known else ContractViolation
        return kind(f"contract '{self.plan.name}' failed", self.errors, self.trace)

    def fail(self, errors: list[str]) -> None:
        self.failed = True
        self.errors.extend(errors)
