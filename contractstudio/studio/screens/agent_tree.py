"""An agent's tools, policies and tasks as a tree, each reference checked against the declared tools."""

from __future__ import annotations

from rich.text import Text
from textual.widgets import Tree

from contractstudio.analysis.loaded_agent import LoadedAgent
from contractstudio.findings.diagnostics import Diagnostic


def _tool_ref(ref: object, tools: set[str], matched: tuple[str, ...] | str | None) -> Text:
    """A policy's tool or tool_pattern, with the declared tools the analysis found the pattern to match."""
    tool = getattr(ref, "tool", None)
    pattern = getattr(ref, "tool_pattern", None)
    if tool:
        return Text(f"tool {tool}", style="" if tool in tools else "bold red")
    if pattern:
        if matched is None or isinstance(matched, str):  # the analysis could not run it: it says why
            return Text(f"pattern {pattern} ({matched or 'not analyzed'})", style="bold red")
        hits = sorted(t for t in matched if t in tools)
        return Text(f"pattern {pattern} → {', '.join(hits) or 'no tool'}", style="" if hits else "yellow")
    return Text("?", style="dim")


def fill_agent_tree(tree: Tree, loaded: LoadedAgent, diagnostics: list[Diagnostic]) -> None:
    """Tools, policies (with the tools and tasks they name) and tasks (oracle, trajectory), as the analysis found them."""
    agent, matches = loaded.agent, loaded.pattern_matches  # computed in the analysis worker (AGT401 reads them)
    tree.clear()
    tree.root.set_label(Text(f"agent {agent.name}", style="bold"))
    tree.root.data = agent
    tools = {t.name for t in agent.tools}
    tasks = {t.id for t in agent.tasks}
    lines = {d.line for d in diagnostics}
    tnode = tree.root.add(Text(f"Tools ({len(agent.tools)})", style="bold"), expand=True)
    for tool in agent.tools:
        params = ", ".join(tool.params) or "no params"
        tnode.add_leaf(Text(f"{tool.name}({params})"), data=tool)
    pnode = tree.root.add(Text(f"Policies ({len(agent.policies)})", style="bold"), expand=True)
    for policy in agent.policies:
        node = pnode.add(Text(policy.id), data=policy, expand=True)
        if policy.require is not None:
            node.add_leaf(Text("require ").append_text(_tool_ref(policy.require, tools, matches.get((policy.id, "require")))), data=policy)
        if policy.forbid is not None:
            node.add_leaf(Text("forbid ").append_text(_tool_ref(policy.forbid, tools, matches.get((policy.id, "forbid")))), data=policy)
        scope = policy.scope if policy.scope is not None else ["every task"]
        label = Text("scope ")
        for i, s in enumerate(scope):
            label.append(("" if i == 0 else ", ") + s, style="" if s in tasks or s == "every task" else "bold red")
        node.add_leaf(label, data=policy)
        for other in policy.conflicts_with:
            node.add_leaf(Text(f"conflicts with {other}", style="yellow"), data=policy)
    knode = tree.root.add(Text(f"Tasks ({len(agent.tasks)})", style="bold"), expand=True)
    for task in agent.tasks:
        node = knode.add(Text(f"{task.id}  oracle {task.oracle}, {task.llm_calls} LLM call(s)"), data=task, expand=True)
        for step in task.trajectory:
            if step.expect_tool:
                node.add_leaf(Text("expects ").append_text(Text(
                    f"tool {step.expect_tool}", style="" if step.expect_tool in tools else "bold red")), data=step)
            if step.expect_field:
                fields = set(agent.output_schema.fields)
                known = step.expect_field in fields
                node.add_leaf(Text(f"expects field {step.expect_field}", style="" if known else "bold red"), data=step)
        for criterion in task.success_criteria:
            text = criterion if isinstance(criterion, str) else f"assert {criterion.assert_}"
            node.add_leaf(Text(f"criterion: {text}", style="dim"), data=criterion if not isinstance(criterion, str) else task)
    if lines:
        tree.root.add_leaf(Text(f"{len(diagnostics)} finding(s): see the list on the left", style="yellow"))
    tree.root.expand()
