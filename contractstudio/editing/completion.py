"""Completion: keys valid at the cursor, values of enums and references, and expressions.

Where the cursor is comes from the live text (editing/cursor.py); what is valid
there comes from the document models (their fields and one-line docs) and from
the last analysis of the file (declared types, step ids, tools, scopes).
"""

from __future__ import annotations

import re
import types as pytypes
import typing
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from pydantic import BaseModel

from contractstudio.analysis.check import FileReport, Loaded
from contractstudio.analysis.facts import scope_at, step_graph, type_system
from contractstudio.analysis.shape import annotation_at
from contractstudio.documents.actions import BUILTIN_ACTIONS, CALL_MODEL, PREFIX_ROUTER, ActionSpec, action_catalog
from contractstudio.documents.models import KINDS, Agent, Contract, Pipeline, Step
from contractstudio.documents.type_syntax import PRIMITIVES, TypeExpr, parse_type
from contractstudio.documents.types import TypeSystem
from contractstudio.editing.cursor import Cursor, loaded_for, locate
from contractstudio.editing.expression_help import complete_expression, open_placeholder
from contractstudio.editing.items import CompletionItem

TYPE_FORMS = (("list[...]", "list["), ("dict[str, ...]", "dict[str, "), ("Literal[...]", "Literal["), ("... | None", ""))
_STATE_KEYS = ("requires_state", "ensures_state")


def complete(report: FileReport | None, line: int, column: int, text: str | Sequence[str] | None = None) -> list[CompletionItem]:
    """Completion items at a 1-based position of `text` (the live buffer or its lines; the report's text by default).

    The report may be older than the text (the user is typing): it only supplies the
    facts (declared names, scopes); the place comes from the text itself.
    """
    live = text if text is not None else report.text if report is not None else ""
    cursor = locate(live, line, column, report)
    if cursor is None:
        return []
    loaded = loaded_for(report, cursor.doc_index)
    if loaded is not None and loaded.kind != cursor.kind:
        loaded = None  # the kind was changed since: its facts would mislead
    if cursor.role == "key":
        items = _keys(cursor, loaded)
        if cursor.item_path is not None and not items:
            items = _values(cursor, loaded, cursor.item_path)
    else:
        items = _values(cursor, loaded, cursor.path)
    return _matching(items, cursor.word)


def _matching(items: list[CompletionItem], word: str) -> list[CompletionItem]:
    """Items whose label starts with the word typed, then those that contain it."""
    if not word:
        return items
    low = word.lower()
    first = [i for i in items if i.label.lower().startswith(low)]
    then = [i for i in items if low in i.label.lower() and not i.label.lower().startswith(low)]
    return first + [replace(i, sort_text="z" + i.sort_text) for i in then]


# ----------------------------------------------------------------- keys


def type_label(ann: Any) -> str:
    """A short, readable form of a model annotation."""
    origin = typing.get_origin(ann)
    args = typing.get_args(ann)
    if origin is typing.Literal:
        return " | ".join(repr(a) for a in args)
    if origin in (typing.Union, pytypes.UnionType):
        return " | ".join(type_label(a) for a in args if a is not type(None)) + (" | None" if type(None) in args else "")
    if origin is list:
        return f"list[{type_label(args[0])}]"
    if origin is dict:
        return f"dict[str, {type_label(args[1])}]"
    if ann is Any:
        return "any"
    return getattr(ann, "__name__", str(ann))


def _model(ann: Any) -> type[BaseModel] | None:
    if isinstance(ann, type) and issubclass(ann, BaseModel):
        return ann
    if typing.get_origin(ann) in (typing.Union, pytypes.UnionType):
        return next((a for a in typing.get_args(ann) if isinstance(a, type) and issubclass(a, BaseModel)), None)
    return None


def _scalar(ann: Any) -> bool:
    """A value written on the key's line (not a nested mapping or list)."""
    if _model(ann) is not None:
        return False
    origin = typing.get_origin(ann)
    if origin in (typing.Union, pytypes.UnionType):
        return all(_scalar(a) for a in typing.get_args(ann))
    return origin not in (list, dict)


