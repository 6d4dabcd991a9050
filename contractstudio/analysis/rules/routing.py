"""Routing (RTE301-307): a prefix_router's prefixes, its on_<route> targets, the router prompt before it; on_other.

Under first-match-wins a reply takes the first route whose prefix it starts
with; each rule reads the document's prefix routers and step graph.
"""

from __future__ import annotations

from collections.abc import Iterator

from contractstudio.analysis.loaded_pipeline import LoadedPipeline, graph_steps_at, same_id, step_view
from contractstudio.analysis.rules.registry import Touched, rule
from contractstudio.analysis.step_graph import StepGraph, config
from contractstudio.documents.actions import CALL_MODEL
from contractstudio.documents.models import Step
from contractstudio.findings.diagnostics import Diagnostic, Payload

# What these rules read of each step: all but its description's text (analysis/by_entry.py); a rule whose findings
# are each router's own finds them again for the edited step alone when its id is kept (`same_id`).
ENTRIES = {"steps": step_view}

MAX_FEEDING_WALK = 200  # steps walked back from a prefix_router to find the model call it parses


@rule("RTE301", "prefix-without-target", "error", kinds=("pipeline",),
      entries={"steps": Touched(same_id, step_view)})
def prefix_without_target(doc: LoadedPipeline, at: list[int] | None = None) -> Iterator[Diagnostic]:
    """A `<route>_prefix` without its `on_<route>` target."""
    for step in doc.prefix_routers if at is None else graph_steps_at(doc, at, "prefix"):
        raw = config(step)
        for route, _ in doc.prefixes[step.id]:
            if f"on_{route}" not in raw:
                yield doc.diag("RTE301", f"step '{step.id}': {route}_prefix has no on_{route} target", step, f"{route}_prefix",
                               key=True, hint=f"add 'on_{route}: <step>'", payload=Payload(step=step.id, key=f"on_{route}"))


@rule("RTE302", "target-without-prefix", "warning", kinds=("pipeline",),
      entries={"steps": Touched(same_id, step_view)})
def target_without_prefix(doc: LoadedPipeline, at: list[int] | None = None) -> Iterator[Diagnostic]:
    """An `on_<route>` target without its `<route>_prefix`."""
    for step in doc.prefix_routers if at is None else graph_steps_at(doc, at, "prefix"):
        raw = config(step)
        for key in raw:
            route = key[3:]
            if key.startswith("on_") and route != "other" and f"{route}_prefix" not in raw:
                yield doc.diag("RTE302", f"step '{step.id}': {key} has no {route}_prefix, so no reply can take it", step, key,
                               key=True, hint=f"add '{route}_prefix: \"[{route.upper()}:]\"'")


@rule("RTE303", "router-handler-mismatch", "error", kinds=("pipeline",))
def router_handler_mismatch(doc: LoadedPipeline) -> Iterator[Diagnostic]:
    """The router prompt can emit a prefix the prefix_router does not handle (warning: the reverse)."""
    sg = doc.step_graph
    routers = doc.pipeline.routers
    for step in doc.prefix_routers:
        feeding = _feeding_model_calls(sg, step.id)
        if feeding is None:
            continue
        known = [(s, str(config(s).get("prompt"))) for s in feeding if s.action == CALL_MODEL and config(s).get("prompt") in routers]
        if not known:
            continue
        handled = doc.prefixes[step.id]
        emitted_all: set[str] = set()
        for call, name in known:
            router = routers[name]
            for i, prefix in enumerate(router.prefixes):
                emitted_all.add(prefix)
                if not any(prefix.startswith(h) for _, h in handled):
                    yield doc.diag("RTE303", f"router '{name}' (step '{call.id}') can emit {prefix!r}, which prefix_router step "
                                   f"'{step.id}' does not handle", step, "action",
                                   hint=f"add a '<route>_prefix: {prefix!r}' with its 'on_<route>' target",
                                   related=[doc.related(f"router '{name}' declares {prefix!r}", router, "prefixes", i)])
        if len(known) == len(feeding):  # every reply comes from a known router: unused handlers are certain
            for route, h in handled:
                if not any(p.startswith(h) for p in emitted_all):
                    names = ", ".join(sorted({str(n) for _, n in known}))
                    yield doc.diag("RTE303", f"step '{step.id}': prefix {h!r} is handled, but router {names} never emits it",
                                   step, f"{route}_prefix", severity="warning",
                                   hint=f"add {h!r} to the router's prefixes, or remove the route")


def _feeding_model_calls(sg: StepGraph, router_id: str) -> list[Step] | None:
    """The steps whose reply a prefix_router parses: the nearest steps before it that set last_model_response.

    None when the walk back would pass more than MAX_FEEDING_WALK steps (a long
    stretch without a model call): RTE303 is then not decided, and many routers
    in a huge file cannot make the check quadratic.
    """
    found: list[Step] = []
    seen = {router_id}
    stack = list(sg.pred.get(router_id, ()))
    while stack:
        sid = stack.pop()
        if sid in seen or sid not in sg.steps:
            continue
        if len(seen) > MAX_FEEDING_WALK:
            return None
        seen.add(sid)
        spec = sg.action(sid)
        if spec is not None and "last_model_response" in spec.ensures_state:
            found.append(sg.steps[sid])
        else:
            stack.extend(sg.pred.get(sid, ()))
    return found


