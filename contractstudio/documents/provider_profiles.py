"""One structured-output profile per (provider, server shape), and the one choice of the mode a call asks in.

A profile (as pydantic-ai's `ModelProfile`) says what the model's structured-output mode enforces while decoding,
with the source of each fact, the mode `auto` means for it, whether litellm's capability data decides that at run
time, and the request shapes a schema may take; its schema transform is the compiler (structured_outputs.py), which
reads these facts. `choose_mode` is the one decision of the mode: the analyzer (CON131, hover, `check -v`,
`schema --model`) and the runtime (runtime/structured.py) both ask it, the runtime with what it learnt at run time.

Pure data and a name lookup: no litellm import (the analyzer classifies clauses for a model it never calls).
docs/format.md ("Structured outputs") repeats the profiles for authors with the same sources. Where the sources
disagree, or a limit was raised since, the profile keeps the stricter value: a schema that falls back unnecessarily
costs a re-ask at worst, a refused one costs a request.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import lru_cache
from typing import Literal, get_args

from contractstudio.providers import provider_of

Mode = Literal["json_schema", "json_object", "off"]  # what a request asks for
Requested = Literal["auto", "json_schema", "json_object", "off"]  # what a contract (or eval's --structured) may ask
MODES: tuple[Mode, ...] = get_args(Mode)
REQUESTED: tuple[Requested, ...] = get_args(Requested)
# The request shapes an OpenAI-compatible server may take a schema in, in the order they are tried: OpenAI's own
# (vLLM, llama.cpp's server, LM Studio, Ollama's /v1), then llama-cpp-python's (its server answers OpenAI's with
# HTTP 500 "Input should be 'text' or 'json_object'").
SHAPES = ("json_schema", "json_object_schema")

OPENAI_SOURCE = "https://platform.openai.com/docs/guides/structured-outputs#supported-schemas"
ANTHROPIC_SOURCE = "https://docs.claude.com/en/docs/build-with-claude/structured-outputs#json-schema-limitations"
GEMINI_SOURCE = ("https://ai.google.dev/gemini-api/docs/structured-output#json-schema-support "
                 "and https://ai.google.dev/api/caching#Schema")
GUIDED_SOURCE = ("https://github.com/ggml-org/llama.cpp/blob/master/grammars/README.md "
                 "(JSON Schema to grammar: known limitations), used by llama.cpp's server and Ollama's `format`")

# The keywords the compiler reasons about; anything else in a schema is removed and left to the contract's type.
NUMBER_BOUNDS = ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf")
LENGTH_BOUNDS = ("minLength", "maxLength")
ITEM_BOUNDS = ("minItems", "maxItems", "uniqueItems")


@dataclass(frozen=True, slots=True)
class Support:
    """What a model can be asked for, by litellm's capability data at run time (a scripted model: what it models)."""

    schema: bool = False
    json_mode: bool = False


@dataclass(frozen=True)
class ProviderProfile:
    """What one provider's structured-output mode enforces while decoding (and where that fact comes from), the mode
    `auto` asks in, and who decides it at run time."""

    name: str  # "openai", "anthropic", "gemini", "guided" (vLLM / llama.cpp / Ollama) or "none"
    strict: bool  # the request carries a strict flag (OpenAI's json_schema.strict, Anthropic's strict tool use)
    source: str  # URL / document of the facts below
    # What `auto` asks for by these facts alone (what the analyzer shows); at run time litellm's capability answer
    # decides instead where `asks_litellm` (the runtime sends what litellm says the model has).
    default_mode: Mode = "json_schema"
    asks_litellm: bool = True
    request_shapes: tuple[str, ...] = ()  # an OpenAI-compatible server: the shapes a schema is sent in (SHAPES)
    schema_mode: bool = True  # takes a JSON Schema and constrains decoding to it
    json_mode: bool = True  # has a "reply with a JSON object" mode
    all_required: bool = False  # every property must be in `required` (optional = required + nullable)
    closed_objects: bool = False  # every object must say additionalProperties: false (no dict[str, T])
    object_root: bool = False  # the root must be an object
    recursion: bool = True  # a $ref may reach itself
    inline_refs: bool = False  # $ref / $defs are not understood: references are inlined
    max_depth: int | None = None  # nested object levels
    max_properties: int | None = None  # properties in the whole schema
    max_optional: int | None = None  # optional properties in the whole schema
    max_unions: int | None = None  # properties that are unions (anyOf / type lists)
    max_enum_values: int | None = None  # enum values in the whole schema (every enum's values together)
    max_schema_chars: int | None = None  # characters of property names, definition names, enum and const values
    large_enum: tuple[int, int] | None = None  # (values, characters): an enum of more values has at most that many chars
    # Keywords removed before sending, each with the plain reason an author is shown (pairs: the profile stays hashable).
    unsupported: tuple[tuple[str, str], ...] = ()
    needs_types: bool = False  # every value needs a type: a field of type `any` cannot be sent
    int_only_bounds: bool = False  # numeric bounds only on integers (llama.cpp)
    min_items_max: int | None = None  # minItems above this is not supported (Anthropic: 0 or 1)
    simple_patterns_only: bool = False  # no backreferences, look-around or \b (Anthropic)
    # Replies stream (and a clause broken on a prefix stops them early: runtime/streaming.py) where the streamed path
    # is verified against the provider's stream shape and its faults (tests/test_faults.py, tests/test_live_streaming.py):
    # OpenAI and OpenAI-compatible servers. Other providers get whole replies, checked after they end.
    streams: bool = False
    # Modes whose replies do not stream: OpenAI may refuse a strict schema, and litellm's stream reader drops the
    # refusal (`delta.refusal`), so the fallback on a refusal would never happen; such a reply comes whole.
    whole_in: tuple[Mode, ...] = ()

    def removes(self, keyword: str) -> str | None:
        """Why this provider cannot be sent `keyword` (None: it can)."""
        return next((why for k, why in self.unsupported if k == keyword), None)


