"""Asking for structure: which mode a call's requests use, the exact `response_format` they send, and the one fallback.

The mode is chosen by documents/provider_profiles.choose_mode, the one decision the analyzer asks too; this module
hands it what only a call knows (litellm's capability answer, the request shape each server took, a replayed trace's
recording) and compiles the schema with documents/structured_outputs.py (pure: which keywords a provider enforces,
which stay with the engine). Every keyword the compiler removed is still checked after the reply, by the same
validation as ever: the output type is never weakened here.
"""

from __future__ import annotations

import re
import threading
from dataclasses import dataclass, replace
from typing import Any

from contractstudio.documents.provider_profiles import (
    SHAPES,
    Choice,
    Mode,
    Support,
    choose_mode,
    openai_compatible_server,
)
from contractstudio.documents.structured_outputs import CompiledSchema, compile_schema, map_back

# The mode a call falls back to, once, when the provider refuses the structure asked for (a 400 about it, or any
# 4xx / 5xx naming `response_format` once every request shape was refused).
NEXT_MODE: dict[Mode, Mode] = {"json_schema": "json_object", "json_object": "off"}
# Words of a 400 that is about the structure asked for (OpenAI names `response_format`/`json_schema`, Anthropic the
# tool's `input_schema`); any other 400 is the request's own fault and is reported as ever.
_ABOUT_STRUCTURE = re.compile(r"response_format|json_schema|json_object|schema|structured output|tool", re.I)
# The purposes whose reply is a value of the output type (a pre remedy's reply is an input).
_OUTPUT_PURPOSES = ("generate", "remedy_post")

# An OpenAI-compatible server (an `openai/` model at an api_base that is not OpenAI's) takes a schema in one of its
# profile's SHAPES, tried in order. A refusal that names `response_format`, whatever its status, moves to the next
# shape in one request: never a transport retry.
SHAPE_NAMES = {"json_schema": 'OpenAI\'s shape {"type": "json_schema", "json_schema": {...}}',
               "json_object_schema": 'llama-cpp-python\'s shape {"type": "json_object", "schema": {...}}'}
NO_SHAPE = "none"  # learnt: the server refused every shape
# The shape each server (by api_base) took, learnt from its answers: after the first call, the calls of a run, an
# eval and a studio session ask each server in its own shape at once. Bounded; guarded (eval and the studio ask
# from several threads).
_LEARNT: dict[str, str] = {}
_LEARNT_LIMIT = 64
_LEARNT_LOCK = threading.Lock()


@dataclass(frozen=True, slots=True)
class Structure:
    """The structure one request asks for: its mode, what goes in `response_format`, and the compiled schema."""

    mode: Mode = "off"
    response_format: dict[str, Any] | None = None
    compiled: CompiledSchema | None = None
    shape: str | None = None  # at an OpenAI-compatible server: the request shape of the schema (one of SHAPES)
    note: str | None = None  # why this shape (the trace and the debugger's request view show it)
    unsent: str | None = None  # why the type could not be sent as a schema at all (the compiler fell back: a recursive
    # type under Anthropic, nesting too deep under OpenAI strict), or None; found once at `build`

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
            return found if isinstance(found, Support) else _support_of(tuple(found))
        model, seen = getattr(model, "inner", None), seen + 1
    return Support()


def _support_of(answer: tuple[bool, ...]) -> Support:
    """The one `Support` of a model's (schema, json_mode) answer (a scripted model's tuple): made once, not at every
    call, and then found in the plan's structure cache by identity."""
    found = _SUPPORTS.get(answer)
    if found is None:
        found = Support(*answer)
        if len(_SUPPORTS) < 16:
            _SUPPORTS[answer] = found
    return found


_SUPPORTS: dict[tuple[bool, ...], Support] = {}


def compiled_for(model: Any) -> tuple[str, str | None]:
    """The model string and `api_base` a schema is compiled for (a scripted model's `stands_for`, else its name):
    `openai/...` at a server that is not OpenAI's is an OpenAI-compatible server, with another profile."""
    name = str(getattr(model, "stands_for", None) or model.name)
    inner, seen = model, 0
    while inner is not None and seen < 8 and not hasattr(inner, "api_base"):  # the live model behind eval's layers
        inner, seen = getattr(inner, "inner", None), seen + 1
    return name, getattr(inner, "api_base", None)


def requested_mode(plan: Any, override: str | None) -> str:
    """The mode asked for: eval's `--structured`, else the contract's `llm.structured_output` (choose_mode decides
    what a written `response_format` makes of it)."""
    return override or str(getattr(getattr(plan.doc, "llm", None), "structured_output", None) or "auto")


