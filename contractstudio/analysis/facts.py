"""Per-document facts computed once per analysis and shared by the rules and the editing layer.

A fact is stored in `Loaded.memo` the first time someone asks for it: the step
graph of a pipeline, the type system of a document, where its expressions are
and which names each one sees. The scopes come from the rule modules that
check the expressions (contract.scopes, agent.output_scope, tools.param_types),
so editing help and diagnostics never disagree about what is in scope.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from contractstudio.analysis.loaded import Loaded
from contractstudio.analysis.loaded_pipeline import LoadedPipeline
from contractstudio.analysis.step_graph import StateFlow, StepGraph
from contractstudio.documents.models import Agent, Condition, Contract, ToolDecl, ToolSet
from contractstudio.documents.types import TypeExpr, TypeSystem

T = TypeVar("T")
Scope = dict[str, TypeExpr]
_NO_TYPES = TypeSystem.from_decls({})


@dataclass(frozen=True, slots=True)
class ExpressionSite:
    """One scalar of a document that holds an expression (or a message template) and what it sees."""

    path: tuple[Any, ...]  # document path of the scalar
    src: str
    scope: Scope
    types: TypeSystem
    template: bool = False  # a `message`: text with {expr} placeholders


def memo(loaded: Loaded, key: str, compute: Callable[[], T]) -> T:
    """The fact `key` of a document, computed on first use."""
    if key not in loaded.memo:
        loaded.memo[key] = compute()
    value: T = loaded.memo[key]
    return value


def step_graph(loaded: Loaded) -> StepGraph | None:
    """The step graph of a pipeline document (None for other kinds or a broken shape): `LoadedPipeline.step_graph`."""
    return loaded.step_graph if isinstance(loaded, LoadedPipeline) else None


def state_flow(loaded: Loaded) -> StateFlow | None:
    """The state fields set on every path into each reachable step of a pipeline (None for other kinds)."""
    return loaded.state_flow if isinstance(loaded, LoadedPipeline) else None


def type_system(loaded: Loaded) -> TypeSystem:
    """The declared types expressions of this document resolve against."""
    return _scopes(loaded).types


def expression_sites(loaded: Loaded) -> list[ExpressionSite]:
    """Every expression and message template of the document, in document order."""
    return memo(loaded, "expression_sites", lambda: _sites(loaded))


def scope_at(loaded: Loaded, path: tuple[Any, ...]) -> tuple[Scope, TypeSystem] | None:
    """The names an expression written at `path` would see, even where nothing is written yet (completion)."""
    scopes = _scopes(loaded)
    model = loaded.model
    if isinstance(model, Contract) and path:
        if path[0] == "post":
            return scopes.after, scopes.types
        if path[0] in ("pre", "act", "fallback"):
            return scopes.before, scopes.types
    if isinstance(model, Agent) and len(path) >= 3 and path[0] == "tasks" and path[2] == "success_criteria":
        return scopes.after, scopes.types
    if isinstance(model, ToolSet) and len(path) >= 3 and path[0] == "tools" and path[2] in ("preconditions", "postconditions"):
        tool = next((t for t in model.tools if t.src == path[:2]), None)
        if tool is not None:
            return scopes.tools.get(tool.name, {}), scopes.types
    return None


# ----------------------------------------------------------------- computed once


@dataclass(slots=True)
class _Scopes:
    types: TypeSystem
    before: Scope  # contract: pre, act, fallback
    after: Scope  # contract: post; agent: success criteria
    tools: dict[str, Scope]  # tools: parameters by tool name


def _scopes(loaded: Loaded) -> _Scopes:
    return memo(loaded, "scopes", lambda: _compute_scopes(loaded))


def _compute_scopes(loaded: Loaded) -> _Scopes:
    model = loaded.model
    # Imported here: a file pays only for the rule modules of its own kind (as in check._load_family).
    if isinstance(model, Contract):
        from contractstudio.analysis.contract import role_type, scopes

        types = TypeSystem.from_decls(model.types)
        roles = {role: role_type(loaded, types, role, getattr(model, role))[0] for role in ("input", "output", "intermediate")}
        before, after = scopes(model, roles)
        return _Scopes(types, before, after, {})
    if isinstance(model, Agent):
        from contractstudio.analysis.agent import l1_types, output_scope

        scope, types = output_scope(model, l1_types(loaded, model)[0])
        return _Scopes(types, {}, scope, {})
    if isinstance(model, ToolSet):
        from contractstudio.analysis.tools import param_types

        return _Scopes(_NO_TYPES, {}, {}, {t.name: param_types(loaded, t)[0] for t in model.tools})
    return _Scopes(_NO_TYPES, {}, {}, {})


def _conditions(conditions: list[Condition], scope: Scope, types: TypeSystem) -> list[ExpressionSite]:
    out: list[ExpressionSite] = []
    for cond in conditions:
        for key, src in (("when", cond.when), ("assert", cond.assert_)):
            if isinstance(src, str):
                out.append(ExpressionSite(cond.src + (key,), src, scope, types))
        if isinstance(cond.message, str):
            out.append(ExpressionSite(cond.src + ("message",), cond.message, scope, types, template=True))
    return out


def _sites(loaded: Loaded) -> list[ExpressionSite]:
    model = loaded.model
    s = _scopes(loaded)
    if isinstance(model, Contract):
        found = _conditions(model.pre, s.before, s.types)
        if model.act is not None:
            found += [ExpressionSite(("act", "assign", k), v, s.before, s.types) for k, v in (model.act.assign or {}).items()
                      if isinstance(v, str)]
        found += _conditions(model.post, s.after, s.types)
        found += [ExpressionSite(("fallback", k), v if isinstance(v, str) else str(v), s.before, s.types)
                  for k, v in (model.fallback or {}).items()]
        return found
    if isinstance(model, Agent):
        conds = [c for t in model.tasks for c in t.success_criteria if isinstance(c, Condition)]
        return _conditions(conds, s.after, s.types)
    if isinstance(model, ToolSet):
        found = []
        tool: ToolDecl
        for tool in model.tools:
            scope = s.tools.get(tool.name, {})
            found += _conditions(tool.preconditions + tool.postconditions, scope, s.types)
        return found
    return []
