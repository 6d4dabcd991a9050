"""The base classes a SymbolicAI contract is written against: `Expression` and `LLMDataModel`."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from contractstudio.symbolic import describe


def _without_header(schema: dict[str, Any]) -> None:
    """The JSON Schema the engine sends leaves out `section_header`: it is a label for str(), never an answer."""
    schema.get("properties", {}).pop(describe.HEADER, None)


class LLMDataModel(BaseModel):
    """A pydantic model whose fields (and their `Field(description=...)`) describe what the model must answer.

    As SymbolicAI's: `str(instance)` is indented `key: value` text (a `[[section_header]]` line first when one is
    given), and the class describes itself with `simplify_json_schema()`, `instruct_llm()` and
    `generate_example_json()` (contractstudio/symbolic/describe.py).
    """

    model_config = ConfigDict(json_schema_extra=_without_header)

    section_header: str | None = Field(default=None, exclude=True, frozen=True)

    def __str__(self) -> str:
        return describe.as_text(self)

    @classmethod
    def simplify_json_schema(cls) -> str:
        """`[[Schema]]` (each field's type, required or optional) and `[[Definitions]]` (descriptions, examples)."""
        return describe.simplified_schema(cls)

    @classmethod
    def instruct_llm(cls) -> str:
        """`[[Result]]`, the schema digest and an `[[Example]]`: SymbolicAI's instructions for answering this type."""
        return describe.instructions(cls)

    @classmethod
    def generate_example_json(cls, model: type[BaseModel] | None = None, visited_models: set[str] | None = None) -> dict[str, Any]:
        """An example value of the model (or of `model`), defaults where the fields have them."""
        return describe.example(model or cls, visited_models)


class Expression:
    """The base of a contracted class: calling an instance calls its `forward` (wrapped by `@contract`)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        pass

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.forward(*args, **kwargs)

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        """What the class computes; `@contract` wraps it. A class without a contract must define it."""
        raise NotImplementedError(f"{type(self).__name__} defines no forward method")
