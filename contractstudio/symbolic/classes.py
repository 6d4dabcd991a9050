"""The base classes a SymbolicAI contract is written against: `Expression` and `LLMDataModel`."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel


class LLMDataModel(BaseModel):
    """A pydantic model whose fields (and their `Field(description=...)`) describe what the model must answer."""


class Expression:
    """The base of a contracted class: calling an instance calls its `forward` (wrapped by `@contract`)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        pass

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.forward(*args, **kwargs)

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        """What the class computes; `@contract` wraps it. A class without a contract must define it."""
        raise NotImplementedError(f"{type(self).__name__} defines no forward method")
