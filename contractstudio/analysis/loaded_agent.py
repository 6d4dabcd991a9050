"""An agent document with its facts: the L1 types (schema fields, tool parameters) and the scope of its success criteria.

An agent declares no types: its schema's fields and its tools' parameters use
the built-in ones. Success criteria see `output`, typed as the schema (a field
whose type is broken is `any`), so `output.<field>` resolves with did-you-mean hints.
"""

from __future__ import annotations

from functools import cached_property
from typing import TYPE_CHECKING, NamedTuple, cast

from contractstudio.analysis.loaded import ExpressionSite, FieldSet, Loaded, TypeString, condition_sites
from contractstudio.documents.models import Agent, Condition, FieldSpec, Policy, TypeDecl
from contractstudio.documents.patterns import PatternError, RegexTimeout
from contractstudio.documents.type_syntax import ANY, Ref, TypeExpr, TypeSyntaxError, parse_type, refs
from contractstudio.documents.types import TypeSystem

if TYPE_CHECKING:
    from contractstudio.analysis.loaded import Scope

OUTPUT_TYPE = "AgentOutput"  # the name the schema's fields go by in expression messages
AN_AGENT = "an agent can use"


def _type_string(path: tuple[object, ...], text: str, label: str) -> TypeString:
    try:
        return TypeString(path, text, label, parse_type(text), builtin_only=AN_AGENT)
    except TypeSyntaxError as err:
        return TypeString(path, text, label, None, err, builtin_only=AN_AGENT)


_RAN_OUT = "not checked: the file's regex time ran out"


class ToolPatterns(NamedTuple):
    """The policies' tool_patterns compiled within the file's regex budget."""

    usable: dict[tuple[str, str], str | None]  # (policy id, 'require' | 'forbid') -> the pattern, None when it cannot run
    invalid: list[tuple[Policy, str, str]]  # (policy, part, why): refused patterns (SCH103)


