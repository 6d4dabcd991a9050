"""Tools with contracts (seed 003): `cs.toolify` for Python functions, and `kind: tools` files.

Every precondition and postconditions runs before the tool (postconditions
too: they validate the operation the call would make). The tool runs only
when all pass; otherwise the call returns the failure text for the LLM:

    Contract validation failed:
    Preconditions:
      - Title cannot be empty
    Postconditions:
      - Invalid markdown: Missing closing bracket on line 5

Where seed 003 is silent, `cs.toolify` does what bots' `toolify` does (its users
know it): text arguments are converted to the annotated types first, the result
comes back as text, and an exception becomes the text returned, never raised.
Where they differ, seed 003 wins: every failed contract of both sections is listed
(bots stops at the first failing section or raising contract). docs/runtime.md lists each difference.
"""

from __future__ import annotations

import functools
import inspect
import json
import traceback
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from contractstudio.runtime.conditions import load_hook
from contractstudio.runtime.tool_arguments import Parameters, argument_error
from contractstudio.safe_text import redact_text
from contractstudio.trust import hook_folder

ContractFn = Callable[..., Any]

# A long result is cut in the middle, as bots does, so the LLM's context keeps both ends of it.
RESULT_LIMIT = 20_000
RESULT_KEEP = 8_000
TRUNCATED = "\n\n... (tool result truncated from middle to save you from context overload) ...\n\n"
NO_RESULT = "Tool execution completed without errors"


def contract_failure(contract: ContractFn, args: tuple[Any, ...], kwargs: dict[str, Any], role: str = "contract") -> str | None:
    """Run one contract; its failure text, or None when it passes. Raising, or returning anything but (bool, str), fails."""
    try:
        outcome = contract(*args, **kwargs)
    except Exception as err:  # noqa: BLE001 - a raising contract is a failed contract, reported as text (seed 003)
        return f"Tool Failed: {error_text(err)}"
    name = getattr(contract, "__name__", "contract")
    if not (isinstance(outcome, tuple) and len(outcome) == 2 and isinstance(outcome[0], bool) and isinstance(outcome[1], str)):
        return f"{role} '{name}' returned {short_repr(outcome)}; a contract returns (bool, str)"
    ok, why = outcome
    if ok:
        return None
    return why or f"{name} failed"


def error_text(err: BaseException) -> str:
    """An exception as one line: its class and message, credentials redacted (the text goes to an LLM)."""
    message = str(err)
    return redact_text(f"{type(err).__name__}: {message}" if message else type(err).__name__)


def short_repr(value: Any, limit: int = 80) -> str:
    """A returned value as Python writes it, cut at `limit` characters."""
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def failure_message(pre: Sequence[str], post: Sequence[str]) -> str | None:
    """The text returned instead of running the tool; None when nothing failed."""
    if not pre and not post:
        return None
    lines = ["Contract validation failed:"]
    if pre:
        lines.append("Preconditions:")
        lines.extend(f"  - {m}" for m in pre)
    if post:
        lines.append("Postconditions:")
        lines.extend(f"  - {m}" for m in post)
    return "\n".join(lines)


def result_text(result: Any) -> str:
    """What the tool returned, as the text the LLM reads: lists and dicts as JSON, a long text cut in the middle."""
    if result is None:
        text = NO_RESULT
    elif isinstance(result, (list, dict)):
        try:
            text = json.dumps(result, indent=2, ensure_ascii=False)
        except (TypeError, ValueError):
            text = str(result)
    else:
        text = str(result)
    if len(text) > RESULT_LIMIT:
        text = text[:RESULT_KEEP] + TRUNCATED + text[-RESULT_KEEP:]
    return text


def tool_failed(err: Exception) -> str:
    """An exception the tool raised, as the text returned: the error and the tool's own frames."""
    frames = traceback.extract_tb(err.__traceback__)[1:]  # the first frame is this module's wrapper
    return redact_text(f"Tool Failed: {error_text(err)}\nTraceback:\n" + "".join(traceback.format_list(frames)))


def toolify(description: str | Callable[..., Any] | None = None, preconditions: Sequence[ContractFn] | None = None,
            postconditions: Sequence[ContractFn] | None = None) -> Any:
    """Turn a function into a tool: text in, text out, contracts checked before it runs, never raising.

    `@toolify()`, `@toolify("description")` and `@toolify` are tools without contracts.
    """
    if callable(description) and preconditions is None and postconditions is None:
        return toolify()(description)  # bare @toolify
    pre = list(preconditions or [])
    post = list(postconditions or [])

    def decorate(fn: Callable[..., Any]) -> Callable[..., str]:
        params = Parameters(fn)

        @functools.wraps(fn)
        def tool(*args: Any, **kwargs: Any) -> str:
            args, kwargs, wrong = params.convert(args, kwargs)
            if wrong:  # contracts never see an argument that is missing or not of its type
                return failure_message(wrong, []) or ""
            message = failure_message([m for m in (contract_failure(c, args, kwargs, "precondition") for c in pre) if m],
                                      [m for m in (contract_failure(c, args, kwargs, "postcondition") for c in post) if m])
            if message is not None:
                return message
            try:
                return result_text(fn(*args, **kwargs))
            except Exception as err:  # noqa: BLE001 - a tool's error is the text the LLM reads (bots, seed 003)
                return tool_failed(err)

        doc = inspect.getdoc(fn)
        tool.description = description if isinstance(description, str) else doc or ""  # type: ignore[attr-defined]
        tool.__doc__ = tool.description or f"Execute {fn.__name__.replace('_', ' ')}"  # type: ignore[attr-defined]
        tool.preconditions = tuple(pre)  # type: ignore[attr-defined]
        tool.postconditions = tuple(post)  # type: ignore[attr-defined]
        return tool

    return decorate


