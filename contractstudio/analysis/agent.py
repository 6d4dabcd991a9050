"""Rules of kind: agent documents: the consistency relation of seed 001 (AgentAnvil).

C ⊨ cons_policy ∧ cons_oracle ∧ cons_budget ∧ cons_cross, one function per clause:
policy contradictions (AGT101/102), oracle realisability (AGT201-203),
budget feasibility (AGT301/302), cross-level references (AGT401); code-level
success criteria are type-checked against the agent's output schema (EXP*).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from contractstudio.analysis import budget
from contractstudio.analysis.check import Context, Loaded, analyzer
from contractstudio.analysis.conditions import expression_diagnostics, value_span
from contractstudio.analysis.fields import declared_fields
from contractstudio.documents.models import Agent, Backend, Condition, FieldSpec, Policy, Task, TypeDecl
from contractstudio.documents.patterns import PatternError, RegexTimeout
from contractstudio.documents.types import ANY, Ref, TypeExpr, TypeSyntaxError, TypeSystem, parse_type, refs
from contractstudio.expressions import check, check_template
from contractstudio.findings.diagnostics import Diagnostic, Related, did_you_mean, make
from contractstudio.reading.nodes import ScalarNode

NEAR_LIMIT = 0.8  # a typical estimate at 80% of a limit leaves little room for a slow day
OUTPUT_TYPE = "AgentOutput"  # the name the schema's fields go by in expression messages


@analyzer("agent")
def agent_rules(loaded: Loaded, ctx: Context) -> Iterator[Diagnostic]:
    """Every agent rule, clause by clause."""
    agent = loaded.model
    if not isinstance(agent, Agent):
        return
    yield from duplicate_names(loaded, agent)
    yield from policy_contradictions(loaded, agent)
    yield from oracle_availability(loaded, agent)
    yield from constraint_feasibility(loaded, agent)
    yield from cross_level_references(loaded, agent)
    yield from success_criteria_expressions(loaded, agent)


def _overlap(a: Policy, b: Policy) -> bool:
    """Scopes overlap when either is omitted (every task) or they share a task id; `scope: []` is no task."""
    if a.scope == [] or b.scope == []:
        return False
    return a.scope is None or b.scope is None or bool(set(a.scope) & set(b.scope))


def _related(loaded: Loaded, where: tuple[object, ...], message: str) -> Related:
    span = loaded.span(where)
    return Related(loaded.file, span.line, span.column, message)


def _pattern(loaded: Loaded, policy: Policy, part: str) -> tuple[str | None, Diagnostic | None]:
    """The policy's tool_pattern when it can be run (compiled within the file's regex budget), or the finding why not."""
    pattern = getattr(policy, part).tool_pattern
    try:
        loaded.regex.compile(pattern)
        return pattern, None
    except PatternError as err:
        return None, loaded.diag("SCH103", f"policy '{policy.id}': tool_pattern is not usable: {err}",
                                 policy, part, "tool_pattern")
    except RegexTimeout as err:
        return None, _too_slow(loaded, policy, part, err)


def _too_slow(loaded: Loaded, policy: Policy, part: str, err: RegexTimeout) -> Diagnostic:
    pattern = getattr(policy, part).tool_pattern
    return loaded.diag("YML006", f"policy '{policy.id}': tool_pattern {pattern!r} was not checked: {err} in this file",
                       policy, part, "tool_pattern",
                       hint="simplify the pattern: nested or alternated repeats such as '(a|aa)+' backtrack exponentially")


class _Matcher:
    """Full matches of tool patterns against tool names, within the file's regex budget; a timeout becomes one YML006."""

    def __init__(self, loaded: Loaded) -> None:
        self.loaded = loaded
        self.slow: list[Diagnostic] = []
        self._reported: set[tuple[str, str]] = set()

    def __call__(self, policy: Policy, part: str, pattern: str, name: str) -> bool | None:
        """Whether the pattern matches the whole name; None when the budget ran out (reported once per pattern)."""
        try:
            return self.loaded.regex.fullmatch(pattern, name)
        except RegexTimeout as err:
            if (policy.id, part) not in self._reported:
                self._reported.add((policy.id, part))
                self.slow.append(_too_slow(self.loaded, policy, part, err))
            return None


