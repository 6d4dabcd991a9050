"""A Python contract class as the compiled plan the engine runs: its models as shapes, its methods as hooks.

Nothing here runs a call: the engine (runtime/engine.py) does, with these objects in the places of a YAML
contract's shapes and conditions. `pre` and `post` are conditions whose raised message is the remedy
feedback; `act` is the act hook; `forward` is the plan's forward hook, always called last.
"""

from __future__ import annotations

import inspect
import re
import traceback
from collections.abc import Callable
from typing import Any

from pydantic import BaseModel, Field, TypeAdapter, ValidationError, create_model

from contractstudio.documents.base import Condition
from contractstudio.documents.contract_model import Contract, Remedy
from contractstudio.runtime.compiled import CompiledContract
from contractstudio.runtime.messages import system_message
from contractstudio.runtime.validation import Shape, format_errors
from contractstudio.symbolic.classes import LLMDataModel
from contractstudio.symbolic.failure import semantic


class NoRemedy(Exception):  # named for what it does to the call, as users raise it
    """Raised by `pre` or `post`: the call fails at once with this message, without a remedy (seed 004's hard rules)."""


def type_name(annotation: Any) -> str:
    """An annotation as Python writes it: `KGState`, `list[str] | None` (module paths dropped)."""
    if isinstance(annotation, type) and not getattr(annotation, "__args__", None):
        return annotation.__name__
    return re.sub(r"\b(?:[A-Za-z_][\w]*\.)+([A-Za-z_]\w*)", r"\1", str(annotation).replace("typing.", "")).replace("NoneType", "None")


def is_model(annotation: Any) -> bool:
    """Whether an annotation is a pydantic model class (answered as itself, not wrapped as a `value`)."""
    return isinstance(annotation, type) and issubclass(annotation, BaseModel)


def value_model(annotation: Any) -> type[BaseModel]:
    """The object the model answers for a non-model type, as SymbolicAI asks it: one field, `value`."""
    return create_model("Value", __base__=LLMDataModel,
                        value=(annotation, Field(description=f"The answer, a {type_name(annotation)}.")))


class ReturnShape(Shape):
    """What `forward` returns, checked as SymbolicAI checks it (strictly); a `value` wrapper is unwrapped."""

    __slots__ = ("model", "wrapper")
    wrapper: type[BaseModel] | None
    model: type[BaseModel] | None  # a model annotation: forward must return an instance of it (SymbolicAI's isinstance)

    @classmethod
    def of_return(cls, annotation: Any, wrapper: type[BaseModel] | None) -> ReturnShape:
        """The check of a forward's return annotation; `wrapper`: the value model its output is asked as."""
        shape = cls.of_python(annotation, "returned", type_name(annotation))
        assert isinstance(shape, ReturnShape)
        shape.wrapper = wrapper
        shape.model = annotation if is_model(annotation) else None
        if shape.adapter is None:  # a model is checked strictly too: an instance, not a dict that looks like one
            shape.adapter = TypeAdapter(annotation)
        return shape

    def _validate(self, value: Any) -> tuple[Any, list[str]]:
        if self.wrapper is not None and isinstance(value, self.wrapper):
            value = value.value  # type: ignore[attr-defined]
        if self.model is not None and not isinstance(value, self.model):  # a dict that looks like the model is not one
            return None, [f"{self.root}: expected an instance of {self.model.__name__}, got {type(value).__name__}"]
        assert self.adapter is not None
        try:
            return self.adapter.validate_python(value, strict=True), []
        except ValidationError as err:
            return None, format_errors(err, self.root)

    def dump(self, value: Any) -> Any:
        """What forward returned, as plain JSON data (the trace's `result` event)."""
        assert self.adapter is not None
        return self.adapter.dump_python(value, mode="json")


