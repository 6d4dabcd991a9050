"""Rules of kind: contract documents: types (REF), expressions (EXP), the contract itself (CON101-107).

Scenario rules (CON108) live in analysis/scenarios.py. Scopes follow FORMAT.md:
pre and act see `input`; post sees `output`, `input` and `act` (when there is an act);
fallback values see `input`.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from contractstudio.analysis.check import Context, Loaded, analyzer
from contractstudio.analysis.conditions import (
    check_expression,
    condition_list,
    did_you_mean,
    hook_diagnostics,
    one_trust_note,
    value_span,
)
from contractstudio.analysis.fields import declared_fields
from contractstudio.analysis.llm import key_routes
from contractstudio.analysis.scenarios import scenario_rules
from contractstudio.documents.models import Contract
from contractstudio.documents.types import ANY, TypeExpr, TypeSyntaxError, TypeSystem, parse_type, refs
from contractstudio.expressions import ExpressionError, compile_expression
from contractstudio.expressions.checker import cannot_become
from contractstudio.findings.diagnostics import Diagnostic, make

# `{name}`, `{input.query}`, `{{ var }}`: placeholders of the usual template engines (not JSON examples).
_PLACEHOLDER = re.compile(r"\{\{?\s*[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*|\[[^\]{}]*\])*\s*\}\}?")


@analyzer("contract")
def contract_rules(loaded: Loaded, ctx: Context) -> Iterator[Diagnostic]:
    """Every rule of a contract document."""
    doc = loaded.model
    if not isinstance(doc, Contract):
        return
    types = TypeSystem.from_decls(doc.types)
    found: list[Diagnostic] = []
    roles = {}
    for role in ("input", "output", "intermediate"):
        t, diags = role_type(loaded, types, role, getattr(doc, role))
        roles[role] = t
        found.extend(diags)
    found.extend(field_types(loaded, doc, types))
    found.extend(missing_descriptions(loaded, doc))
    found.extend(expressions(loaded, ctx, doc, types, roles))
    found.extend(remedy_settings(loaded, doc))
    found.extend(fallback_output(loaded, doc, types, roles))
    found.extend(prompt_placeholders(loaded, doc))
    found.extend(act_and_intermediate(loaded, doc, types))
    if not doc.post and doc.output:
        found.append(loaded.diag("CON107", f"contract '{doc.name}' has no post conditions: only the shape of the output is checked",
                                 ("output",), hint="add `post:` conditions on the substance of the output"))
    found.extend(scenario_rules(loaded, doc, types))
    found.extend(example_inputs(loaded, doc, types))
    found.extend(key_routes(loaded, ctx, doc))
    yield from one_trust_note(found)


def role_type(loaded: Loaded, types: TypeSystem, role: str, text: str | None) -> tuple[TypeExpr, list[Diagnostic]]:
    """The type of input/output/intermediate (ANY when missing or broken) and its REF201/SCH103."""
    if not text:  # missing (already reported) or not given
        return ANY, []
    try:
        t = parse_type(text)
    except TypeSyntaxError as err:
        span = value_span(loaded, (role,), err.offset, err.offset + 1)
        return ANY, [make("SCH103", f"{role}: {err.message}", loaded.file, span)]
    return t, list(undeclared(loaded, (role,), text, t, types, f"{role} type"))


def undeclared(loaded: Loaded, path: tuple[Any, ...], text: str, t: TypeExpr, types: TypeSystem, what: str) -> Iterator[Diagnostic]:
    """REF201 for each undeclared type name in a type string, pointing at the name inside it."""
    for name in dict.fromkeys(refs(t)):
        if types.declared(name):
            continue
        m = re.search(rf"(?<![A-Za-z0-9_]){re.escape(name)}(?![A-Za-z0-9_])", text)
        start = m.start() if m else 0
        span = value_span(loaded, path, start, start + len(name)) if m else loaded.span(path)
        declared = types.names()
        hint = did_you_mean(name, declared) or ("declare it under `types:`" if not declared else f"declared types: {', '.join(declared)}")
        yield make("REF201", f"{what} '{name}' is not declared", loaded.file, span, hint=hint)


def field_types(loaded: Loaded, doc: Contract, types: TypeSystem) -> Iterator[Diagnostic]:
    """REF201/SCH103 for the type string of every declared field; its constraints (SCH103/105/106); SCH107."""
    for tname, decl in doc.types.items():
        for fname, spec in decl.fields.items():
            path = ("types", tname, "fields", fname, "type")
            try:
                t = parse_type(spec.type)
            except TypeSyntaxError as err:
                span = value_span(loaded, path, err.offset, err.offset + 1)
                yield make("SCH103", f"type of field '{tname}.{fname}': {err.message}", loaded.file, span)
                continue
            yield from undeclared(loaded, path, spec.type, t, types, f"type of field '{tname}.{fname}':")
        yield from declared_fields(loaded, types, tname, ("types", tname, "fields"))


def missing_descriptions(loaded: Loaded, doc: Contract) -> Iterator[Diagnostic]:
    """CON104: a field the LLM is told nothing about."""
    for tname, decl in doc.types.items():
        for fname, spec in decl.fields.items():
            if not (spec.description or "").strip():
                yield loaded.diag("CON104", f"field '{tname}.{fname}' has no description: the LLM is told only its name and type",
                                  ("types", tname, "fields", fname), key=True, hint="add `description:` to the field")


def scopes(doc: Contract, roles: dict[str, TypeExpr]) -> tuple[dict[str, TypeExpr], dict[str, TypeExpr]]:
    """(scope of pre/act/fallback, scope of post)."""
    before = {"input": roles["input"]}
    after = {"input": roles["input"], "output": roles["output"]}
    if doc.act is not None:
        after["act"] = roles["intermediate"] if doc.intermediate else ANY
    return before, after


def expressions(loaded: Loaded, ctx: Context, doc: Contract, types: TypeSystem, roles: dict[str, TypeExpr]) -> Iterator[Diagnostic]:
    """EXP* of pre, post, act.assign; hooks of conditions and act."""
    before, after = scopes(doc, roles)
    yield from condition_list(loaded, ctx, ("pre",), doc.pre, before, types, "pre")
    yield from condition_list(loaded, ctx, ("post",), doc.post, after, types, "post")
    if doc.act is not None:
        target = types.field_types(doc.intermediate) if doc.intermediate else None
        for name, src in (doc.act.assign or {}).items():
            t, diags = check_expression(loaded, ("act", "assign", name), src, before, types)
            yield from diags
            if not diags and target and name in target:
                yield from _type_agreement(loaded, ("act", "assign", name), t, target[name], types, f"{doc.intermediate}.{name}")
        if doc.act.python is not None:
            yield from hook_diagnostics(loaded, ctx, ("act", "python"), doc.act.python)


def remedy_settings(loaded: Loaded, doc: Contract) -> Iterator[Diagnostic]:
    """CON101 (pre remedy without pre) and CON102 (retry settings that cannot behave as written)."""
    remedy, retry = doc.remedy, doc.remedy.retry
    if remedy.pre and not doc.pre:
        yield loaded.diag("CON101", "remedy.pre is true but there are no `pre` conditions to remedy against",
                          ("remedy", "pre"), hint="add `pre:` conditions or set remedy.pre: false")
    given = set(retry.model_fields_set)
    if retry.delay > retry.max_delay:
        yield loaded.diag("CON102", f"retry.delay {retry.delay:g} is above max_delay {retry.max_delay:g}: every wait is cut to "
                          f"{retry.max_delay:g}s", ("remedy", "retry", "delay" if "delay" in given else "max_delay"),
                          hint="lower delay or raise max_delay")
    if retry.jitter > 1:
        yield loaded.diag("CON102", f"retry.jitter {retry.jitter:g} is above 1: a wait of delay*(1+u) with u in "
                          f"[-{retry.jitter:g}, {retry.jitter:g}] can be negative", ("remedy", "retry", "jitter"),
                          hint="jitter is relative: use a value between 0 and 1")
    if retry.backoff > 1 and retry.tries == 1 and "backoff" in given:
        yield loaded.diag("CON102", "retry.backoff has no effect with tries: 1 (there is only one wait)",
                          ("remedy", "retry", "backoff"), hint="remove backoff or allow more tries")
    if not remedy.pre and not remedy.post and "retry" in remedy.model_fields_set:
        yield loaded.diag("CON102", "retry settings have no effect: both remedy.pre and remedy.post are false",
                          ("remedy", "retry"), key=True, hint="set remedy.post: true or remove retry")


def fallback_output(loaded: Loaded, doc: Contract, types: TypeSystem, roles: dict[str, TypeExpr]) -> Iterator[Diagnostic]:
    """CON103: the fallback must produce a valid output (checked statically; literals evaluated and validated)."""
    if doc.on_failure != "fallback":
        return
    if doc.fallback is None:
        where = ("on_failure",) if "on_failure" in doc.model_fields_set else ("output",)
        yield loaded.diag("CON103", "on_failure is 'fallback' but there is no `fallback` output", where,
                          hint="add `fallback:` with a value for each output field, or set on_failure: raise")
        return
    out = types.declared(roles["output"])
    fields = types.fields(out) if out else None
    before, _ = scopes(doc, roles)
    literal: dict[str, Any] = {}
    for name, raw in doc.fallback.items():
        path = ("fallback", name)
        if fields is not None and name not in fields:
            yield loaded.diag("CON103", f"fallback names '{name}', which is not a field of {out}", path, key=True,
                              hint=did_you_mean(name, fields) or f"fields: {', '.join(fields)}")
            continue
        src = raw if isinstance(raw, str) else str(raw)
        expr_type, diags = check_expression(loaded, path, src, before, types)
        if diags:
            if isinstance(raw, str) and _plain_text(raw) and any(d.code in ("EXP101", "EXP202") for d in diags):
                yield loaded.diag("CON103", f"fallback.{name} is an expression, and this plain text is not one", path,
                                  hint=f"quote the text inside the YAML string: \"'{raw.strip()}'\"")
            else:
                yield from diags
            continue
        try:
            expr = compile_expression(src)
        except ExpressionError:
            continue
        if not expr.names:  # literal-only: evaluate it with the real evaluator
            try:
                literal[name] = expr.evaluate({})
            except ExpressionError as err:
                yield loaded.diag("CON103", f"fallback.{name} cannot be evaluated: {err}", path)
        elif out and expr_type is not None and (field_t := types.field_type(out, name)) is not None:
            yield from _type_agreement(loaded, path, expr_type, field_t, types, f"{out}.{name}")
    if fields is None or out is None:
        return
    missing = [f for f, spec in fields.items() if spec.required and f not in doc.fallback]
    if missing:
        yield loaded.diag("CON103", f"fallback misses required field{'s' if len(missing) > 1 else ''} of {out}: {', '.join(missing)}",
                          ("fallback",), key=True, hint="give every required output field a value")
    yield from _validate_literals(loaded, types, out, literal, doc.fallback)


def example_inputs(loaded: Loaded, doc: Contract, types: TypeSystem) -> Iterator[Diagnostic]:
    """CON109: every example input must validate against the input type (the studio runs them)."""
    if not doc.examples or not doc.input or not types.declared(doc.input):
        return
    from pydantic import ValidationError

    try:
        model = types.model(doc.input)
    except Exception:  # noqa: BLE001 - a type pydantic cannot build is reported elsewhere
        return
    for i, example in enumerate(doc.examples):
        try:
            model.model_validate(example.input)
        except ValidationError as err:
            for e in err.errors()[:3]:
                loc = tuple(e.get("loc") or ())
                where = ".".join(str(p) for p in loc) or "input"
                path = ("examples", i, "input") + (loc[:-1] if e.get("type") == "missing" else loc)
                yield loaded.diag("CON109", f"example '{example.name}': {where}: {e.get('msg', 'invalid')}", path,
                                  key=e.get("type") == "extra_forbidden")


def _type_agreement(loaded: Loaded, path: tuple[Any, ...], value: TypeExpr | None, field: TypeExpr, types: TypeSystem,
                    label: str) -> Iterator[Diagnostic]:
    """EXP301 when an expression's type can never validate as the field it fills."""
    if value is not None and cannot_become(value, field, types):
        yield loaded.diag("EXP301", f"{label} is {field}, but this expression gives {value}", path)


