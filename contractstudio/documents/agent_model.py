"""The model of `kind: agent` (seed 001): tools, output schema, policies, tasks, constraints, backend."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, model_validator

from contractstudio.documents.base import Condition, FieldSpec, Model, _one_of


class AgentTool(Model):
    """A tool of the agent's L1 schema."""

    name: str = Field(description="Tool name, referenced by policies and trajectories.")
    description: str | None = Field(None, description="What the tool does.")
    params: dict[str, str | FieldSpec] = Field(default_factory=dict, description="Parameter types by name.")


class OutputSchema(Model):
    """The agent's output fields (L1), referenced by `expect_field` and success criteria."""

    fields: dict[str, FieldSpec] = Field(default_factory=dict, description="The agent's output fields.")


class ToolRef(Model):
    """A tool named exactly, or a regex over tool names."""

    tool: str | None = Field(None, description="A tool name.")
    tool_pattern: str | None = Field(None, description="A regex, full match against tool names.")

    @model_validator(mode="before")
    @classmethod
    def _tool_or_pattern(cls, data: Any) -> Any:
        _one_of(data, ("tool", "tool_pattern"), "a tool reference")
        return data


class Policy(Model):
    """A rule on tool use (`require` or `forbid` a tool or pattern, on some tasks), or a rule judged by its `check`."""

    id: str = Field(description="Policy id, unique in the agent.")
    description: str | None = Field(None, description="What the policy is for.")
    require: ToolRef | None = Field(None, description="A tool that must be used.")
    forbid: ToolRef | None = Field(None, description="A tool (or pattern) that must not be used.")
    scope: list[str] | None = Field(None, description="Task ids; omitted means every task.")
    conflicts_with: list[str] = Field(default_factory=list, description="Explicitly contradictory policy ids.")
    check: Literal["rule", "llm", "metric", "human"] | None = Field(
        None, description="Who checks a policy written in prose: a rule, an LLM judge, a metric or a human annotator.")
    severity: Literal["critical", "high", "medium", "low"] | None = Field(None, description="How bad a violation is.")

    @model_validator(mode="before")
    @classmethod
    def _require_or_forbid(cls, data: Any) -> Any:
        # A prose policy (AgentAnvil's kind) names no tool: its `check` says who judges it.
        if isinstance(data, dict) and "check" in data and not ("require" in data or "forbid" in data):
            return data
        _one_of(data, ("require", "forbid"), "a policy")
        return data


class TrajectoryStep(Model):
    """An L2/L3 assertion on a task's trajectory, naming an L1 tool or output field."""

    expect_tool: str | None = Field(None, description="A tool the trajectory must use.")
    expect_field: str | None = Field(None, description="An output field the task must produce.")

    @model_validator(mode="before")
    @classmethod
    def _tool_or_field(cls, data: Any) -> Any:
        _one_of(data, ("expect_tool", "expect_field"), "a trajectory step")
        return data


class Task(Model):
    """A task the agent performs, with the oracle that judges it."""

    id: str = Field(description="Task id, unique in the agent; policies scope to it.")
    description: str | None = Field(None, description="What the task is.")
    oracle: Literal["human", "functional", "llm_judge", "hybrid"] = Field(
        description="Who judges success: human annotators, code-level asserts, LLM judges, or hybrid (all three).")
    inputs: list[str] = Field(default_factory=list, description="What the task is given, in prose.")
    success_criteria: list[str | Condition] = Field(default_factory=list, description="Code-level asserts or natural-language criteria.")
    llm_calls: int = Field(1, ge=0, description="Sequential LLM calls the task needs.")
    trajectory: list[TrajectoryStep] = Field(default_factory=list, description="Assertions on the steps the task takes.")


class Constraints(Model):
    """Budgets every task must fit in."""

    max_latency_ms: float | None = Field(None, gt=0, description="Latency budget of one task, in milliseconds.")
    max_cost_usd: float | None = Field(None, gt=0, description="Cost budget of one task, in US dollars.")
    max_llm_calls: int | None = Field(None, ge=0, description="Most LLM calls one task may make.")
    max_tool_calls: int | None = Field(None, ge=0, description="Most tool calls one task may make (recorded; no check uses it yet).")
    allowed_tools: list[str] | None = Field(None, description="The only tools the agent may use (omitted: any tool).")


class Corpus(Model):
    """The evaluation corpus: who can annotate."""

    annotators: dict[str, int] = Field(default_factory=dict, description="Annotators by kind, e.g. {human: 2}.")


class Ensemble(Model):
    """The LLM judges available to `llm_judge` oracles."""

    judges: list[str] = Field(default_factory=list, description="Judge model names.")


class LatencyEstimate(Model):
    """Milliseconds per LLM call."""

    min: float = Field(ge=0, description="The fastest a call can be (used for certain-exceedance errors).")
    typical: float = Field(ge=0, description="A typical call (used for near-limit warnings).")


class TokenEstimate(Model):
    """Tokens per LLM call."""

    prompt: int = Field(ge=0, description="Prompt tokens per call.")
    completion: int = Field(ge=0, description="Completion tokens per call.")


class Backend(Model):
    """The model behind the agent, for the budget estimate (no backend: no budget check)."""

    model: str = Field(description="A litellm model string; its price comes from litellm's bundled price table.")
    latency_ms_per_call: LatencyEstimate | None = Field(None, description="Latency per call.")
    tokens_per_call: TokenEstimate | None = Field(None, description="Tokens per call.")
    cost_per_call_usd: float | None = Field(None, ge=0, description="Overrides the price table.")


class Agent(Model):
    """kind: agent — an agent contract."""

    kind: Literal["agent"] = Field(description="Always `agent`.")
    name: str = Field(description="Agent name.")
    version: str | None = Field(None, description="Version of the contract.")
    description: str | None = Field(None, description="What the agent does.")
    tools: list[AgentTool] = Field(default_factory=list, description="L1: the tool schema.")
    output_schema: OutputSchema = Field(default_factory=OutputSchema, alias="schema", description="L1: the agent's output fields.")
    policies: list[Policy] = Field(default_factory=list, description="Rules on tool use.")
    tasks: list[Task] = Field(default_factory=list, description="Tasks with oracles and trajectories.")
    constraints: Constraints = Field(default_factory=Constraints, description="Budgets.")
    corpus: Corpus = Field(default_factory=Corpus, description="Annotators available to human oracles.")
    ensemble: Ensemble = Field(default_factory=Ensemble, description="Judges available to llm_judge oracles.")
    backend: Backend | None = Field(None, description="The model used for the budget estimate.")
