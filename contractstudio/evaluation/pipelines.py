"""`eval PIPELINE --data FILE`: every row runs the pipeline with simulated actions and the row's model replies.

The row's input is the initial state; its `replies` answer the `call_model`
steps in order (the last one repeats). Every other action is simulated: it sets
the fields its contract ensures (to a placeholder, unless the state has them),
and a custom router takes the route named in the row's `meta.routes` or its
first route (a counting step, LocalAI-RAG's loop_guard, counts its passes as `simulate` does; a built-in
router is the runner's own: the reply decides). The runner is the real one (`runtime.pipeline_runner`), so the
runtime assertions (requires_state, requires_step, ensures_state) are the ones a
real run makes: the summary counts paths, the end steps reached, and the
assertion failures per step.
"""

from __future__ import annotations

import time
from collections import Counter
from pathlib import Path
from typing import Any

from contractstudio.documents.actions import CALL_MODEL
from contractstudio.evaluation.dataset import Row, digest
from contractstudio.evaluation.record_model import PipelineRecord
from contractstudio.evaluation.rows import RECORD_VERSION
from contractstudio.evaluation.summary import interval, with_interval
from contractstudio.evaluation.summary_model import AssertionFailures, PathCount, PipelineSummary
from contractstudio.runtime.events import Event
from contractstudio.runtime.pipeline_events import StepStarted
from contractstudio.runtime.pipeline_runner import PipelineAssertionError, PipelineError, PipelineRunner, bounded_route
from contractstudio.runtime.trace import Trace, redact
from contractstudio.safe_text import shown_lines

MAX_PATHS_SHOWN = 10


class PipelineRowRunner:
    """Simulates rows through one pipeline; thread-safe (all state is per row)."""

    def __init__(self, path: Path, *, name: str | None = None, dialect: str | None = None) -> None:
        from contractstudio.runtime.choosing import by_name
        from contractstudio.runtime.errors import ContractError
        from contractstudio.runtime.loading import load_file

        loaded = load_file(path, dialect=dialect)  # the one loader; a pipeline's hooks are simulated, never run
        models = loaded.documents("pipeline")
        if not models:
            raise ContractError(f"{path}: the file holds no kind: pipeline document", path=str(path))
        self.runner = PipelineRunner(by_name(models, name, path, "kind: pipeline document") if name else models[0], path=str(path))
        self.digest = digest(loaded.report.text)[:16]
        self.store = None

    def _handlers(self, row: Row) -> dict[str, Any]:
        replies = list(row.replies or [])
        found = row.meta.get("routes")
        routes: dict[str, Any] = found if isinstance(found, dict) else {}
        calls = [0]

        def ensure(state: dict[str, Any], step: dict[str, Any]) -> None:
            """What the action's contract says it sets, as placeholders (the row's replies are the only real values)."""
            for f in self.runner.catalog[step["action"]].ensures_state:
                if state.get(f) is None:
                    state[f] = f"<{step['action']}:{f}>"

        def call_model(state: dict[str, Any], step: dict[str, Any]) -> None:
            if not replies:
                raise PipelineError(f"step '{step['id']}': the row has no 'replies' for call_model", step["id"], CALL_MODEL)
            state["last_model_response"] = replies[min(calls[0], len(replies) - 1)]
            calls[0] += 1
            ensure(state, step)  # a catalog's model call may set more than the reply (LocalAI-RAG: banners)

        passes: dict[str, int] = {}  # a counting step's passes in this row, counted as the runner and simulate count

        def simulated(state: dict[str, Any], step: dict[str, Any]) -> Any:
            ensure(state, step)
            ons = [k[3:] for k, v in step.items() if k.startswith("on_") and isinstance(v, str)]
            if not ons or step.get("next") is not None:
                return None
            spec = self.runner.catalog[step["action"]]
            if step["id"] not in routes and spec.bound is not None:
                return bounded_route(self.runner.steps[step["id"]], spec.bound, self.runner.pipeline.settings, passes)[0]
            return str(routes.get(step["id"], ons[0]))

        # A router is the runner's own (the reply decides, as in simulate); every other action is simulated.
        handlers: dict[str, Any] = {name: simulated for name, spec in self.runner.catalog.items() if not spec.routing}
        handlers[CALL_MODEL] = call_model
        return handlers

    def run(self, row: Row) -> dict[str, Any]:
        """Simulate one row; its results record."""
        events: list[Event] = []
        started = time.perf_counter()
        state = dict(row.value) if isinstance(row.value, dict) else {}
        path: list[str] = []
        assertion = None
        message = ""
        try:
            run = self.runner.run(state, self._handlers(row), on_event=events.append)
            path, outcome, end = run.path, "end", run.path[-1]
        except PipelineAssertionError as err:
            outcome, end, message = "assertion_failed", None, str(err)
            assertion = {"step": err.step, "action": err.action, "field": err.field, "phase": err.phase}
        except PipelineError as err:
            outcome, end, message = ("step_limit" if "without reaching an end" in str(err) else "dead_end"), None, str(err)
        except Exception as err:  # noqa: BLE001 - a row that cannot be simulated is recorded, never lost
            outcome, end, message = "error", None, f"{type(err).__name__}: {err}"
        if not path:
            path = [e.step for e in events if isinstance(e, StepStarted)]
        return {"v": RECORD_VERSION, "kind": "pipeline", "key": row.key, "row": row.number, "id": row.id,
                "input": redact(row.value), "contract": self.runner.name, "contract_sha": self.digest,
                "outcome": outcome, "successful": outcome == "end", "path": path, "end_step": end,
                "failed_step": assertion["step"] if assertion else (path[-1] if outcome != "end" and path else None),
                "assertion": assertion, "errors": [redact(message)] if message else [],
                "latency_s": round(time.perf_counter() - started, 6), "trace": Trace(events).to_dicts()}


