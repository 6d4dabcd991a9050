"""The fields of an event class as a trace line holds them: the order they are written in, and each one read back
with its type checked (runtime/events.py's `Event.from_dict`; runtime/trace.py writes by the same layout).
Tables are made once per class.
"""

from __future__ import annotations

import math
from dataclasses import fields
from typing import Any

# Field tables, made once per class: (name, default) to write, (name, annotation) to read.
_LAYOUTS: dict[type, tuple[tuple[str, Any], ...]] = {}
_ANNOTATIONS: dict[type, tuple[tuple[str, str], ...]] = {}
_BASE = frozenset({"seq", "t", "stage", "extra"})  # every event has these; the rest is its data


def event_layout(cls: type) -> tuple[tuple[str, Any], ...]:
    """(field, default) of an event class's data fields, in the order a trace line writes them."""
    found = _LAYOUTS.get(cls)
    if found is None:
        found = _LAYOUTS[cls] = tuple((f.name, f.default) for f in fields(cls) if f.name not in _BASE)
    return found


def field_annotations(cls: type) -> tuple[tuple[str, str], ...]:
    found = _ANNOTATIONS.get(cls)
    if found is None:
        found = _ANNOTATIONS[cls] = tuple((f.name, str(f.type)) for f in fields(cls) if f.name not in _BASE)
    return found


_NON_FINITE = {"NaN": math.nan, "Infinity": math.inf, "-Infinity": -math.inf}  # how a trace writes them (trace.jsonable)


def checked_field(kind: str, name: str, annotation: str, value: Any) -> Any:
    """A field's value read from a trace, of the field's type; ValueError otherwise."""
    optional = annotation.endswith(" | None")
    base = annotation.removesuffix(" | None")
    if value is None and (optional or base == "Any"):
        return None
    ok: bool
    if base == "Any":
        return value
    if base == "bool":
        ok = isinstance(value, bool)
    elif base == "int":
        ok = isinstance(value, int) and not isinstance(value, bool)
    elif base == "float":
        if isinstance(value, str) and value in _NON_FINITE:
            return _NON_FINITE[value]
        ok = isinstance(value, (int, float)) and not isinstance(value, bool)
        if ok:
            return float(value)
    elif base == "str":
        ok = isinstance(value, str)
    elif base in ("list[int]", "list[float]"):  # a streamed reply's chunks
        ok = isinstance(value, list) and all(isinstance(v, (int, float)) and not isinstance(v, bool)
                                             and (base == "list[float]" or isinstance(v, int)) for v in value)
        if ok and base == "list[float]":
            return [float(v) for v in value]
    elif base.startswith("list["):  # the messages are mappings, error texts are strings
        item = dict if base.startswith("list[dict") else str
        ok = isinstance(value, list) and all(isinstance(v, item) for v in value)
    elif base.startswith("dict["):
        ok = isinstance(value, dict)
    else:  # pragma: no cover - a field annotation this reader does not know is a bug here
        raise TypeError(f"{kind}.{name}: cannot read a field of type {annotation}")
    if not ok:
        want = {"bool": "true or false", "int": "an integer", "float": "a number", "str": "a string",
                "list[int]": "a list of integers", "list[float]": "a list of numbers"}.get(
            base, "a list of objects" if base.startswith("list[dict") else "a list of strings" if base.startswith("list[") else "an object")
        raise ValueError(f"{kind}: {name!r} must be {want}{' or null' if optional else ''}, not {value!r:.40}")
    return value