def _key_item(cursor: Cursor, name: str, ann: Any, doc: str, required: bool, order: int) -> CompletionItem:
    colon = cursor.rest.lstrip().startswith(":")
    insert = name if colon else f"{name}: " if _scalar(ann) else f"{name}:"
    return CompletionItem(name, "key", type_label(ann) + (" (required)" if required else ""), doc, insert_text=insert,
                          replace=cursor.word_span, sort_text=f"{0 if required else 1}{order:03d}")


def _keys(cursor: Cursor, loaded: Loaded | None) -> list[CompletionItem]:
    cls = KINDS.get(cursor.kind or "")
    if cls is None:
        if cursor.path:
            return []
        return [CompletionItem(f"kind: {k}", "key", "the document's kind", KINDS[k].__doc__ or "", insert_text=f"kind: {k}",
                               replace=cursor.word_span, sort_text=f"0{k}") for k in KINDS]
    data_fields = _data_fields(cursor.path, loaded)
    if data_fields is not None:
        return [item for item in data_fields if item.label not in cursor.siblings]
    model = _model(annotation_at(cls, cursor.path)) if cursor.path else cls
    if model is None:
        return []
    items = []
    for order, (name, info) in enumerate(model.model_fields.items()):
        key = info.alias or name
        if key in cursor.siblings:
            continue
        items.append(_key_item(cursor, key, info.annotation, info.description or "", info.is_required(), order))
    if model is Step and isinstance(loaded, Loaded) and isinstance(loaded.model, Pipeline):
        items += _step_keys(cursor, loaded.model)
    return items


def _step_keys(cursor: Cursor, pipeline: Pipeline) -> list[CompletionItem]:
    """A step's configuration keys: what its action requires on the step, a router's prefixes and targets."""
    action = cursor.siblings.get("action", "").strip("'\"")
    spec = action_catalog(pipeline).get(action)
    wanted: dict[str, str] = {}
    for key in spec.requires_step if spec else ():
        wanted[key] = f"required by action {action}"
    if action == PREFIX_ROUTER:
        wanted["on_other"] = "the step for a reply without a known prefix"
        for router in pipeline.routers.values():
            for prefix in router.prefixes:
                route = re.sub(r"[^a-z0-9]+", "_", prefix.lower()).strip("_") or "route"
                wanted[f"{route}_prefix"] = f"the prefix {prefix!r} of a route"
                wanted[f"on_{route}"] = f"the step for replies starting with {prefix!r}"
        for key in cursor.siblings:
            if key.endswith("_prefix"):
                wanted[f"on_{key[: -len('_prefix')]}"] = "the target of this route"
    return [CompletionItem(k, "key", why, insert_text=k if cursor.rest.lstrip().startswith(":") else f"{k}: ",
                           replace=cursor.word_span, sort_text=f"0{900 + i:03d}")
            for i, (k, why) in enumerate(wanted.items()) if k not in cursor.siblings]


def _data_fields(path: tuple[Any, ...], loaded: Loaded | None) -> list[CompletionItem] | None:
    """Keys that name fields of a declared type: fallback, act.assign, example inputs, expected outputs."""
    if loaded is None or not isinstance(loaded.model, Contract):
        return None
    doc = loaded.model
    types = type_system(loaded)
    owner: TypeExpr | None = None
    rest: tuple[Any, ...] = ()
    if path == ("fallback",):
        owner = _parsed(doc.output)
    elif path == ("act", "assign"):
        owner = _parsed(doc.intermediate)
    elif len(path) >= 3 and path[0] in ("examples", "scenarios") and path[2] == "input":
        owner, rest = _parsed(doc.input), path[3:]
    elif len(path) >= 4 and path[0] == "scenarios" and path[2:4] == ("expect", "output"):
        owner, rest = _parsed(doc.output), path[4:]
    if owner is None:
        return None
    for part in rest:
        if isinstance(part, int):
            base = owner
            owner = getattr(base, "item", None)
        else:
            owner = types.field_type(owner, part) if types.declared(owner) else None
        if owner is None:
            return []
    specs = types.fields(owner) or {}
    field_types = types.field_types(owner) or {}
    return [CompletionItem(n, "field", str(field_types.get(n, "")) + (" (required)" if s.required else ""), s.description or "",
                           insert_text=f"{n}: ", sort_text=f"{0 if s.required else 1}{i:03d}")
            for i, (n, s) in enumerate(specs.items())]