def written_format(plan: Any) -> bool:
    """Whether the contract has its own `llm.response_format` (sent as written: no schema is compiled)."""
    return getattr(getattr(plan.doc, "llm", None), "response_format", None) is not None


def schema_name(type_name: str) -> str:
    """The schema's `name` as OpenAI takes it (letters, digits, _ and -, at most 64)."""
    return (re.sub(r"[^A-Za-z0-9_-]+", "_", type_name).strip("_") or "output")[:64]


def response_format(compiled: CompiledSchema, type_name: str, shape: str | None = None) -> dict[str, Any] | None:
    """The `response_format` litellm takes for a compiled schema (it translates it for each provider), in `shape`
    at an OpenAI-compatible server."""
    if compiled.mode == "json_schema" and compiled.schema is not None and shape == "json_object_schema":
        return {"type": "json_object", "schema": compiled.schema}
    if compiled.mode == "json_schema" and compiled.schema is not None:
        return {"type": "json_schema",
                "json_schema": {"name": schema_name(type_name), "schema": compiled.schema, "strict": compiled.strict}}
    if compiled.mode == "json_object":
        return {"type": "json_object"}
    return None


def build(plan: Any, target: tuple[str, str | None], choice: Choice, shape: str | None = None) -> Structure:
    """The structure of choose_mode's `choice`, compiled for the target (model, api_base), a schema in `shape` at an
    OpenAI-compatible server; cached on the plan."""
    if choice.mode == "off":
        return OFF
    cache: dict[tuple[Any, ...], Structure] = plan.__dict__.setdefault("_structures", {})
    key = (target, choice, shape)
    found = cache.get(key)
    if found is None:
        compiled = compile_schema(plan.output.json_schema(), target[0], choice, target[1])
        shaped = shape if compiled.mode == "json_schema" else None
        unsent = compiled.fallback_reason if compiled.enforced_by("not_representable") else None
        found = Structure(compiled.mode, response_format(compiled, str(plan.doc.output), shaped), compiled, shaped,
                          unsent=unsent)
        if len(cache) < 32:
            cache[key] = found
    return found


def structure_for(st: Any, purpose: str) -> Structure:
    """The structure a request of this call asks for: a replay's recorded one, the fallback's, or the call's own."""
    if purpose not in _OUTPUT_PURPOSES:
        return OFF
    pinned = getattr(st.model, "pinned_structure", None)
    if pinned is not None:  # a replay sends the mode, schema and shape its recording sent
        recorded = pinned()
        if recorded is not None:
            mode, model_name, api_base, *shape = recorded
            return build(st.plan, (model_name, api_base), choose_mode(mode, model_name, api_base),
                         shape[0] if shape else None)
    if st.structure is None:
        requested = requested_mode(st.plan, st.options.structured_output)
        st.structure = own_structure(st.plan, compiled_for(st.model), requested,
                                     model_support(st.model) if requested == "auto" else None)
    return st.structure


def own_structure(plan: Any, target: tuple[str, str | None], requested: str, support: Support | None) -> Structure:
    """The structure a call to `target` (model, api_base) asks for: choose_mode's answer with `support` (litellm's, or
    None: the profile's own), in the shape that server took earlier in this session (or the first one).

    Asked at every call's first output request, and a pure function of its arguments and the shape learnt: cached
    on the plan by them (the mode choice, the note and the shape were worked out again for each call)."""
    shaped = takes_shapes(target)
    learnt = learnt_shape(target[1]) if shaped else None
    cache: dict[tuple[Any, ...], Structure] = plan.__dict__.setdefault("_own_structures", {})
    key = (target, requested, support, learnt)
    found = cache.get(key)
    if found is None:
        found = _own_structure(plan, target, requested, support, shaped, learnt)
        if len(cache) < 32:
            cache[key] = found
    return found


def _own_structure(plan: Any, target: tuple[str, str | None], requested: str, support: Support | None, shaped: bool,
                   learnt: str | None) -> Structure:
    choice = choose_mode(requested, *target, written=written_format(plan), support=support,
                         refused_shapes=learnt == NO_SHAPE)
    shape = note = None
    if choice.mode == "json_schema" and shaped:
        shape = learnt if learnt in SHAPES else SHAPES[0]
        note = (f"{SHAPE_NAMES[shape]}: the shape {target[1]} took earlier in this session" if learnt in SHAPES else
                f"{SHAPE_NAMES[shape]}: the first shape tried at a server not asked before in this session")
    elif learnt == NO_SHAPE and requested == "auto":  # no schema sent: say why when it is what the server refused
        note = f"no schema: {target[1]} refused every request shape earlier in this session"
    structure = build(plan, target, choice, shape)
    if structure.shape is None and shape is not None:
        note = None  # the type fell back (not representable): no shape is sent
    return replace(structure, note=note) if note else structure


