"""The model of `kind: tools` (seed 003): tool declarations with their conditions and handler."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from contractstudio.documents.base import Condition, FieldSpec, Model


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
