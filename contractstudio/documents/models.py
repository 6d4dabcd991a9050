"""Pydantic models of the four document kinds of FORMAT.md.

Every model remembers where it came from (`src`, a key/index path into its
document), so rules can point at the exact node even after broken parts of a
document were pruned to let analysis go on.
"""

from __future__ import annotations

from typing import Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator
from pydantic_core import PydanticCustomError

Path = tuple[Any, ...]


class SrcDict(dict):
    """A mapping from the YAML source that knows its path in the document."""

    __slots__ = ("src",)

    def __init__(self, *args: Any, src: Path = (), **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.src = src


class Model(BaseModel):
    """Base of every document model: strict types, unknown keys reported, source path kept."""

    # defer_build: a file of one kind pays only for the validators of that kind.
    model_config = ConfigDict(extra="forbid", strict=True, populate_by_name=True, frozen=False, defer_build=True)

    @model_validator(mode="wrap")
    @classmethod
    def _keep_source(cls, data: Any, handler: Any) -> Any:
        src = getattr(data, "src", None)
        model = handler(data)
        if src is not None and isinstance(model, Model):
            # Kept in pydantic's private slot directly: a declared PrivateAttr would make
            # pydantic run its private-attribute set-up for every object (a third of validation).
            object.__setattr__(model, "__pydantic_private__", {"_src": src})
        return model

    @property
    def src(self) -> Path:
        """The key/index path of this object in its YAML document."""
        private = self.__pydantic_private__
        return private.get("_src", ()) if private else ()


def _one_of(data: Any, keys: tuple[str, ...], what: str) -> None:
    if not isinstance(data, dict):
        return
    present = [k for k in keys if k in data]
    if not present:
        raise PydanticCustomError("cs_missing", "{what} needs one of: {keys}", {"what": what, "keys": ", ".join(keys)})
    if len(present) > 1:
        raise PydanticCustomError(
            "cs_conflict", "{what} takes only one of: {keys}", {"what": what, "keys": ", ".join(present)}
        )


# ----------------------------------------------------------------- shared parts


class Condition(Model):
    """A checked expression (`assert`) or a Python hook (`python`), with an optional guard and message."""

    id: str | None = Field(None, description="Optional id, unique within its list.")
    when: str | None = Field(None, description="Optional guard expression; the condition applies only when it is true.")
    assert_: str | None = Field(None, alias="assert", description="The expression that must be true.")
    python: str | None = Field(None, description="A Python callable 'package.module:function' (trusted workspaces only).")
    message: str | None = Field(None, description="Error text on failure; a template with {expr} placeholders.")

    @model_validator(mode="before")
    @classmethod
    def _assert_or_python(cls, data: Any) -> Any:
        _one_of(data, ("assert", "python"), "a condition")
        return data


class FieldSpec(Model):
    """One field of a declared type: a type string plus description and constraints."""

    type: str = Field(description="A type string: str int float bool any, a declared type, list[T], dict[str, T], T | None, Literal['a', 'b'].")
    description: str | None = Field(None, description="What the field means; the LLM is told this.")
    default: Any = Field(None, description="Default value; a field with a default is optional.")
    ge: float | None = Field(None, description="Minimum (inclusive).")
    gt: float | None = Field(None, description="Minimum (exclusive).")
    le: float | None = Field(None, description="Maximum (inclusive).")
    lt: float | None = Field(None, description="Maximum (exclusive).")
    min_length: int | None = Field(None, ge=0, description="Minimum length of a string or list.")
    max_length: int | None = Field(None, ge=0, description="Maximum length of a string or list.")
    pattern: str | None = Field(None, description="A regular expression a string must match.")

    @property
    def required(self) -> bool:
        """A field is required unless it declares a default (even `default: null`)."""
        return "default" not in self.model_fields_set


class TypeDecl(Model):
    """A declared type: becomes a pydantic model at load time."""

    description: str | None = Field(None, description="What the type represents.")
    extra: Literal["forbid", "ignore"] = Field("ignore", description="What to do with fields the type does not declare.")
    fields: dict[str, FieldSpec] = Field(description="The fields of the type, by name.")


# ----------------------------------------------------------------- contract


class Act(Model):
    """How the intermediate value is computed: `assign` expressions or a Python hook."""

    assign: dict[str, str] | None = Field(None, description="Each field of `intermediate` from an expression (scope: input).")
    python: str | None = Field(None, description="A callable(input, **kwargs) -> dict | model (trusted workspaces only).")

    @model_validator(mode="before")
    @classmethod
    def _assign_or_python(cls, data: Any) -> Any:
        _one_of(data, ("assign", "python"), "act")
        assign = data.get("assign") if isinstance(data, dict) else None
        if isinstance(assign, dict):
            # `n: 3` is the expression `3`: YAML typed it, the author meant a literal.
            for key, value in list(assign.items()):
                if isinstance(value, (bool, int, float)) or value is None:
                    assign[key] = repr(value)
        return data


class Retry(Model):
    """Bounds and waits of one remedy loop."""

    tries: int = Field(5, ge=1, le=100, description="Maximum remedy attempts of one loop.")
    delay: float = Field(0.5, ge=0, description="Seconds before the first remedy attempt.")
    max_delay: float = Field(15, ge=0, description="Upper bound of any wait, in seconds.")
    jitter: float = Field(0.1, ge=0, description="Relative random spread of each wait: u in [-jitter, jitter].")
    backoff: float = Field(2, ge=1, description="Multiplier of the wait from one attempt to the next (>= 1).")
    graceful: bool = Field(False, description="An exhausted loop fails the contract without raising from the loop.")

    def wait(self, attempt: int, u: float = 0.0) -> float:
        """min(delay * backoff**(attempt-1) * (1+u), max_delay) seconds before remedy attempt `attempt` (1-based)."""
        return min(self.delay * self.backoff ** (attempt - 1) * (1 + u), self.max_delay)


class Remedy(Model):
    """Whether and how the LLM is asked to correct a failing input or output."""

    pre: bool = Field(False, description="LLM-correct an input that fails `pre`.")
    post: bool = Field(True, description="LLM-correct an output that fails type checks or `post`.")
    accumulate_errors: bool = Field(False, description="Feed every earlier error of the loop to each retry, not only the last.")
    retry: Retry = Field(default_factory=Retry, description="Retry bounds and waits.")


class LLMSettings(Model):
    """The live model and its request parameters (any litellm model string).

    The engine owns the transport (timeout, retries, where and with which key a request goes), so
    those are its own settings here; the other keys are the documented provider parameters, passed
    to litellm as written. Anything else is an error: a typo such as `xapi_base:` would otherwise
    send the requests, and the key, to the provider's public endpoint instead of the server meant.
    """

    # An unknown key here is an error (SCH102 at error level), not the usual warning.
    UNKNOWN_KEYS: ClassVar[str] = "error"
    # Keys litellm or the OpenAI client would read as transport settings, and what to write instead.
    TRANSPORT_KEYS: ClassVar[dict[str, str]] = {
        "timeout": "the engine's own timeout is `timeout_s` (it bounds the whole reply)",
        "request_timeout": "the engine's own timeout is `timeout_s` (it bounds the whole reply)",
        "num_retries": "transport retries belong to the engine, which counts and traces each one",
        "max_retries": "transport retries belong to the engine, which counts and traces each one",
        "retry_strategy": "transport retries belong to the engine, which counts and traces each one",
        "fallbacks": "a call goes to the one model named by `model`",
        "api_key": "never write a key in a file: name its environment variable in `api_key_env`",
        "base_url": "the server is `api_base`",
        "custom_llm_provider": "the provider is the prefix of `model` (e.g. openai/...)",
        "stream": "the engine reads each reply whole",
        "n": "the engine reads one reply per request",
        "client": "the engine makes the HTTP client",
        "http_client": "the engine makes the HTTP client",
        "mock_response": "offline replies are `scenarios:` (contractstudio test)",
    }

    model: str | None = Field(None, description="A litellm model string, e.g. openai/gpt-4o-mini.")
    temperature: float | None = Field(None, ge=0, le=2, description="Sampling temperature.")
    max_tokens: int | None = Field(None, ge=1, description="Maximum completion tokens.")
    timeout_s: float = Field(30, gt=0, description="Request timeout in seconds: bounds the whole reply, not each read.")
    api_base: str | None = Field(None, description="Base URL of an OpenAI-compatible server (away from loopback, only in a trusted folder).")
    api_key_env: str | None = Field(None, description="Name of the environment variable that holds the API key (never the key); "
                                    "a variable other than the provider's usual one needs a trusted folder.")
    # Provider parameters, passed to litellm as written.
    top_p: float | None = Field(None, ge=0, le=1, description="Nucleus sampling: the probability mass to sample from.")
    top_k: int | None = Field(None, ge=1, description="Sample from the k most likely tokens (providers that support it).")
    seed: int | None = Field(None, description="Seed for reproducible sampling (providers that support it).")
    stop: str | list[str] | None = Field(None, description="Text(s) at which the model stops.")
    presence_penalty: float | None = Field(None, ge=-2, le=2, description="Penalty for tokens already present.")
    frequency_penalty: float | None = Field(None, ge=-2, le=2, description="Penalty by how often a token appeared.")
    response_format: dict[str, Any] | None = Field(None, description="e.g. {type: json_object} for providers with a JSON mode.")
    reasoning_effort: Literal["minimal", "low", "medium", "high"] | None = Field(None, description="Reasoning models: how hard to think.")
    user: str | None = Field(None, description="An end-user id passed to the provider.")
    api_version: str | None = Field(None, description="API version (Azure OpenAI).")
    extra_headers: dict[str, str] | None = Field(None, description="HTTP headers added to each request (never a credential: YML007).")
    extra_body: dict[str, Any] | None = Field(None, description="Fields added to the JSON body of each request.")

    @property
    def provider_params(self) -> dict[str, Any]:
        """The provider parameters that are set, as litellm takes them."""
        own = ("model", "timeout_s", "api_base", "api_key_env")
        return {k: v for k in type(self).model_fields if k not in own and (v := getattr(self, k)) is not None}


class Example(Model):
    """An input the studio offers when stepping through a call."""

    name: str = Field(description="Short name shown in the studio.")
    description: str | None = Field(None, description="What the example shows.")
    input: Any = Field(description="The input value.")


STAGE_NAMES = Literal["input", "pre", "act", "generate", "post", "forward", "finalize"]


class ExpectPerf(Model):
    """What a scenario expects of the call's perf stats."""

    stages: list[STAGE_NAMES] | None = Field(None, description="The stages that ran, in order (each once, however often).")
    percent_total: float | None = Field(None, description="The sum of every stage's and the overhead's percentage (always 100).")


class Expect(Model):
    """What a scenario expects of its call."""

    successful: bool | None = Field(None, description="Whether the contract succeeds.")
    llm_calls: int | None = Field(None, ge=0, description="Exact number of LLM calls.")
    remedy_attempts: int | None = Field(None, ge=0, description="Exact number of remedy attempts.")
    output: dict[str, Any] | None = Field(None, description="Fields the final output must have (a subset match).")
    raises: bool | None = Field(None, description="Whether the call raises ContractViolation (on_failure: raise).")
    remedy_errors: list[list[str]] | None = Field(
        None, description="The errors each remedy request sends the model, in order; each text is part of the error sent.")
    remedy_waits: list[float] | None = Field(
        None, description="Seconds waited before each remedy attempt, in order (computed, not slept, in tests).")
    errors: list[str] | None = Field(None, description="Every error the call records, in order; each text is part of the error.")
    perf: ExpectPerf | None = Field(None, description="The call's perf stats: stages that ran, percentages.")


class Scenario(Model):
    """An offline contract test: scripted raw LLM replies, one per LLM call."""

    name: str = Field(description="Scenario name.")
    description: str | None = Field(None, description="What the scenario checks.")
    input: Any = Field(description="The input value.")
    responses: list[str] = Field(description="Raw LLM replies, one per LLM call, in order.")
    expect: Expect = Field(default_factory=Expect, description="What must hold after the call.")


class Contract(Model):
    """kind: contract — one contracted LLM call."""

    kind: Literal["contract"] = Field(description="Always `contract`.")
    name: str = Field(description="Contract name.")
    description: str | None = Field(None, description="What the contract is for.")
    prompt: str = Field(description="Fixed task description; per-call data belongs in the input.")
    types: dict[str, TypeDecl] = Field(default_factory=dict, description="Declared types by name.")
    input: str = Field(description="The input type.")
    intermediate: str | None = Field(None, description="The type that act returns.")
    output: str = Field(description="The output type.")
    pre: list[Condition] = Field(default_factory=list, description="Pre-conditions (scope: input).")
    act: Act | None = Field(None, description="Computes the intermediate value (scope: input).")
    post: list[Condition] = Field(default_factory=list, description="Post-conditions (scope: output, input, act).")
    remedy: Remedy = Field(default_factory=Remedy, description="Remedy settings.")
    on_failure: Literal["fallback", "raise"] = Field(
        "raise", description="fallback returns `fallback`; raise raises ContractViolation. Default: fallback when a "
        "`fallback:` is declared, raise when none is.")
    fallback: dict[str, Any] | None = Field(None, description="The output returned when the contract fails; values are expressions.")
    llm: LLMSettings = Field(default_factory=LLMSettings, description="The live model.")
    examples: list[Example] = Field(default_factory=list, description="Inputs offered in the studio.")
    scenarios: list[Scenario] = Field(default_factory=list, description="Offline contract tests.")

    @model_validator(mode="after")
    def _failure_follows_fallback(self) -> Contract:
        # Not written: a declared fallback is what failure returns; without one, failure raises.
        if "on_failure" not in self.model_fields_set and self.fallback is not None:
            self.on_failure = "fallback"
            self.model_fields_set.discard("on_failure")
        return self


# ----------------------------------------------------------------- agent


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


# ----------------------------------------------------------------- pipeline


class ActionContract(Model):
    """The Requires / Ensures of an action over the pipeline state and the step's keys."""

    description: str | None = Field(None, description="What the action does.")
    requires_state: list[str] = Field(default_factory=list, description="State fields that must be set before the step.")
    requires_any_state: list[list[str]] = Field(default_factory=list, description="One field of each group must be set.")
    requires_step: list[str] = Field(default_factory=list, description="Keys the step itself must carry; 'a|b' means one of them, "
                                     "'settings.k' a key of the pipeline's settings.")
    ensures_state: list[str] = Field(default_factory=list, description="State fields set by the step.")


class Router(Model):
    """A model output contract: the prefixes a router prompt can emit."""

    description: str | None = Field(None, description="What the router decides.")
    prefixes: list[str] = Field(description="The prefixes the router prompt can emit, in order.")


class Step(Model):
    """A pipeline step; keys besides id/action/next/end are its configuration (`raw`)."""

    model_config = ConfigDict(extra="allow")
    id: str = Field(description="Step id, unique in the pipeline.")
    action: str = Field(description="A built-in action or one declared under `actions:`.")
    next: str | None = Field(None, description="The step that follows.")
    end: bool = Field(False, description="The pipeline may end after this step.")

    @property
    def raw(self) -> dict[str, Any]:
        """The step's configuration keys (prompt, on_*, *_prefix, ...)."""
        return dict(self.model_extra or {})


class Pipeline(Model):
    """kind: pipeline — steps with action contracts and prefix routing."""

    kind: Literal["pipeline"] = Field(description="Always `pipeline`.")
    name: str = Field(description="Pipeline name.")
    description: str | None = Field(None, description="What the pipeline does.")
    entry_step_id: str | None = Field(None, description="The first step (PIP101 when missing).")
    catalog: Literal["contractstudio", "localai-rag"] = Field(
        "contractstudio", description="The built-in actions the steps use: ContractStudio's (the ADR's) or LocalAI-RAG's.")
    settings: dict[str, Any] = Field(default_factory=dict, description="Named values that steps refer to with `<key>_from_settings` "
                                     "and that actions read (`requires_step: [settings.<key>]`).")
    inputs: list[str] = Field(default_factory=list, description="State fields set before the first step.")
    routers: dict[str, Router] = Field(default_factory=dict, description="Known router prompts and the prefixes they emit.")
    actions: dict[str, ActionContract] = Field(default_factory=dict, description="Contracts of custom actions; built-ins need none.")
    steps: list[Step] = Field(description="The steps, in any order.")


# ----------------------------------------------------------------- tools


class ToolDecl(Model):
    """A tool function guarded by contracts (seed 003)."""

    name: str = Field(description="Tool name, unique in the file.")
    description: str | None = Field(None, description="What the tool does (told to the LLM).")
    params: dict[str, FieldSpec] = Field(default_factory=dict, description="Parameters by name.")
    preconditions: list[Condition] = Field(default_factory=list, description="Scope: the parameters by name.")
    postconditions: list[Condition] = Field(default_factory=list, description="Also run before execution (seed 003).")
    handler: str | None = Field(None, description="Optional implementation 'module:function', run when every contract passes.")


class ToolSet(Model):
    """kind: tools — tool functions with preconditions / postconditions."""

    kind: Literal["tools"] = Field(description="Always `tools`.")
    name: str = Field(description="Name of the tool set.")
    description: str | None = Field(None, description="What the tools are for.")
    tools: list[ToolDecl] = Field(default_factory=list, description="The tools.")


Document = Contract | Agent | Pipeline | ToolSet
KINDS: dict[str, type[Model]] = {"contract": Contract, "agent": Agent, "pipeline": Pipeline, "tools": ToolSet}