def _parsed(text: str | None) -> TypeExpr | None:
    try:
        return parse_type(text) if text else None
    except Exception:  # noqa: BLE001 - a broken type string offers nothing
        return None


# ----------------------------------------------------------------- values


def _values(cursor: Cursor, loaded: Loaded | None, path: tuple[Any, ...]) -> list[CompletionItem]:
    cls = KINDS.get(cursor.kind or "")
    if path == ("kind",):
        return _choices(cursor, [(k, "kind", KINDS[k].__doc__ or "") for k in KINDS])
    if cls is None:
        return []
    if loaded is not None:
        expr = _expression(cursor, loaded, path)
        if expr is not None:
            return expr
        named = _references(cursor, loaded, path)
        if named is not None:
            return named
    ann = annotation_at(cls, path)
    if typing.get_origin(ann) in (typing.Union, pytypes.UnionType):
        ann = next((a for a in typing.get_args(ann) if a is not type(None)), ann)
    if typing.get_origin(ann) is typing.Literal:
        return _choices(cursor, [(str(v), "value", "") for v in typing.get_args(ann)])
    if ann is bool:
        return _choices(cursor, [("true", "value", ""), ("false", "value", "")])
    return []


def _choices(cursor: Cursor, names: list[tuple[str, str, str]], detail: str = "") -> list[CompletionItem]:
    space = " " if cursor.needs_space else ""
    return [CompletionItem(n, kind, detail, doc, insert_text=space + n, replace=cursor.word_span, sort_text=f"{i:04d}")
            for i, (n, kind, doc) in enumerate(names)]


def _expression(cursor: Cursor, loaded: Loaded, path: tuple[Any, ...]) -> list[CompletionItem] | None:
    last = path[-1] if path else None
    expression = last in ("assert", "when") or (len(path) == 3 and path[:2] == ("act", "assign")) or (
        len(path) == 2 and path[0] == "fallback")
    if not expression and last != "message":
        return None
    where = scope_at(loaded, path)
    if where is None:
        return None
    scope, types = where
    before = cursor.value_before
    whole = before + cursor.rest
    if last == "message":
        inside = open_placeholder(before)
        if inside is None:
            return []
        before = whole = inside
    return complete_expression(before, whole, scope, types, cursor.word_span)


def _references(cursor: Cursor, loaded: Loaded, path: tuple[Any, ...]) -> list[CompletionItem] | None:
    """Values that name something declared elsewhere in the document."""
    model = loaded.model
    if isinstance(model, Contract):
        if path in (("input",), ("output",), ("intermediate",)):
            return _type_names(cursor, type_system(loaded), primitives=False)
        if len(path) == 5 and path[0] == "types" and path[2] == "fields" and path[4] == "type":
            return _type_names(cursor, type_system(loaded), primitives=True)
        return None
    if isinstance(model, Pipeline):
        return _pipeline_values(cursor, loaded, model, path)
    if isinstance(model, Agent):
        tools = [(t.name, "tool", t.description or "") for t in model.tools]
        if len(path) == 4 and path[0] == "policies" and path[2] in ("require", "forbid") and path[3] == "tool":
            return _choices(cursor, tools)
        if len(path) == 5 and path[0] == "tasks" and path[2] == "trajectory":
            if path[4] == "expect_tool":
                return _choices(cursor, tools)
            if path[4] == "expect_field":
                return _choices(cursor, [(n, "field", f.description or "") for n, f in model.output_schema.fields.items()])
        if len(path) == 4 and path[0] == "policies" and path[2] == "scope":
            return _choices(cursor, [(t.id, "task", t.description or "") for t in model.tasks])
        if len(path) == 4 and path[0] == "policies" and path[2] == "conflicts_with":
            return _choices(cursor, [(p.id, "policy", p.description or "") for p in model.policies])
    if (path[-1:] == ("type",) and "fields" in path) or (len(path) == 4 and path[2] == "params"):
        return _type_names(cursor, TypeSystem.from_decls({}), primitives=True)
    return None


