"""An agent's policies (cons_policy of seed 001): contradictions (AGT101, AGT102), allowed tools (AGT103), patterns (SCH103).

Two policies contradict when their scopes overlap: either is omitted (every
task) or they share a task id; `scope: []` is no task.
"""

from __future__ import annotations

from collections.abc import Iterator

from contractstudio.analysis.loaded_agent import LoadedAgent
from contractstudio.analysis.rules.registry import rule
from contractstudio.documents.models import Agent, Policy
from contractstudio.findings.diagnostics import Diagnostic, Related


def _overlap(a: Policy, b: Policy) -> bool:
    """Scopes overlap when either is omitted (every task) or they share a task id; `scope: []` is no task."""
    if a.scope == [] or b.scope == []:
        return False
    return a.scope is None or b.scope is None or bool(set(a.scope) & set(b.scope))


def related(doc: LoadedAgent, where: tuple[object, ...], message: str) -> Related:
    """A related note at a document path (with the tool, policy or task it is about)."""
    return doc.related(message, where)


def declared_conflicts(agent: Agent) -> set[frozenset[str]]:
    """The pairs of policies declared contradictory (conflicts_with) that apply to the same tasks."""
    by_id = {p.id: p for p in agent.policies}
    pairs: set[frozenset[str]] = set()
    for p in agent.policies:
        for other_id in p.conflicts_with:
            other = by_id.get(other_id)
            if other is not None and other is not p and _overlap(p, other):
                pairs.add(frozenset((p.id, other_id)))
    return pairs


@rule("AGT101", "policy-contradiction", "error", kinds=("agent",))
def policy_contradiction(doc: LoadedAgent) -> Iterator[Diagnostic]:
    """A policy requires a tool another policy forbids on overlapping scope (or a conflicts_with pair)."""
    policies = doc.agent.policies
    by_id = {p.id: p for p in policies}
    reported: set[frozenset[str]] = set()
    for p in policies:
        for i, other_id in enumerate(p.conflicts_with):
            other = by_id.get(other_id)
            pair = frozenset((p.id, other_id))
            if other is None or other is p or pair in reported or not _overlap(p, other):
                continue
            reported.add(pair)
            yield doc.diag("AGT101", f"policies '{p.id}' and '{other_id}' are declared contradictory (conflicts_with) and "
                           "apply to the same tasks", p, "conflicts_with", i,
                           hint="give them disjoint scopes, or remove one of them",
                           related=[related(doc, other.src + ("id",), f"policy '{other_id}' is here")])
    for f, r in _forbid_require_pairs(doc.agent, reported):
        assert f.forbid is not None and r.require is not None
        if r.require.tool is not None and f.forbid.tool == r.require.tool:
            yield doc.diag("AGT101", f"policy '{f.id}' forbids tool '{f.forbid.tool}', which policy '{r.id}' requires "
                           "on overlapping scope", f, "forbid", "tool",
                           hint="narrow one policy's scope, or drop one of them",
                           related=[related(doc, r.src + ("require",), f"policy '{r.id}' requires it")])


def _forbid_require_pairs(agent: Agent, reported: set[frozenset[str]]) -> Iterator[tuple[Policy, Policy]]:
    """(forbidding, requiring) policies on overlapping scope, except pairs already declared contradictory."""
    requires = [p for p in agent.policies if p.require is not None]
    for f in agent.policies:
        if f.forbid is None:
            continue
        for r in requires:
            if r is not f and _overlap(r, f) and frozenset((r.id, f.id)) not in reported:
                yield f, r


@rule("AGT103", "allowed-tool-forbidden", "error", kinds=("agent",))
def allowed_tool_forbidden(doc: LoadedAgent) -> Iterator[Diagnostic]:
    """A policy on every task forbids a tool that `constraints.allowed_tools` allows."""
    # Defined before AGT102, as the regex budget was spent before: a pattern past it is reported where it ran out.
    allowed = doc.agent.constraints.allowed_tools or []
    for f in doc.agent.policies:
        if f.forbid is None or f.scope is not None:
            continue
        pat = doc.tool_patterns.usable.get((f.id, "forbid"))
        for i, tool in enumerate(allowed):
            hit = tool == f.forbid.tool if f.forbid.tool is not None else (pat is not None and doc.matches(f, "forbid", pat, tool))
            if hit:
                part = "tool" if f.forbid.tool is not None else "tool_pattern"
                shown = repr(f.forbid.tool_pattern) if f.forbid.tool is None else f"'{f.forbid.tool}'"
                yield doc.diag("AGT103", f"policy '{f.id}' forbids {shown} on every task, which matches tool '{tool}' "
                               "that constraints.allowed_tools allows", f, "forbid", part,
                               hint="tighten the pattern, scope the policy, or remove the tool from allowed_tools",
                               related=[related(doc, ("constraints", "allowed_tools", i), f"'{tool}' is allowed here")])


@rule("AGT102", "forbid-pattern-hits-required-tool", "error", kinds=("agent",))
def forbid_pattern_hits_required_tool(doc: LoadedAgent) -> Iterator[Diagnostic]:
    """A forbid `tool_pattern` matches a tool that a policy requires."""
    patterns, declared = doc.tool_patterns.usable, [t.name for t in doc.agent.tools]
    for f, r in _forbid_require_pairs(doc.agent, declared_conflicts(doc.agent)):
        assert f.forbid is not None and r.require is not None
        if r.require.tool is not None and f.forbid.tool == r.require.tool:
            continue  # the same tool by name: AGT101
        if f.forbid.tool_pattern is None or (pat := patterns.get((f.id, "forbid"))) is None:
            continue
        rel = [related(doc, r.src + ("require",), f"policy '{r.id}' requires it")]
        if r.require.tool is not None and doc.matches(f, "forbid", pat, r.require.tool):
            yield doc.diag("AGT102", f"policy '{f.id}' forbids tool_pattern {f.forbid.tool_pattern!r}, which matches "
                           f"tool '{r.require.tool}' that policy '{r.id}' requires", f, "forbid", "tool_pattern",
                           hint="tighten the pattern so it excludes the required tool", related=rel)
        elif r.require.tool_pattern is not None and (rpat := patterns.get((r.id, "require"))) is not None:
            hits = [(t, doc.matches(r, "require", rpat, t)) for t in declared]
            wanted = [t for t, hit in hits if hit]  # a match past the regex budget (None) decides nothing
            if wanted and None not in (h for _, h in hits) and all(doc.matches(f, "forbid", pat, t) for t in wanted):
                yield doc.diag("AGT102", f"policy '{f.id}' forbids tool_pattern {f.forbid.tool_pattern!r}, which matches "
                               f"every tool policy '{r.id}' may use ({', '.join(wanted)})", f, "forbid", "tool_pattern",
                               hint="tighten the pattern so some required tool stays allowed", related=rel)


@rule("SCH103", kinds=("agent",))
def unusable_tool_pattern(doc: LoadedAgent) -> Iterator[Diagnostic]:
    """A policy's `tool_pattern` the regex engine refuses (invalid, too long, too expensive to compile)."""
    for p, part, why in doc.tool_patterns.invalid:
        yield doc.diag("SCH103", f"policy '{p.id}': tool_pattern is not usable: {why}", p, part, "tool_pattern")
