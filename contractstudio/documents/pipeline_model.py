"""The model of `kind: pipeline` (seed 002): steps, routers, declared action contracts, settings."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import ConfigDict, Field

from contractstudio.documents.base import Model


class ActionContract(Model):
    """The Requires / Ensures of an action over the pipeline state and the step's keys."""

    description: str | None = Field(None, description="What the action does.")
    requires_state: list[str] = Field(default_factory=list, description="State fields that must be set before the step.")
    requires_any_state: list[list[str]] = Field(default_factory=list, description="One field of each group must be set.")
    requires_step: list[str] = Field(default_factory=list, description="Keys the step itself must carry; 'a|b' means one of them, "
                                     "'settings.k' a key of the pipeline's settings.")
    ensures_state: list[str] = Field(default_factory=list, description="State fields set by the step.")


class Router(Model):
    """A model output contract: the prefixes a router prompt can emit."""

    description: str | None = Field(None, description="What the router decides.")
    prefixes: list[str] = Field(description="The prefixes the router prompt can emit, in order.")


class Step(Model):
    """A pipeline step; keys besides id/action/next/end are its configuration (`raw`)."""

    model_config = ConfigDict(extra="allow")
    id: str = Field(description="Step id, unique in the pipeline.")
    action: str = Field(description="A built-in action or one declared under `actions:`.")
    next: str | None = Field(None, description="The step that follows.")
    end: bool = Field(False, description="The pipeline may end after this step.")

    @property
    def raw(self) -> dict[str, Any]:
        """The step's configuration keys (prompt, on_*, *_prefix, ...)."""
        return dict(self.model_extra or {})


class Pipeline(Model):
    """kind: pipeline — steps with action contracts and prefix routing."""

    kind: Literal["pipeline"] = Field(description="Always `pipeline`.")
    name: str = Field(description="Pipeline name.")
    description: str | None = Field(None, description="What the pipeline does.")
    entry_step_id: str | None = Field(None, description="The first step (PIP101 when missing).")
    catalog: Literal["contractstudio", "localai-rag"] = Field(
        "contractstudio", description="The built-in actions the steps use: ContractStudio's (the ADR's) or LocalAI-RAG's.")
    settings: dict[str, Any] = Field(default_factory=dict, description="Named values that steps refer to with `<key>_from_settings` "
                                     "and that actions read (`requires_step: [settings.<key>]`).")
    inputs: list[str] = Field(default_factory=list, description="State fields set before the first step.")
    routers: dict[str, Router] = Field(default_factory=dict, description="Known router prompts and the prefixes they emit.")
    actions: dict[str, ActionContract] = Field(default_factory=dict, description="Contracts of custom actions; built-ins need none.")
    steps: list[Step] = Field(description="The steps, in any order.")