def live_structure(plan: Any, purpose: str) -> tuple[str, Structure] | None:
    """What a request of `purpose` in a live call to the contract's own model (`llm.model` at `llm.api_base`) would ask
    for, from the contract alone (no litellm: the profile stands for its answer): the model and the structure, or None
    without a model or for a request whose reply is not the output. The debugger shows it on a scripted request,
    which itself asks for none."""
    llm = getattr(plan.doc, "llm", None)
    model = getattr(llm, "model", None)
    if purpose not in _OUTPUT_PURPOSES or not isinstance(model, str) or not model:
        return None
    api_base = getattr(llm, "api_base", None)
    return model, own_structure(plan, (model, api_base if isinstance(api_base, str) else None),
                                requested_mode(plan, None), None)


def takes_shapes(target: tuple[str, str | None]) -> bool:
    """Whether the target (model, api_base) is an OpenAI-compatible server: its `response_format` reaches it as sent,
    in one of SHAPES."""
    return openai_compatible_server(*target)


def learnt_shape(api_base: str | None) -> str | None:
    """The shape this server took earlier in this process (NO_SHAPE: it refused every one), or None."""
    return _LEARNT.get(api_base or "")


def forget_shapes() -> None:
    """Forget what every server took (a test's fresh session)."""
    with _LEARNT_LOCK:
        _LEARNT.clear()


def _learn(api_base: str | None, shape: str) -> None:
    with _LEARNT_LOCK:
        if api_base and (api_base in _LEARNT or len(_LEARNT) < _LEARNT_LIMIT):
            _LEARNT[api_base] = shape


def answered(st: Any, structure: Structure) -> None:
    """The server answered a request in `structure`'s shape: remember it for the next calls to this server."""
    if structure.shape is not None and getattr(st.model, "pinned_structure", None) is None:
        _learn(compiled_for(st.model)[1], structure.shape)


def refuses_shape(status: int | None, message: str) -> bool:
    """Whether a failed request was refused for its `response_format`: any 4xx or 5xx that names it."""
    return status is not None and status >= 400 and "response_format" in message.lower()


def next_shape(st: Any, structure: Structure, *, status: int | None, message: str) -> Structure | None:
    """The same schema in the server's next request shape, when it refused this one for its `response_format`
    (for the rest of this call, and remembered: a server that refused the last shape took none); None otherwise."""
    if structure.shape is None or not refuses_shape(status, message):
        return None
    api_base = compiled_for(st.model)[1]
    at = SHAPES.index(structure.shape)
    if at + 1 >= len(SHAPES):
        if getattr(st.model, "pinned_structure", None) is None:
            _learn(api_base, NO_SHAPE)
        return None
    shape = SHAPES[at + 1]
    note = f"{SHAPE_NAMES[shape]}: {api_base} refused {SHAPE_NAMES[structure.shape]} (HTTP {status}: {message})"
    assert structure.compiled is not None  # a shape is only chosen for a compiled schema
    st.structure = replace(structure, shape=shape, note=note,
                           response_format=response_format(structure.compiled, str(st.plan.doc.output), shape))
    return st.structure


def shape_of(sent: Any) -> str | None:
    """The shape a recorded `response_format` was sent in (a replay sends the same), or None."""
    if not isinstance(sent, dict):
        return None
    if sent.get("type") == "json_object" and "schema" in sent:
        return "json_object_schema"
    return "json_schema" if sent.get("type") == "json_schema" else None


def fallback_reason(structure: Structure, *, status: int | None, message: str, refused: bool) -> str | None:
    """Why this failure is about the structure asked for (so the next mode may be tried), or None."""
    if structure.mode == "off":
        return None
    if refused:
        return f"the model refused the {structure.mode} request: {message}"
    if (status == 400 and _ABOUT_STRUCTURE.search(message)) or refuses_shape(status, message):
        return f"the provider answered HTTP {status} to the {structure.mode} request: {message}"
    return None


def fall_back(st: Any, structure: Structure) -> Structure:
    """The next mode after `structure`, for the rest of this call (JSON mode only where the model has it)."""
    mode = NEXT_MODE.get(structure.mode, "off")
    if mode == "json_object" and not model_support(st.model).json_mode and getattr(st.model, "pinned_structure", None) is None:
        mode = "off"
    target = compiled_for(st.model)
    st.structure = build(st.plan, target, choose_mode(mode, *target))
    return st.structure
