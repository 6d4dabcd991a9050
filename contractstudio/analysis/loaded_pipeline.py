"""A pipeline document with its facts: the step graph, the state flow, its requirements, its routers, its layout.

Each fact is computed on first use and kept for the rest of the analysis and
after it: the rules of analysis/rules/pipeline_*.py and routing.py share them,
and `graph`, the studio's graph screen and editing help read them from the
analysis result (`FileReport.documents`) instead of building them again.
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import cached_property
from typing import TYPE_CHECKING, Any, cast

from contractstudio.analysis.loaded import Loaded
from contractstudio.analysis.step_graph import Requirement, StateFlow, StepGraph, config, requirements, state_flow
from contractstudio.documents.models import Pipeline, Step

if TYPE_CHECKING:
    from contractstudio.analysis.graph_layout import GraphLayout


class LoadedPipeline(Loaded):
    """A validated `kind: pipeline` document and the facts its rules share."""

    @property
    def pipeline(self) -> Pipeline:
        """The validated model (rules run only on documents whose shape validated)."""
        return cast(Pipeline, self.model)

    @cached_property
    def step_graph(self) -> StepGraph:
        """The steps and the edges between them (the first step of each id; unknown targets get no edge)."""
        return StepGraph.build(self.pipeline)

    @cached_property
    def state_flow(self) -> StateFlow:
        """Which state fields are set on every path into each reachable step."""
        return state_flow(self.step_graph)

    @cached_property
    def requirements(self) -> list[Requirement]:
        """Every state requirement of every step, with whether it is set elsewhere and on every path."""
        carried = self.__dict__.pop("_requirements_before", None)
        if carried is not None:  # the last analysis's, the flow and steps' needs as they were (`_carry_flow`)
            found, old, new = carried
            return [r._replace(step=new) if r.step is old else r for r in found]
        return requirements(self.step_graph, self.state_flow)

    @cached_property
    def routers(self) -> list[Step]:
        """The steps whose action routes a reply (prefix_router, json_decision_router, ...), in file order."""
        catalog = self.step_graph.catalog
        return [step for step in self.step_graph.steps.values() if (spec := catalog.get(step.action)) is not None and spec.routing]

    @cached_property
    def prefix_routers(self) -> list[Step]:
        """The routers that route by reply prefix under first-match-wins (`routing: prefix`), in file order."""
        catalog = self.step_graph.catalog
        return [step for step in self.routers if catalog[step.action].routing == "prefix"]

    @cached_property
    def prefixes(self) -> dict[str, list[tuple[str, str]]]:
        """Each prefix router's (route, prefix) pairs in declaration order, the order first-match-wins tries them, by step id."""
        return {step.id: [(k[: -len("_prefix")], v) for k, v in config(step).items() if k.endswith("_prefix") and isinstance(v, str)]
                for step in self.prefix_routers}

    def carry(self, before: Loaded, index: int) -> None:
        """Take over the step graph and state flow of `before`, the last analysis, when the edit since was inside
        step `index` and left what they read of it as it was (`step_view`): the editing help (completion, hover)
        asks for them on the screen's thread, where building them again for 44,000 steps would take a second. When
        the edit changed what they read of the step (its action, a target, its id), the graph is the last one with the
        edges that changed patched (analysis/graph_patch.py)."""
        if not isinstance(before, LoadedPipeline) or "step_graph" not in before.__dict__:
            return
        old, new = before.pipeline.steps[index], self.pipeline.steps[index]
        if step_view(old.model_dump(by_alias=True)) != step_view(new.model_dump(by_alias=True)):
            # What the rules read of it changed: its edges patched when it kept its id; the state flow afresh.
            from contractstudio.analysis.graph_patch import patched

            graph = patched(before.step_graph, self.pipeline, old, new)
            if graph is None:
                return
            self.__dict__["step_graph"] = graph
            if old.id == new.id and graph.succ.get(new.id) == before.step_graph.succ.get(old.id) and _sets_the_same(graph, old, new):
                self._carry_flow(before, old, new)
            return
        self.__dict__["step_graph"] = before.step_graph.with_step(self.pipeline, old, new)
        self._carry_flow(before, old, new)

    def _carry_flow(self, before: LoadedPipeline, old: Step, new: Step) -> None:
        """The state flow and requirements of `before` (the step graph's edges and what each step sets and requires
        are as they were; the requirements name the new step)."""
        if "state_flow" in before.__dict__:
            self.__dict__["state_flow"] = before.state_flow
            if "requirements" in before.__dict__:  # named anew when a rule asks (after an edit of a description, none does)
                self.__dict__["_requirements_before"] = (before.requirements, old, new)

    @cached_property
    def layout(self) -> GraphLayout:
        """The step graph laid out in layers, for drawings (not used by any rule, so imported on first use)."""
        from contractstudio.analysis.graph_layout import layout

        return layout(self.step_graph)


def step_view(data: Any) -> Any:
    """What the pipeline rules read of one step's plain data: all of it but its description's text (no action's
    contract names `description` as a key it reads, ensures from or jumps by; its presence is kept, a key like any)."""
    if isinstance(data, dict) and "description" in data:
        return {**data, "description": None}
    return data


def same_id(before: LoadedPipeline, after: LoadedPipeline, _key: str, i: int) -> list[int] | None:
    """For a rule whose findings are each step's own but for which steps count (the first of each id, the graph's):
    an edit in step i that kept its id changes only step i's findings (`Touched`, rules/registry.py); None: whole."""
    return [i] if before.pipeline.steps[i].id == after.pipeline.steps[i].id else None


def steps_at(doc: LoadedPipeline, at: Iterable[int] | None) -> list[Step]:
    """The steps at these indices in file order (None: every step): what a `Touched` rule is asked for."""
    steps = doc.pipeline.steps
    return steps if at is None else [steps[i] for i in sorted(at)]


def graph_steps_at(doc: LoadedPipeline, indices: Iterable[int], routing: str | None = None) -> list[Step]:
    """The steps at these indices that the graph holds (the first of their id), in file order; `routing`: only those
    whose action routes a reply ("" any way, "prefix" by prefix: `routers`, `prefix_routers`)."""
    sg, steps = doc.step_graph, doc.pipeline.steps
    found = []
    for i in sorted(indices):
        step = steps[i]
        spec = sg.catalog.get(step.action)
        if sg.steps[step.id] is step and (routing is None or (spec is not None and bool(spec.routing)
                                                              and (not routing or spec.routing == routing))):
            found.append(step)
    return found


def _sets_the_same(graph: StepGraph, old: Step, new: Step) -> bool:
    """Whether two versions of a step set and require the same state: the same action, and the same fields named by
    its configuration where the action reads them there (`ensures_from`)."""
    if old.action != new.action:
        return False
    spec = graph.catalog.get(new.action)
    return spec is None or not spec.ensures_from or spec.ensured_by(old) == spec.ensured_by(new)
