"""The model of `kind: contract`: types, act, remedies, llm settings, examples and scenarios."""

from __future__ import annotations

from typing import Any, ClassVar, Literal

from pydantic import Field, model_validator

from contractstudio.documents.base import Condition, Model, TypeDecl, _one_of
from contractstudio.documents.provider_profiles import Requested


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
    api_base: str | None = Field(None, description="Base URL of an OpenAI-compatible server "
                                 "(away from loopback, only in a trusted folder).")
    api_key_env: str | None = Field(None, description="Name of the environment variable that holds the API key (never the key); "
                                    "a variable other than the provider's usual one needs a trusted folder.")
    structured_output: Requested = Field(
        "auto", description="How the reply's structure is asked for: the output type's JSON Schema (json_schema), JSON mode "
        "(json_object), the prompt alone (off), or auto: the best the model supports. A `response_format` written here wins.")
    # Provider parameters, passed to litellm as written.
    top_p: float | None = Field(None, ge=0, le=1, description="Nucleus sampling: the probability mass to sample from.")
    top_k: int | None = Field(None, ge=1, description="Sample from the k most likely tokens (providers that support it).")
    seed: int | None = Field(None, description="Seed for reproducible sampling (providers that support it).")
    stop: str | list[str] | None = Field(None, description="Text(s) at which the model stops.")
    presence_penalty: float | None = Field(None, ge=-2, le=2, description="Penalty for tokens already present.")
    frequency_penalty: float | None = Field(None, ge=-2, le=2, description="Penalty by how often a token appeared.")
    response_format: dict[str, Any] | None = Field(None, description="Sent as written, instead of what `structured_output` "
                                                   "would send: e.g. {type: json_object} for a provider litellm does not know.")
    reasoning_effort: Literal["minimal", "low", "medium", "high"] | None = Field(None, description="Reasoning models: how hard to think.")
    user: str | None = Field(None, description="An end-user id passed to the provider.")
    api_version: str | None = Field(None, description="API version (Azure OpenAI).")
    extra_headers: dict[str, str] | None = Field(None, description="HTTP headers added to each request (never a credential: YML007).")
    extra_body: dict[str, Any] | None = Field(None, description="Fields added to the JSON body of each request.")

    @property
    def provider_params(self) -> dict[str, Any]:
        """The provider parameters that are set, as litellm takes them."""
        own = ("model", "timeout_s", "api_base", "api_key_env", "structured_output")
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
    output: dict[str, Any] | None = Field(None, description="Fields the final output must have (a subset match: objects by key, "
                                                           "also inside lists; a list matches item by item, same length).")
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
    stream: bool = Field(False, description="Stream each reply in pieces the size of a model's tokens, as a live model "
                         "does: a clause its prefix already breaks stops it early, offline.")
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
    json_reply: Literal["lenient", "strict"] = Field(
        "lenient", description="How a reply is read: lenient takes the JSON out of a ``` fence or of prose around it; "
        "strict takes only a reply that is one JSON document (blank lines around it aside) and remedies any other "
        "with the reason (seed 004's strict JSON contract).")
    examples: list[Example] = Field(default_factory=list, description="Inputs offered in the studio.")
    scenarios: list[Scenario] = Field(default_factory=list, description="Offline contract tests.")

    @model_validator(mode="after")
    def _failure_follows_fallback(self) -> Contract:
        # Not written: a declared fallback is what failure returns; without one, failure raises.
        if "on_failure" not in self.model_fields_set and self.fallback is not None:
            self.on_failure = "fallback"
            self.model_fields_set.discard("on_failure")
        return self
