"""Rules of kind: pipeline documents: structure (PIP10x), state dataflow (PIP20x), routing (RTE30x).

The step graph is built once per document (analysis/facts.py) and shared by every rule function
and the editing layer.
"""

from __future__ import annotations

from collections.abc import Iterator

from contractstudio.analysis.check import Context, Loaded, analyzer
from contractstudio.analysis.facts import state_flow, step_graph
from contractstudio.analysis.step_graph import (
    END,
    StateFlow,
    StepGraph,
    config,
    routes_of,
    unset_paths,
    witness_path,
)
from contractstudio.documents.actions import CALL_MODEL, SETTINGS
from contractstudio.documents.models import Pipeline, Step
from contractstudio.findings.diagnostics import Diagnostic, Related, did_you_mean

# One BFS per field finds witness paths for every step that needs it; past this many
# fields with PIP201s a pathological file would make that quadratic.
MAX_WITNESS_FIELDS = 64
MAX_FEEDING_WALK = 200  # steps walked back from a prefix_router to find the model call it parses


@analyzer("pipeline")
def pipeline_rules(loaded: Loaded, ctx: Context) -> Iterator[Diagnostic]:
    """Every pipeline rule over one shared step graph."""
    pipeline = loaded.model
    if not isinstance(pipeline, Pipeline):
        return
    sg, flow = step_graph(loaded), state_flow(loaded)
    assert sg is not None and flow is not None  # a Pipeline model always has both
    yield from bad_entry_step(loaded, sg)
    yield from unknown_target(loaded, sg)
    yield from duplicate_step(loaded, sg)
    yield from unknown_action(loaded, sg)
    yield from unreachable_step(loaded, sg)
    yield from no_way_to_end(loaded, sg)
    yield from missing_step_key(loaded, sg)
    yield from unknown_setting(loaded, sg)
    yield from state_unset(loaded, sg, flow)
    for step in sg.steps.values():
        spec = sg.catalog.get(step.action)
        routing = spec.routing if spec is not None else ""
        if routing == "prefix":
            yield from prefix_pairs(loaded, step)
            yield from shadowed_prefix(loaded, step)
            yield from router_handler_mismatch(loaded, sg, step)
        elif routing:
            yield from no_other_route(loaded, step)


# ----------------------------------------------------------------- structure


def bad_entry_step(loaded: Loaded, sg: StepGraph) -> Iterator[Diagnostic]:
    """PIP101: `entry_step_id` missing or not a step."""
    p = sg.pipeline
    first = p.steps[0].id if p.steps else "<step id>"
    if p.entry_step_id is None:
        yield loaded.diag("PIP101", "the pipeline has no entry_step_id", ("steps",), key=True,
                          hint=f"add 'entry_step_id: {first}'")
    elif sg.entry is None:
        yield loaded.diag("PIP101", f"entry_step_id '{p.entry_step_id}' is not a step", ("entry_step_id",),
                          hint=did_you_mean(p.entry_step_id, sg.steps) or f"steps are: {', '.join(sg.steps) or 'none'}")


def unknown_target(loaded: Loaded, sg: StepGraph) -> Iterator[Diagnostic]:
    """PIP102: `next` or `on_*` names a step that does not exist."""
    for step in sg.pipeline.steps:
        routes = sg.routes[step.id] if sg.steps[step.id] is step else routes_of(step, sg.catalog.get(step.action))
        for r in routes:
            if r.target != END and r.target not in sg.steps:
                yield loaded.diag("PIP102", f"step '{step.id}': {r.key} names '{r.target}', which is not a step", r.src,
                                  hint=did_you_mean(r.target, sg.steps))
        for key, value in config(step).items():
            if key[:3] == "on_" and not isinstance(value, str):
                yield loaded.diag("PIP102", f"step '{step.id}': {key} must name a step", step.src + (key,))


def duplicate_step(loaded: Loaded, sg: StepGraph) -> Iterator[Diagnostic]:
    """PIP103: duplicate step id (the first one is the step the graph uses)."""
    for step in sg.pipeline.steps:
        first = sg.steps[step.id]
        if first is not step:
            where = loaded.span(first, "id")
            yield loaded.diag("PIP103", f"step id '{step.id}' is used twice", step, "id",
                              hint="rename one of the steps",
                              related=[Related(loaded.file, where.line, where.column, f"first step '{step.id}' is here")])


