"""Running a pipeline with runtime assertions (simulating the path of a router reply: route_simulation.py).

`PipelineRunner(pipeline).run(state, handlers={action: callable})` checks each
action's contract (documents/actions.py) before and after its step and fails fast
with `PipelineAssertionError` naming the step, the action and the field.
`prefix_router` is built in. `simulate(pipeline, reply)` walks the same graph
symbolically: the path a reply takes and the state fields known at each step.

A handler is called as `handler(state, step)`: `state` is the pipeline state
(a dict it may update in place), `step` the step's configuration (`id`,
`action` and every other key of the step). It returns None, a dict of state
updates, or a route name (a string) for a step with `on_<route>` targets.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from contractstudio.documents.actions import CALL_MODEL, SETTINGS, ActionSpec, action_catalog
from contractstudio.documents.models import Pipeline, Step
from contractstudio.reading.replies import extract_json
from contractstudio.runtime.events import Event
from contractstudio.runtime.pipeline_events import STAGE, PipelineFinished, StepEnded, StepSkipped, StepStarted
from contractstudio.runtime.trace import redacted_json as redacted_copy

Handler = Callable[[dict[str, Any], dict[str, Any]], Any]
EventSink = Callable[[Event], None]
MAX_STEPS = 1000  # a router loop that never exits stops here instead of hanging


class PipelineError(Exception):
    """A pipeline that cannot go on: no handler, no route for a reply, a loop past the step limit."""

    def __init__(self, message: str, step: str | None = None, action: str | None = None) -> None:
        super().__init__(message)
        self.step = step
        self.action = action


class PipelineAssertionError(PipelineError):
    """An action's contract does not hold at run time (seed 002: fail fast, say which and why)."""

    def __init__(self, message: str, step: str, action: str, field: str, phase: str) -> None:
        super().__init__(message, step, action)
        self.field = field
        self.phase = phase  # 'requires_state' | 'requires_step' | 'ensures_state'


def is_set(value: Any) -> bool:
    """A required field must exist and be non-empty: None and blank strings are unset (lists may be empty)."""
    return value is not None and not (isinstance(value, str) and not value.strip())


def has_content(value: Any) -> bool:
    """What a soft requirement asks (LocalAI-RAG's `state.x or []`): set, and not an empty list or mapping."""
    return is_set(value) and not (isinstance(value, (list, tuple, dict)) and not value)


def bounded_route(step: Step, bound: tuple[str, int, str, str], settings: Mapping[str, Any],
                  passes: dict[str, int]) -> tuple[str, str]:
    """The route a counting step (the catalog's `bound`: LocalAI-RAG's loop_guard) takes on this pass, and a note
    saying why; `passes` is the run's count per step, updated. The runner and `simulate` both count here."""
    setting, default, allow, deny = bound
    value = settings.get(setting)
    limit = value if isinstance(value, int) and not isinstance(value, bool) else default
    count = passes.get(step.id, 0)
    if count < limit:
        passes[step.id] = count + 1
        return allow, f"pass {count + 1} of {limit} (settings.{setting})"
    return deny, f"denied after {limit} passes (settings.{setting})"


def parse_prefix(reply: str, prefixes: list[tuple[str, str]]) -> tuple[str, str]:
    """(route, payload): trim leading whitespace, first matching prefix wins, the rest trimmed; else 'other'."""
    text = reply.lstrip()
    for route, prefix in prefixes:
        if text.startswith(prefix):
            return route, text[len(prefix):].strip()
    return "other", text.strip()


DECISION_KEYS = ("decision", "route", "mode")  # the JSON keys a decision router reads, first present wins


def parse_decision(reply: str) -> str:
    """The route a JSON reply names (its decision, route or mode, trimmed and lower-cased), or 'other'."""
    value, _problem = extract_json(reply)
    if isinstance(value, dict):
        for key in DECISION_KEYS:
            decision = str(value.get(key) or "").strip().lower()
            if decision:
                return decision
    return "other"


