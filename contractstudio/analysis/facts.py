"""What the editing layer asks of a document, read from the analysis's own per-document facts.

The step graph, the state flow, the type system and the scopes are the
`LoadedPipeline` / `LoadedContract` / `LoadedAgent` / `LoadedTools` facts the
rules used, so editing help and diagnostics never disagree about what is in
scope. Editing's own facts (every expression written, for hover and rename) are
stored in `Loaded.memo` the first time someone asks for them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

from contractstudio.analysis.loaded import ExpressionSite, Loaded, no_types
from contractstudio.analysis.loaded_agent import LoadedAgent
from contractstudio.analysis.loaded_contract import LoadedContract
from contractstudio.analysis.loaded_pipeline import LoadedPipeline
from contractstudio.analysis.loaded_tools import LoadedTools
from contractstudio.analysis.step_graph import StateFlow, StepGraph
from contractstudio.documents.models import Agent, Condition, Contract, ToolDecl, ToolSet
from contractstudio.documents.types import TypeSystem

if TYPE_CHECKING:
    from contractstudio.analysis.loaded import Scope

T = TypeVar("T")
__all__ = ["ExpressionSite", "expression_sites", "memo", "scope_at", "state_flow", "step_graph", "type_system"]


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
    # The analysis's own facts (LoadedContract, LoadedAgent, LoadedTools), so editing help and
    # diagnostics never disagree about what is in scope.
    if isinstance(loaded, LoadedContract):
        return _Scopes(loaded.types, loaded.input_scope, loaded.output_scope, {})
    if isinstance(loaded, LoadedAgent):
        return _Scopes(loaded.types, {}, loaded.criteria_scope, {})
    if isinstance(loaded, LoadedTools):
        return _Scopes(no_types(), {}, {}, {t.name: loaded.parameter_scopes[t.src] for t in loaded.toolset.tools})
    return _Scopes(no_types(), {}, {}, {})


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