def unknown_action(loaded: Loaded, sg: StepGraph) -> Iterator[Diagnostic]:
    """PIP106: an action neither built in nor declared under `actions:`."""
    for step in sg.pipeline.steps:
        if step.action not in sg.catalog:
            hint = did_you_mean(step.action, sg.catalog) or "declare it under 'actions:' with what it requires and ensures"
            yield loaded.diag("PIP106", f"step '{step.id}': unknown action '{step.action}'", step, "action", hint=hint)


def unreachable_step(loaded: Loaded, sg: StepGraph) -> Iterator[Diagnostic]:
    """PIP104: a step that no path from the entry reaches."""
    if sg.entry is None:
        return
    reach = sg.reachable()
    for sid, step in sg.steps.items():
        if sid not in reach:
            yield loaded.diag("PIP104", f"step '{sid}' cannot be reached from the entry step '{sg.entry}'", step, "id",
                              hint="route to it with next or on_*, or remove it")


def no_way_to_end(loaded: Loaded, sg: StepGraph) -> Iterator[Diagnostic]:
    """PIP105: a reachable step from which no `end: true` step can be reached (dead end or trap cycle)."""
    # A step with an unknown target is already an error (PIP102); count it as finishing
    # so that one typo does not also flag every step before it.
    finishing = {END} | {s for s, rs in sg.routes.items() if any(r.target != END and r.target not in sg.steps for r in rs)}
    seen = set(finishing)
    stack = list(finishing)
    while stack:
        for p in sg.pred.get(stack.pop(), ()):
            if p not in seen:
                seen.add(p)
                stack.append(p)
    scope = sg.reachable() if sg.entry is not None else set(sg.steps)
    stuck = [sid for sid in sg.steps if sid in scope and sid not in seen]
    if not stuck:
        return
    # Report causes, not consequences: each dead end, and each cycle without an exit;
    # a step that merely leads into one of them is fixed with it.
    import networkx as nx  # only a broken pipeline pays for the import

    traps = nx.DiGraph()
    traps.add_nodes_from(stuck)
    traps.add_edges_from((s, t) for s in stuck for t in sg.succ[s] if t in traps)
    for sid in stuck:
        if not sg.routes[sid]:
            msg = f"step '{sid}' is a dead end: it has no next, on_* target or end: true"
            yield loaded.diag("PIP105", msg, sg.steps[sid], "id", hint="add 'next: <step>' or 'end: true'")
    order = {sid: i for i, sid in enumerate(sg.steps)}
    for component in nx.strongly_connected_components(traps):
        members = sorted(component, key=order.__getitem__)
        first = members[0]
        if len(members) == 1 and not traps.has_edge(first, first):
            continue
        related = []
        for sid in members[1:]:
            where = loaded.span(sg.steps[sid], "id")
            related.append(Related(loaded.file, where.line, where.column, f"step '{sid}' is part of the loop"))
        names = ", ".join(f"'{m}'" for m in members)
        msg = f"the loop through {names} never reaches an end: true step" if len(members) > 1 else f"step '{first}' loops to itself and never reaches an end: true step"
        yield loaded.diag("PIP105", msg, sg.steps[first], "id", hint="give the loop an exit to a step that ends", related=related)


# ----------------------------------------------------------------- state dataflow


def missing_step_key(loaded: Loaded, sg: StepGraph) -> Iterator[Diagnostic]:
    """PIP203: a key the action requires on the step (`requires_step`; 'a|settings.b' = one of them) is missing."""
    settings = sg.pipeline.settings
    for step in sg.pipeline.steps:
        spec = sg.catalog.get(step.action)
        if spec is None:
            continue
        raw = config(step)
        for need in spec.requires_step:
            options = need.split("|")
            if any(settings.get(o[len(SETTINGS):]) is not None if o.startswith(SETTINGS) else
                   (o in raw or getattr(step, o, None) is not None) for o in options):
                continue
            if len(options) > 1:
                shown = " or ".join(f"'{o}'" if o.startswith(SETTINGS) else f"'{o}' on the step" for o in options)
                msg, hint = f"step '{step.id}': action '{step.action}' requires {shown}", f"add '{options[0]}: ...' to the step"
            elif need.startswith(SETTINGS):
                msg = f"step '{step.id}': action '{step.action}' requires the setting '{need[len(SETTINGS):]}'"
                hint = f"add '{need[len(SETTINGS):]}: ...' to the pipeline's settings"
            else:
                msg, hint = f"step '{step.id}': action '{step.action}' requires the key '{need}' on the step", f"add '{need}: ...' to the step"
            yield loaded.diag("PIP203", msg, step, "action", hint=hint)