class Tool:
    """One tool of a `kind: tools` file: its conditions (expressions or trusted hooks) and optional handler."""

    def __init__(self, decl: Any, root: Path | None, trusted: bool) -> None:
        from contractstudio.runtime.conditions import Check

        self.name: str = decl.name
        self.description: str = decl.description or ""
        self.params = dict(decl.params)
        self.arguments = _arguments_model(decl)
        self.pre = [Check(c, f"{decl.name}.preconditions[{i}]", root=root, trusted=trusted) for i, c in enumerate(decl.preconditions)]
        self.post = [Check(c, f"{decl.name}.postconditions[{i}]", root=root, trusted=trusted) for i, c in enumerate(decl.postconditions)]
        self.handler_spec: str | None = decl.handler
        self._root, self._trusted = root, trusted
        self._handler: Callable[..., Any] | None = None

    def bind(self, params: dict[str, Any]) -> tuple[dict[str, Any] | None, list[str]]:
        """The arguments validated against the declared parameters, defaults bound; or None and what is wrong."""
        from pydantic import ValidationError

        from contractstudio.documents import patterns
        from contractstudio.documents.constraints import TYPE_PATTERN_S

        try:
            with patterns.shared_budget(patterns.RegexBudget(TYPE_PATTERN_S)):  # backtracking patterns share one budget
                bound = self.arguments.model_validate(params)
        except ValidationError as err:
            return None, [self._argument_error(e) for e in err.errors(include_url=False)]
        return bound.model_dump(by_alias=True), []

    def check(self, **params: Any) -> str | None:
        """The failure text of the contracts for these arguments, or None when every one passes."""
        return self._check(params)[1]

    def _check(self, params: dict[str, Any]) -> tuple[dict[str, Any] | None, str | None]:
        values, wrong = self.bind(params)
        if values is None:  # conditions never see a missing or ill-typed argument
            return None, failure_message(wrong, [])
        failed = ([e for e in (self._failure(c, values) for c in self.pre) if e],
                  [e for e in (self._failure(c, values) for c in self.post) if e])
        return values, failure_message(*failed)

    def _argument_error(self, e: Any) -> str:
        loc = tuple(e.get("loc") or ())
        name = str(loc[0]) if loc else "?"
        if e.get("type") == "missing" and len(loc) == 1:
            spec = self.params.get(name)
            return f"missing required argument '{name}'" + (f" ({spec.type})" if spec is not None else "")
        if e.get("type") == "extra_forbidden" and len(loc) == 1:
            return f"unexpected argument '{name}' (parameters: {', '.join(self.params) or 'none'})"
        return argument_error(name, {**e, "loc": loc[1:]})

    @staticmethod
    def _failure(check: Any, params: dict[str, Any]) -> str | None:
        _applies, passed, error = check.evaluate(params, explain=False)
        return None if passed else error or check.label

    def __call__(self, **params: Any) -> Any:
        """Check the arguments and contracts; run the handler only when all pass (no handler: None)."""
        values, message = self._check(params)
        if message is not None or values is None:
            return message
        if self.handler_spec is None:
            return None
        if self._handler is None:
            self._handler = load_hook(self.handler_spec, self._root, self._trusted, f"tool '{self.name}' handler")
        return self._handler(**values)

    def as_function(self) -> Callable[..., Any]:
        """A plain Python function for agent frameworks: the tool's name, description and parameters (with defaults)."""

        def tool(**params: Any) -> Any:
            return self(**params)

        tool.__name__ = tool.__qualname__ = self.name
        tool.__doc__ = self.description
        tool.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
            [inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, annotation=spec.type,
                               default=inspect.Parameter.empty if spec.required else spec.default)
             for name, spec in self.params.items()])
        return tool


def _arguments_model(decl: Any) -> Any:
    """The tool's parameters as a model: declared types and constraints, defaults, no undeclared argument."""
    from contractstudio.documents.models import TypeDecl
    from contractstudio.documents.types import TypeBuildError, TypeSystem
    from contractstudio.runtime.errors import ContractError

    types = TypeSystem.from_decls({decl.name: TypeDecl(extra="forbid", fields=dict(decl.params))})
    try:
        return types.model(decl.name)
    except TypeBuildError as err:
        raise ContractError(f"tool '{decl.name}': its parameters cannot be checked: {err}") from None


class ToolSet:
    """A loaded `kind: tools` file: its tools by name."""

    def __init__(self, doc: Any, *, path: str | None = None, trusted: bool = False) -> None:
        root = hook_folder(path or None, trusted).folder
        self.name: str = doc.name
        self.doc = doc
        self.path = path
        self.tools: dict[str, Tool] = {t.name: Tool(t, root, trusted) for t in doc.tools}

    def __getitem__(self, name: str) -> Tool:
        return self.tools[name]

    def __iter__(self) -> Any:
        return iter(self.tools.values())

    def functions(self) -> dict[str, Callable[..., Any]]:
        """Every tool as a plain Python function, by name."""
        return {name: tool.as_function() for name, tool in self.tools.items()}

    def call(self, name: str, **params: Any) -> Any:
        """Call a tool by name (contracts first)."""
        if name not in self.tools:
            raise KeyError(f"no tool named '{name}' in '{self.name}' (tools: {', '.join(self.tools) or 'none'})")
        return self.tools[name](**params)
