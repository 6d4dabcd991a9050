"""Asking for structure: which mode a call's requests use, the exact `response_format` they send, and the one fallback.

The schema itself is compiled by documents/structured_outputs.py (pure: which keywords a provider enforces, which
stay with the engine); this module decides, per call, from the contract's `llm.structured_output` (or eval's
`--structured`), what the model says it supports, and what a replayed trace recorded. Every keyword the compiler
removed is still checked after the reply, by the same validation as ever: the output type is never weakened here.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from contractstudio.documents.structured_outputs import CompiledSchema, compile_schema, map_back

MODES = ("auto", "json_schema", "json_object", "off")
# The mode a call falls back to, once, when the provider refuses or answers 400 about the structure asked for.
NEXT_MODE = {"json_schema": "json_object", "json_object": "off"}
# Words of a 400 that is about the structure asked for (OpenAI names `response_format`/`json_schema`, Anthropic the
# tool's `input_schema`); any other 400 is the request's own fault and is reported as ever.
_ABOUT_STRUCTURE = re.compile(r"response_format|json_schema|json_object|schema|structured output|tool", re.I)
# The purposes whose reply is a value of the output type (a pre remedy's reply is an input).
_OUTPUT_PURPOSES = ("generate", "remedy_post")


@dataclass(frozen=True, slots=True)
class Support:
    """What a model can be asked for, by litellm's capability data (a scripted model: what it models)."""

    schema: bool = False
    json_mode: bool = False


@dataclass(frozen=True, slots=True)
class Structure:
    """The structure one request asks for: its mode, what goes in `response_format`, and the compiled schema."""

    mode: str = "off"
    response_format: dict[str, Any] | None = None
    compiled: CompiledSchema | None = None

    def read(self, value: Any) -> Any:
        """A parsed reply as the contract's own type sees it: optional fields sent as required-and-nullable mapped back."""
        if self.compiled is None or self.mode != "json_schema":
            return value
        return map_back(value, self.compiled)


OFF = Structure()


def model_support(model: Any) -> Support:
    """What the model (or the live model behind an eval's cache and limiter) supports; nothing when it cannot say."""
    seen = 0
    while model is not None and seen < 8:
        ask = getattr(model, "structure_support", None)
        if ask is not None:
            found = ask()
            return found if isinstance(found, Support) else Support(*found)
        model, seen = getattr(model, "inner", None), seen + 1
    return Support()


def compiled_for(model: Any) -> tuple[str, str | None]:
    """The model string and `api_base` a schema is compiled for (a scripted model's `stands_for`, else its name):
    `openai/...` at a server that is not OpenAI's is an OpenAI-compatible server, with another profile."""
    name = str(getattr(model, "stands_for", None) or model.name)
    inner, seen = model, 0
    while inner is not None and seen < 8 and not hasattr(inner, "api_base"):  # the live model behind eval's layers
        inner, seen = getattr(inner, "inner", None), seen + 1
    return name, getattr(inner, "api_base", None)


def requested_mode(plan: Any, override: str | None) -> str:
    """The mode asked for: eval's `--structured`, else the contract's `llm.structured_output`; `off` under a written
    `response_format` (the author's own, sent as written)."""
    llm = getattr(plan.doc, "llm", None)
    if getattr(llm, "response_format", None) is not None:
        return "off"
    return override or str(getattr(llm, "structured_output", None) or "auto")


def schema_name(type_name: str) -> str:
    """The schema's `name` as OpenAI takes it (letters, digits, _ and -, at most 64)."""
    return (re.sub(r"[^A-Za-z0-9_-]+", "_", type_name).strip("_") or "output")[:64]


def response_format(compiled: CompiledSchema, type_name: str) -> dict[str, Any] | None:
    """The `response_format` litellm takes for a compiled schema (it translates it for each provider)."""
    if compiled.mode == "json_schema" and compiled.schema is not None:
        return {"type": "json_schema",
                "json_schema": {"name": schema_name(type_name), "schema": compiled.schema, "strict": compiled.strict}}
    if compiled.mode == "json_object":
        return {"type": "json_object"}
    return None


def build(plan: Any, target: tuple[str, str | None], mode: str, support: Support) -> Structure:
    """The structure for `mode` (auto resolved by `support`), compiled for the target (model, api_base); cached on the plan.

    `json_schema` written by the author asks whatever litellm says (a local server litellm has no data on)."""
    if mode == "off":
        return OFF
    cache: dict[tuple[Any, ...], Structure] = plan.__dict__.setdefault("_structures", {})
    key = (target, mode, support)
    found = cache.get(key)
    if found is None:
        model_name, api_base = target
        compiled = compile_schema(plan.output.json_schema(), model_name, mode,  # type: ignore[arg-type]
                                  supports_schema=support.schema if mode == "auto" else True, api_base=api_base)
        if compiled.mode == "json_object" and mode == "auto" and not support.json_mode:
            found = OFF  # no JSON mode either: the prompt alone, as before structured outputs
        else:
            found = Structure(compiled.mode, response_format(compiled, str(plan.doc.output)), compiled)
        if len(cache) < 32:
            cache[key] = found
    return found


def structure_for(st: Any, purpose: str) -> Structure:
    """The structure a request of this call asks for: a replay's recorded one, the fallback's, or the call's own."""
    if purpose not in _OUTPUT_PURPOSES:
        return OFF
    pinned = getattr(st.model, "pinned_structure", None)
    if pinned is not None:  # a replay sends the mode and schema its recording sent
        recorded = pinned()
        if recorded is not None:
            mode, model_name, api_base = recorded
            return build(st.plan, (model_name, api_base), mode, Support(schema=True, json_mode=True))
    if st.structure is None:
        mode = requested_mode(st.plan, st.options.structured_output)
        st.structure = build(st.plan, compiled_for(st.model), mode,
                             model_support(st.model) if mode == "auto" else Support(True, True))
    return st.structure


def unsendable(structure: Structure) -> str | None:
    """Why the output type could not be sent as a schema at all (the compiler fell back: a recursive type under
    Anthropic, nesting too deep under OpenAI strict), or None."""
    compiled = structure.compiled
    if compiled is None or not compiled.enforced_by("not_representable"):
        return None
    return compiled.fallback_reason


def fallback_reason(structure: Structure, *, status: int | None, message: str, refused: bool) -> str | None:
    """Why this failure is about the structure asked for (so the next mode may be tried), or None."""
    if structure.mode == "off":
        return None
    if refused:
        return f"the model refused the {structure.mode} request: {message}"
    if status == 400 and _ABOUT_STRUCTURE.search(message):
        return f"the provider answered HTTP 400 to the {structure.mode} request: {message}"
    return None


def fall_back(st: Any, structure: Structure) -> Structure:
    """The next mode after `structure`, for the rest of this call (JSON mode only where the model has it)."""
    mode = NEXT_MODE.get(structure.mode, "off")
    if mode == "json_object" and not model_support(st.model).json_mode and getattr(st.model, "pinned_structure", None) is None:
        mode = "off"
    st.structure = build(st.plan, compiled_for(st.model), mode, Support(True, True))
    return st.structure