FROM_SETTINGS = "_from_settings"


def unknown_setting(loaded: Loaded, sg: StepGraph) -> Iterator[Diagnostic]:
    """PIP204: a `<key>_from_settings` step key names a setting the pipeline does not have."""
    settings = sg.pipeline.settings
    for step in sg.pipeline.steps:
        for key, value in config(step).items():
            if key.endswith(FROM_SETTINGS) and (not isinstance(value, str) or value not in settings):
                yield loaded.diag("PIP204", f"step '{step.id}': {key} names the setting '{value}', which the pipeline's settings do "
                                  "not have", step.src + (key,), hint=did_you_mean(str(value), settings) or
                                  f"add '{value}: ...' to settings" if isinstance(value, str) else "name a key of settings")


def state_unset(loaded: Loaded, sg: StepGraph, flow: StateFlow) -> Iterator[Diagnostic]:
    """PIP201 (unset on some path to the step) and PIP202 (never set by any step or input)."""
    # What any OTHER step (or an input) sets: a step that needs a field only it sets
    # fails on its first run, so that is "never set" too.
    ids = list(sg.steps)
    before, after = [flow.inputs], [0]
    for sid in ids:
        before.append(before[-1] | flow.gen[sid])
    for sid in reversed(ids):
        after.append(after[-1] | flow.gen[sid])
    after.reverse()
    needs_of: dict[str, list[tuple[tuple[str, ...], int, str]]] = {}
    witnesses: dict[int, tuple[dict[str, str], list[str]]] = {}  # per field: BFS parents and the steps that set it
    for i, (sid, step) in enumerate(sg.steps.items()):
        needs = needs_of.get(step.action)
        if needs is None:
            spec = sg.catalog.get(step.action)
            groups = [] if spec is None else [(f,) for f in spec.requires_state] + list(spec.requires_any_state)
            needs = needs_of[step.action] = [(g, flow.mask(g), _what(g)) for g in groups]
        if not needs:
            continue
        ever = before[i] | after[i + 1]
        known = flow.known.get(sid)
        for _group, mask, what in needs:
            if not ever & mask:
                yield loaded.diag("PIP202", f"step '{sid}' (action {step.action}) requires {what}, which no other step and no input ever sets",
                                  step, "action", hint="add it to 'inputs:' or run an action that ensures it first")
            elif known is not None and not known & mask:
                if mask not in witnesses and len(witnesses) >= MAX_WITNESS_FIELDS:
                    witnesses[mask] = ({}, [])  # enough paths shown; the rest keep the message and position
                if mask not in witnesses:
                    setters = [s for s, g in flow.gen.items() if g & mask and sg.catalog.get(sg.steps[s].action) is not None]
                    witnesses[mask] = (unset_paths(sg, flow, mask), setters)
                yield _maybe_unset(loaded, sg, step, what, *witnesses[mask])


def _what(group: tuple[str, ...]) -> str:
    return f"'{group[0]}'" if len(group) == 1 else "one of " + ", ".join(f"'{f}'" for f in group)


def _maybe_unset(loaded: Loaded, sg: StepGraph, step: Step, what: str, parents: dict[str, str], setters: list[str]) -> Diagnostic:
    path = witness_path(parents, step.id)
    related = []
    for sid in path:
        where = loaded.span(sg.steps[sid], "id")
        note = f"requires {what} here" if sid == step.id else f"step '{sid}' ({sg.steps[sid].action}) does not set it"
        related.append(Related(loaded.file, where.line, where.column, note))
    others = [s for s in setters if s != step.id]
    hint = f"on the path {' -> '.join(path)} nothing sets it" if path else "set it on every path to this step"
    if others:
        hint += f"; steps that set it: {', '.join(others[:3])}{', ...' if len(others) > 3 else ''}"
    return loaded.diag("PIP201", f"step '{step.id}' (action {step.action}) requires {what}, which is unset on at least one path from the entry",
                       step, "action", hint=hint, related=related)


