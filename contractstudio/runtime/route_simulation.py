"""The path one router reply takes through a pipeline, walked symbolically with the runner's own checks.

Each call_model answers the reply, each built-in router parses it, a custom router takes the route it is steered
to (else its first, and says so); every step's requirements are asserted by `PipelineRunner`'s own check, so a run
and its simulation fail alike, with the same words.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

from contractstudio.documents.actions import CALL_MODEL, PREFIX_ROUTER, ActionSpec, action_catalog
from contractstudio.documents.models import Pipeline, Step
from contractstudio.runtime.pipeline_runner import (
    MAX_STEPS,
    PipelineAssertionError,
    PipelineError,
    PipelineRunner,
    bounded_route,
    is_set,
    parse_decision,
    parse_prefix,
    step_prefixes,
)


@dataclass(slots=True)
class SimulatedStep:
    """One step of a simulated path and what is known there."""

    step: str
    action: str
    known: list[str]  # state fields set on arrival
    sets: list[str]  # fields the action ensures
    missing: list[str]  # requirements not known on arrival (a run would fail here)
    route: str | None  # the key taken: 'next', 'on_bm25', 'end' (None when stuck)
    label: str | None  # the prefix matched, 'next', 'other' or 'end'
    target: str | None  # the next step id ('end' at the end)
    values: dict[str, str] = field(default_factory=dict)  # concrete values the reply determines
    note: str | None = None  # how a custom router's route was chosen, or what a soft requirement made the step skip


@dataclass(slots=True)
class Simulation:
    """The path one router reply takes through a pipeline."""

    pipeline: str
    reply: str
    steps: list[SimulatedStep]
    outcome: str  # 'end' | 'assertion' | 'loop' | 'dead_end' | 'unknown_target' | 'no_entry' | 'step_limit'
    message: str

    @property
    def path(self) -> list[str]:
        return [s.step for s in self.steps]

    @property
    def ok(self) -> bool:
        """The reply reaches an end step and every requirement on the way is known."""
        return self.outcome == "end" and not any(s.missing for s in self.steps)

    @property
    def fails(self) -> bool:
        """A verdict against the reply: it does not reach an end (a path resting on an assumed route is no verdict)."""
        return not self.ok and self.outcome != "assumed"

    def to_dict(self) -> dict[str, Any]:
        return {"pipeline": self.pipeline, "reply": self.reply, "outcome": self.outcome, "message": self.message,
                "ok": self.ok, "path": self.path, "steps": [asdict(s) for s in self.steps]}


class _Known:
    """A state value that a step sets but whose content the simulation cannot know (a handler's result)."""

    def __repr__(self) -> str:
        return "<set>"


KNOWN = _Known()
ASSUMED = "its handler chooses at run time"  # the note of a step whose route the simulation assumed


def custom_routes(step: Step, spec: ActionSpec | None = None) -> list[str]:
    """The routes of a custom routing action (its `on_<route>` targets), in order; [] for any other step.

    A built-in router (its catalog entry has `routing`) is decided by the reply, never steered."""
    builtin_router = spec.routing if spec is not None else step.action == PREFIX_ROUTER
    if step.action == CALL_MODEL or builtin_router or step.next is not None:
        return []
    return [k[3:] for k, v in step.raw.items() if k.startswith("on_") and isinstance(v, str)]


def route_problem(pipeline: Pipeline, step_id: str, route: str) -> str | None:
    """Why `STEP=ROUTE` cannot steer a simulation (no such step, not a custom router, no such route), or None."""
    step = next((s for s in pipeline.steps if s.id == step_id), None)  # the first of an id, as the runner takes it
    if step is None:
        return f"no step '{step_id}' (steps: {', '.join(dict.fromkeys(s.id for s in pipeline.steps))})"
    spec = action_catalog(pipeline).get(step.action)
    if spec is not None and spec.routing:
        return f"step '{step_id}' is a {step.action}: the reply decides its route"
    choices = custom_routes(step, spec)
    if not choices:
        return f"step '{step_id}' does not route (it has no on_* targets)"
    if route.removeprefix("on_") not in choices:
        return f"step '{step_id}' has no route '{route}' (routes: {', '.join(choices)})"
    return None


def simulate(pipeline: Pipeline, reply: str, *, routes: Mapping[str, str] | None = None,
             max_steps: int = MAX_STEPS) -> Simulation:
    """Walk a pipeline symbolically: each call_model answers `reply`, each prefix_router parses it,
    a custom router takes the route `routes` names for it (else its first), and every step's
    requirements are asserted by the runner's own check, so a run and its simulation fail alike."""
    for step_id, route in (routes or {}).items():
        problem = route_problem(pipeline, step_id, route)
        if problem:
            raise ValueError(problem)
    steer = {k: v.removeprefix("on_") for k, v in (routes or {}).items()}
    runner = PipelineRunner(pipeline)
    state: dict[str, Any] = {f: KNOWN for f in pipeline.inputs}
    steps: list[SimulatedStep] = []
    seen: set[tuple[str, frozenset[str], tuple[tuple[str, str], ...], tuple[tuple[str, int], ...]]] = set()
    passes: dict[str, int] = {}  # a bounded step's counter (the catalog's `bound`): progress, not a loop
    current = pipeline.entry_step_id
    name = pipeline.name

    def done(outcome: str, message: str) -> Simulation:
        return Simulation(name, reply, steps, outcome, message)

    if current not in runner.steps:
        return done("no_entry", f"entry_step_id '{current}' is not a step")
    while True:
        known = frozenset(k for k, v in state.items() if is_set(v))
        state_key = (current, known, tuple(sorted((k, v) for k, v in state.items() if isinstance(v, str))),
                     tuple(sorted(passes.items())))
        if state_key in seen:
            assumed = next((s for s in steps if (s.note or "").startswith(ASSUMED)), None)
            if assumed is not None:  # the loop rests on a branch no one can know statically: say so, not a verdict
                return done("assumed", f"the path returns to '{current}' because step '{assumed.step}' was assumed to take "
                                       f"route '{assumed.label}' (its handler chooses at run time): steer it with "
                                       f"--route {assumed.step}=ROUTE")
            return done("loop", f"the reply leads back to '{current}' with nothing new known: it loops forever "
                                "(at run time a different model reply must leave the loop)")
        if len(steps) >= max_steps:
            return done("step_limit", f"stopped after {max_steps} steps")
        seen.add(state_key)
        step = runner.steps[current]
        spec = runner.catalog.get(step.action)
        skipped = runner.skipped(step, spec, state) if spec is not None else None
        missing = runner.unmet_state(spec, state) if spec is not None and skipped is None else []
        sets = list(spec.ensures_state) if spec is not None and skipped is None else []  # a skipped step sets them empty
        sim = SimulatedStep(step.id, step.action, sorted(known), sets, missing, None, None, None, {}, skipped)
        steps.append(sim)
        if spec is not None and skipped is None:
            try:  # the runner's own assertion: the same fields, the same words
                runner.assert_requires(step, spec, state, runner.config(step))
            except PipelineAssertionError as err:
                return done("assertion", str(err))
        chosen: str | None = None
        here: dict[str, str] = {}
        if spec is not None and skipped is not None:  # the runner's own skip: the fields it ensures, left empty
            runner.skip(spec, state)
        elif step.action == CALL_MODEL:
            here["last_model_response"] = reply
        elif spec is not None and spec.routing == "prefix":
            last = state.get("last_model_response")
            chosen, payload = parse_prefix(last if isinstance(last, str) else reply, step_prefixes(step))
            if spec.route_state:
                here.update({spec.route_state[0]: chosen, spec.route_state[-1]: payload})
        elif spec is not None and spec.routing == "decision":
            last = state.get("last_model_response")
            chosen = parse_decision(last if isinstance(last, str) else reply)
        elif spec is not None and spec.bound is not None and step.id not in steer:
            chosen, sim.note = bounded_route(step, spec.bound, pipeline.settings, passes)
        elif choices := custom_routes(step, spec):
            if step.id in steer:
                chosen = steer[step.id]
                sim.note = f"route '{chosen}' chosen with --route"
            else:  # a handler decides at run time; unsteered, the simulation takes the first route and says so
                chosen = choices[0]
                sim.note = f"{ASSUMED}; simulated: the first route (steer with --route {step.id}=ROUTE)"
        if spec is not None and skipped is None:
            state.update({f: KNOWN for f in (*spec.ensures_state, *spec.ensured_by(step))})
        state.update(here)
        sim.values.update(here)
        try:
            target, key = runner.next_route(step, chosen)
        except PipelineError as err:
            outcome = "unknown_target" if "not a step" in str(err) else "dead_end"
            return done(outcome, str(err))
        sim.route = key
        sim.label = _label(step, key)
        sim.target = "end" if target is None else target
        if target is None:
            return done("end", f"reached the end step '{step.id}'")
        current = target


def _label(step: Step, key: str) -> str:
    if key.startswith("on_"):
        prefix = step.raw.get(f"{key[3:]}_prefix")
        return prefix if isinstance(prefix, str) else key[3:]
    return key