class MethodCheck:
    """`pre` or `post` as a condition: passes unless it raises (the message is the feedback) or returns False."""

    __slots__ = ("arg", "calls", "defined", "id", "label", "method", "raised", "raised_at", "remedy", "source", "unwrap")

    def __init__(self, method: Callable[[Any], Any], role: str, owner: str, *, unwrap: bool = False) -> None:
        self.id = role
        self.label = f"{owner}.{role}"
        self.source = self.defined = f"python: {owner}.{role}"
        self.method = method
        self.arg = "input" if role == "pre" else "output"
        # SymbolicAI passes a non-model output to post as the `value` object the first time, as the value after
        # (its remedy loop unwraps it): a post written for it handles both, and gets both here
        self.unwrap = unwrap
        self.calls = 0
        self.remedy = True  # False once the method raised NoRemedy: the engine ends the call without a remedy
        self.raised: BaseException | None = None  # what the method raised last (SymbolicAI's contract_exception)
        self.raised_at: str | None = None  # where: `FILE:LINE` (the condition event carries it; eval groups by it)

    def evaluate(self, values: dict[str, Any], explain: bool = True) -> tuple[bool, bool, str | None]:
        """(applies, passed, error text), as runtime.conditions.Check gives it."""
        value = values[self.arg]
        if self.unwrap and isinstance(value, BaseModel) and self.calls > 0:
            value = value.value  # type: ignore[attr-defined]
        self.calls += 1
        self.remedy = True
        self.raised = self.raised_at = None
        self.source = self.defined
        try:
            result = self.method(value)
        except NoRemedy as err:
            self.remedy, self.raised, self.raised_at = False, err, raising_line(err)
            self.source = f"{self.defined} {raised_at(err)}"
            return True, False, str(err) or f"{self.label} raised NoRemedy"
        except Exception as err:  # noqa: BLE001 - a raising pre/post is a failed condition; its message is the feedback
            self.raised, self.raised_at = err, raising_line(err)
            self.source = f"{self.defined} {raised_at(err)}"  # the condition event says where (the feedback stays the message)
            return True, False, str(err) or f"{self.label} raised {type(err).__name__}"
        if result is False:  # SymbolicAI's `assert post(output)` fails with an empty message: ours names the method
            message = semantic(f"{self.label} returned False")
            self.raised = AssertionError(message)
            return True, False, message
        return True, True, None


def raised_at(err: BaseException) -> str:
    """`raised at FILE:LINE`: the innermost frame of what `pre` / `post` raised (the debugger shows it)."""
    where = raising_line(err)
    return f"raised at {where}" if where else "raised"


def raising_line(err: BaseException) -> str | None:
    """`FILE:LINE` of the innermost frame of an exception, or None without a traceback."""
    frames = traceback.extract_tb(err.__traceback__)
    return f"{frames[-1].filename}:{frames[-1].lineno}" if frames else None


def check_act_signature(act: Callable[..., Any]) -> inspect.Signature:
    """act's signature, validated as SymbolicAI validates it (a TypeError fails the call, as there)."""
    sig = inspect.signature(act)
    first = next((p for p in sig.parameters.values()
                  if p.kind in (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)), None)
    if first is None:
        raise TypeError("'act' must accept the input as its first parameter after self")
    if first.annotation is inspect.Parameter.empty:
        raise TypeError(f"'act' parameter '{first.name}' must have a type annotation")
    if sig.return_annotation is inspect.Signature.empty:
        raise TypeError("'act' must have a return type annotation")
    return sig


class SymbolicPlan(CompiledContract):
    """A contracted Python class's constructor of the one plan type: the same attributes the engine reads of a YAML
    contract's plan, made by CompiledContract's own constructor, plus what only a class's call keeps."""

    def __init__(self, name: str, prompt: str, remedy: Remedy, *, input_shape: Shape, output_shape: Shape,
                 returns: ReturnShape, pre: list[MethodCheck], post: list[MethodCheck],
                 act: Callable[[Any], Any] | None, intermediate: Shape | None, forward: Any, path: str | None,
                 output_schema: str | None = None, post_conditions: list[Condition] | None = None) -> None:
        # `post_conditions`: the conditions behind `post`, in its order (the class's `monotone_post` among them), which
        # the prefix watch classifies as it does a YAML contract's
        doc = Contract(kind="contract", name=name, prompt=prompt, input=input_shape.type_name, output=output_shape.type_name,
                       intermediate=intermediate.type_name if intermediate is not None else None,
                       remedy=remedy, on_failure="fallback", post=post_conditions or [])
        super().__init__(
            doc, input=input_shape, output=output_shape, intermediate=intermediate, pre=pre, post=post,
            # the class's output schema is made once per class (JSON Schema generation costs more than the call's work)
            system=system_message(prompt, output_shape.type_name, output_schema or output_shape.schema_text()),
            generate_type=intermediate.type_name if act is not None and intermediate is not None else input_shape.type_name,
            path=path, trusted=True,  # the user's own code, already imported and running
            act_hook=act, returns=returns, forward=forward)
        self.pre_checks, self.post_checks = pre, post  # typed as the class's own (its failure reads what they raised)
        self.returned: list[Any] = []  # what the class's forward returned (graceful mode hands it back unchecked)
        self.act_raised: BaseException | None = None  # what the class's act raised (SymbolicAI's contract_exception)
        self.intermediate_annotation: Any = None  # act's return annotation (verbose's input panel after an act)
