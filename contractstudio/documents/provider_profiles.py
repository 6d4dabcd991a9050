"""What each provider's structured-output mode can enforce while decoding, with the source of each fact.

Pure data and a name lookup: no litellm import (the analyzer classifies clauses for a model it never calls).
The compiler (structured_outputs.py) reads these profiles; docs/format.md ("Structured outputs") repeats them
for authors with the same sources. Where the sources disagree, or a limit was raised since, the profile keeps
the stricter value: a schema that falls back unnecessarily costs a re-ask at worst, a refused one costs a request.
"""

from __future__ import annotations

from dataclasses import dataclass

from contractstudio.providers import provider_of

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


@dataclass(frozen=True)
class ProviderProfile:
    """What one provider's structured-output mode enforces while decoding (and where that fact comes from)."""

    name: str  # "openai", "anthropic", "gemini", "guided" (vLLM / llama.cpp / Ollama) or "none"
    strict: bool  # the request carries a strict flag (OpenAI's json_schema.strict, Anthropic's strict tool use)
    source: str  # URL / document of the facts below
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

    def removes(self, keyword: str) -> str | None:
        """Why this provider cannot be sent `keyword` (None: it can)."""
        return next((why for k, why in self.unsupported if k == keyword), None)


def _all(keys: tuple[str, ...], reason: str) -> tuple[tuple[str, str], ...]:
    return tuple((k, reason) for k in keys)


OPENAI = ProviderProfile(
    name="openai", strict=True, source=OPENAI_SOURCE, all_required=True, closed_objects=True, object_root=True,
    needs_types=True,
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
    name="guided", strict=False, source=GUIDED_SOURCE, int_only_bounds=True,
    unsupported=(
        ("uniqueItems", "grammar-based decoding (llama.cpp, Ollama, vLLM) cannot express uniqueItems"),
        ("multipleOf", "grammar-based decoding (llama.cpp, Ollama, vLLM) does not support multipleOf"),
        ("format", "grammar-based decoding supports only some string formats; the contract's type checks it"),
    ),
)

NONE = ProviderProfile(name="none", strict=False, source="no structured-output mode is known for this model",
                       schema_mode=False, json_mode=False)

PROFILES = {p.name: p for p in (OPENAI, ANTHROPIC, GEMINI, GUIDED, NONE)}

_GUIDED_PROVIDERS = ("hosted_vllm", "vllm", "ollama", "ollama_chat", "llamafile", "lm_studio", "llama_cpp")
_OPENAI_NAMES = ("gpt-4o", "gpt-4.1", "gpt-5", "o1", "o3", "o4")


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
            return GUIDED
        return OPENAI if _openai_schema_model(name.split("/", 1)[1]) else _JSON_ONLY_OPENAI
    if provider == "openai" and _openai_schema_model(name):
        return OPENAI
    if provider == "openai" and name.removeprefix("ft:").startswith(("gpt-3.5", "gpt-4")):
        return _JSON_ONLY_OPENAI
    return NONE


def openai_compatible_server(model: str | None, api_base: str | None) -> bool:
    """Whether `model` at `api_base` is an OpenAI-compatible server that is not OpenAI (`openai/...` at another
    api_base): its `response_format` reaches it as sent, and its own decoder enforces a schema, so `auto` sends one
    whatever litellm knows of the model's name (runtime/structured.py tries the request shapes such servers take)."""
    name = (model or "").strip().lower()
    return bool(api_base) and name.startswith("openai/") and profile_for(model, api_base).name == "guided"


def _openai_schema_model(bare: str) -> bool:
    """OpenAI models with Structured Outputs: gpt-4o-2024-08-06 and later, gpt-4o-mini, gpt-4.1, gpt-5, o-series (or one fine-tuned)."""
    bare = bare.removeprefix("ft:")
    if bare.startswith("gpt-4o-2024-05-13") or bare == "gpt-4o-2024-05-13":
        return False
    return bare.startswith(_OPENAI_NAMES)


# Older OpenAI chat models: JSON mode only (no json_schema response format).
_JSON_ONLY_OPENAI = ProviderProfile(name="openai", strict=False, source=OPENAI_SOURCE, schema_mode=False)


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
