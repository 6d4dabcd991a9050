"""An agent's cross-level references (cons_cross of seed 001, AGT401): L2/L3 names must be declared L1 entities."""

from __future__ import annotations

from collections.abc import Iterator

from contractstudio.analysis.loaded_agent import LoadedAgent
from contractstudio.analysis.rules.registry import rule
from contractstudio.findings.diagnostics import Diagnostic, did_you_mean


@rule("AGT401", "dangling-reference", "error", kinds=("agent",))
def dangling_reference(doc: LoadedAgent) -> Iterator[Diagnostic]:
    """A trajectory, policy or scope names a tool, field or task that is not declared."""
    agent = doc.agent
    tools = [t.name for t in agent.tools] + list(agent.constraints.allowed_tools or [])  # names either way
    fields = list(agent.output_schema.fields)
    tasks = [t.id for t in agent.tasks]
    policies = [p.id for p in agent.policies]
    matches = doc.pattern_matches  # every tool_pattern's matches, in policy order: the studio's agent tree draws them
    for p in agent.policies:
        for part in ("require", "forbid"):
            ref = getattr(p, part)
            if ref is not None and ref.tool is not None and ref.tool not in tools:
                yield doc.diag("AGT401", f"policy '{p.id}' names tool '{ref.tool}', which is not declared under tools",
                               p, part, "tool", hint=did_you_mean(ref.tool, tools))
        if p.require is not None and p.require.tool_pattern is not None:
            # A required pattern no declared tool matches can never be satisfied (a forbidden one is merely idle).
            # A pattern that cannot run is its own finding; one past the regex budget decides nothing.
            if matches.get((p.id, "require")) == ():
                yield doc.diag("AGT401", f"policy '{p.id}' requires a tool matching {p.require.tool_pattern!r}, but no "
                               "declared tool does", p, "require", "tool_pattern",
                               hint=f"declared tools: {', '.join(tools)}" if tools else "declare the tool under tools")
        for i, task_id in enumerate(p.scope or []):
            if task_id not in tasks:
                yield doc.diag("AGT401", f"policy '{p.id}' is scoped to task '{task_id}', which is not declared",
                               p, "scope", i, hint=did_you_mean(task_id, tasks))
        for i, other in enumerate(p.conflicts_with):
            if other not in policies:
                yield doc.diag("AGT401", f"policy '{p.id}' conflicts_with '{other}', which is not a policy",
                               p, "conflicts_with", i, hint=did_you_mean(other, policies))
    for task in agent.tasks:
        for i, step in enumerate(task.trajectory):
            if step.expect_tool is not None and step.expect_tool not in tools:
                yield doc.diag("AGT401", f"task '{task.id}': trajectory expects tool '{step.expect_tool}', which is not declared",
                               task, "trajectory", i, "expect_tool", hint=did_you_mean(step.expect_tool, tools))
            if step.expect_field is not None and step.expect_field not in fields:
                yield doc.diag("AGT401", f"task '{task.id}': trajectory expects field '{step.expect_field}', which is not in the schema",
                               task, "trajectory", i, "expect_field", hint=did_you_mean(step.expect_field, fields))
