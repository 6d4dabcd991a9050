"""Field constraints (bounds, lengths, pattern): which apply to a type, how pydantic enforces them, how prompts say them.

A pattern pydantic's linear-time engine cannot run (look-around, back-references) is checked by the bounded matcher
in patterns.py instead (a deadline, the GIL released), so every pattern valid in Python's `re` is enforced.
"""

from __future__ import annotations

import functools
import re
from typing import Annotated, Any

from pydantic import AfterValidator
from pydantic_core import PydanticCustomError, SchemaValidator, core_schema

from contractstudio.documents import patterns
from contractstudio.documents.models import FieldSpec
from contractstudio.documents.type_syntax import DictOf, ListOf, Prim, TypeExpr, without_none


def show_value(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return repr(value)
    return str(value)


NUMBER_BOUNDS = ("ge", "gt", "le", "lt")
LENGTH_BOUNDS = ("min_length", "max_length")
CONSTRAINTS = NUMBER_BOUNDS + LENGTH_BOUNDS + ("pattern",)


def _base_kind(t: TypeExpr) -> str:
    """'number', 'str', 'sized' (list/dict) or '' for a type's non-None part."""
    t = without_none(t)
    if isinstance(t, Prim):
        return {"int": "number", "float": "number", "str": "str"}.get(t.name, "")
    if isinstance(t, (ListOf, DictOf)):
        return "sized"
    return ""


def applicable_constraints(t: TypeExpr) -> tuple[str, ...]:
    """The constraint keys a field of this type can have: bounds on numbers, lengths on str/list/dict, pattern on str."""
    kind = _base_kind(t)
    if kind == "number":
        return NUMBER_BOUNDS
    if kind == "sized":
        return LENGTH_BOUNDS
    if kind == "str":
        return LENGTH_BOUNDS + ("pattern",)
    return ()


def constraints_for(spec: FieldSpec, t: TypeExpr) -> dict[str, Any]:
    """The pydantic Field constraints that apply to the field's type (the analyzer reports the others: SCH105)."""
    out: dict[str, Any] = {}
    for key in applicable_constraints(t):
        value = getattr(spec, key)
        if value is None:
            continue
        if key in NUMBER_BOUNDS and without_none(t) == Prim("int") and float(value).is_integer():
            value = int(value)  # an int field keeps int bounds, so schemas and prompts say `>= 1`, not `>= 1.0`
        out[key] = value
    return out


@functools.lru_cache(maxsize=1024)
def _linear_engine_compiles(pattern: str) -> bool:
    try:
        SchemaValidator(core_schema.str_schema(pattern=pattern))
    except Exception:  # noqa: BLE001 - look-around, back-references, or not a regex at all
        return False
    return True


def needs_backtracking(pattern: str) -> bool:
    """Whether pydantic's linear-time engine cannot run the pattern (look-around, back-references, ...)."""
    return not _linear_engine_compiles(pattern)


TYPE_PATTERN_S = 1.0  # seconds of regex work for the backtracking patterns of one validation (runtime/validation.py)


def with_pattern(annotation: Any, constraints: dict[str, Any]) -> tuple[Any, dict[str, Any]]:
    """A field's annotation and Field constraints; a pattern the linear engine cannot run is checked in patterns.py.

    Every pattern valid in Python's `re` is enforced; the linear engine is kept wherever it suffices, and
    the others run on the bounded matcher (a deadline, the GIL released), never on Python's `re`.
    """
    pattern = constraints.get("pattern")
    if pattern is None or not needs_backtracking(pattern):
        return annotation, constraints
    rest = {k: v for k, v in constraints.items() if k != "pattern"}
    rest["json_schema_extra"] = {"pattern": pattern}  # schemas and prompts still show it
    return Annotated[annotation, AfterValidator(_bounded_pattern(pattern))], rest


def _bounded_pattern(pattern: str) -> Any:
    def check(value: Any) -> Any:
        if not isinstance(value, str):
            return value
        try:
            found = patterns.active_budget(TYPE_PATTERN_S).search(pattern, value)
        except patterns.PatternError as err:  # the analyzer reports it (SCH103); the value cannot be checked
            raise PydanticCustomError("string_pattern_unusable", f"{err}: the pattern '{{pattern}}' cannot be checked",
                                      {"pattern": pattern}) from None
        except patterns.RegexTimeout as err:  # fail closed: a value that could not be checked is not accepted
            raise PydanticCustomError("string_pattern_timeout", f"{err} matching the pattern '{{pattern}}'; the value is refused",
                                      {"pattern": pattern}) from None
        if not found:
            raise PydanticCustomError("string_pattern_mismatch", "String should match pattern '{pattern}'", {"pattern": pattern})
        return value

    check.reads_regex_budget = True  # type: ignore[attr-defined]  # see reads_regex_budget
    return check


def reads_regex_budget(core_schema: Any) -> bool:
    """Whether validating against this pydantic core schema can check a backtracking pattern (and so read the regex
    budget a validation makes active); True when the schema cannot be read through."""
    stack, seen = [core_schema], set()
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        if isinstance(node, dict):
            stack.extend(node.values())
        elif isinstance(node, (list, tuple)):
            stack.extend(node)
        elif callable(node) and getattr(node, "reads_regex_budget", False):
            return True
        elif not isinstance(node, (str, int, float, bool, type(None), type, re.Pattern)) and not callable(node):
            return True  # something this walk does not know (a schema not built yet): assume it does
    return False


def constraint_words(constraints: dict[str, Any]) -> list[str]:
    words = []
    for key, sym in (("ge", ">="), ("gt", ">"), ("le", "<="), ("lt", "<")):
        value = constraints.get(key)
        if value is not None:
            words.append(f"{sym} {show_value(value)}")
    if "min_length" in constraints:
        words.append(f"length >= {constraints['min_length']}")
    if "max_length" in constraints:
        words.append(f"length <= {constraints['max_length']}")
    if "pattern" in constraints:
        words.append(f"must match the regular expression {constraints['pattern']!r}")
    return words
