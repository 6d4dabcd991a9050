"""The events of a pipeline run: typed as a contracted call's are (runtime/events.py), one class per event type.

The runner (pipeline_runner.py) makes them; eval keeps them in a row's record through `Trace.to_dicts`, the same
lines a call's trace writes:

    step_start StepStarted    step_skipped StepSkipped    step_end StepEnded    result PipelineFinished

They are not read back from a trace file as these classes (a trace names a contract's events; a pipeline's `result`
is not a call's): reading one gives `PlainEvent`s, as before.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from contractstudio.runtime.events import Event

STAGE = "pipeline"  # every pipeline event's stage


@dataclass(slots=True, eq=False, repr=False)
class StepStarted(Event):
    """A step begins."""

    TYPE: ClassVar[str] = "step_start"

    step: str = ""
    action: str = ""


@dataclass(slots=True, eq=False, repr=False)
class StepSkipped(Event):
    """A step whose soft requirement is unmet: it does nothing, and the run goes on (why)."""

    TYPE: ClassVar[str] = "step_skipped"

    step: str = ""
    action: str = ""
    reason: str = ""


@dataclass(slots=True, eq=False, repr=False)
class StepEnded(Event):
    """A step ended: `ok` with the route taken and the next step (None at the end), or failed with its error."""

    TYPE: ClassVar[str] = "step_end"

    step: str = ""
    action: str = ""
    ok: bool = True
    error: str | None = None
    route: str | None = None
    next: str | None = None
    duration_s: float = 0.0

    @property
    def data(self) -> dict[str, Any]:
        """A failed step's line has its error, an ended one its route and next step (None: the run's end)."""
        tail: dict[str, Any] = {"route": self.route, "next": self.next} if self.ok else {"error": self.error}
        return {"step": self.step, "action": self.action, "ok": self.ok, **tail, "duration_s": self.duration_s}


@dataclass(slots=True, eq=False, repr=False)
class PipelineFinished(Event):
    """The run reached an end step."""

    TYPE: ClassVar[str] = "result"

    successful: bool = True
    steps: int = 0