def _plain_text(raw: str) -> bool:
    """Words, not code: the author meant a string literal and forgot the inner quotes."""
    text = raw.strip()
    return bool(text) and not any(c in text for c in "'\"()[]{}=<>") and (" " in text or text[:1].isupper())


def _validate_literals(loaded: Loaded, types: TypeSystem, out: str, literal: dict[str, Any], fallback: dict[str, Any]) -> Iterator[Diagnostic]:
    from pydantic import ValidationError

    try:
        model = types.model(out)
    except Exception:  # noqa: BLE001 - a type pydantic cannot build is reported elsewhere
        return
    try:
        model.model_validate(literal)
        return
    except ValidationError as err:
        errors = err.errors()
    for e in errors:
        loc = e.get("loc") or ()
        if not loc or loc[0] not in literal or e.get("type") == "missing":
            continue  # fields given as non-literal expressions or reported as missing above
        where = ".".join(str(p) for p in loc)
        yield loaded.diag("CON103", f"fallback.{where}: {e.get('msg', 'invalid')} (got {literal[loc[0]]!r:.60})",
                          ("fallback", loc[0]))


def prompt_placeholders(loaded: Loaded, doc: Contract) -> Iterator[Diagnostic]:
    """CON105: `{...}` placeholders in a prompt that must be fixed text."""
    prompt = doc.prompt or ""
    for m in _PLACEHOLDER.finditer(prompt):
        span = value_span(loaded, ("prompt",), m.start(), m.end())
        yield make("CON105", f"the prompt has a placeholder '{m.group(0)}': the prompt is fixed text, per-call data belongs "
                   "in the input", loaded.file, span, hint="move the value into the input type; the model receives the input as JSON")


