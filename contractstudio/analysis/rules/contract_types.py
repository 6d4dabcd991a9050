"""A contract's types: field descriptions (CON104), act and intermediate (CON106), values that fill fields (EXP301)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from contractstudio.analysis.loaded_contract import LoadedContract
from contractstudio.analysis.rules.registry import UNREAD, rule
from contractstudio.documents.type_syntax import TypeExpr
from contractstudio.expressions import ExpressionError, compile_expression
from contractstudio.expressions.kinds import cannot_become
from contractstudio.findings.diagnostics import Diagnostic, Payload, did_you_mean
from contractstudio.reading.dialects.symbolicai import NAME as SYMBOLICAI

# No rule here reads a contract's examples (analysis/by_entry.py: an edit in one moves their findings, nothing else).
ENTRIES = {"examples": UNREAD}


@rule("CON104", "missing-description", "warning", kinds=("contract",))
def missing_description(doc: LoadedContract) -> Iterator[Diagnostic]:
    """A field without a description: descriptions are what the LLM is told."""
    if doc.dialect == SYMBOLICAI:
        return  # a Python model's field: PYC106 says it, at seed 000's level (a recommendation, info)
    for tname, decl in doc.contract.types.items():
        for fname, spec in decl.fields.items():
            if not (spec.description or "").strip():
                yield doc.diag("CON104", f"field '{tname}.{fname}' has no description: the LLM is told only its name and type",
                               ("types", tname, "fields", fname), key=True, hint="add `description:` to the field")


@rule("CON106", "act-intermediate-mismatch", "error", kinds=("contract",))
def act_intermediate_mismatch(doc: LoadedContract) -> Iterator[Diagnostic]:
    """`act` and `intermediate` disagree (one without the other, or assign misses or invents fields)."""
    c = doc.contract
    if c.act is not None and not c.intermediate:
        if "intermediate" not in c.model_fields_set:
            yield doc.diag("CON106", "`act` computes an intermediate value but there is no `intermediate` type", ("act",), key=True,
                           hint="add `intermediate: <Type>` naming the type act returns")
        return
    if c.intermediate and c.act is None:
        yield doc.diag("CON106", f"`intermediate: {c.intermediate}` is declared but there is no `act` to compute it",
                       ("intermediate",), key=True, hint="add `act:` with `assign:` or `python:`, or remove intermediate")
        return
    if c.act is None or c.act.assign is None or not c.intermediate:
        return
    fields = doc.types.fields(c.intermediate)
    if fields is None:
        return
    for name in c.act.assign:
        if name not in fields:
            yield doc.diag("CON106", f"act.assign names '{name}', which is not a field of {c.intermediate}",
                           ("act", "assign", name), key=True, hint=did_you_mean(name, fields) or f"fields: {', '.join(fields)}")
    missing = [f for f, spec in fields.items() if spec.required and f not in c.act.assign]
    if missing:
        yield doc.diag("CON106", f"act.assign misses required field{'s' if len(missing) > 1 else ''} of {c.intermediate}: "
                       f"{', '.join(missing)}", ("act", "assign"), key=True, payload=Payload(fields=tuple(missing)))


@rule("EXP301", kinds=("contract",))
def value_cannot_fill_field(doc: LoadedContract) -> Iterator[Diagnostic]:
    """An act.assign or fallback expression whose type can never validate as the field it fills."""
    c, types = doc.contract, doc.types
    if c.act is not None and c.intermediate:
        target = types.field_types(c.intermediate) or {}
        for name in c.act.assign or {}:
            checked = doc.checked_at.get(("act", "assign", name))
            if checked is not None and not checked.issues and name in target:
                yield from _agreement(doc, checked.site.path, checked.type, target[name], f"{c.intermediate}.{name}")
    out = doc.output_type
    for name in c.fallback or {} if out else {}:
        checked = doc.checked_at.get(("fallback", name))
        if checked is None or checked.issues or checked.type is None:
            continue
        try:
            names = compile_expression(checked.site.src).names
        except ExpressionError:
            continue
        field_type = types.field_type(out, name) if out else None
        if names and field_type is not None:  # a literal-only value is evaluated and validated instead (CON103)
            yield from _agreement(doc, checked.site.path, checked.type, field_type, f"{out}.{name}")


def _agreement(doc: LoadedContract, path: tuple[Any, ...], value: TypeExpr | None, field: TypeExpr, label: str) -> Iterator[Diagnostic]:
    if value is not None and cannot_become(value, field, doc.types):
        yield doc.diag("EXP301", f"{label} is {field}, but this expression gives {value}", path)
