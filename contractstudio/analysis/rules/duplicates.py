"""Duplicate names (REF202): condition ids within one list, tool names, an agent's policy and task ids.

References name these things; two with the same name could not be told apart.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, cast

from contractstudio.analysis.loaded import Loaded
from contractstudio.analysis.rules.registry import UNREAD, rule
from contractstudio.documents.models import Agent, Condition, ToolDecl, ToolSet
from contractstudio.findings.diagnostics import Diagnostic

# No rule here reads a contract's examples (analysis/by_entry.py: an edit in one moves their findings, nothing else).
ENTRIES = {"examples": UNREAD}


@rule("REF202", "duplicate-name", "error", kinds=("contract", "agent", "tools"))
def duplicate_name(doc: Loaded) -> Iterator[Diagnostic]:
    """A duplicate id or name (types, condition ids, policy ids, task ids, tools)."""
    if doc.kind == "tools":
        yield from _duplicate_tools(doc, cast(ToolSet, doc.model))
    elif doc.kind == "agent":
        yield from _duplicate_agent_names(doc, cast(Agent, doc.model))
    for cl in doc.condition_lists:
        seen: dict[str, Condition] = {}
        for cond in cl.conditions:
            if cond.id is None:
                continue
            first = seen.get(cond.id)
            if first is None:
                seen[cond.id] = cond
                continue
            yield doc.diag("REF202", f"duplicate condition id '{cond.id}' in {cl.label}", cond, "id",
                           hint="condition ids must be unique within their list", related=[doc.related("first defined here", first, "id")])


def _duplicate_tools(doc: Loaded, tools: ToolSet) -> Iterator[Diagnostic]:
    seen: dict[str, ToolDecl] = {}
    for tool in tools.tools:
        first = seen.get(tool.name)
        if first is None:
            seen[tool.name] = tool
            continue
        yield doc.diag("REF202", f"duplicate tool name '{tool.name}'", tool, "name",
                       related=[doc.related("first defined here", first, "name")])


def _duplicate_agent_names(doc: Loaded, agent: Agent) -> Iterator[Diagnostic]:
    groups: list[tuple[str, str, list[tuple[str, tuple[Any, ...]]]]] = [
        ("tool", "name", [(t.name, t.src) for t in agent.tools]),
        ("policy", "id", [(p.id, p.src) for p in agent.policies]),
        ("task", "id", [(t.id, t.src) for t in agent.tasks]),
    ]
    for what, key, items in groups:
        first: dict[str, tuple[Any, ...]] = {}
        for name, src in items:
            if name not in first:
                first[name] = src
                continue
            yield doc.diag("REF202", f"{what} {key} '{name}' is used twice", src + (key,), hint=f"rename one of the {what} entries",
                           related=[doc.related(f"first {what} '{name}' is here", first[name] + (key,))])
