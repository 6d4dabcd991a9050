"""Placeholder values for keys and fields a quick fix adds: valid where the format allows, obvious to replace."""

from __future__ import annotations

import re
import types as pytypes
import typing
from typing import Any

from contractstudio.analysis.check import Loaded
from contractstudio.analysis.facts import type_system
from contractstudio.documents.type_syntax import NONE, DictOf, ListOf, LiteralOf, Prim, Ref, TypeExpr, Union
from contractstudio.documents.types import TypeSystem

MAX_DEPTH = 4  # nested records spelled out in a fallback literal


def expression_for(types: TypeSystem, t: TypeExpr | None, depth: int = 0) -> str:
    """A YAML value holding the simplest expression of type `t` (quoted: `''` and `{...}` are not plain YAML)."""
    return '"' + _expression(types, t, depth) + '"'


def _expression(types: TypeSystem, t: TypeExpr | None, depth: int) -> str:
    if t is None or t == NONE:
        return "None"
    if isinstance(t, Union):
        return "None" if NONE in t.options else _expression(types, t.options[0], depth)
    if isinstance(t, Prim):
        return {"str": "''", "int": "0", "float": "0.0", "bool": "False"}.get(t.name, "None")
    if isinstance(t, ListOf):
        return "[]"
    if isinstance(t, DictOf):
        return "{}"
    if isinstance(t, LiteralOf):
        return repr(t.values[0]) if t.values else "None"
    if isinstance(t, Ref) and types.declared(t) and depth < MAX_DEPTH:
        specs = types.fields(t) or {}
        parts = [f"'{n}': {_bounded(types, s, types.field_type(t, n), depth)}" for n, s in specs.items() if s.required]
        return "{" + ", ".join(parts) + "}"
    return "None"


def _bounded(types: TypeSystem, spec: Any, t: TypeExpr | None, depth: int) -> str:
    """The simplest value that also meets a field's lower bounds (ge / gt / min_length)."""
    if isinstance(t, Prim) and t.name in ("int", "float"):
        low = spec.ge if spec.ge is not None else (spec.gt + 1 if spec.gt is not None else None)
        if low is not None:
            return str(int(low)) if t.name == "int" else str(float(low))
    if isinstance(t, Prim) and t.name == "str" and spec.min_length:
        return repr("x" * int(spec.min_length))
    return _expression(types, t, depth + 1)


def placeholder(loaded: Loaded, path: tuple[Any, ...], key: str, ann: Any) -> str:
    """A value for a missing key: a name the document suggests, else the simplest value of the key's type."""
    known = _by_key(loaded, path, key)
    if known is not None:
        return known
    origin = typing.get_origin(ann)
    if origin in (typing.Union, pytypes.UnionType):
        args = [a for a in typing.get_args(ann) if a is not type(None)]
        ann = args[0] if args else str
        origin = typing.get_origin(ann)
    if origin is typing.Literal:
        return str(typing.get_args(ann)[0])
    if origin is list:
        return "[]"
    if origin is dict or (isinstance(ann, type) and hasattr(ann, "model_fields")):
        return "{}"
    return {bool: "false", int: "1", float: "0.0"}.get(ann, "TODO")


def _by_key(loaded: Loaded, path: tuple[Any, ...], key: str) -> str | None:
    if key == "name":
        stem = re.sub(r"[^A-Za-z0-9_]+", "_", loaded.file.rsplit("/", 1)[-1].split(".")[0]).strip("_")
        return stem or f"new_{loaded.kind or 'document'}"
    if key == "prompt" and not path:
        return "Describe the task for the model."
    if key in ("input", "output") and not path:
        names = type_system(loaded).names()
        wanted = [n for n in names if key in n.lower()]
        return (wanted or [key.capitalize()])[0]
    if key == "id" and path[:1] == ("steps",):
        return f"step_{path[1] + 1 if len(path) > 1 and isinstance(path[1], int) else 1}"
    if key == "id" and path[:1] in (("tasks",), ("policies",)):
        return f"{path[0][:-1] if path[0] != 'policies' else 'policy'}_{path[1] + 1 if len(path) > 1 else 1}"
    if key == "action" and path[:1] == ("steps",):
        return "call_model"
    if key == "prompt" and path[:1] == ("steps",):
        sid = loaded.node(path + ("id",))
        return f"{getattr(sid, 'value', None) or 'step'}_prompt"
    return None