class PipelineTally:
    """Path counts, end steps reached, outcomes and assertion failures per step, over pipeline records."""

    def __init__(self) -> None:
        self.keys: set[str] = set()
        self.rows = 0
        self.bad_rows = 0
        self.outcomes: Counter[str] = Counter()
        self.paths: Counter[tuple[str, ...]] = Counter()
        self.ends: Counter[str] = Counter()
        self.assertions: dict[str, dict[str, Any]] = {}

    def add(self, rec: PipelineRecord) -> bool:
        """Count one record; False (and nothing counted) when its row was counted already."""
        if rec.key in self.keys:
            return False
        self.keys.add(rec.key)
        self.rows += 1
        self.outcomes[rec.outcome] += 1
        self.paths[tuple(rec.path)] += 1
        if rec.end_step:
            self.ends[rec.end_step] += 1
        failed = rec.assertion
        if failed is not None:
            entry = self.assertions.setdefault(failed.step, {"step": failed.step, "action": failed.action, "count": 0,
                                                             "fields": Counter(), "message": ""})
            entry["count"] += 1
            entry["fields"][f"{failed.phase} {failed.field}"] += 1
            if not entry["message"] and rec.errors:
                entry["message"] = rec.errors[0]
        return True

    def summary(self, *, duration_s: float | None = None, new_rows: int | None = None) -> PipelineSummary:
        n = self.rows
        timing: dict[str, Any] = {}
        if duration_s is not None:
            timing = {"duration_s": duration_s, "rows_this_run": n if new_rows is None else new_rows}
        return PipelineSummary(
            rows=n, bad_rows=self.bad_rows,
            reached_end=self.outcomes["end"], reached_end_rate=self.outcomes["end"] / n if n else 0.0,
            intervals={"reached_end_rate": interval(self.outcomes["end"], n)},
            outcomes=dict(self.outcomes.most_common()),
            paths=[PathCount(path=list(p), count=c) for p, c in self.paths.most_common()],
            end_steps=dict(self.ends.most_common()),
            assertion_failures=[AssertionFailures(**{**e, "fields": dict(e["fields"])}) for e in
                                sorted(self.assertions.values(), key=lambda e: (-e["count"], e["step"]))],
            **timing)


def render(s: PipelineSummary) -> str:
    """A pipeline summary as text."""
    n = s.rows
    lines = [f"rows: {n}" + (f" ({s.bad_rows} bad row(s) skipped)" if s.bad_rows else ""),
             f"reached an end: {s.reached_end} ({with_interval(s, 'reached_end_rate')})   outcomes: "
             + ", ".join(f"{k} {v}" for k, v in s.outcomes.items())]
    if s.end_steps:
        lines.append("end steps: " + ", ".join(f"{k} {v}" for k, v in s.end_steps.items()))
    lines.append("paths:")
    for p in s.paths[:MAX_PATHS_SHOWN]:
        lines.append(f"  {p.count:>5}  {' -> '.join(p.path) or '(no step)'}")
    if len(s.paths) > MAX_PATHS_SHOWN:
        lines.append(f"  ... and {len(s.paths) - MAX_PATHS_SHOWN} more")
    if s.assertion_failures:
        lines.append("runtime assertion failures per step:")
        for e in s.assertion_failures:
            fields = ", ".join(f"{k} ({v})" for k, v in e.fields.items())
            lines.append(f"  {e.count:>5}  {e.step} [{e.action}]: {fields}")
            if e.message:
                lines.append(f"         {e.message}")
    return shown_lines(lines)  # a step id is one line