# ----------------------------------------------------------------- routing


def _prefixes(step: Step) -> list[tuple[str, str]]:
    """(route, prefix) in declaration order: the order first-match-wins tries them."""
    return [(k[: -len("_prefix")], v) for k, v in config(step).items() if k.endswith("_prefix") and isinstance(v, str)]


def prefix_pairs(loaded: Loaded, step: Step) -> Iterator[Diagnostic]:
    """RTE301 (prefix without on_<route>), RTE302 (on_<route> without prefix), RTE305 (no on_other)."""
    raw = config(step)
    for route, _ in _prefixes(step):
        if f"on_{route}" not in raw:
            yield loaded.diag("RTE301", f"step '{step.id}': {route}_prefix has no on_{route} target", step, f"{route}_prefix",
                              key=True, hint=f"add 'on_{route}: <step>'")
    for key in raw:
        route = key[3:]
        if key.startswith("on_") and route != "other" and f"{route}_prefix" not in raw:
            yield loaded.diag("RTE302", f"step '{step.id}': {key} has no {route}_prefix, so no reply can take it", step, key,
                              key=True, hint=f"add '{route}_prefix: \"[{route.upper()}:]\"'")
    yield from no_other_route(loaded, step)


def no_other_route(loaded: Loaded, step: Step) -> Iterator[Diagnostic]:
    """RTE305: a router without `on_other` for the replies it does not recognise."""
    if "on_other" not in config(step):
        yield loaded.diag("RTE305", f"{step.action} step '{step.id}' has no on_other for unrecognised replies", step, "action",
                          hint="add 'on_other: <step>' (a reply the router does not recognise otherwise stops the pipeline)")


def shadowed_prefix(loaded: Loaded, step: Step) -> Iterator[Diagnostic]:
    """RTE304: a prefix that an earlier one always matches first (or a duplicate)."""
    seen: list[tuple[str, str]] = []
    for route, prefix in _prefixes(step):
        for earlier_route, earlier in seen:
            if prefix.startswith(earlier):
                what = "duplicates" if prefix == earlier else "starts with"
                where = loaded.span(step, f"{earlier_route}_prefix")
                yield loaded.diag("RTE304", f"step '{step.id}': prefix {prefix!r} of route '{route}' can never match: it {what} "
                                  f"the earlier prefix {earlier!r} of route '{earlier_route}'", step, f"{route}_prefix",
                                  hint="put the longer prefix first, or make the prefixes distinct",
                                  related=[Related(loaded.file, where.line, where.column, f"{earlier!r} matches first")])
                break
        seen.append((route, prefix))


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


def router_handler_mismatch(loaded: Loaded, sg: StepGraph, step: Step) -> Iterator[Diagnostic]:
    """RTE303: the router prompt before a prefix_router and the prefixes it handles disagree."""
    routers = sg.pipeline.routers
    feeding = _feeding_model_calls(sg, step.id)
    if feeding is None:
        return
    known = [(s, str(config(s).get("prompt"))) for s in feeding if s.action == CALL_MODEL and config(s).get("prompt") in routers]
    if not known:
        return
    handled = _prefixes(step)
    emitted_all: set[str] = set()
    for call, name in known:
        router = routers[name]
        for i, prefix in enumerate(router.prefixes):
            emitted_all.add(prefix)
            if not any(prefix.startswith(h) for _, h in handled):
                where = loaded.span(router, "prefixes", i)
                yield loaded.diag("RTE303", f"router '{name}' (step '{call.id}') can emit {prefix!r}, which prefix_router step "
                                  f"'{step.id}' does not handle", step, "action",
                                  hint=f"add a '<route>_prefix: {prefix!r}' with its 'on_<route>' target",
                                  related=[Related(loaded.file, where.line, where.column, f"router '{name}' declares {prefix!r}")])
    if len(known) == len(feeding):  # every reply comes from a known router: unused handlers are certain
        for route, h in handled:
            if not any(p.startswith(h) for p in emitted_all):
                names = ", ".join(sorted({str(n) for _, n in known}))
                yield loaded.diag("RTE303", f"step '{step.id}': prefix {h!r} is handled, but router {names} never emits it",
                                  step, f"{route}_prefix", severity="warning",
                                  hint=f"add {h!r} to the router's prefixes, or remove the route")
