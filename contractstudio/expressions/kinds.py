"""Coarse kinds of types (str num bool list dict record none any), for the checker's mismatch findings and the editor."""

from __future__ import annotations

import difflib

from contractstudio.documents.type_syntax import (
    ANY,
    NONE,
    DictOf,
    ListOf,
    LiteralOf,
    Prim,
    Ref,
    TypeExpr,
    Union,
    without_none,
)
from contractstudio.documents.types import TypeSystem

STR, INT, FLOAT, BOOL = Prim("str"), Prim("int"), Prim("float"), Prim("bool")


def kind_of(t: TypeExpr, types: TypeSystem | None) -> str:
    """A coarse kind for mismatch checks: str num bool list dict record none any."""
    if t == NONE:
        return "none"
    t = without_none(t)
    if isinstance(t, Prim):
        return {"str": "str", "int": "num", "float": "num", "bool": "bool"}.get(t.name, "any")
    if isinstance(t, ListOf):
        return "list"
    if isinstance(t, DictOf):
        return "dict"
    if isinstance(t, Ref):
        return "record" if types is not None and types.declared(t) else "any"
    if isinstance(t, LiteralOf):
        if all(isinstance(v, str) for v in t.values):
            return "str"
        if all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in t.values):
            return "num"
        return "any"
    if isinstance(t, Union):
        kinds = {kind_of(o, types) for o in t.options if o != NONE}
        return kinds.pop() if len(kinds) == 1 else "any"
    return "any"



_CANNOT_BECOME = {  # (value kind, field kind) pairs that pydantic validation always refuses
    ("list", "str"), ("list", "num"), ("list", "bool"), ("list", "record"), ("list", "dict"),
    ("str", "list"), ("num", "list"), ("bool", "list"), ("str", "dict"), ("num", "dict"), ("bool", "dict"),
    ("str", "record"), ("num", "record"), ("bool", "record"), ("num", "str"), ("bool", "str"),
    ("dict", "str"), ("dict", "num"), ("dict", "bool"), ("dict", "list"), ("record", "str"), ("record", "num"),
    ("record", "list"), ("record", "bool"),
}


def cannot_become(value: TypeExpr, field: TypeExpr, types: TypeSystem | None) -> bool:
    """True when a value of type `value` can never validate as `field` (checked on the non-None parts)."""
    if value == NONE or field == ANY or value == ANY:
        return False
    return (kind_of(value, types), kind_of(field, types)) in _CANNOT_BECOME


def element_of(t: TypeExpr, types: TypeSystem | None) -> TypeExpr:
    """The type of one item of an iterable value (a list's item, a character of a str, a key of a dict)."""
    t = without_none(t)
    if isinstance(t, ListOf):
        return t.item
    if kind_of(t, types) in ("str", "dict"):
        return STR
    return ANY


def close_name(name: str, candidates: list[str]) -> str | None:
    """The candidate a misspelt name most likely meant (for did-you-mean hints), or None."""
    best = difflib.get_close_matches(name, candidates, n=1, cutoff=0.6)
    if best:
        return best[0]
    low = name.lower()
    near = [c for c in candidates if low and (low in c.lower() or c.lower() in low)]
    return near[0] if len(near) == 1 else None
