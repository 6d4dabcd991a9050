"""Who enforces each clause of a contract's output type for the model it names (issue 22, point 2).

The output type's JSON Schema goes through the same compiler the engine sends requests with
(documents/structured_outputs.py), so what the author is shown is what a live call relies on. Each clause's
schema path is traced back to the declared field that states it, for findings (CON131, CON132), hover,
`check --verbose` and `schema --model`.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from pydantic import TypeAdapter
from pydantic.json_schema import PydanticJsonSchemaWarning

from contractstudio.documents.provider_profiles import REQUESTED, Choice, choose_mode
from contractstudio.documents.structured_outputs import Clause, CompiledSchema, compile_schema, path_parts
from contractstudio.documents.type_syntax import DictOf, ListOf, Ref, TypeExpr, TypeSyntaxError, Union, parse_type
from contractstudio.documents.types import TypeSystem

FieldKey = tuple[str | None, str | None]  # (declared type, field); (None, None): the output as a whole

WORDS = {"decoder": "enforced by the decoder", "after_reply": "checked after the reply",
         "not_representable": "not representable"}


@dataclass(frozen=True)
class OutputStructure:
    """The compiled output schema for one model and its clauses by the declared field that states them."""

    model: str
    compiled: CompiledSchema
    by_field: dict[FieldKey, tuple[Clause, ...]]
    choice: Choice | None = None  # choose_mode's answer the schema was compiled in

    @property
    def falls_back(self) -> bool:
        """Whether the schema cannot be sent (a not-representable clause): every clause is checked after the reply."""
        return bool(self.compiled.enforced_by("not_representable"))

    def counts(self) -> dict[str, int]:
        """How many clauses each enforcement has."""
        out = dict.fromkeys(WORDS, 0)
        for c in self.compiled.clauses:
            out[c.enforcement] += 1
        return out

    def summary(self) -> str:
        """One line: the mode and how many clauses each enforcement has."""
        c = self.compiled
        note = self.choice.note if self.choice is not None else None
        mode = f"{c.mode}{' strict' if c.strict else ''}" + (f" ({note})" if note else "")
        counts = ", ".join(f"{n} {WORDS[k]}" for k, n in self.counts().items())
        tail = f" (falls back: {c.fallback_reason})" if c.fallback_reason else ""
        return f"structured output with {self.model} ({c.provider}): {mode}; {counts}{tail}"


def output_schema(types: TypeSystem, output: str) -> dict[str, Any] | None:
    """The JSON Schema of an output type (declared or a type expression); None when it cannot be built."""
    try:
        with warnings.catch_warnings():  # a default pydantic cannot show (a YAML mapping) is left out: no schema sends one
            warnings.simplefilter("ignore", PydanticJsonSchemaWarning)
            if types.declared(output):
                return types.json_schema(output)
            return TypeAdapter(types.annotation(parse_type(output))).json_schema(by_alias=True)
    except Exception:  # noqa: BLE001 - a type that cannot be built is reported by its own rules (SCH107, TYP)
        return None


def output_structure(types: TypeSystem, output: str, model: str | None, requested: Any = "auto",
                     api_base: str | None = None, *, written: bool = False) -> OutputStructure | None:
    """The clauses of the output type for `model` in the mode choose_mode gives (the runtime asks it too), with
    `written`: the contract's own `llm.response_format` (None without a model, or when the type cannot be built)."""
    if not model or requested not in REQUESTED:
        return None
    schema = output_schema(types, output)
    if schema is None:
        return None
    choice = choose_mode(requested, model, api_base, written=written)
    compiled = compile_schema(schema, model, choice, api_base)
    try:
        root = parse_type(output)
    except TypeSyntaxError:
        return None
    by_field: dict[FieldKey, list[Clause]] = {}
    for clause in compiled.clauses:
        key = field_of(types, root, path_parts(clause.path))
        found = by_field.setdefault(key, [])
        if not any((c.keyword, c.enforcement) == (clause.keyword, clause.enforcement) for c in found):
            found.append(clause)  # a type used at two paths states its clauses once
    return OutputStructure(model, compiled, {k: tuple(v) for k, v in by_field.items()}, choice)


def _options(t: TypeExpr) -> Iterable[TypeExpr]:
    return t.options if isinstance(t, Union) else (t,)


def field_of(types: TypeSystem, t: TypeExpr, parts: list[str | None]) -> FieldKey:
    """The declared field a schema path ends at (None: an item of a list or a value of a dict)."""
    owner: FieldKey = (None, None)
    current: TypeExpr | None = t
    for part in parts:
        if current is None:
            return owner
        nxt: TypeExpr | None = None
        for option in _options(current):
            if part is None and isinstance(option, (ListOf, DictOf)):
                nxt = option.item if isinstance(option, ListOf) else option.value
                break
            if isinstance(option, Ref) and part is not None and part in (types.fields(option) or {}):
                owner, nxt = (option.name, part), types.field_type(option, part)
                break
        current = nxt
    return owner


def names(clauses: Iterable[Clause]) -> str:
    """The clauses in the contract's own words (`min_length 2`, `le 1.0`, `type`), once each."""
    return ", ".join(dict.fromkeys(_name(c) for c in clauses))


def describe(clauses: Iterable[Clause], *, reasons: bool = True) -> str:
    """The clauses of one field in words, grouped by who enforces them."""
    groups: dict[str, list[Clause]] = {}
    for c in clauses:
        groups.setdefault(c.enforcement, []).append(c)
    parts = []
    for enforcement in ("not_representable", "after_reply", "decoder"):
        found = groups.get(enforcement, [])
        if not found:
            continue
        listed = names(found)
        why = "; ".join(dict.fromkeys(c.reason for c in found)) if reasons and enforcement != "decoder" else ""
        parts.append(f"{listed} {'is' if len(found) == 1 else 'are'} {WORDS[enforcement]}" + (f" ({why})" if why else ""))
    return "; ".join(parts)


# The JSON Schema keywords in the words a contract is written in (docs/format.md, `fields:`).
_AUTHOR_WORDS = {"minLength": "min_length", "maxLength": "max_length", "minItems": "min_length", "maxItems": "max_length",
                 "json": "JSON syntax",
                 "minimum": "ge", "maximum": "le", "exclusiveMinimum": "gt", "exclusiveMaximum": "lt",
                 "enum": "the Literal values", "const": "the Literal value", "additionalProperties": "extra: forbid",
                 "$ref": "the type's recursion", "schema": "the schema"}


def _name(c: Clause) -> str:
    return clause_name(c.keyword, c.value)


def clause_name(keyword: str, value: Any) -> str:
    """A JSON Schema clause in the contract's own words (`min_length 2`, `le 1.0`, `the Literal values`)."""
    word = _AUTHOR_WORDS.get(keyword, keyword)
    if keyword == "additionalProperties" and value is not False:
        word = "dict[str, ...]"
    if keyword == "required" and value is False:  # an optional field: its clause is that it may be left out
        return "optional"
    if keyword == "type" and isinstance(value, str):
        return f"type {value}"
    if keyword in ("type", "required", "enum", "const", "additionalProperties", "schema", "$ref") or value is None:
        return word
    return f"{word} {value!r}" if isinstance(value, str) else f"{word} {value}"
