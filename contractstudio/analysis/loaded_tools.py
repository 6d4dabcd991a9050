"""A tools document with its facts: each tool's parameter types (the names its conditions see) and its hooks.

A tools document declares no types: a parameter's type is built from the
built-in ones, and a name that is not one makes the parameter `any`.
"""

from __future__ import annotations

from functools import cached_property
from typing import TYPE_CHECKING, Any, cast

from contractstudio.analysis.loaded import (
    ConditionList,
    ExpressionSite,
    FieldSet,
    Hook,
    Loaded,
    TypeString,
    condition_sites,
)
from contractstudio.documents.models import ToolSet, TypeDecl
from contractstudio.documents.type_syntax import ANY, TypeSyntaxError, parse_type, refs
from contractstudio.documents.types import TypeSystem

if TYPE_CHECKING:
    from contractstudio.analysis.loaded import Scope


class LoadedTools(Loaded):
    """A validated `kind: tools` document and the facts its rules share."""

    @property
    def toolset(self) -> ToolSet:
        """The validated model (rules run only on documents whose shape validated)."""
        return cast(ToolSet, self.model)

    @cached_property
    def type_strings(self) -> list[TypeString]:
        """Every parameter's type, tool by tool."""
        found = []
        for tool in self.toolset.tools:
            for name, spec in tool.params.items():
                path, label = tool.src + ("params", name, "type"), f"type of parameter '{name}'"
                try:
                    t = parse_type(spec.type)
                    found.append(TypeString(path, spec.type, label, t, builtin_only="a tool parameter can have"))
                except TypeSyntaxError as err:
                    found.append(TypeString(path, spec.type, label, None, err, builtin_only="a tool parameter can have"))
        return found

    @cached_property
    def parameter_scopes(self) -> dict[tuple[Any, ...], Scope]:
        """Each tool's parameters and their types (`any` where a type is broken), by the tool's document path."""
        parsed = {ts.path: ts.parsed for ts in self.type_strings}
        scopes: dict[tuple[Any, ...], Scope] = {}
        for tool in self.toolset.tools:
            types = {name: parsed.get(tool.src + ("params", name, "type")) for name in tool.params}
            scopes[tool.src] = {name: t if t is not None and not refs(t) else ANY for name, t in types.items()}
        return scopes

    @cached_property
    def condition_lists(self) -> list[ConditionList]:
        """Each tool's preconditions and postconditions."""
        return [ConditionList(tool.src + (part,), getattr(tool, part), f"{tool.name}.{part}")
                for tool in self.toolset.tools for part in ("preconditions", "postconditions")]

    @cached_property
    def expression_sites(self) -> list[ExpressionSite]:
        """Each tool's conditions; their names are the tool's parameters."""
        sites: list[ExpressionSite] = []
        for tool in self.toolset.tools:
            scope = self.parameter_scopes[tool.src]
            sites += condition_sites(tool.preconditions + tool.postconditions, scope, self.types, tool=tool.name)
        return sites

    @cached_property
    def hooks(self) -> list[Hook]:
        """Each tool's condition hooks, then its handler."""
        found = []
        for tool in self.toolset.tools:
            found += [Hook(c.src + ("python",), c.python) for c in tool.preconditions + tool.postconditions if c.python is not None]
            if tool.handler is not None:
                found.append(Hook(tool.src + ("handler",), tool.handler))
        return found

    @cached_property
    def field_sets(self) -> list[FieldSet]:
        """Each tool's parameters, as the fields of a type named after the tool."""
        return [FieldSet(TypeSystem.from_decls({tool.name: TypeDecl(fields=dict(tool.params))}), tool.name, tool.src + ("params",),
                         "parameter '{name}' of tool '{type}'") for tool in self.toolset.tools]