def duplicate_names(loaded: Loaded, agent: Agent) -> Iterator[Diagnostic]:
    """REF202: two tools, policies or tasks with the same name or id (references could not tell them apart)."""
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
            yield loaded.diag("REF202", f"{what} {key} '{name}' is used twice", src + (key,),
                              hint=f"rename one of the {what} entries",
                              related=[_related(loaded, first[name] + (key,), f"first {what} '{name}' is here")])


# ----------------------------------------------------------------- cons_policy


def policy_contradictions(loaded: Loaded, agent: Agent) -> Iterator[Diagnostic]:
    """AGT101: require X and forbid X, or a conflicts_with pair, on overlapping scope. AGT102: a forbid pattern hits a required tool."""
    policies = agent.policies
    by_id = {p.id: p for p in policies}
    declared = [t.name for t in agent.tools]
    patterns: dict[tuple[str, str], str | None] = {}
    for p in policies:
        for part in ("require", "forbid"):
            ref = getattr(p, part)
            if ref is not None and ref.tool_pattern is not None:
                usable, problem = _pattern(loaded, p, part)
                patterns[(p.id, part)] = usable
                if problem:
                    yield problem
    reported: set[frozenset[str]] = set()
    for p in policies:
        for i, other_id in enumerate(p.conflicts_with):
            other = by_id.get(other_id)
            pair = frozenset((p.id, other_id))
            if other is None or other is p or pair in reported or not _overlap(p, other):
                continue
            reported.add(pair)
            yield loaded.diag("AGT101", f"policies '{p.id}' and '{other_id}' are declared contradictory (conflicts_with) and "
                              "apply to the same tasks", p, "conflicts_with", i,
                              hint="give them disjoint scopes, or remove one of them",
                              related=[_related(loaded, other.src + ("id",), f"policy '{other_id}' is here")])
    yield from forbidden_allowed_tool(loaded, agent, patterns)
    requires = [p for p in policies if p.require is not None]
    match = _Matcher(loaded)
    for f in policies:
        if f.forbid is None:
            continue
        for r in requires:
            if r is f or not _overlap(r, f) or frozenset((r.id, f.id)) in reported:
                continue
            assert r.require is not None
            rel = [_related(loaded, r.src + ("require",), f"policy '{r.id}' requires it")]
            if r.require.tool is not None and f.forbid.tool == r.require.tool:
                yield loaded.diag("AGT101", f"policy '{f.id}' forbids tool '{f.forbid.tool}', which policy '{r.id}' requires "
                                  "on overlapping scope", f, "forbid", "tool",
                                  hint="narrow one policy's scope, or drop one of them", related=rel)
            elif f.forbid.tool_pattern is not None and (pat := patterns.get((f.id, "forbid"))) is not None:
                if r.require.tool is not None and match(f, "forbid", pat, r.require.tool):
                    yield loaded.diag("AGT102", f"policy '{f.id}' forbids tool_pattern {f.forbid.tool_pattern!r}, which matches "
                                      f"tool '{r.require.tool}' that policy '{r.id}' requires", f, "forbid", "tool_pattern",
                                      hint="tighten the pattern so it excludes the required tool", related=rel)
                elif r.require.tool_pattern is not None and (rpat := patterns.get((r.id, "require"))) is not None:
                    hits = [(t, match(r, "require", rpat, t)) for t in declared]
                    wanted = [t for t, hit in hits if hit]
                    if wanted and None not in (h for _, h in hits) and all(match(f, "forbid", pat, t) for t in wanted):
                        yield loaded.diag("AGT102", f"policy '{f.id}' forbids tool_pattern {f.forbid.tool_pattern!r}, which matches "
                                          f"every tool policy '{r.id}' may use ({', '.join(wanted)})", f, "forbid", "tool_pattern",
                                          hint="tighten the pattern so some required tool stays allowed", related=rel)
    yield from match.slow