def step_prefixes(step: Step) -> list[tuple[str, str]]:
    """A prefix_router's (route, prefix) pairs in declaration order."""
    return [(k[: -len("_prefix")], v) for k, v in step.raw.items() if k.endswith("_prefix") and isinstance(v, str)]


@dataclass(slots=True)
class PipelineRun:
    """What a run did: the final state, the step ids in order, and the events."""

    state: dict[str, Any]
    path: list[str]
    events: list[Event] = field(default_factory=list)  # typed as a call's (runtime/pipeline_events.py)


class PipelineRunner:
    """A loaded pipeline that can run with handlers and be simulated; what `cs.load` returns for pipelines."""

    def __init__(self, pipeline: Pipeline, *, path: str | None = None, max_steps: int = MAX_STEPS) -> None:
        self.pipeline = pipeline
        self.path = path
        self.max_steps = max_steps
        self.catalog: dict[str, ActionSpec] = action_catalog(pipeline)
        self.steps: dict[str, Step] = {}
        for step in pipeline.steps:
            self.steps.setdefault(step.id, step)

    @property
    def name(self) -> str:
        return self.pipeline.name

    def __repr__(self) -> str:
        return f"<PipelineRunner {self.name!r} from {self.path or '<text>'}>"

    @classmethod
    def from_file(cls, path: str | Path, **kwargs: Any) -> PipelineRunner:
        """Analyze a pipeline file and build its runner; a file with errors raises ContractError."""
        from contractstudio.runtime.errors import ContractError
        from contractstudio.runtime.loading import Refused, load_file

        try:
            pipelines = load_file(path).documents("pipeline")
        except Refused as refused:
            errors = refused.diagnostics
            first = f": {errors[0].line}:{errors[0].column}: {errors[0].code} {errors[0].message}"
            raise ContractError(f"cannot run {path}: {len(errors)} error(s){first}", errors, str(path)) from None
        if not pipelines:
            raise ContractError(f"cannot run {path}: it holds no kind: pipeline document", path=str(path))
        return cls(pipelines[0], path=str(path), **kwargs)

    # ------------------------------------------------------------- running

    def run(self, state: Mapping[str, Any] | None = None, handlers: Mapping[str, Handler] | None = None, *,
            on_event: EventSink | None = None, max_steps: int | None = None) -> PipelineRun:
        """Execute from the entry step until an `end: true` step, asserting every action's contract."""
        from contractstudio.runtime import otel

        state = dict(state or {})
        if not otel.active():
            return self._run(state, handlers, on_event, max_steps)
        # The run's spans (runtime/otel.py), whether it ends or raises: its events, its first state and the replies of
        # its model calls (what a dataset row of it needs: evaluation/pipelines.py answers call_model with them).
        events: list[dict[str, Any]] = []
        first, replies = redacted_copy(state), []

        def keep(event: Event) -> None:
            events.append({"seq": event.seq, "t": event.t, "stage": event.stage, "type": event.type, **event.data})
            if event.type == "step_end" and event.get("action") == CALL_MODEL and "last_model_response" in state:
                replies.append(state["last_model_response"])
            if on_event is not None:
                on_event(event)

        started = time.perf_counter()
        try:
            run = self._run(state, handlers, keep, max_steps)
        except Exception as err:
            otel.export_pipeline(self.pipeline.name, events, time.perf_counter() - started, first, replies,
                                 f"{type(err).__name__}: {err}")
            raise
        otel.export_pipeline(self.pipeline.name, events, time.perf_counter() - started, first, replies)
        return run

    def _run(self, state: dict[str, Any], handlers: Mapping[str, Handler] | None,
             on_event: EventSink | None, max_steps: int | None) -> PipelineRun:
        handlers = dict(handlers or {})
        limit = max_steps or self.max_steps
        run = PipelineRun(state, [])
        started = time.perf_counter()

        def emit(event: Event) -> None:
            event.seq, event.t, event.stage = len(run.events), round(time.perf_counter() - started, 6), STAGE
            run.events.append(event)
            if on_event is not None:
                on_event(event)

        current = self.pipeline.entry_step_id
        if current not in self.steps:
            raise PipelineError(f"entry_step_id '{current}' is not a step of pipeline '{self.pipeline.name}'")
        passes: dict[str, int] = {}  # a bounded step's count in this run (the catalog's `bound`)
        while True:
            if len(run.path) >= limit:
                raise PipelineError(f"pipeline '{self.pipeline.name}' ran {limit} steps without reaching an end "
                                    f"(last step '{current}'): a loop that never exits?", current)
            step = self.steps[current]
            run.path.append(step.id)
            emit(StepStarted(step=step.id, action=step.action))
            t0 = time.perf_counter()
            try:
                spec = self.catalog.get(step.action)
                skipped = self.skipped(step, spec, state) if spec is not None else None
                if skipped is not None:
                    emit(StepSkipped(step=step.id, action=step.action, reason=skipped))
                target, route = self._execute(step, state, handlers, passes)
            except Exception as err:
                emit(StepEnded(step=step.id, action=step.action, ok=False, error=str(err),
                               duration_s=round(time.perf_counter() - t0, 6)))
                raise
            emit(StepEnded(step=step.id, action=step.action, ok=True, route=route, next=target,
                           duration_s=round(time.perf_counter() - t0, 6)))
            if target is None:
                emit(PipelineFinished(successful=True, steps=len(run.path)))
                return run
            current = target

    def _execute(self, step: Step, state: dict[str, Any], handlers: Mapping[str, Handler],
                 passes: dict[str, int] | None = None) -> tuple[str | None, str]:
        """Run one step with its assertions; return (next step id or None at the end, route key)."""
        spec = self.catalog.get(step.action)
        if spec is None:
            raise PipelineError(f"step '{step.id}': unknown action '{step.action}'", step.id, step.action)
        config = self.config(step)
        skipped = self.skipped(step, spec, state)
        if skipped is not None:  # a soft requirement unmet: the runtime records why, does nothing, and goes on
            self.skip(spec, state)
            return self.next_route(step, None)
        self.assert_requires(step, spec, state, config)
        chosen: str | None = None
        if spec.routing and step.action not in handlers:
            chosen = self._route(step, spec, state)
        elif spec.bound is not None and step.action not in handlers:
            chosen, _note = bounded_route(step, spec.bound, self.pipeline.settings, {} if passes is None else passes)
        else:
            handler = handlers.get(step.action)
            if handler is None:
                raise PipelineError(f"step '{step.id}': no handler for action '{step.action}' (pass handlers={{'{step.action}': ...}})",
                                    step.id, step.action)
            result = handler(state, config)
            if isinstance(result, Mapping):
                state.update(result)
            elif isinstance(result, str):
                chosen = result
        for f in spec.ensures_state:
            if state.get(f) is None:
                raise PipelineAssertionError(f"step '{step.id}' (action '{step.action}') must set state field '{f}', "
                                             f"but it is missing after the step", step.id, step.action, f, "ensures_state")
        return self.next_route(step, chosen)

    @staticmethod
    def config(step: Step) -> dict[str, Any]:
        """What a handler is given: the step's id, action and every other key it carries."""
        return {"id": step.id, "action": step.action, **step.raw}

    @staticmethod
    def unmet_state(spec: ActionSpec, state: Mapping[str, Any]) -> list[str]:
        """The state requirements not met on arrival (a field, or a group as 'a | b')."""
        missing = [f for f in spec.requires_state if not is_set(state.get(f))]
        return missing + [" | ".join(g) for g in spec.requires_any_state if not any(is_set(state.get(f)) for f in g)]

    def skipped(self, step: Step, spec: ActionSpec, state: Mapping[str, Any]) -> str | None:
        """Why the step does nothing and goes on (its soft requirements are unmet: `ActionSpec.skips`), or None."""
        if not spec.skips:
            return None
        missing = [f for f in spec.requires_state if not has_content(state.get(f))]
        missing += [" or ".join(g) for g in spec.requires_any_state if not any(has_content(state.get(f)) for f in g)]
        if not missing:
            return None
        return f"skipped: no {', '.join(missing)} here, so {step.action} {spec.skips}"

    @staticmethod
    def skip(spec: ActionSpec, state: dict[str, Any]) -> None:
        """What a skipping action leaves: every field it ensures exists, empty (LocalAI-RAG's actions set them to [])."""
        for f in spec.ensures_state:
            if state.get(f) is None:
                state[f] = []

    def assert_requires(self, step: Step, spec: ActionSpec, state: dict[str, Any], config: dict[str, Any]) -> None:
        """Raise the violation when the step lacks a key, setting or state entry its action requires."""
        keys = {*config, *(k for k in ("next", "end") if getattr(step, k) not in (None, False))}
        for key in spec.unmet_step_keys(keys, self.pipeline.settings):  # 'a|settings.b': the key a, or the setting b
            what = " or ".join(f"the setting '{o[len(SETTINGS):]}'" if o.startswith(SETTINGS) else f"the key '{o}' on the step"
                               for o in key.split("|"))
            raise PipelineAssertionError(f"step '{step.id}' (action '{step.action}') requires {what}",
                                         step.id, step.action, key, "requires_step")
        for key, why in spec.router_problems(step_prefixes(step), keys):
            raise PipelineAssertionError(f"step '{step.id}' ({step.action}) is refused whatever the reply: {why}",
                                         step.id, step.action, key, "requires_step")
        for f in spec.requires_state:
            if not is_set(state.get(f)):
                why = "missing" if state.get(f) is None else "empty"
                raise PipelineAssertionError(f"step '{step.id}' (action '{step.action}') requires state field '{f}', "
                                             f"but it is {why}", step.id, step.action, f, "requires_state")
        for group in spec.requires_any_state:
            if not any(is_set(state.get(f)) for f in group):
                raise PipelineAssertionError(f"step '{step.id}' (action '{step.action}') requires one of the state fields "
                                             f"{', '.join(group)}, but none is set",
                                             step.id, step.action, " | ".join(group), "requires_state")

    def _route(self, step: Step, spec: ActionSpec, state: dict[str, Any]) -> str:
        """A built-in router: the route the model's reply names (by prefix or JSON decision), recorded as the catalog says."""
        reply = state.get("last_model_response")
        text = reply if isinstance(reply, str) else str(reply)
        if spec.routing == "decision":
            return parse_decision(text)
        route, payload = parse_prefix(text, step_prefixes(step))
        if spec.route_state:
            state[spec.route_state[0]] = route
            state[spec.route_state[-1]] = payload
        return route

    def next_route(self, step: Step, chosen: str | None) -> tuple[str | None, str]:
        """The step that follows (None at an end) and the key that chose it, given the route an action chose."""
        if chosen is not None:
            key = f"on_{chosen}"
            target = step.raw.get(key)
            if not isinstance(target, str) and chosen != "other":
                key, target = "on_other", step.raw.get("on_other")
            if not isinstance(target, str):
                why = "no prefix matches the reply" if chosen == "other" else f"the reply routes to '{chosen}', which has no on_{chosen}"
                raise PipelineError(f"step '{step.id}': {why}, and the step has no on_other", step.id, step.action)
        elif step.next is not None:
            key, target = "next", step.next
        elif step.end:
            return None, "end"
        else:
            raise PipelineError(f"step '{step.id}' has no next, on_* target or end: true", step.id, step.action)
        if target not in self.steps:
            raise PipelineError(f"step '{step.id}': {key} names '{target}', which is not a step", step.id, step.action)
        return target, key

