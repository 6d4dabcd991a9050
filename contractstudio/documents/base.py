"""The base of every document model (source paths kept) and the parts the kinds share: conditions, fields, types.

Every model remembers where it came from (`src`, a key/index path into its
document), so rules can point at the exact node even after broken parts of a
document were pruned to let analysis go on.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator
from pydantic_core import PydanticCustomError, core_schema

Path = tuple[Any, ...]


class SrcDict(dict):
    """A mapping from the YAML source that knows its path in the document."""

    __slots__ = ("src",)

    def __init__(self, *args: Any, src: Path = (), **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.src = src

    @classmethod
    def __get_pydantic_core_schema__(cls, source: Any, handler: Any) -> core_schema.CoreSchema:
        """Pydantic writes it as the plain mapping it is (a `default: {}` in a type's JSON Schema, not a warning)."""
        return core_schema.dict_schema()


class Model(BaseModel):
    """Base of every document model: strict types, unknown keys reported, source path kept."""

    # defer_build: a file of one kind pays only for the validators of that kind.
    model_config = ConfigDict(extra="forbid", strict=True, populate_by_name=True, frozen=False, defer_build=True)

    @model_validator(mode="wrap")
    @classmethod
    def _keep_source(cls, data: Any, handler: Any) -> Any:
        src = getattr(data, "src", None)
        model = handler(data)
        if src is not None and isinstance(model, Model):
            # Kept in pydantic's private slot directly: a declared PrivateAttr would make
            # pydantic run its private-attribute set-up for every object (a third of validation).
            object.__setattr__(model, "__pydantic_private__", {"_src": src})
        return model

    @property
    def src(self) -> Path:
        """The key/index path of this object in its YAML document."""
        private = self.__pydantic_private__
        return private.get("_src", ()) if private else ()


def _one_of(data: Any, keys: tuple[str, ...], what: str) -> None:
    if not isinstance(data, dict):
        return
    present = [k for k in keys if k in data]
    if not present:
        raise PydanticCustomError("cs_missing", "{what} needs one of: {keys}", {"what": what, "keys": ", ".join(keys)})
    if len(present) > 1:
        raise PydanticCustomError(
            "cs_conflict", "{what} takes only one of: {keys}", {"what": what, "keys": ", ".join(present)}
        )




class Condition(Model):
    """A checked expression (`assert`) or a Python hook (`python`), with an optional guard and message."""

    id: str | None = Field(None, description="Optional id, unique within its list.")
    when: str | None = Field(None, description="Optional guard expression; the condition applies only when it is true.")
    assert_: str | None = Field(None, alias="assert", description="The expression that must be true.")
    python: str | None = Field(None, description="A Python callable 'package.module:function' (trusted workspaces only).")
    message: str | None = Field(None, description="Error text on failure; a template with {expr} placeholders.")
    remedy: bool = Field(True, description="false: when this condition fails the call ends at once, without a remedy "
                         "(a hard rule; the other conditions are still remedied).")
    monotone: bool = Field(False, description="true (a `post` condition): it only fails more as the reply grows, as "
                           "`len(output.answer) <= 200` or `'TODO' not in output.answer`; a streaming reply is then "
                           "checked against it while it is written and stopped at the first failure. The analyzer "
                           "checks that it is monotone (CON133).")

    @model_validator(mode="before")
    @classmethod
    def _assert_or_python(cls, data: Any) -> Any:
        _one_of(data, ("assert", "python"), "a condition")
        return data


class FieldSpec(Model):
    """One field of a declared type: a type string plus description and constraints."""

    type: str = Field(description="A type string: str int float bool any, a declared type, list[T], dict[str, T], T | None, "
                      "Literal['a', 'b'].")
    description: str | None = Field(None, description="What the field means; the LLM is told this.")
    default: Any = Field(None, description="Default value; a field with a default is optional.")
    ge: float | None = Field(None, description="Minimum (inclusive).")
    gt: float | None = Field(None, description="Minimum (exclusive).")
    le: float | None = Field(None, description="Maximum (inclusive).")
    lt: float | None = Field(None, description="Maximum (exclusive).")
    min_length: int | None = Field(None, ge=0, description="Minimum length of a string or list.")
    max_length: int | None = Field(None, ge=0, description="Maximum length of a string or list.")
    pattern: str | None = Field(None, description="A regular expression a string must match.")

    @property
    def required(self) -> bool:
        """A field is required unless it declares a default (even `default: null`)."""
        return "default" not in self.model_fields_set


class TypeDecl(Model):
    """A declared type: becomes a pydantic model at load time."""

    description: str | None = Field(None, description="What the type represents.")
    extra: Literal["forbid", "ignore"] = Field("ignore", description="What to do with fields the type does not declare.")
    fields: dict[str, FieldSpec] = Field(description="The fields of the type, by name.")