@rule("RTE304", "shadowed-prefix", "error", kinds=("pipeline",),
      entries={"steps": Touched(same_id, step_view)})
def shadowed_prefix(doc: LoadedPipeline, at: list[int] | None = None) -> Iterator[Diagnostic]:
    """A duplicate or shadowed prefix: under first-match-wins it can never match."""
    for step in doc.prefix_routers if at is None else graph_steps_at(doc, at, "prefix"):
        seen: list[tuple[str, str]] = []
        for route, prefix in doc.prefixes[step.id]:
            if not prefix.strip():  # an empty prefix is its own finding (RTE307), never "the earlier prefix ''"
                continue
            for earlier_route, earlier in seen:
                if prefix.startswith(earlier):
                    what = "duplicates" if prefix == earlier else "starts with"
                    yield doc.diag("RTE304", f"step '{step.id}': prefix {prefix!r} of route '{route}' can never match: it {what} "
                                   f"the earlier prefix {earlier!r} of route '{earlier_route}'", step, f"{route}_prefix",
                                   hint="put the longer prefix first, or make the prefixes distinct",
                                   related=[doc.related(f"{earlier!r} matches first", step, f"{earlier_route}_prefix")])
                    break
            seen.append((route, prefix))


@rule("RTE305", "router-without-on-other", "warning", kinds=("pipeline",),
      entries={"steps": Touched(same_id, step_view)})
def router_without_on_other(doc: LoadedPipeline, at: list[int] | None = None) -> Iterator[Diagnostic]:
    """A router (prefix_router, json_decision_router) without `on_other` for unrecognised output (an error where the
    runtime refuses such a router on every run, as LocalAI-RAG's routers do: `ActionSpec.strict_router`)."""
    catalog = doc.step_graph.catalog
    for step in doc.routers if at is None else graph_steps_at(doc, at, ""):
        if "on_other" not in config(step):
            if catalog[step.action].strict_router:
                yield doc.diag("RTE305", f"{step.action} step '{step.id}' has no on_other, and its runtime refuses such a step on "
                               "every run, whatever the reply", step, "action", severity="error",
                               hint="add 'on_other: <step>' (LocalAI-RAG raises ValueError without it: no implicit next)")
            else:
                yield doc.diag("RTE305", f"{step.action} step '{step.id}' has no on_other for unrecognised replies", step, "action",
                               hint="add 'on_other: <step>' (a reply the router does not recognise otherwise stops the pipeline)")


@rule("RTE306", "prefix-starts-with-space", "warning", kinds=("pipeline",),
      entries={"steps": Touched(same_id, step_view)})
def prefix_starts_with_space(doc: LoadedPipeline, at: list[int] | None = None) -> Iterator[Diagnostic]:
    """A `<route>_prefix` that starts with whitespace: replies are matched with their leading whitespace trimmed, so none takes it."""
    catalog = doc.step_graph.catalog
    for step in doc.prefix_routers if at is None else graph_steps_at(doc, at, "prefix"):
        strict = catalog[step.action].strict_router
        for route, prefix in doc.prefixes[step.id]:
            if prefix[:1].isspace() and not (strict and not prefix.strip()):  # a blank one a strict runtime refuses: RTE307
                fixed = prefix.lstrip()
                yield doc.diag("RTE306", f"step '{step.id}': {route}_prefix {prefix!r} starts with whitespace, but a reply is "
                               f"matched after its leading whitespace is trimmed: no reply can take on_{route}",
                               step, f"{route}_prefix",
                               hint=f"write it without the leading whitespace: {fixed!r}" if fixed else "write the prefix the router emits")


@rule("RTE307", "empty-prefix", "error", kinds=("pipeline",),
      entries={"steps": Touched(same_id, step_view)})
def empty_prefix(doc: LoadedPipeline, at: list[int] | None = None) -> Iterator[Diagnostic]:
    """A route whose prefix is empty: under first-match-wins it takes every reply; where the runtime refuses an empty
    prefix (LocalAI-RAG's prefix_router), the step fails on every run."""
    catalog = doc.step_graph.catalog
    for step in doc.prefix_routers if at is None else graph_steps_at(doc, at, "prefix"):
        strict = catalog[step.action].strict_router
        for route, prefix in doc.prefixes[step.id]:
            if strict and not prefix.strip():
                yield doc.diag("RTE307", f"step '{step.id}': route '{route}' has an empty prefix, and its runtime refuses the "
                               "step on every run, whatever the reply", step, f"{route}_prefix",
                               hint="write the prefix the router model emits for this route, e.g. '[BM25:]'")
            elif not prefix:
                yield doc.diag("RTE307", f"step '{step.id}': route '{route}' has an empty prefix, which every reply starts with: "
                               f"it takes every reply, and the routes after it and on_other never do", step, f"{route}_prefix",
                               hint="write the prefix the router model emits for this route, e.g. '[BM25:]'")
