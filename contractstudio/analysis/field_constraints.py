"""The constraint checker: field constraints as written against what the runtime enforces (SCH103 pattern, SCH105-107).

A declared field becomes a pydantic field; a constraint that does not apply to
its type would be ignored, one that no value satisfies rejects every reply, a
default outside its own constraints hands out an invalid value, and a type
pydantic refuses cannot be enforced at all. Each is a finding at its key, so a
contract never silently enforces less than it says. Every kind lists its
declared fields (`Loaded.field_sets`: contract types, an agent's schema and
tool parameters, a tools document's parameters) and each goes through here.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator
from typing import Any

from contractstudio.analysis.loaded import Loaded
from contractstudio.analysis.positions import value_span
from contractstudio.documents.constraints import (
    CONSTRAINTS,
    LENGTH_BOUNDS,
    NUMBER_BOUNDS,
    applicable_constraints,
    needs_backtracking,
)
from contractstudio.documents.models import FieldSpec
from contractstudio.documents.patterns import pattern_problem
from contractstudio.documents.type_syntax import Prim, TypeExpr, TypeSyntaxError, parse_type, refs, without_none
from contractstudio.documents.types import MAX_TYPE_NESTING, TypeBuildError, TypeSystem
from contractstudio.findings.diagnostics import Diagnostic, declare, make

declare("SCH105", "constraint-not-applicable", "error",
        "A field constraint its type cannot have (`ge` on a str, `pattern` on an int): it would be ignored.")
declare("SCH106", "impossible-constraint", "error",
        "Field constraints no value satisfies (min_length above max_length, ge above le), or a default outside them.")
declare("SCH107", "type-cannot-be-built", "error",
        "A declared type pydantic cannot turn into a validator: it could not be enforced, so it is never run.")

MAX_CLEAN = 4096
_CLEAN: dict[tuple[Any, ...], None] = {}  # the declarations of field sets found clean (oldest first out)
_WHERE = "bounds (ge gt le lt) apply to int and float, min_length / max_length to str, list and dict, pattern to str"
_SYMBOL = {"ge": ">=", "gt": ">", "le": "<=", "lt": "<"}


def constraint_findings(doc: Loaded) -> Iterator[Diagnostic]:
    """The constraint findings of every declared set of fields of a document."""
    for fs in doc.field_sets:
        # Whether a set of fields has findings depends on the declarations it reaches alone: one found clean
        # stays clean while those stay the same (each edit of a big contract changes one type at most).
        # (A type nested past the bound is not keyed: its key would walk every type it reaches, for each type.)
        key = fs.types.reach_key([fs.type_name]) if fs.types.nesting(fs.type_name) <= MAX_TYPE_NESTING else None
        if key is not None and key in _CLEAN:
            continue
        found = list(declared_fields(doc, fs.types, fs.type_name, fs.fields_path, fs.what))
        if not found and key is not None:
            _CLEAN[key] = None
            while len(_CLEAN) > MAX_CLEAN:
                _CLEAN.pop(next(iter(_CLEAN)), None)
        yield from found


def declared_fields(loaded: Loaded, types: TypeSystem, type_name: str, fields_path: tuple[Any, ...],
                    what: str = "field '{type}.{name}'") -> Iterator[Diagnostic]:
    """Every constraint finding of the fields of a declared type, then SCH107 when the type cannot be built.

    `what` names a field in messages; `{type}` and `{name}` are filled in.
    """
    fields = types.fields(type_name) or {}
    clean = True
    for fname, spec in fields.items():
        t = _usable_type(spec, types)
        if t is None:  # a broken or undeclared type: reported by the family's own rules
            clean = False
            continue
        label = what.format(type=type_name, name=fname)
        found = list(field_constraints(loaded, fields_path + (fname,), spec, t, label))
        if not found and "default" in spec.model_fields_set:
            problem = types.default_problem(type_name, fname)
            if problem:
                found.append(loaded.diag("SCH106", f"{label}: default {show_value(spec.default)} is not a valid value of "
                                         f"the field ({_described(t, spec)}): {problem}", fields_path + (fname, "default"),
                                         key=True, hint="change the default, or the constraints it must satisfy"))
        clean = clean and not found
        yield from found
    if clean:
        yield from buildable(loaded, types, type_name, fields_path)


def buildable(loaded: Loaded, types: TypeSystem, type_name: str, fields_path: tuple[Any, ...]) -> Iterator[Diagnostic]:
    """SCH107 when pydantic refuses to build the type: never enforced loosely, so never run."""
    try:
        types.model(type_name)
    except TypeBuildError as err:
        if err.type_name != type_name:
            return  # a type it uses is at fault, and reported where that type is declared
        where = fields_path + (err.field,) if err.field else fields_path[:-1]
        if err.nesting is not None:  # a resource limit: said once, at the outermost type that nests too deep
            if any(types.nesting(user) > err.nesting for user in types.users(type_name)):
                return  # a deeper type uses it: reported there (the deepest of a group always is)
            yield loaded.diag("YML006", str(err), where, key=True,
                              hint="flatten the type: fewer levels of declared types, lists and dicts")
            return
        yield loaded.diag("SCH107", str(err), where, key=True,
                          hint="change the field's type or constraints; a type that cannot be built cannot be enforced")


def field_constraints(loaded: Loaded, path: tuple[Any, ...], spec: FieldSpec, t: TypeExpr, label: str) -> Iterator[Diagnostic]:
    """SCH105 (a constraint its type cannot have), SCH103 (an invalid pattern), SCH106 (bounds no value satisfies)."""
    given = [k for k in CONSTRAINTS if getattr(spec, k) is not None]
    allowed = applicable_constraints(t)
    for key in given:
        if key not in allowed:
            yield loaded.diag("SCH105", f"{label}: `{key}` does not apply to {t}: it would be ignored, so nothing enforces it",
                              path + (key,), key=True, hint=f"remove it or change the type ({_WHERE})")
    if spec.pattern is not None and "pattern" in allowed:
        try:
            re.compile(spec.pattern)
        except re.error as err:
            at = err.pos or 0
            yield make("SCH103", f"{label}: pattern is not a valid regular expression ({err.msg})", loaded.file,
                       value_span(loaded, path + ("pattern",), at, at + 1), subject=loaded.subject(path))
        else:
            # The linear engine runs most patterns; the rest run on the bounded matcher, with its limits.
            problem = pattern_problem(spec.pattern) if needs_backtracking(spec.pattern) else None
            if problem:
                yield loaded.diag("SCH103", f"{label}: pattern cannot be enforced: {problem}", path + ("pattern",),
                                  hint="simplify it (without look-around or back-references the linear engine runs any length)")
    if "ge" in allowed:
        yield from _number_range(loaded, path, spec, t, label)
    lo, hi = spec.min_length, spec.max_length
    if "min_length" in allowed and lo is not None and hi is not None and lo > hi:
        yield loaded.diag("SCH106", f"{label}: min_length {lo} is above max_length {hi}: no value has such a length",
                          path + ("min_length",), key=True, hint="lower min_length or raise max_length")


def _number_range(loaded: Loaded, path: tuple[Any, ...], spec: FieldSpec, t: TypeExpr, label: str) -> Iterator[Diagnostic]:
    bounds = {k: getattr(spec, k) for k in NUMBER_BOUNDS if getattr(spec, k) is not None}
    for key, value in bounds.items():
        if math.isnan(value):
            yield loaded.diag("SCH106", f"{label}: {key} is not a number (.nan): no value compares with it",
                              path + (key,), key=True)
            return
    lows = [(bounds[k], k == "gt", k) for k in ("ge", "gt") if k in bounds]  # on a tie the strict bound is the tighter
    highs = [(bounds[k], k == "le", k) for k in ("le", "lt") if k in bounds]
    if not lows or not highs:
        return
    lv, _, lk = max(lows)
    uv, _, uk = min(highs)
    kind = "number"
    if without_none(t) == Prim("int") and math.isfinite(lv) and math.isfinite(uv):  # the integers between the bounds
        first = math.floor(lv) + 1 if lk == "gt" else math.ceil(lv)
        last = math.ceil(uv) - 1 if uk == "lt" else math.floor(uv)
        empty, kind = first > last, "int"
    else:
        empty = lv > uv or (lv == uv and (lk == "gt" or uk == "lt"))
    if empty:
        yield loaded.diag("SCH106", f"{label}: no {kind} is {_SYMBOL[lk]} {lv:g} and {_SYMBOL[uk]} {uv:g}: every value is rejected",
                          path + (lk,), key=True, hint=f"check {lk} and {uk}: the lower bound must be below the upper one")


def _usable_type(spec: FieldSpec, types: TypeSystem) -> TypeExpr | None:
    try:
        t = parse_type(spec.type)
    except TypeSyntaxError:
        return None
    if any(not types.declared(r) for r in refs(t)):
        return None
    return t


def _described(t: TypeExpr, spec: FieldSpec) -> str:
    parts = [str(t)]
    parts += [f"{_SYMBOL[k]} {getattr(spec, k):g}" for k in NUMBER_BOUNDS if getattr(spec, k) is not None]
    parts += [f"{k} {getattr(spec, k)}" for k in LENGTH_BOUNDS if getattr(spec, k) is not None]
    if spec.pattern is not None:
        parts.append(f"pattern {spec.pattern!r}")
    return ", ".join(parts)


def show_value(value: Any) -> str:
    text = repr(value) if not isinstance(value, bool) and value is not None else ("null" if value is None else str(value).lower())
    return text if len(text) <= 40 else text[:37] + "..."
