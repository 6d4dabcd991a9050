"""A tool's arguments as the LLM sends them, made into the values its parameters declare.

An LLM's tool call carries text: `"5"` for an `int`, `"['a', 'b']"` for a `list[str]`.
`cs.toolify` converts each argument to its parameter's annotation before any contract
runs, as bots' `toolify` does; a value that cannot be converted is reported in the same
words as a wrong argument of a `kind: tools` file (`argument_error`), so both say it alike.
"""

from __future__ import annotations

import inspect
import json
import typing
from collections.abc import Callable
from typing import Any

_EMPTY = inspect.Parameter.empty
_NAMED = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)


def argument_error(name: str, e: Any) -> str:
    """One pydantic error of argument `name` as the text the LLM reads (where, the value, what is wrong)."""
    loc = tuple(e.get("loc") or ())
    where = name + "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in loc)
    ctx = {k: v for k, v in (e.get("ctx") or {}).items() if k not in ("error", "class_name")}
    text = f"argument '{where}' = {short_value(e.get('input'))}: {e.get('msg', 'invalid')}"
    if ctx:
        text += " (constraint: " + ", ".join(f"{k}={v}" for k, v in ctx.items()) + ")"
    return text


def short_value(value: Any, limit: int = 60) -> str:
    """A value as compact JSON (repr when it is not JSON), cut at `limit` characters."""
    try:
        text = json.dumps(value, ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


class Parameters:
    """A function's parameters: their annotations (resolved on first use) and the conversion of arguments to them."""

    def __init__(self, fn: Callable[..., Any]) -> None:
        self.fn = fn
        self.signature = inspect.signature(fn)
        self._hints: dict[str, Any] | None = None
        self._adapters: dict[str, Any] = {}

    @property
    def hints(self) -> dict[str, Any]:
        """Each named parameter's annotation, string annotations resolved (left out when they cannot be)."""
        if self._hints is None:
            self._hints = {}
            for name, p in self.signature.parameters.items():
                hint = _resolved(p.annotation, self.fn) if p.kind in _NAMED else _EMPTY
                if hint not in (_EMPTY, Any):
                    self._hints[name] = hint
        return self._hints

    def convert(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[tuple[Any, ...], dict[str, Any], list[str]]:
        """The arguments converted to their annotations, in the shape they were given; and what could not be."""
        wrong = self._binding_errors(args, kwargs)
        if wrong:
            return args, kwargs, wrong
        names = list(self.signature.parameters)
        out_args = [self._value(names[i], v, wrong) if i < len(names) else v for i, v in enumerate(args)]
        out_kwargs = {k: self._value(k, v, wrong) for k, v in kwargs.items()}
        return tuple(out_args), out_kwargs, wrong

    def _binding_errors(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> list[str]:
        try:
            self.signature.bind(*args, **kwargs)
        except TypeError as err:
            params = self.signature.parameters
            given = set(list(params)[: len(args)]) | set(kwargs)
            missing = [f"missing required argument '{n}'" + (f" ({type_name(self.hints[n])})" if n in self.hints else "")
                       for n, p in params.items()
                       if p.kind in _NAMED and p.default is _EMPTY and n not in given]
            accepts_any = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values())
            unexpected = [f"unexpected argument '{k}' (parameters: {', '.join(params) or 'none'})"
                          for k in kwargs if k not in params and not accepts_any]
            return missing + unexpected or [str(err)]
        return []

    def _value(self, name: str, value: Any, wrong: list[str]) -> Any:
        hint = self.hints.get(name)
        if hint is None or value is None:  # no annotation, or None: passed as given (bots does the same)
            return value
        from pydantic import ValidationError

        adapter = self._adapter(name, hint)
        if adapter is None:
            return value
        try:
            return adapter.validate_python(value)
        except ValidationError as err:
            first = err
        if isinstance(value, str):  # "['a', 'b']" or '{"x": 1}' for a list, a dict or a model: read it as a value
            from contractstudio.reading.source import read_value

            try:
                return adapter.validate_python(read_value(value, f"argument '{name}'"))
            except (ValueError, ValidationError):
                pass
        wrong.extend(argument_error(name, e) for e in first.errors(include_url=False))
        return value

    def _adapter(self, name: str, hint: Any) -> Any:
        if name not in self._adapters:
            self._adapters[name] = _adapter(hint)
        return self._adapters[name]


def _resolved(annotation: Any, fn: Callable[..., Any]) -> Any:
    """A string annotation (`from __future__ import annotations`) evaluated where the function was defined.

    Resolved at the first call, not at decoration, so a type defined later in the module is found;
    one that cannot be (a class local to a function) leaves its parameter unconverted, as bots does.
    """
    if not isinstance(annotation, str):
        return annotation
    try:
        return typing.get_type_hints(_Annotated(annotation, fn))["value"]
    except Exception:  # noqa: BLE001 - any failure to resolve means "no annotation", never a failed call
        return _EMPTY


class _Annotated:
    """One annotation and the globals of its function: what `typing.get_type_hints` reads it with."""

    def __init__(self, annotation: str, fn: Callable[..., Any]) -> None:
        self.__annotations__ = {"value": annotation}
        self.__globals__ = getattr(fn, "__globals__", {})
        self.__module__ = getattr(fn, "__module__", "")


def type_name(hint: Any) -> str:
    """An annotation as a user writes it: `int`, `list[int]`, `Point`."""
    return hint.__name__ if isinstance(hint, type) and not typing.get_args(hint) else str(hint).replace("typing.", "")


def _adapter(hint: Any) -> Any:
    """The validator of one annotation; None when pydantic cannot build one (the argument is then passed as given)."""
    from pydantic import ConfigDict, TypeAdapter
    from pydantic.errors import PydanticUserError

    # Numbers are text for a `str` parameter (bots: str(value)); unknown classes are checked with isinstance.
    try:
        try:
            return TypeAdapter(hint, config=ConfigDict(coerce_numbers_to_str=True, arbitrary_types_allowed=True))
        except PydanticUserError:  # a model, dataclass or TypedDict carries its own configuration
            return TypeAdapter(hint)
    except Exception:  # noqa: BLE001 - an annotation pydantic cannot read converts nothing, as bots leaves it
        return None
