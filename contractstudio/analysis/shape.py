"""The shape validator (YML003, SCH101-104): pydantic errors mapped back to exact key and value positions.

Validation goes on past errors: the parts a pydantic error points at are pruned
and the document validated again, so the semantic rules still see every step,
type and condition that is well-formed.
"""

from __future__ import annotations

import types as pytypes
import typing
from dataclasses import replace
from typing import Any

from pydantic import BaseModel, ValidationError

from contractstudio.analysis.subjects import subject_at
from contractstudio.documents.models import DIALECT_KINDS, KINDS, Model, SrcDict
from contractstudio.findings.diagnostics import Diagnostic, Payload, declare, did_you_mean, make
from contractstudio.reading.dialect_registry import hint as dialect_hint
from contractstudio.reading.source import MapNode, SourceDocument, key_at, nearest, node_at

declare("SCH101", "missing-key", "error", "A required key is missing.")
declare("SCH102", "unknown-key", "warning", "A key the format does not know (the hint names the closest known key).")
declare("SCH103", "wrong-type", "error", "A value of the wrong shape or type (a list where a mapping belongs, a string for `tries`, ...).")
declare("SCH104", "out-of-range", "error", "A value outside its allowed set or range (`oracle: robot`, `tries: 0`, `backoff: 0.5`).")

_RANGE_ERRORS = {
    "literal_error", "enum", "greater_than", "greater_than_equal", "less_than", "less_than_equal",
    "too_short", "too_long", "string_too_short", "string_too_long", "string_pattern_mismatch", "multiple_of",
}
MAX_PRUNE_PASSES = 8


def with_paths(value: Any, path: tuple[Any, ...] = ()) -> Any:
    """A copy of plain YAML data whose mappings know their path (SrcDict)."""
    # Only collections are visited: scalars, the bulk of every document, are copied by reference in place.
    if isinstance(value, dict):
        return SrcDict({k: with_paths(v, path + (k,)) if isinstance(v, (dict, list)) else v for k, v in value.items()}, src=path)
    if isinstance(value, list):
        return [with_paths(v, path + (i,)) if isinstance(v, (dict, list)) else v for i, v in enumerate(value)]
    return value


def _data_path(data: Any, loc: tuple[Any, ...]) -> tuple[Any, ...]:
    """The part of a pydantic loc that walks real data (drops union tags like 'str')."""
    out: list[Any] = []
    cur = data
    for part in loc:
        if isinstance(cur, dict) and part in cur:
            cur = cur[part]
        elif isinstance(cur, list) and isinstance(part, int) and 0 <= part < len(cur):
            cur = cur[part]
        elif isinstance(cur, dict) and isinstance(part, str) and _looks_like_key(part):
            out.append(part)  # a missing or unknown key: the loc ends here
            break
        else:
            continue  # a union member tag such as 'str' or 'Condition'
        out.append(part)
    return tuple(out)


def _looks_like_key(part: str) -> bool:
    if not part or part[0].isupper() or any(ch in part for ch in "[]()-,"):
        return False
    return part not in {"str", "int", "float", "bool", "list", "dict", "none"}


def _src_of(data: Any, path: tuple[Any, ...]) -> tuple[Any, ...]:
    """Translate a path in (possibly pruned) data to the original document path."""
    cur, best, rest = data, getattr(data, "src", ()), 0
    for i, part in enumerate(path):
        try:
            cur = cur[part]
        except (KeyError, IndexError, TypeError):
            break
        if isinstance(cur, SrcDict):
            best, rest = cur.src, i + 1
    return tuple(best) + tuple(path[rest:])


def annotation_at(cls: type[BaseModel], path: tuple[Any, ...]) -> Any:
    """The annotation of the value at a document path of a model (None where the path leaves the models)."""
    current: Any = cls
    for part in path:
        current = _unwrap_optional(current)
        if isinstance(current, type) and issubclass(current, BaseModel):
            current = next((f.annotation for n, f in current.model_fields.items() if part in (n, f.alias)), None)
        else:
            origin = typing.get_origin(current)
            if origin is list and isinstance(part, int):
                current = typing.get_args(current)[0]
            elif origin is dict:
                current = typing.get_args(current)[1]
            else:
                return None
        if current is None:
            return None
    return current


