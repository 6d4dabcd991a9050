"""Rules of kind: tools documents: duplicate tools (REF202), conditions over parameters (TOL101, EXP*),
Python hooks (TOL102/TOL103), parameter types (REF201/SCH103)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace

from contractstudio.analysis.check import Context, Loaded, analyzer
from contractstudio.analysis.conditions import (
    condition_list,
    did_you_mean,
    hook_diagnostics,
    one_trust_note,
    value_span,
)
from contractstudio.analysis.fields import declared_fields
from contractstudio.documents.models import ToolDecl, ToolSet, TypeDecl
from contractstudio.documents.types import ANY, TypeExpr, TypeSyntaxError, TypeSystem, parse_type, refs
from contractstudio.expressions import ExprIssue
from contractstudio.findings.diagnostics import Diagnostic, Related, make

_NO_TYPES = TypeSystem.from_decls({})


@analyzer("tools")
def tools_rules(loaded: Loaded, ctx: Context) -> Iterator[Diagnostic]:
    """Every rule of a tools document."""
    doc = loaded.model
    if not isinstance(doc, ToolSet):
        return
    found: list[Diagnostic] = []
    seen: dict[str, ToolDecl] = {}
    for tool in doc.tools:
        first = seen.get(tool.name)
        if first is not None:
            at = loaded.span(first, "name")
            found.append(loaded.diag("REF202", f"duplicate tool name '{tool.name}'", tool, "name",
                                     related=[Related(loaded.file, at.line, at.column, "first defined here")]))
        else:
            seen[tool.name] = tool
        found.extend(_tool(loaded, ctx, tool))
    yield from one_trust_note(found)


def param_types(loaded: Loaded, tool: ToolDecl) -> tuple[dict[str, TypeExpr], list[Diagnostic]]:
    """The scope of a tool's conditions (its parameters by type; a broken type is `any`) and the type diagnostics."""
    scope: dict[str, TypeExpr] = {}
    found: list[Diagnostic] = []
    for name, spec in tool.params.items():
        path = tool.src + ("params", name, "type")
        try:
            t = parse_type(spec.type)
        except TypeSyntaxError as err:
            found.append(make("SCH103", f"type of parameter '{name}': {err.message}", loaded.file,
                              value_span(loaded, path, err.offset, err.offset + 1)))
            t = ANY
        for ref in refs(t):  # a tools document declares no types: only the built-in ones exist
            found.append(loaded.diag("REF201", f"type of parameter '{name}': '{ref}' is not a type a tool parameter can have",
                                     path, hint="use str, int, float, bool, any, list[T], dict[str, T], T | None or Literal[...]"))
            t = ANY
        scope[name] = t
    params = TypeSystem.from_decls({tool.name: TypeDecl(fields=dict(tool.params))})
    found.extend(declared_fields(loaded, params, tool.name, tool.src + ("params",), "parameter '{name}' of tool '{type}'"))
    return scope, found


def _tool(loaded: Loaded, ctx: Context, tool: ToolDecl) -> Iterator[Diagnostic]:
    scope, found = param_types(loaded, tool)
    yield from found
    params = ", ".join(scope) or "none"

    def not_a_parameter(name: str, issue: ExprIssue) -> ExprIssue:
        # In a tool condition the names in scope are exactly the tool's parameters.
        message = f"tool '{tool.name}' has no parameter '{name}' (parameters: {params})"
        return replace(issue, code="TOL101", message=message, hint=did_you_mean(name, scope) or issue.hint)

    for part in ("preconditions", "postconditions"):
        yield from condition_list(loaded, ctx, tool.src + (part,), getattr(tool, part), scope, _NO_TYPES,
                                  f"{tool.name}.{part}", unknown_name=not_a_parameter)
    if tool.handler is not None:
        yield from hook_diagnostics(loaded, ctx, tool.src + ("handler",), tool.handler)