def _all(keys: tuple[str, ...], reason: str) -> tuple[tuple[str, str], ...]:
    return tuple((k, reason) for k in keys)


OPENAI = ProviderProfile(
    name="openai", strict=True, source=OPENAI_SOURCE, all_required=True, closed_objects=True, object_root=True,
    needs_types=True, streams=True, whole_in=("json_schema",),
    # The guide (OPENAI_SOURCE, "Objects have limitations on nesting depth and size", read 2026) now states: up to
    # 5,000 object properties with up to 10 levels of nesting; up to 1,000 enum values across all enum properties;
    # property names, definition names, enum and const values of at most 120,000 characters together; and for one
    # string enum of more than 250 values, at most 15,000 characters of values. Where the API was seen to enforce
    # less, the lower figure is kept (a schema refused costs a 400 and a fallback on every call; one kept back costs
    # the decoder's help at worst): 5 levels and 100 properties, the launch limits, which the API still enforced in
    # 2025 ("6 levels of nesting exceeds limit of 5": https://github.com/tidyverse/ellmer/issues/671), and 500 enum
    # values ("Expected at most 500 enum values in total within a single schema":
    # https://community.openai.com/t/500-enums-limitation-in-structured-output/974416).
    max_depth=5, max_properties=100, max_enum_values=500, max_schema_chars=120_000, large_enum=(250, 15_000),
    unsupported=(
        *_all(LENGTH_BOUNDS, "OpenAI strict mode does not support string length bounds (minLength / maxLength)"),
        ("uniqueItems", "OpenAI strict mode does not support uniqueItems"),
        ("format", "only some string formats are supported by OpenAI strict mode; the contract's type checks it"),
    ),
)

ANTHROPIC = ProviderProfile(
    name="anthropic", strict=True, source=ANTHROPIC_SOURCE, closed_objects=True, object_root=True, recursion=False,
    max_optional=24, max_unions=16, min_items_max=1, simple_patterns_only=True,
    unsupported=(
        *_all(NUMBER_BOUNDS, "Anthropic structured outputs do not support numerical constraints "
                              "(minimum, maximum, multipleOf)"),
        *_all(LENGTH_BOUNDS, "Anthropic structured outputs do not support string length bounds (minLength / maxLength)"),
        ("maxItems", "Anthropic structured outputs do not support maxItems"),
        ("uniqueItems", "Anthropic structured outputs do not support uniqueItems"),
        ("format", "only some string formats are supported by Anthropic structured outputs; the contract's type checks it"),
    ),
)

GEMINI = ProviderProfile(
    name="gemini", strict=False, source=GEMINI_SOURCE, recursion=False, inline_refs=True, needs_types=True,
    unsupported=(
        *_all(LENGTH_BOUNDS, "Gemini's response schema (an OpenAPI 3.0 subset) ignores string length bounds"),
        ("pattern", "Gemini's response schema (an OpenAPI 3.0 subset) ignores pattern"),
        ("exclusiveMinimum", "Gemini's response schema (an OpenAPI 3.0 subset) has only inclusive minimum / maximum"),
        ("exclusiveMaximum", "Gemini's response schema (an OpenAPI 3.0 subset) has only inclusive minimum / maximum"),
        ("multipleOf", "Gemini's response schema (an OpenAPI 3.0 subset) ignores multipleOf"),
        ("uniqueItems", "Gemini's response schema (an OpenAPI 3.0 subset) ignores uniqueItems"),
        ("additionalProperties", "Gemini's response schema (an OpenAPI 3.0 subset) has no additionalProperties"),
        ("format", "Gemini's response schema supports only the enum and date-time formats; the contract's type checks it"),
    ),
)

