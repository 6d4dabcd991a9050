"""Which model a Python contract's calls use, and how they are recorded: `use_model`, a context variable.

    with use_model(cs.ScriptedModel([...]), wait=False, trace="calls.jsonl"):
        MyContract()(input=...)

Inside the block every contracted call uses that model (context-local: each thread and asyncio task sees
its own; blocks nest, the innermost wins). Outside any block the model is the environment's
`CONTRACTSTUDIO_MODEL`, else `model:` in the user's config.yaml (a litellm model string), else the call
refuses to start and says how to choose one.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from contractstudio.runtime.errors import ModelError
from contractstudio.runtime.models import Model, ScriptedModel
from contractstudio.runtime.python_classes import MODEL_VARIABLE, default_model_name


@dataclass(frozen=True, slots=True)
class ModelUse:
    """The model of the calls in a `use_model` block, whether remedy waits are slept, and where traces go."""

    model: Model
    wait: bool = True
    trace: Path | None = None


_CURRENT: ContextVar[ModelUse | None] = ContextVar("contractstudio_symbolic_model", default=None)


def as_model(model: Any) -> Model:
    """A litellm model string, a list of scripted replies, or a model object (ScriptedModel, ReplayModel, LiveModel)."""
    if isinstance(model, str):
        from contractstudio.documents.contract_model import LLMSettings
        from contractstudio.runtime.live import live_model

        return live_model(LLMSettings(), model=model, owner="use_model")
    if isinstance(model, (list, tuple)):
        return ScriptedModel(list(model))
    if not callable(getattr(model, "complete", None)):
        raise TypeError(f"use_model takes a litellm model string, a list of replies or a model object, not {type(model).__name__}")
    return model


@contextmanager
def use_model(model: Any, *, wait: bool = True, trace: str | Path | None = None) -> Iterator[Model]:
    """Use this model for every contracted call in the block; `wait=False` records remedy waits without sleeping;
    `trace` appends each call's trace (JSON Lines) to that file."""
    use = ModelUse(as_model(model), wait, Path(trace) if trace is not None else None)
    token = _CURRENT.set(use)
    try:
        yield use.model
    finally:
        _CURRENT.reset(token)


def current_use() -> ModelUse:
    """The innermost `use_model` block's choice, or the default model (environment, then config.yaml)."""
    use = _CURRENT.get()
    if use is not None:
        return use
    name = default_model_name()
    if not name:
        raise ModelError(f"no model for a Python contract: call it inside contractstudio.symbolic.use_model(...), or set "
                         f"{MODEL_VARIABLE} (a litellm model string), or `model:` in config.yaml")
    return ModelUse(as_model(str(name)))