def _type_names(cursor: Cursor, types: TypeSystem, *, primitives: bool) -> list[CompletionItem]:
    items = [CompletionItem(n, "type", "declared type", types.decls[n].description or "", insert_text=n,
                            replace=cursor.word_span, sort_text=f"0{n}") for n in types.names()]
    if primitives:
        items += [CompletionItem(p, "type", "built-in type", insert_text=p, replace=cursor.word_span, sort_text=f"1{p}")
                  for p in PRIMITIVES if p != "none"]
        items += [CompletionItem(label, "type", "type form", insert_text=insert, replace=cursor.word_span, sort_text=f"2{label}")
                  for label, insert in TYPE_FORMS if insert]
    return items


def action_doc(spec: ActionSpec) -> str:
    parts = [spec.why] if spec.why else []
    for label, names in (("requires state", spec.requires_state), ("requires on the step", spec.requires_step),
                         ("ensures state", spec.ensures_state)):
        if names:
            parts.append(f"{label}: {', '.join(names)}")
    if spec.requires_any_state:
        parts.append("requires one of: " + "; ".join(" or ".join(g) for g in spec.requires_any_state))
    return "\n\n".join(parts)


def _pipeline_values(cursor: Cursor, loaded: Loaded, pipeline: Pipeline, path: tuple[Any, ...]) -> list[CompletionItem] | None:
    key = path[-1] if path else None
    if path == ("entry_step_id",) or (len(path) == 3 and path[0] == "steps" and isinstance(key, str)
                                      and (key == "next" or key.startswith("on_"))):
        # only here: a 5 MB chain has 44,000 steps, and every letter typed elsewhere in a step is completed too
        sg = step_graph(loaded)
        steps = sg.steps if sg is not None else {}
        low = cursor.word.lower()
        return _choices(cursor, [(sid, "step", f"action {s.action}") for sid, s in steps.items() if low in sid.lower()])
    if len(path) == 3 and path[0] == "steps" and key == "action":
        catalog = action_catalog(pipeline)
        return _choices(cursor, [(n, "action", action_doc(s)) for n, s in catalog.items()])
    if len(path) == 3 and path[0] == "steps" and key == "prompt" and cursor.siblings.get("action", CALL_MODEL) == CALL_MODEL:
        return _choices(cursor, [(n, "router", "router prompt: " + ", ".join(r.prefixes)) for n, r in pipeline.routers.items()])
    if len(path) == 3 and path[0] == "steps" and isinstance(key, str) and key.endswith("_prefix"):
        prefixes = [p for r in pipeline.routers.values() for p in r.prefixes]
        span = cursor.value_span or cursor.word_span
        return [CompletionItem(f'"{p}"', "value", "a router prefix", insert_text=f'"{p}"', replace=span, sort_text=f"{i:04d}")
                for i, p in enumerate(dict.fromkeys(prefixes))]
    if path[:1] == ("inputs",) or (len(path) >= 3 and path[0] == "actions" and path[2] in _STATE_KEYS + ("requires_any_state",)):
        fields: dict[str, None] = dict.fromkeys(pipeline.inputs)
        for spec in list(BUILTIN_ACTIONS.values()) + list(action_catalog(pipeline).values()):
            fields.update(dict.fromkeys((*spec.requires_state, *spec.ensures_state, *(f for g in spec.requires_any_state for f in g))))
        return _choices(cursor, [(f, "value", "a state field") for f in fields])
    return None