GUIDED = ProviderProfile(
    # A vLLM or Ollama route of litellm's (hosted_vllm/, ollama_chat/): under `auto` the runtime sends a schema only
    # when litellm knows its model to have response schemas, which a local model's own name rarely is; the analyzer
    # cannot ask litellm, so it claims no decoder the call may not have (`off`: the type is checked after the reply).
    name="guided", strict=False, source=GUIDED_SOURCE, int_only_bounds=True, default_mode="off",
    unsupported=(
        ("uniqueItems", "grammar-based decoding (llama.cpp, Ollama, vLLM) cannot express uniqueItems"),
        ("multipleOf", "grammar-based decoding (llama.cpp, Ollama, vLLM) does not support multipleOf"),
        ("format", "grammar-based decoding supports only some string formats; the contract's type checks it"),
    ),
)

# `openai/...` at an api_base that is not OpenAI's: an OpenAI-compatible server, whose `response_format` reaches it as
# sent and whose own decoder enforces a schema, so `auto` sends one whatever litellm knows of the model's name (in
# one of SHAPES; runtime/structured.py learns which one each server takes).
OPENAI_COMPATIBLE = replace(GUIDED, default_mode="json_schema", asks_litellm=False, request_shapes=SHAPES, streams=True)

NONE = ProviderProfile(name="none", strict=False, source="no structured-output mode is known for this model",
                       schema_mode=False, json_mode=False, default_mode="off")

PROFILES = {p.name: p for p in (OPENAI, ANTHROPIC, GEMINI, GUIDED, NONE)}

_GUIDED_PROVIDERS = ("hosted_vllm", "vllm", "ollama", "ollama_chat", "llamafile", "lm_studio", "llama_cpp")
_OPENAI_NAMES = ("gpt-4o", "gpt-4.1", "gpt-5", "o1", "o3", "o4")


@lru_cache(maxsize=256)  # pure, and asked several times per call (the mode, the shapes, whether replies stream)
def profile_for(model: str | None, api_base: str | None = None) -> ProviderProfile:
    """The structured-output profile of a litellm model string (its prefix or well-known name); never imports litellm.

    `openai/...` with an `api_base` that is not OpenAI's is an OpenAI-compatible server (vLLM, llama.cpp,
    Ollama, LM Studio): its `response_format` is served by grammar-guided decoding.
    """
    name = (model or "").strip().lower()
    provider = provider_of(name)  # the one answer (contractstudio/providers.py); the server shape is decided here
    if provider in _GUIDED_PROVIDERS:
        return GUIDED
    if provider == "anthropic" or name.startswith(("bedrock/anthropic.", "vertex_ai/claude")):
        return ANTHROPIC
    if provider in ("gemini", "vertex_ai", "vertex_ai_beta"):
        return GEMINI
    if provider in ("openai", "azure") and "/" in name:
        if api_base and "api.openai.com" not in api_base and ".openai.azure.com" not in api_base:
            return OPENAI_COMPATIBLE if provider == "openai" else GUIDED
        return OPENAI if _openai_schema_model(name.split("/", 1)[1]) else _JSON_ONLY_OPENAI
    if provider == "openai" and _openai_schema_model(name):
        return OPENAI
    if provider == "openai" and name.removeprefix("ft:").startswith(("gpt-3.5", "gpt-4")):
        return _JSON_ONLY_OPENAI
    return NONE


def openai_compatible_server(model: str | None, api_base: str | None) -> bool:
    """Whether `model` at `api_base` is an OpenAI-compatible server that is not OpenAI (`openai/...` at another
    api_base): its profile takes a schema in request shapes (runtime/structured.py tries them)."""
    return bool(profile_for(model, api_base).request_shapes)


@dataclass(frozen=True, slots=True)
class Choice:
    """The mode one call's output requests ask in, for one profile, and why it is not the one asked for."""

    mode: Mode
    profile: ProviderProfile
    fallback_reason: str | None = None  # why the mode is lower than asked (or than `auto`'s best)
    note: str | None = None  # why no schema although nothing fell back (the author's own response_format)
    json_fallback: bool = True  # a schema the compiler cannot send falls back to JSON mode (the model has it)