def act_and_intermediate(loaded: Loaded, doc: Contract, types: TypeSystem) -> Iterator[Diagnostic]:
    """CON106: act and intermediate go together, and assign gives exactly the intermediate's fields."""
    if doc.act is not None and not doc.intermediate:
        if "intermediate" not in doc.model_fields_set:
            yield loaded.diag("CON106", "`act` computes an intermediate value but there is no `intermediate` type", ("act",), key=True,
                              hint="add `intermediate: <Type>` naming the type act returns")
        return
    if doc.intermediate and doc.act is None:
        yield loaded.diag("CON106", f"`intermediate: {doc.intermediate}` is declared but there is no `act` to compute it",
                          ("intermediate",), key=True, hint="add `act:` with `assign:` or `python:`, or remove intermediate")
        return
    if doc.act is None or doc.act.assign is None or not doc.intermediate:
        return
    fields = types.fields(doc.intermediate)
    if fields is None:
        return
    for name in doc.act.assign:
        if name not in fields:
            yield loaded.diag("CON106", f"act.assign names '{name}', which is not a field of {doc.intermediate}",
                              ("act", "assign", name), key=True, hint=did_you_mean(name, fields) or f"fields: {', '.join(fields)}")
    missing = [f for f, spec in fields.items() if spec.required and f not in doc.act.assign]
    if missing:
        yield loaded.diag("CON106", f"act.assign misses required field{'s' if len(missing) > 1 else ''} of {doc.intermediate}: "
                          f"{', '.join(missing)}", ("act", "assign"), key=True)

