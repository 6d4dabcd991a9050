"""Pipeline structure (PIP101-106, PIP204): the entry step, targets, step ids, actions, reachability, a way to end, settings.

Every rule reads the document's one step graph (`doc.step_graph`).
"""

from __future__ import annotations

from collections.abc import Iterator

from contractstudio.analysis.loaded_pipeline import LoadedPipeline, graph_steps_at, same_id, step_view, steps_at
from contractstudio.analysis.rules.registry import Touched, rule
from contractstudio.analysis.step_graph import END, config, routes_of, strongly_connected
from contractstudio.documents.models import Step
from contractstudio.findings.diagnostics import Diagnostic, Payload, did_you_mean

# What these rules read of each step: all but its description's text (analysis/by_entry.py).
ENTRIES = {"steps": step_view}


@rule("PIP101", "bad-entry-step", "error", kinds=("pipeline",))
def bad_entry_step(doc: LoadedPipeline) -> Iterator[Diagnostic]:
    """`entry_step_id` missing or not a step."""
    sg, p = doc.step_graph, doc.pipeline
    first = p.steps[0].id if p.steps else "<step id>"
    if p.entry_step_id is None:
        yield doc.diag("PIP101", "the pipeline has no entry_step_id", ("steps",), key=True,
                       hint=f"add 'entry_step_id: {first}'")
    elif sg.entry is None:
        yield doc.diag("PIP101", f"entry_step_id '{p.entry_step_id}' is not a step", ("entry_step_id",),
                       hint=did_you_mean(p.entry_step_id, sg.names()) or f"steps are: {', '.join(sg.steps) or 'none'}")


def _naming(before: LoadedPipeline, after: LoadedPipeline, key: str, i: int) -> list[int] | None:
    """Step i, and after a new id the steps that name the old id or the new one, and every step that names an unknown
    one: its 'did you mean' is over the ids (None: some id is used twice, and a step the graph does not hold may name
    one of them)."""
    oid, nid = before.pipeline.steps[i].id, after.pipeline.steps[i].id
    if oid == nid:
        return [i]
    sg = after.step_graph
    if len(sg.steps) != len(after.pipeline.steps) or len(before.step_graph.steps) != len(before.pipeline.steps):
        return None
    return [i, *(sg.steps[sid].src[1] for sid, routes in sg.routes.items()
                 if any(r.target == oid or r.target == nid or (r.target != END and r.target not in sg.steps) for r in routes))]


@rule("PIP102", "unknown-target", "error", kinds=("pipeline",), entries={"steps": Touched(_naming, step_view)})
def unknown_target(doc: LoadedPipeline, at: list[int] | None = None) -> Iterator[Diagnostic]:
    """`next` or `on_*` names a step that does not exist."""
    for step in steps_at(doc, at):
        yield from _unknown_targets(doc, step)


def _unknown_targets(doc: LoadedPipeline, step: Step) -> Iterator[Diagnostic]:
    sg = doc.step_graph
    routes = sg.routes[step.id] if sg.steps[step.id] is step else routes_of(step, sg.catalog.get(step.action))
    for r in routes:
        if r.target != END and r.target not in sg.steps:
            yield doc.diag("PIP102", f"step '{step.id}': {r.key} names '{r.target}', which is not a step", r.src,
                           hint=did_you_mean(r.target, sg.names()), payload=Payload(step=step.id, name=r.target))
    for key, value in config(step).items():
        if key[:3] == "on_" and not isinstance(value, str):
            yield doc.diag("PIP102", f"step '{step.id}': {key} must name a step", step.src + (key,))


@rule("PIP103", "duplicate-step", "error", kinds=("pipeline",))
def duplicate_step(doc: LoadedPipeline) -> Iterator[Diagnostic]:
    """Duplicate step id."""
    sg = doc.step_graph
    for step in doc.pipeline.steps:
        first = sg.steps[step.id]  # the first step of an id is the one the graph uses
        if first is not step:
            yield doc.diag("PIP103", f"step id '{step.id}' is used twice", step, "id",
                           hint="rename one of the steps", related=[doc.related(f"first step '{step.id}' is here", first, "id")])