def _model_at(cls: type[BaseModel], path: tuple[Any, ...]) -> type[BaseModel] | None:
    """The model class that owns the mapping at a data path, for did-you-mean hints."""
    current = _unwrap_optional(annotation_at(cls, path))
    return current if isinstance(current, type) and issubclass(current, BaseModel) else None


def _unwrap_optional(tp: Any) -> Any:
    """T | None -> T (preferring a model member of a union)."""
    if typing.get_origin(tp) in (typing.Union, pytypes.UnionType):
        args = [a for a in typing.get_args(tp) if a is not type(None)]
        models = [a for a in args if isinstance(a, type) and issubclass(a, BaseModel)]
        return (models or args or [None])[0]
    return tp


def _known_keys(cls: type[BaseModel] | None) -> list[str]:
    if cls is None:
        return []
    return [f.alias or name for name, f in cls.model_fields.items()]


def _pretty(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _diagnostic(doc: SourceDocument, file: str, kind_cls: type[Model], data: Any, err: dict[str, Any]) -> Diagnostic:
    found = _found(doc, file, kind_cls, data, err)
    path = _src_of(data, _data_path(data, tuple(err["loc"])))
    return replace(found, subject=subject_at(doc.kind, doc.data, path))  # the step, type, tool ... it is about


def _found(doc: SourceDocument, file: str, kind_cls: type[Model], data: Any, err: dict[str, Any]) -> Diagnostic:
    loc = tuple(err["loc"])
    dpath = _data_path(data, loc)
    src = _src_of(data, dpath)
    etype = err["type"]
    msg = err["msg"]
    where = ".".join(str(p) for p in src) or "the document"
    if etype == "missing" or etype == "cs_missing":
        parent = src[:-1] if etype == "missing" else src
        key = src[-1] if etype == "missing" and src else None
        node = nearest(doc.root, parent, key=True)
        if isinstance(node, MapNode) and node.pairs:
            node = node.pairs[0][0]
        owner = ".".join(str(p) for p in parent) or "the document"
        text = f"missing required key '{key}' in {owner}" if key is not None else f"{owner}: {msg}"
        return make("SCH101", text, file, (node or doc.root).span,  # type: ignore[union-attr]
                    payload=Payload(key=str(key)) if key is not None else None)
    if etype == "extra_forbidden":
        node = key_at(doc.root, src) or nearest(doc.root, src)
        owner_model = _model_at(kind_cls, dpath[:-1])
        known = _known_keys(owner_model)
        hint = did_you_mean(str(src[-1]), known) or (f"known keys: {', '.join(known)}" if owner_model else None)
        where = getattr(owner_model, "SHOWN_AS", None) or ".".join(map(str, src[:-1])) or "the document"
        # A block may make unknown keys errors (llm: a typo there sends requests elsewhere) and name reserved ones.
        severity = getattr(owner_model, "UNKNOWN_KEYS", None)
        reserved = getattr(owner_model, "TRANSPORT_KEYS", {}).get(src[-1])
        if reserved:
            return make("SCH102", f"'{src[-1]}' in {where} would change how the engine talks to the model", file,
                        node.span, hint=reserved, severity="error")  # type: ignore[union-attr]
        return make("SCH102", f"unknown key '{src[-1]}' in {where}", file, node.span, hint=hint, severity=severity)  # type: ignore[union-attr]
    node = node_at(doc.root, src) or nearest(doc.root, src)
    holder = _model_at(kind_cls, dpath[:-1]) if dpath else None
    shown_as = getattr(holder, "SHOWN_AS", None)
    if src and holder is not None and shown_as:  # settings written in code: named as the code names them
        field = holder.model_fields.get(str(src[-1]))
        where = f"{shown_as}.{(field.alias if field is not None else None) or src[-1]}"
    value = err.get("input")
    code = "SCH104" if etype in _RANGE_ERRORS else "SCH103"
    if etype == "cs_conflict":
        code = "SCH103"
    shown = "" if isinstance(value, (dict, list)) else f" (got {_pretty(value)})"
    return make(code, f"{where}: {msg[0].lower() + msg[1:]}{shown}", file, node.span)  # type: ignore[union-attr]


def _prune(data: Any, path: tuple[Any, ...], missing: bool) -> bool:
    """Remove the part of the data an error points at; False when nothing could be removed."""
    if not path:
        return False
    if not missing:
        parent = data
        for part in path[:-1]:
            parent = parent[part]
        if isinstance(parent, dict) and path[-1] in parent:
            del parent[path[-1]]
            return True
        if isinstance(parent, list) and isinstance(path[-1], int) and path[-1] < len(parent):
            del parent[path[-1]]
            return True
    # A missing required key: drop the nearest enclosing list item or optional mapping entry.
    for cut in range(len(path) - 1, 0, -1):
        parent = data
        try:
            for part in path[: cut - 1]:
                parent = parent[part]
        except (KeyError, IndexError, TypeError):
            continue
        last = path[cut - 1]
        if isinstance(parent, list) and isinstance(last, int) and last < len(parent):
            del parent[last]
            return True
        if isinstance(parent, dict) and last in parent and cut - 1 > 0:
            del parent[last]
            return True
    return False


def validate(doc: SourceDocument, file: str) -> tuple[Model | None, list[Diagnostic]]:
    """Validate one document against its kind's model; return the (pruned) model and SCH diagnostics."""
    root = doc.root
    if doc.data is None and isinstance(root, MapNode):
        return None, []  # its data was refused while reading (YML006 alias bomb): already reported
    if not isinstance(doc.data, dict):
        if root is None:
            return None, []
        return None, [make("YML003", "a document must be a mapping with a 'kind:' key", file, root.span)]
    kind = doc.data.get("kind")
    cls = (DIALECT_KINDS.get((doc.dialect, kind)) or KINDS.get(kind)) if isinstance(kind, str) else None
    if cls is None:
        node = node_at(root, ("kind",))
        if node is None:
            return None, [make("YML003", "the document has no 'kind:'", file, root.span,  # type: ignore[union-attr]
                               hint=dialect_hint())]
        hint = did_you_mean(str(kind), KINDS) or "kind is one of: contract, agent, pipeline, tools"
        return None, [make("YML003", f"unknown kind '{kind}'", file, node.span, hint=hint)]
    data = with_paths(doc.data)
    diagnostics: list[Diagnostic] = []
    for attempt in range(MAX_PRUNE_PASSES):
        try:
            return cls.model_validate(data), diagnostics
        except ValidationError as exc:
            errors = exc.errors(include_url=False)
        if attempt == 0:
            diagnostics.extend(_first_per_place(doc, file, cls, data, errors))
        pruned = False
        for err in sorted(errors, key=lambda e: [str(p) for p in e["loc"]], reverse=True):
            path = _data_path(data, tuple(err["loc"]))
            try:
                pruned |= _prune(data, path, err["type"] == "missing")
            except (KeyError, IndexError, TypeError):
                continue
        if not pruned:
            pruned = _placeholders(data, cls, errors)
        if not pruned:
            break
    return None, diagnostics


# Required top-level keys that rules can do without: a stand-in lets the rest of
# the document be analyzed (rules treat '' as "already reported").
_PLACEHOLDERS: dict[str, Any] = {"name": "", "prompt": "", "input": "", "output": "", "steps": []}


def _placeholders(data: Any, cls: type[Model], errors: list[Any]) -> bool:
    changed = False
    for err in errors:
        loc = tuple(err["loc"])
        if len(loc) == 1 and loc[0] in _PLACEHOLDERS and loc[0] in cls.model_fields:
            stand_in = _PLACEHOLDERS[loc[0]]
            if data.get(loc[0]) != stand_in:
                data[loc[0]] = list(stand_in) if isinstance(stand_in, list) else stand_in
                changed = True
    return changed


def _first_per_place(doc: SourceDocument, file: str, cls: type[Model], data: Any, errors: list[Any]) -> list[Diagnostic]:
    """One diagnostic per place (a union's alternatives all fail at the same node), and per missing key:
    every required key a mapping lacks is reported at once, all at the mapping's first key."""
    out: list[Diagnostic] = []
    seen: set[tuple[int, int, str, str]] = set()
    for err in errors:
        d = _diagnostic(doc, file, cls, data, err)
        key = (d.line, d.column, d.code, d.message if err["type"] == "missing" else "")
        if key in seen:
            continue
        seen.add(key)
        out.append(d)
    return out
