"""From a parsed reply to a validated value, with readable type errors (JSON extraction: reading/replies.py).

Error texts name the field path, the bad value and the constraint, because
they are sent back to the model in a remedy and shown to the user.
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import BaseModel, TypeAdapter, ValidationError

from contractstudio.documents import patterns
from contractstudio.documents.constraints import TYPE_PATTERN_S, reads_regex_budget
from contractstudio.documents.type_syntax import parse_type
from contractstudio.documents.types import MAX_TYPE_NESTING, TypeSystem
from contractstudio.runtime.errors import SchemaUnwritable
from contractstudio.safe_text import shorten

MAX_ERRORS = 20  # error lines per validation: a reply with thousands of bad items must not flood the remedy
_JSON_KIND = {dict: "a JSON object", list: "a JSON array", str: "a string", bool: "a boolean", int: "a number",
              float: "a number", type(None): "null"}

def _short(value: Any, limit: int = 80) -> str:
    try:
        text = json.dumps(value, ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        text = repr(value)
    return shorten(text, limit - 3)


def _path(root: str, loc: tuple[Any, ...]) -> str:
    out = root
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else f".{part}"
    return out


def format_errors(err: ValidationError, root: str, shown: str | None = None) -> list[str]:
    """One line per pydantic error: path, the bad value (or `shown`, a description of it), what was expected, the
    constraint."""
    lines = []
    errors = err.errors(include_url=False)
    for e in errors[:MAX_ERRORS]:
        path = _path(root, tuple(e.get("loc") or ()))
        kind = e.get("type", "")
        msg = e.get("msg", "invalid")
        if kind == "missing":
            lines.append(f"{path}: required field is missing")
            continue
        if kind in ("model_type", "dict_type", "model_attributes_type"):
            got = _JSON_KIND.get(type(e.get("input")), type(e.get("input")).__name__)
            expected = (e.get("ctx") or {}).get("class_name")
            lines.append(f"{path} = {_short(e.get('input'))}: expected a JSON object"
                         f"{f' ({expected})' if expected else ''}, got {got}")
            continue
        if kind == "extra_forbidden":
            lines.append(f"{path} = {_short(e.get('input'))}: this field is not declared "
                         "(constraint: extra: forbid, only the declared fields are allowed)")
            continue
        ctx = {k: v for k, v in (e.get("ctx") or {}).items() if k not in ("error", "class_name")}
        text = f"{path} = {shown if shown is not None else _short(e.get('input'))}: {msg}"
        if ctx:
            text += " (constraint: " + ", ".join(f"{k}={_short(v, 40)}" for k, v in ctx.items()) + ")"
        lines.append(text)
    if len(errors) > MAX_ERRORS:
        lines.append(f"... and {len(errors) - MAX_ERRORS} more errors (only the first {MAX_ERRORS} are listed)")
    return lines


class Shape:
    """A type of the contract (input, intermediate, output) as something values are validated against."""

    __slots__ = ("types", "type_name", "root", "model", "adapter", "reads_patterns")

    types: TypeSystem | None  # None: a Python contract's type (of_python)

    def __init__(self, types: TypeSystem, type_name: str, root: str) -> None:
        self.types = types
        self.type_name = type_name
        self.root = root
        self.model: type[BaseModel] | None = None
        self.adapter: TypeAdapter[Any] | None = None
        self.reads_patterns: bool | None = None  # whether a validation can check a backtracking pattern (known at the first)
        if types.declared(type_name):
            self.model = types.model(type_name)
        else:
            self.adapter = TypeAdapter(types.annotation(parse_type(type_name)))

    @classmethod
    def of_python(cls, annotation: Any, root: str, type_name: str) -> Shape:
        """A Python contract's type: a pydantic model of the user's, or any annotation pydantic takes."""
        shape = cls.__new__(cls)
        shape.types, shape.type_name, shape.root, shape.reads_patterns = None, type_name, root, None
        if isinstance(annotation, type) and issubclass(annotation, BaseModel):
            shape.model, shape.adapter = annotation, None
        else:
            shape.model, shape.adapter = None, TypeAdapter(annotation)
        return shape

    def validate(self, value: Any) -> tuple[Any, list[str]]:
        """The validated value, or None and the error texts (backtracking type patterns share one regex budget)."""
        if self.reads_patterns is None:
            schema = self.model.__pydantic_core_schema__ if self.model is not None else self.adapter.core_schema  # type: ignore[union-attr]
            self.reads_patterns = reads_regex_budget(schema)
        if not self.reads_patterns:  # nothing in it reads the budget: none is made
            return self._validate(value)
        with patterns.shared_budget(patterns.RegexBudget(TYPE_PATTERN_S)):
            return self._validate(value)

    def _validate(self, value: Any) -> tuple[Any, list[str]]:
        try:
            if self.model is not None:
                if isinstance(value, self.model):
                    return value, []
                if isinstance(value, BaseModel):
                    value = value.model_dump(by_alias=True)
                # model_validate's own work with its defaults, without its Python frame (four a call)
                return self.model.__pydantic_validator__.validate_python(value), []
            assert self.adapter is not None
            return self.adapter.validate_python(value), []
        except ValidationError as err:
            return None, format_errors(err, self.root)

    def dump(self, value: Any) -> Any:
        """A validated value as plain JSON data."""
        if isinstance(value, BaseModel):
            return value.model_dump(mode="json", by_alias=True)
        if self.adapter is not None:
            return self.adapter.dump_python(value, mode="json")
        return value

    def json_schema(self) -> dict[str, Any]:
        """The type's JSON Schema as pydantic writes it (what the structured-output compiler starts from).

        Raises SchemaUnwritable when pydantic runs out of recursion writing it."""
        try:
            if self.model is not None:
                return self.model.model_json_schema(by_alias=True)
            assert self.adapter is not None
            return self.adapter.json_schema(by_alias=True)
        except RecursionError:
            raise self._unwritable() from None

    def _unwritable(self) -> SchemaUnwritable:
        return SchemaUnwritable(f"the JSON Schema of {self.type_name} could not be written (it nests too deep: pydantic "
                                f"ran out of recursion); declared types may nest at most {MAX_TYPE_NESTING} levels")

    def schema_text(self) -> str:
        """The type described for a prompt: fields, types, descriptions and constraints."""
        if self.model is not None and self.types is None:  # a Python contract's model: its JSON Schema
            try:
                return json.dumps(self.model.model_json_schema(), ensure_ascii=False, indent=1)
            except RecursionError:
                raise self._unwritable() from None
        if self.model is not None and self.types is not None:
            return self.types.schema_text(self.type_name)
        return f"a JSON value of type {self.type_name}"