class LoadedAgent(Loaded):
    """A validated `kind: agent` document and the facts its rules share."""

    @property
    def agent(self) -> Agent:
        """The validated model (rules run only on documents whose shape validated)."""
        return cast(Agent, self.model)

    @cached_property
    def type_strings(self) -> list[TypeString]:
        """Every schema field's type, then every tool parameter's."""
        agent = self.agent
        found = [_type_string(("schema", "fields", name, "type"), spec.type, f"type of schema field '{name}'")
                 for name, spec in agent.output_schema.fields.items()]
        for tool in agent.tools:
            for name, param in tool.params.items():
                text = param if isinstance(param, str) else param.type
                path = tool.src + ("params", name) + (() if isinstance(param, str) else ("type",))
                found.append(_type_string(path, text, f"type of parameter '{name}' of tool '{tool.name}'"))
        return found

    @cached_property
    def schema_types(self) -> dict[str, TypeExpr]:
        """The output schema's field types (`any` where the type is broken or names a type)."""
        parsed = {ts.path: ts.parsed for ts in self.type_strings}
        types = {}
        for name in self.agent.output_schema.fields:
            t = parsed.get(("schema", "fields", name, "type"))
            types[name] = t if t is not None and not refs(t) else ANY
        return types

    @cached_property
    def types(self) -> TypeSystem:
        """The schema as the declared type `AgentOutput`, which success criteria resolve against."""
        decl = TypeDecl(fields={n: FieldSpec(type="any" if self.schema_types.get(n, ANY) is ANY else f.type, description=f.description)
                                for n, f in self.agent.output_schema.fields.items()})
        return TypeSystem.from_decls({OUTPUT_TYPE: decl})

    @cached_property
    def criteria_scope(self) -> Scope:
        """What success criteria see: `output`, typed as the schema."""
        return {"output": Ref(OUTPUT_TYPE)}

    @cached_property
    def expression_sites(self) -> list[ExpressionSite]:
        """Every code-level success criterion of every task."""
        conditions = [c for t in self.agent.tasks for c in t.success_criteria if isinstance(c, Condition)]
        return condition_sites(conditions, self.criteria_scope, self.types)

    @cached_property
    def field_sets(self) -> list[FieldSet]:
        """The schema's fields, then the parameters of each tool that declares them with constraints."""
        agent = self.agent
        found = [FieldSet(TypeSystem.from_decls({OUTPUT_TYPE: TypeDecl(fields=dict(agent.output_schema.fields))}), OUTPUT_TYPE,
                          ("schema", "fields"), "schema field '{name}'")]
        for tool in agent.tools:
            specs = {name: param for name, param in tool.params.items() if isinstance(param, FieldSpec)}
            if specs:
                found.append(FieldSet(TypeSystem.from_decls({tool.name: TypeDecl(fields=specs)}), tool.name, tool.src + ("params",),
                                      "parameter '{name}' of tool '{type}'"))
        return found

    @cached_property
    def tool_patterns(self) -> ToolPatterns:
        """Every policy's tool_pattern compiled once (a refused one is SCH103's; one past the regex budget, a YML006)."""
        found = ToolPatterns({}, [])
        for p in self.agent.policies:
            for part in ("require", "forbid"):
                ref = getattr(p, part)
                if ref is not None and ref.tool_pattern is not None:
                    pattern, problem = self.compile_pattern(p, part)
                    found.usable[(p.id, part)] = pattern
                    if isinstance(problem, PatternError):
                        found.invalid.append((p, part, str(problem)))
                    elif isinstance(problem, RegexTimeout):
                        self.too_slow(p, part, problem)
        return found

    @cached_property
    def pattern_matches(self) -> dict[tuple[str, str], tuple[str, ...] | str]:
        """For each policy's tool_pattern, the tool names it fully matches (declared tools, then allowed_tools), or
        why that is not known: 'invalid regex', or that the file's regex time ran out (a YML006 says so).

        Computed once, during analysis (AGT401 reads it first), so that a screen draws the matches and never runs
        a regex from the file on its own thread.
        """
        agent = self.agent
        names = list(dict.fromkeys([t.name for t in agent.tools] + list(agent.constraints.allowed_tools or [])))
        found: dict[tuple[str, str], tuple[str, ...] | str] = {}
        for p in agent.policies:
            for part in ("require", "forbid"):
                ref = getattr(p, part)
                if ref is None or ref.tool_pattern is None:
                    continue
                pattern, problem = self.compile_pattern(p, part)
                if pattern is None:
                    found[(p.id, part)] = _RAN_OUT if isinstance(problem, RegexTimeout) else "invalid regex"
                    continue
                hits = [self.matches(p, part, pattern, name) for name in names]
                found[(p.id, part)] = _RAN_OUT if None in hits else tuple(n for n, hit in zip(names, hits, strict=True) if hit)
        return found

    def compile_pattern(self, policy: Policy, part: str) -> tuple[str | None, PatternError | RegexTimeout | None]:
        """The policy's tool_pattern when it can be run (compiled within the file's regex budget), or why not."""
        pattern = str(getattr(policy, part).tool_pattern)
        try:
            self.regex.compile(pattern)
            return pattern, None
        except (PatternError, RegexTimeout) as err:
            return None, err

    def matches(self, policy: Policy, part: str, pattern: str, name: str) -> bool | None:
        """Whether the pattern matches the whole name; None when the file's regex budget ran out (a YML006)."""
        try:
            return self.regex.fullmatch(pattern, name)
        except RegexTimeout as err:
            self.too_slow(policy, part, err)
            return None

    def too_slow(self, policy: Policy, part: str, err: RegexTimeout) -> None:
        """Record that a policy's tool_pattern was not checked for lack of regex budget (YML006, after the rules)."""
        pattern = getattr(policy, part).tool_pattern
        self.resource_limits.append(self.diag(
            "YML006", f"policy '{policy.id}': tool_pattern {pattern!r} was not checked: {err} in this file", policy, part,
            "tool_pattern", hint="simplify the pattern: nested or alternated repeats such as '(a|aa)+' backtrack exponentially"))