def forbidden_allowed_tool(loaded: Loaded, agent: Agent, patterns: dict[tuple[str, str], str | None]) -> Iterator[Diagnostic]:
    """AGT103: a policy on every task forbids a tool that constraints.allowed_tools explicitly allows."""
    allowed = agent.constraints.allowed_tools or []
    match = _Matcher(loaded)
    for f in agent.policies:
        if f.forbid is None or f.scope is not None:
            continue
        pat = patterns.get((f.id, "forbid"))
        for i, tool in enumerate(allowed):
            hit = tool == f.forbid.tool if f.forbid.tool is not None else (pat is not None and match(f, "forbid", pat, tool))
            if hit:
                part = "tool" if f.forbid.tool is not None else "tool_pattern"
                shown = repr(f.forbid.tool_pattern) if f.forbid.tool is None else f"'{f.forbid.tool}'"
                yield loaded.diag("AGT103", f"policy '{f.id}' forbids {shown} on every task, which matches tool '{tool}' "
                                  "that constraints.allowed_tools allows", f, "forbid", part,
                                  hint="tighten the pattern, scope the policy, or remove the tool from allowed_tools",
                                  related=[_related(loaded, ("constraints", "allowed_tools", i), f"'{tool}' is allowed here")])
    yield from match.slow


# ----------------------------------------------------------------- cons_oracle


def _code_level(criterion: str | Condition) -> bool:
    return isinstance(criterion, Condition) and (criterion.assert_ is not None or criterion.python is not None)


# What each oracle (or policy check) needs: annotators, judges, code-level criteria. A hybrid oracle needs all three.
ORACLE_NEEDS = {"human": ("annotators",), "llm_judge": ("judges",), "functional": ("code",),
                "hybrid": ("code", "judges", "annotators")}
CHECK_NEEDS = {"human": ("annotators",), "llm": ("judges",)}
UNCHECKABLE = {"annotators": "whether anyone can annotate {} is not checkable",
               "judges": "whether a judge is available for {} is not checkable",
               "code_criteria": "whether a rule can check the success criteria of {} is not checkable"}


def oracle_availability(loaded: Loaded, agent: Agent) -> Iterator[Diagnostic]:
    """AGT201-203: each oracle (and each policy's check) can be realised with the corpus and ensemble configured.

    Where the document's format cannot declare what a check needs (`loaded.unsupported`), one AGT501 per
    missing resource says so instead (info), naming every task or policy it leaves unchecked.
    """
    unknown: dict[str, list[tuple[str, tuple[Any, ...]]]] = {}
    humans = agent.corpus.annotators.get("human", 0)
    items: list[tuple[str, str, tuple[str, ...], Task | None, tuple[Any, ...]]] = [
        ("task", t.id, ORACLE_NEEDS[t.oracle], t, t.src + ("oracle",)) for t in agent.tasks]
    items += [("policy", p.id, CHECK_NEEDS.get(p.check or "", ()), None, p.src + ("check",)) for p in agent.policies]
    for what, name, needs, task, where in items:
        written = loaded.node(where)  # quoted as written: a dialect's own word for the oracle
        shown = written.text if isinstance(written, ScalarNode) and written.text else (task.oracle if task else "")
        how = f"oracle: {shown}" if task is not None else "check: " + ("human" if needs == ("annotators",) else "llm")
        for need in needs:
            if need == "annotators" and humans < 1:
                if "annotators" in loaded.unsupported:
                    unknown.setdefault("annotators", []).append((f"{what} '{name}'", where))
                else:
                    yield loaded.diag("AGT201", f"{what} '{name}' uses {how}, but the corpus has no human annotator", where,
                                      hint="add 'corpus: {annotators: {human: 1}}' or choose another oracle")
            elif need == "judges" and not agent.ensemble.judges:
                if "judges" in loaded.unsupported:
                    unknown.setdefault("judges", []).append((f"{what} '{name}'", where))
                else:
                    yield loaded.diag("AGT203", f"{what} '{name}' uses {how}, but the ensemble has no judge", where,
                                      hint="add 'ensemble: {judges: [<model>]}'")
            elif need == "code" and task is not None and not any(_code_level(c) for c in task.success_criteria):
                if task.success_criteria and "code_criteria" in loaded.unsupported:
                    unknown.setdefault("code_criteria", []).append((f"{what} '{name}'", where))
                elif not task.success_criteria:
                    yield loaded.diag("AGT202", f"task '{name}' uses {how}, but it has no success criteria to check", where,
                                      hint="add success criteria the oracle can check")
                else:
                    yield loaded.diag("AGT202", f"task '{name}' uses {how}, but none of its success criteria is a "
                                      "code-level assert", where,
                                      hint="add a criterion such as '- assert: output.status == ...', or use oracle: llm_judge or human")
    for need, users in unknown.items():
        names = ", ".join(n for n, _ in users)
        yield loaded.diag("AGT501", UNCHECKABLE[need].format(names), users[0][1],
                          hint=f"not checkable: {loaded.unsupported[need]}",
                          related=[_related(loaded, w, f"{n} is not checked either") for n, w in users[1:]])


