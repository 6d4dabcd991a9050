"""Pipeline state (PIP201-203): what each step's action requires, against what the steps before it set.

The rules read the document's state flow and its requirements (`doc.requirements`),
computed once per analysis.
"""

from __future__ import annotations

from collections.abc import Iterator

from contractstudio.analysis.loaded_pipeline import LoadedPipeline, same_id, step_view, steps_at
from contractstudio.analysis.rules.registry import Touched, rule
from contractstudio.analysis.step_graph import config, unset_paths, witness_path
from contractstudio.documents.actions import SETTINGS
from contractstudio.documents.models import Step
from contractstudio.findings.diagnostics import Diagnostic, Payload, did_you_mean

# What these rules read of each step: all but its description's text (analysis/by_entry.py).
ENTRIES = {"steps": step_view}

# One BFS per field finds witness paths for every step that needs it; past this many
# fields with PIP201s a pathological file would make that quadratic.
MAX_WITNESS_FIELDS = 64


def _what(group: tuple[str, ...]) -> str:
    return f"'{group[0]}'" if len(group) == 1 else "one of " + ", ".join(f"'{f}'" for f in group)


def flow_kept(before: LoadedPipeline, after: LoadedPipeline, key: str, i: int) -> list[int] | None:
    """The state flow was taken over from the last analysis (`LoadedPipeline.carry`: step i kept its id, its edges,
    its action and what it says it sets), so every other step's state findings are as they were: only step i's."""
    kept = "state_flow" in after.__dict__ and after.__dict__["state_flow"] is before.__dict__.get("state_flow")
    return same_id(before, after, key, i) if kept else None


@rule("PIP201", "state-maybe-unset", "error", kinds=("pipeline",),
      entries={"steps": Touched(flow_kept, step_view)})
def state_maybe_unset(doc: LoadedPipeline, at: list[int] | None = None) -> Iterator[Diagnostic]:
    """A required state field is unset on at least one path to the step (a warning when the action goes on without it)."""
    only = None if at is None else {id(step) for step in steps_at(doc, at)}
    sg, flow = doc.step_graph, doc.state_flow
    # Per field: BFS parents and the steps that set it; None until a step of `only` asks (the fields count in the
    # order the steps come, whichever are asked: past MAX_WITNESS_FIELDS no path is shown).
    witnesses: dict[int, tuple[dict[str, str], list[str]] | None] = {}
    for need in doc.requirements:
        if not need.set_elsewhere or need.on_every_path is not False:
            continue
        mask = need.mask
        if mask not in witnesses:
            witnesses[mask] = None if len(witnesses) < MAX_WITNESS_FIELDS else ({}, [])
        if only is not None and id(need.step) not in only:
            continue
        found = witnesses[mask]
        if found is None:
            setters = [s for s, g in flow.gen.items() if g & mask and sg.catalog.get(sg.steps[s].action) is not None]
            found = witnesses[mask] = (unset_paths(sg, flow, mask), setters)
        yield _maybe_unset(doc, need.step, _what(need.fields), *found, skips=_skips(doc, need.step))


def _skips(doc: LoadedPipeline, step: Step) -> str:
    """What the step's action does instead when its state requirements are unmet, if it goes on ('' when it fails)."""
    spec = doc.step_graph.catalog.get(step.action)
    return spec.skips if spec is not None else ""


def _maybe_unset(doc: LoadedPipeline, step: Step, what: str, parents: dict[str, str], setters: list[str], *,
                 skips: str = "") -> Diagnostic:
    sg = doc.step_graph
    path = witness_path(parents, step.id)
    related = []
    for sid in path:
        note = f"requires {what} here" if sid == step.id else f"step '{sid}' ({sg.steps[sid].action}) does not set it"
        related.append(doc.related(note, sg.steps[sid], "id"))
    others = [s for s in setters if s != step.id]
    hint = f"on the path {' -> '.join(path)} nothing sets it" if path else "set it on every path to this step"
    if others:
        hint += f"; steps that set it: {', '.join(others[:3])}{', ...' if len(others) > 3 else ''}"
    if skips:  # the runtime goes on without it: a warning that says what the step then does
        return doc.diag("PIP201", f"step '{step.id}' (action {step.action}) requires {what}, which is unset on at least one "
                        f"path from the entry; there it {skips}", step, "action", hint=hint, related=related, severity="warning")
    return doc.diag("PIP201", f"step '{step.id}' (action {step.action}) requires {what}, "
                              "which is unset on at least one path from the entry",
                    step, "action", hint=hint, related=related)