def _reach_changed(before: LoadedPipeline, after: LoadedPipeline, key: str, i: int) -> list[int] | None:
    """The steps whose reachability the edit in step i changed, and step i (None: the entry changed, or a new id of
    step i is another step's too, or its old one still is: which step of an id the graph holds may have changed)."""
    old, new = before.step_graph, after.step_graph
    oid, nid = before.pipeline.steps[i].id, after.pipeline.steps[i].id
    if old.entry != new.entry or (oid != nid and (nid in old.steps or oid in new.steps)):
        return None
    if new.entry is None:
        return [i]
    return [i, *((new.steps.get(sid) or old.steps[sid]).src[1] for sid in old.reachable() ^ new.reachable())]


@rule("PIP104", "unreachable-step", "warning", kinds=("pipeline",), entries={"steps": Touched(_reach_changed, step_view)})
def unreachable_step(doc: LoadedPipeline, at: list[int] | None = None) -> Iterator[Diagnostic]:
    """A step unreachable from the entry step."""
    sg = doc.step_graph
    if sg.entry is None:
        return
    reach = sg.reachable()
    for step in sg.steps.values() if at is None else graph_steps_at(doc, at):
        if step.id not in reach:
            yield doc.diag("PIP104", f"step '{step.id}' cannot be reached from the entry step '{sg.entry}'", step, "id",
                           hint="route to it with next or on_*, or remove it")


@rule("PIP105", "no-way-to-end", "error", kinds=("pipeline",))
def no_way_to_end(doc: LoadedPipeline) -> Iterator[Diagnostic]:
    """A step from which no `end: true` step can be reached (dead end or trap cycle)."""
    sg = doc.step_graph
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
    for sid in stuck:
        if not sg.routes[sid]:
            msg = f"step '{sid}' is a dead end: it has no next, on_* target or end: true"
            yield doc.diag("PIP105", msg, sg.steps[sid], "id", hint="add 'next: <step>' or 'end: true'", payload=Payload(step=sid))
    order = {sid: i for i, sid in enumerate(sg.steps)}
    for component in strongly_connected(stuck, sg.succ):
        members = sorted(component, key=order.__getitem__)
        first = members[0]
        if len(members) == 1 and first not in sg.succ[first]:
            continue
        related = []
        for sid in members[1:]:
            related.append(doc.related(f"step '{sid}' is part of the loop", sg.steps[sid], "id"))
        names = ", ".join(f"'{m}'" for m in members)
        msg = (f"the loop through {names} never reaches an end: true step" if len(members) > 1
               else f"step '{first}' loops to itself and never reaches an end: true step")
        yield doc.diag("PIP105", msg, sg.steps[first], "id", hint="give the loop an exit to a step that ends", related=related)


@rule("PIP106", "unknown-action", "error", kinds=("pipeline",),
      entries={"steps": Touched(same_id, step_view)})
def unknown_action(doc: LoadedPipeline, at: list[int] | None = None) -> Iterator[Diagnostic]:
    """An action that is neither built in nor declared under `actions:`."""
    catalog = doc.step_graph.catalog
    for step in steps_at(doc, at):
        if step.action not in catalog:
            hint = did_you_mean(step.action, catalog) or "declare it under 'actions:' with what it requires and ensures"
            yield doc.diag("PIP106", f"step '{step.id}': unknown action '{step.action}'", step, "action", hint=hint)


FROM_SETTINGS = "_from_settings"


@rule("PIP204", "unknown-setting", "error", kinds=("pipeline",),
      entries={"steps": Touched(same_id, step_view)})
def unknown_setting(doc: LoadedPipeline, at: list[int] | None = None) -> Iterator[Diagnostic]:
    """A `<key>_from_settings` step key names a setting the pipeline's `settings:` does not have."""
    settings = doc.pipeline.settings
    for step in steps_at(doc, at):
        for key, value in config(step).items():
            if key.endswith(FROM_SETTINGS) and (not isinstance(value, str) or value not in settings):
                yield doc.diag("PIP204", f"step '{step.id}': {key} names the setting '{value}', which the pipeline's settings do "
                               "not have", step.src + (key,), hint=did_you_mean(str(value), settings) or
                               f"add '{value}: ...' to settings" if isinstance(value, str) else "name a key of settings")