# ----------------------------------------------------------------- cons_budget


def constraint_feasibility(loaded: Loaded, agent: Agent) -> Iterator[Diagnostic]:
    """AGT301 when a task certainly exceeds a constraint, AGT302 when its typical estimate reaches 80% of it."""
    backend, limits = agent.backend, agent.constraints
    if backend is None:  # seed 001: without a backend the budget is not estimated
        set_limits = [k for k in ("max_latency_ms", "max_cost_usd") if getattr(limits, k) is not None]
        if set_limits and "backend" in loaded.unsupported:  # the format cannot name one: say so, not silence
            yield loaded.diag("AGT501", f"whether the tasks fit constraints.{set_limits[0]} is not checkable", ("constraints", set_limits[0]),
                              key=True, hint=f"not checkable: {loaded.unsupported['backend']}")
        return
    yield from unchecked_budgets(loaded, agent, backend)
    for task in agent.tasks:
        calls = task.llm_calls
        checks: list[tuple[str, float | None, budget.Estimate | None, str, str]] = [
            ("max_llm_calls", limits.max_llm_calls, budget.Estimate(calls, calls), "{:g} LLM calls", "calls"),
            ("max_latency_ms", limits.max_latency_ms, budget.latency_ms(backend, calls), "{:g} ms", "latency"),
            ("max_cost_usd", limits.max_cost_usd, budget.cost_usd(backend, calls), "${:.6g}", "cost"),
        ]
        for key, limit, est, unit, what in checks:
            if limit is None or est is None:
                continue
            rel = [_related(loaded, ("constraints", key), f"constraints.{key}: {limit:g}")]
            if est.minimum > limit:
                yield _budget(loaded, task, "AGT301", f"task '{task.id}' certainly exceeds constraints.{key} {unit.format(limit)}: "
                              f"{_how(what, calls, backend)} {unit.format(est.minimum)}", rel)
            elif est.typical >= NEAR_LIMIT * limit:
                share = est.typical / limit
                tail = "above the limit on a typical run" if share > 1 else "little room left"
                yield _budget(loaded, task, "AGT302", f"task '{task.id}' typically needs {unit.format(est.typical)} of "
                              f"constraints.{key} {unit.format(limit)} ({share:.0%}): {tail}", rel)


