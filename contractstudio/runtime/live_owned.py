"""What the engine owns in every live call, whatever litellm's process-wide settings say.

The engine decides transport retries (its fault policy), which model a request goes to (a call's list of models),
and counts, traces and budgets every request; so no request may be retried, sent to another model, or answered
from a cache behind its back. litellm lets a call's own arguments decide most of that, and the live model passes
them on every request (`CALL_ARGUMENTS`). Two it does not: its synchronous wrapper reads
`kwargs.get("num_retries") or litellm.num_retries`, and both paths read `fallbacks or litellm.model_fallbacks`, so a
per-call 0 or None cannot win over a global a user (or another library) set. While a live call runs (`engine_call`),
litellm reads the engine's value of those (`MASKED`); everywhere else in the process, the user's own. litellm's own
write of `litellm.num_retries = None` after a failed synchronous call does not reach the user's setting either.

What stays the user's: logging callbacks (they watch calls, they send none of ours), `drop_params` and
`modify_params` (what a provider is sent, never how many times), `litellm.api_base` and headers for a model
without its own `api_base` (where litellm's own client sends, as the provider's variables do), `max_budget`.
"""

from __future__ import annotations

import types
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

# Set on every request: litellm's retries (and the OpenAI client's) off, no reply read from litellm's cache.
CALL_ARGUMENTS: dict[str, Any] = {"num_retries": 0, "max_retries": 0, "caching": False}
# Per-call arguments of litellm that would do the engine's work behind its back; never taken from a model's params.
ENGINE_ARGUMENTS = {*CALL_ARGUMENTS, "retry_policy", "retry_strategy", "fallbacks", "context_window_fallback_dict",
                    "cache"}
# litellm globals no call argument overrides, and the engine's value of each while its call runs.
MASKED: dict[str, Any] = {"num_retries": 0, "model_fallbacks": None}

_IN_ENGINE_CALL: ContextVar[bool] = ContextVar("in_engine_call", default=False)


def _masked(name: str, engine_value: Any) -> property:
    """`litellm.<name>`: the engine's value inside a live call, else the user's (kept in the module's own dict, where
    litellm's module-level code reads it by its bare name)."""

    def read(module: types.ModuleType) -> Any:
        return engine_value if _IN_ENGINE_CALL.get() else module.__dict__.get(name)

    def write(module: types.ModuleType, value: Any) -> None:
        if not _IN_ENGINE_CALL.get():  # litellm clears num_retries after a failed call: not the user's to lose
            module.__dict__[name] = value

    return property(read, write)


class _EngineOwnedLitellm(types.ModuleType):
    """litellm's module, its `MASKED` globals read through `_masked`."""


for _name, _value in MASKED.items():
    setattr(_EngineOwnedLitellm, _name, _masked(_name, _value))


def own_globals(litellm: types.ModuleType) -> None:
    """Make `MASKED` the engine's in its calls (once, at the live model's set-up; the user's values are kept)."""
    if not isinstance(litellm, _EngineOwnedLitellm):
        litellm.__class__ = _EngineOwnedLitellm


@contextmanager
def engine_call() -> Iterator[None]:
    """The span of one live call (its request and, streamed, its reading): litellm reads the engine's `MASKED` values.

    A context variable, so another thread's or task's own litellm calls keep the user's settings meanwhile."""
    token = _IN_ENGINE_CALL.set(True)
    try:
        yield
    finally:
        _IN_ENGINE_CALL.reset(token)