@lru_cache(maxsize=256)  # pure (its answer a frozen Choice): asked at every call's first output request
def choose_mode(requested: str, model: str | None, api_base: str | None = None, *, written: bool = False,
                support: Support | None = None, refused_shapes: bool = False) -> Choice:
    """The one choice of the structure a call asks for (the analyzer asks it with the contract alone, the runtime
    with what it knows then).

    `written`: the contract has its own `llm.response_format`, sent as written (no schema is compiled). `support`:
    litellm's capability answer at run time (None: the profile's own `default_mode` stands for it).
    `refused_shapes`: an OpenAI-compatible server refused every request shape earlier in this process.
    """
    profile = profile_for(model, api_base)
    if written:
        return Choice("off", profile, note="llm.response_format is sent as written")
    if requested in ("off", "json_object"):
        return Choice("off" if requested == "off" else "json_object", profile)
    no_schema = f"{model or 'no model'} has no response-schema mode"
    if requested == "json_schema":  # the author's: asked whatever litellm says (a local server it has no data on)
        return Choice("json_schema", profile) if profile.name != "none" else Choice("off", profile, no_schema)
    if support is None or not profile.asks_litellm:  # the profile decides (an OpenAI-compatible server: its decoder)
        schema = profile.default_mode == "json_schema" and not refused_shapes
        json_mode = profile.default_mode != "off" if support is None else support.json_mode
    else:
        schema, json_mode = support.schema and profile.name != "none", support.json_mode
    if schema:
        return Choice("json_schema", profile, json_fallback=json_mode)
    if support is None and profile.schema_mode and profile.asks_litellm:
        return Choice(profile.default_mode, profile, note="litellm's model data decides at run time whether a schema is sent")
    if refused_shapes:
        no_schema = f"{api_base} refused every request shape earlier in this session"
    return Choice("json_object" if json_mode and profile.json_mode else "off", profile, no_schema)


def _openai_schema_model(bare: str) -> bool:
    """OpenAI models with Structured Outputs: gpt-4o-2024-08-06 and later, gpt-4o-mini, gpt-4.1, gpt-5, o-series (or one fine-tuned)."""
    bare = bare.removeprefix("ft:")
    if bare.startswith("gpt-4o-2024-05-13") or bare == "gpt-4o-2024-05-13":
        return False
    return bare.startswith(_OPENAI_NAMES)


# Older OpenAI chat models: JSON mode only (no json_schema response format).
_JSON_ONLY_OPENAI = ProviderProfile(name="openai", strict=False, source=OPENAI_SOURCE, schema_mode=False,
                                    default_mode="json_object", streams=True)


def facts_table() -> str:
    """The profiles as a Markdown table for the docs (docs/rules.md is generated with it): what each provider's
    decoder cannot enforce and where that fact comes from."""
    rows = ["| provider | models (litellm prefix) | removed, checked after the reply | not representable (falls back) | source |",
            "|---|---|---|---|---|"]
    models = {"openai": "`openai/` gpt-4o(-mini), gpt-4.1, gpt-5, o1/o3/o4", "anthropic": "`anthropic/`, `claude-*`",
              "gemini": "`gemini/`, `vertex_ai/`", "guided": "`hosted_vllm/`, `ollama/`, `ollama_chat/`, `openai/` with "
              "a non-OpenAI `api_base`"}
    for p in (OPENAI, ANTHROPIC, GEMINI, GUIDED):
        removed = sorted(dict.fromkeys(k for k, _ in p.unsupported))
        extra = []
        if p.int_only_bounds:
            extra.append("bounds on non-integers")
        if p.min_items_max is not None:
            extra.append(f"minItems above {p.min_items_max}")
        if p.simple_patterns_only:
            extra.append("patterns with \\b")
        limits = []
        if p.object_root:
            limits.append("a non-object output")
        if p.closed_objects or p.inline_refs:
            limits.append("dict[str, T] fields")
        if not p.recursion:
            limits.append("recursive types")
        if p.needs_types:
            limits.append("`any` fields")
        for value, what in ((p.max_depth, "levels of nested objects"), (p.max_properties, "properties"),
                            (p.max_optional, "optional fields"), (p.max_unions, "union fields"),
                            (p.max_enum_values, "enum values"),
                            (p.max_schema_chars, "characters of property names, definition names, enum and const values")):
            if value is not None:
                limits.append(f"more than {value:,} {what}")
        if p.large_enum is not None:
            limits.append(f"an enum of more than {p.large_enum[0]} values with more than {p.large_enum[1]:,} characters")
        cell = ", ".join(f"`{k}`" for k in removed) + (", " + ", ".join(extra) if extra else "")
        rows.append(f"| {p.name} | {models[p.name]} | {cell} | {', '.join(limits) or '-'} | {p.source} |")
    return "\n".join(rows)