def unchecked_budgets(loaded: Loaded, agent: Agent, backend: Backend) -> Iterator[Diagnostic]:
    """AGT303: a constraint the backend cannot estimate is said to be unchecked, never skipped in silence."""
    limits = agent.constraints
    if limits.max_latency_ms is not None and backend.latency_ms_per_call is None:
        yield loaded.diag("AGT303", "constraints.max_latency_ms is not checked: the backend has no latency_ms_per_call",
                          ("constraints", "max_latency_ms"), hint="add backend.latency_ms_per_call: {min: ..., typical: ...}")
    if limits.max_cost_usd is None or backend.cost_per_call_usd is not None:
        return
    if backend.tokens_per_call is None:
        yield loaded.diag("AGT303", "constraints.max_cost_usd is not checked: the backend has no tokens_per_call",
                          ("constraints", "max_cost_usd"),
                          hint="add backend.tokens_per_call: {prompt: ..., completion: ...}, or backend.cost_per_call_usd")
    elif budget.price_of(backend.model) is None:
        yield loaded.diag("AGT303", f"constraints.max_cost_usd is not checked: no price is known for model '{backend.model}' "
                          "(it is not in litellm's bundled price table)", ("constraints", "max_cost_usd"),
                          hint="set backend.cost_per_call_usd to the model's price per call",
                          related=[_related(loaded, ("backend", "model"), f"model '{backend.model}'")])


def _how(what: str, calls: int, backend: object) -> str:
    if what == "calls":
        return "it makes"
    if what == "latency":
        return f"{calls} sequential call(s) take at least"
    return f"{calls} call(s) of {getattr(backend, 'model', '?')} cost at least"


def _budget(loaded: Loaded, task: Task, code: str, message: str, related: list[Related]) -> Diagnostic:
    where = ("llm_calls",) if "llm_calls" in task.model_fields_set else ("id",)
    return loaded.diag(code, message, task, *where, related=related,
                       hint="raise the constraint, use fewer sequential calls, or a faster / cheaper backend")


# ----------------------------------------------------------------- cons_cross


def cross_level_references(loaded: Loaded, agent: Agent) -> Iterator[Diagnostic]:
    """AGT401: every L2/L3 reference (trajectory, policy, scope, conflicts_with) names a declared L1 entity."""
    tools = [t.name for t in agent.tools] + list(agent.constraints.allowed_tools or [])  # names either way
    match = _Matcher(loaded)
    fields = list(agent.output_schema.fields)
    tasks = [t.id for t in agent.tasks]
    policies = [p.id for p in agent.policies]
    for p in agent.policies:
        for part in ("require", "forbid"):
            ref = getattr(p, part)
            if ref is not None and ref.tool is not None and ref.tool not in tools:
                yield loaded.diag("AGT401", f"policy '{p.id}' names tool '{ref.tool}', which is not declared under tools",
                                  p, part, "tool", hint=did_you_mean(ref.tool, tools))
        if p.require is not None and p.require.tool_pattern is not None:
            # A required pattern no declared tool matches can never be satisfied (a forbidden one is merely idle).
            pattern, invalid = _pattern(loaded, p, "require")  # an invalid pattern is its own finding (SCH103)
            hits = [match(p, "require", pattern, t) for t in tools] if pattern is not None and invalid is None else [True]
            if None not in hits and not any(hits):
                yield loaded.diag("AGT401", f"policy '{p.id}' requires a tool matching {p.require.tool_pattern!r}, but no "
                                  "declared tool does", p, "require", "tool_pattern",
                                  hint=f"declared tools: {', '.join(tools)}" if tools else "declare the tool under tools")
        for i, task_id in enumerate(p.scope or []):
            if task_id not in tasks:
                yield loaded.diag("AGT401", f"policy '{p.id}' is scoped to task '{task_id}', which is not declared",
                                  p, "scope", i, hint=did_you_mean(task_id, tasks))
        for i, other in enumerate(p.conflicts_with):
            if other not in policies:
                yield loaded.diag("AGT401", f"policy '{p.id}' conflicts_with '{other}', which is not a policy",
                                  p, "conflicts_with", i, hint=did_you_mean(other, policies))
    for task in agent.tasks:
        for i, step in enumerate(task.trajectory):
            if step.expect_tool is not None and step.expect_tool not in tools:
                yield loaded.diag("AGT401", f"task '{task.id}': trajectory expects tool '{step.expect_tool}', which is not declared",
                                  task, "trajectory", i, "expect_tool", hint=did_you_mean(step.expect_tool, tools))
            if step.expect_field is not None and step.expect_field not in fields:
                yield loaded.diag("AGT401", f"task '{task.id}': trajectory expects field '{step.expect_field}', which is not in the schema",
                                  task, "trajectory", i, "expect_field", hint=did_you_mean(step.expect_field, fields))
    yield from match.slow