@rule("PIP202", "state-never-set", "error", kinds=("pipeline",),
      entries={"steps": Touched(flow_kept, step_view)})
def state_never_set(doc: LoadedPipeline, at: list[int] | None = None) -> Iterator[Diagnostic]:
    """A required state field that no step and no input ever sets (a warning when the action goes on without it,
    as LocalAI-RAG's expand_dependency_tree does with no seed nodes: the message says what it does instead)."""
    only = None if at is None else {id(step) for step in steps_at(doc, at)}
    for need in doc.requirements:
        if not need.set_elsewhere and (only is None or id(need.step) in only):
            step = need.step
            hint = "add it to 'inputs:' or run an action that ensures it first"
            if skips := _skips(doc, step):
                yield doc.diag("PIP202", f"step '{step.id}' (action {step.action}) requires {_what(need.fields)}, which no other "
                               f"step and no input ever sets, so it always {skips}", step, "action", hint=hint, severity="warning")
            else:
                yield doc.diag("PIP202", f"step '{step.id}' (action {step.action}) requires {_what(need.fields)}, which no other "
                               "step and no input ever sets", step, "action", hint=hint)


@rule("PIP205", "unknown-prompt-source", "warning", kinds=("pipeline",),
      entries={"steps": Touched(flow_kept, step_view)})
def unknown_prompt_source(doc: LoadedPipeline, at: list[int] | None = None) -> Iterator[Diagnostic]:
    """A prompt part reads a state field (`user_parts.<part>.source`) that nothing can set: it renders as empty text."""
    only = None if at is None else {id(step) for step in steps_at(doc, at)}
    catalog = doc.step_graph.catalog
    readers = [(step, spec) for step in doc.pipeline.steps if (spec := catalog.get(step.action)) is not None and spec.reads_from
               and (only is None or id(step) in only)]
    if not readers:
        return
    known = set(doc.pipeline.inputs)
    for spec in catalog.values():  # any action's field: a pipeline that never sets it reads it empty on purpose, or not
        known.update(spec.ensures_state, spec.route_state)
    for step in doc.pipeline.steps:
        if (spec := catalog.get(step.action)) is not None:
            known.update(spec.ensured_by(step))
    for step, spec in readers:
        names = known | set(spec.derived_sources)
        for path, field in spec.read_by(step):
            if field not in names:
                yield doc.diag("PIP205", f"step '{step.id}': {'.'.join(map(str, path))} reads '{field}', which no action sets "
                               "and no input provides, so the prompt gets empty text there", step.src + path,
                               hint=did_you_mean(field, sorted(names)) or "name a state field an earlier step sets")


@rule("PIP203", "missing-step-key", "error", kinds=("pipeline",),
      entries={"steps": Touched(same_id, step_view)})
def missing_step_key(doc: LoadedPipeline, at: list[int] | None = None) -> Iterator[Diagnostic]:
    """A key the action requires on the step (`requires_step`), or a setting it requires, is missing (a key the
    runtime defaults, `ActionSpec.defaults`, never is)."""
    catalog, settings = doc.step_graph.catalog, doc.pipeline.settings
    for step in steps_at(doc, at):
        spec = catalog.get(step.action)
        if spec is None:
            continue
        keys = {*config(step), *(k for k in ("next", "end") if getattr(step, k) not in (None, False))}
        for need in spec.unmet_step_keys(keys, settings):  # 'a|settings.b': none of them (the runner asks the same)
            options = need.split("|")
            if len(options) > 1:
                shown = " or ".join(f"'{o}'" if o.startswith(SETTINGS) else f"'{o}' on the step" for o in options)
                msg, hint = f"step '{step.id}': action '{step.action}' requires {shown}", f"add '{options[0]}: ...' to the step"
            elif need.startswith(SETTINGS):
                msg = f"step '{step.id}': action '{step.action}' requires the setting '{need[len(SETTINGS):]}'"
                hint = f"add '{need[len(SETTINGS):]}: ...' to the pipeline's settings"
            else:
                msg = f"step '{step.id}': action '{step.action}' requires the key '{need}' on the step"
                hint = f"add '{need}: ...' to the step"
            # Only a plain key on the step has one obvious fix (adding it); the payload names it.
            payload = Payload(step=step.id, key=need) if len(options) == 1 and not need.startswith(SETTINGS) else None
            yield doc.diag("PIP203", msg, step, "action", hint=hint, payload=payload)