# ----------------------------------------------------------------- L1 types and success criteria


def _field_type(loaded: Loaded, path: tuple[Any, ...], text: str, what: str) -> tuple[TypeExpr, list[Diagnostic]]:
    """A schema field or tool parameter type: SCH103 when it does not parse, REF201 for a type name (agents declare none)."""
    try:
        t = parse_type(text)
    except TypeSyntaxError as err:
        span = value_span(loaded, path, err.offset, err.offset + 1)
        return ANY, [make("SCH103", f"type of {what}: {err.message}", loaded.file, span)]
    found = [loaded.diag("REF201", f"type of {what}: '{ref}' is not a type an agent can use", path,
                         hint="use str, int, float, bool, any, list[T], dict[str, T], T | None or Literal[...]")
             for ref in dict.fromkeys(refs(t))]
    return (ANY if found else t), found


def l1_types(loaded: Loaded, agent: Agent) -> tuple[dict[str, TypeExpr], list[Diagnostic]]:
    """The output schema's field types, and the diagnostics of every schema and tool parameter type."""
    fields: dict[str, TypeExpr] = {}
    found: list[Diagnostic] = []
    for name, spec in agent.output_schema.fields.items():
        fields[name], problems = _field_type(loaded, ("schema", "fields", name, "type"), spec.type, f"schema field '{name}'")
        found += problems
    schema = TypeSystem.from_decls({OUTPUT_TYPE: TypeDecl(fields=dict(agent.output_schema.fields))})
    found += declared_fields(loaded, schema, OUTPUT_TYPE, ("schema", "fields"), "schema field '{name}'")
    for tool in agent.tools:
        for name, param in tool.params.items():
            text = param if isinstance(param, str) else param.type
            path = tool.src + ("params", name) + (() if isinstance(param, str) else ("type",))
            found += _field_type(loaded, path, text, f"parameter '{name}' of tool '{tool.name}'")[1]
        specs = {name: param for name, param in tool.params.items() if isinstance(param, FieldSpec)}
        if specs:
            params = TypeSystem.from_decls({tool.name: TypeDecl(fields=specs)})
            found += declared_fields(loaded, params, tool.name, tool.src + ("params",), "parameter '{name}' of tool '{type}'")
    return fields, found


def success_criteria_expressions(loaded: Loaded, agent: Agent) -> Iterator[Diagnostic]:
    """SCH103/REF201 for L1 types; EXP* for code-level success criteria, type-checked with scope `output`."""
    field_types, found = l1_types(loaded, agent)
    yield from found
    conditions = [c for t in agent.tasks for c in t.success_criteria if isinstance(c, Condition)]
    if not conditions:
        return
    scope, types = output_scope(agent, field_types)
    for cond in conditions:
        for key, src in (("when", cond.when), ("assert", cond.assert_)):
            if src is not None:
                yield from expression_diagnostics(loaded, cond.src + (key,), check(src, scope, types)[1])
        if cond.message is not None:
            yield from expression_diagnostics(loaded, cond.src + ("message",), check_template(cond.message, scope, types))


def output_scope(agent: Agent, field_types: dict[str, TypeExpr]) -> tuple[dict[str, TypeExpr], TypeSystem]:
    """The scope of success criteria: `output` typed as the schema (a broken field type is `any`)."""
    # The schema as a declared type, so `output.<field>` resolves with did-you-mean hints.
    decl = TypeDecl(fields={n: FieldSpec(type="any" if field_types.get(n, ANY) is ANY else f.type, description=f.description)
                            for n, f in agent.output_schema.fields.items()})
    return {"output": Ref(OUTPUT_TYPE)}, TypeSystem.from_decls({OUTPUT_TYPE: decl})
