"""Conditions at run time: compiled expressions or trusted Python hooks, giving pass/fail and a message."""

from __future__ import annotations

import ast
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol

from pydantic import BaseModel

from contractstudio.documents.models import Condition as WrittenCondition
from contractstudio.expressions import ExpressionError, compile_expression, render_template
from contractstudio.hooks import HookError, hook_outcome, resolve_hook
from contractstudio.runtime.errors import ContractError, UntrustedHook
from contractstudio.safe_text import shorten


def load_hook(spec: str, root: Path | None, trusted: bool, where: str) -> Callable[..., Any]:
    """Import a `module:function` hook (contractstudio/hooks.py resolves it), only in a trusted workspace; a hook that
    cannot be resolved is a ContractError."""
    if not trusted:
        raise UntrustedHook(
            f"{where} names the Python hook '{spec}'; Python hooks run only in a trusted workspace "
            "(pass --trust on the command line, or trust=True to cs.load)"
        )
    try:
        return resolve_hook(spec, root)
    except HookError as err:
        raise ContractError(f"{where}: the Python hook '{spec}': {err}") from None


class Condition(Protocol):
    """What the engine asks of a condition of a plan's `pre` or `post`: a written one (Check) or a Python contract's
    method (symbolic/plan.py's MethodCheck)."""

    @property
    def id(self) -> str | None: ...  # the condition's id (the events and eval's counts name it)
    @property
    def source(self) -> str: ...  # what it checks, as the debugger shows it
    @property
    def remedy(self) -> bool: ...  # False: a failure ends the call at once, without a remedy
    @property
    def raised_at(self) -> str | None: ...  # `FILE:LINE` of what a Python condition raised last, else None

    def evaluate(self, values: dict[str, Any], explain: bool = True) -> tuple[bool, bool, str | None]:
        """(applies, passed, error text)."""
        ...


class Check:
    """One compiled condition of a `pre`, `post`, or tool contract list."""

    __slots__ = ("id", "label", "source", "when", "test", "hook", "message", "remedy", "raised_at", "_shown", "_runs")

    def __init__(self, cond: WrittenCondition, label: str, *, root: Path | None = None, trusted: bool = False) -> None:
        self.id = cond.id
        self.label = f"{label} '{cond.id}'" if cond.id else label
        self.source = cond.assert_ or f"python: {cond.python}"
        self.message = cond.message
        self.remedy = cond.remedy  # False: a failure ends the call at once, without a remedy
        self.raised_at: str | None = None  # a written condition names no raising line (its source says what failed)
        try:
            self.when = compile_expression(cond.when) if cond.when else None
            self.test = compile_expression(cond.assert_) if cond.assert_ else None
        except ExpressionError as err:
            raise ContractError(f"{self.label}: {err}") from None
        self._shown: list[tuple[str, Any]] | None = None
        self._runs: tuple[Callable[[dict[str, Any]], Any] | None, ...] | None = None  # (when, test): _evaluators()
        self.hook: Callable[..., Any] | None = None
        if cond.python:
            self.hook = _DeferredHook(cond.python, root, trusted, self.label)

    def evaluate(self, values: dict[str, Any], explain: bool = True) -> tuple[bool, bool, str | None]:
        """(applies, passed, error text): `applies` is False when the `when` guard is false.

        With `explain`, a failed assert's text ends with the condition itself, so the reader
        (and the model, in a remedy) sees the constraint and not only the message.
        """
        when, test = self._runs or self._evaluators()
        try:
            if when is not None and not when(values):
                return False, True, None
        except ExpressionError as err:
            return True, False, f"{self.label}: its `when` guard could not be evaluated: {err}"
        why: str | None = None
        if test is not None:
            try:
                passed = bool(test(values))
            except ExpressionError as err:
                return True, False, f"{self.label}: `{self.source}` could not be evaluated: {err}"
        else:
            assert self.hook is not None
            try:
                passed, why = hook_outcome(self.hook(**values))
            except UntrustedHook:
                raise
            except Exception as err:  # noqa: BLE001 - a raising hook is a failed condition (its message is the error)
                passed, why = False, str(err) or type(err).__name__
        if passed:
            return True, True, None
        return True, False, self.failure_text(values, why, explain)

    def _evaluators(self) -> tuple[Callable[[dict[str, Any]], Any] | None, ...]:
        """What `Expression.evaluate` runs for the guard and the assert: kept once both are settled (warmed up), a
        call per condition less."""
        runs = tuple(None if e is None else e.evaluator() for e in (self.when, self.test))
        if all(e is None or e.settled for e in (self.when, self.test)):
            self._runs = runs
        return runs

    def failure_text(self, values: dict[str, Any], why: str | None, explain: bool = True) -> str:
        """The rendered message, with the condition that failed, so the reader sees the constraint."""
        if self.message:
            try:
                text = render_template(self.message, values)
            except ExpressionError as err:
                text = f"{self.message} (the message could not be rendered: {err})"
        else:
            text = why or f"{self.label} failed"
        if self.test is not None:
            if not explain and self.message:
                return text
            values_text = self.values_text(values)
            return f"{text} (condition: {self.source}{'; ' + values_text if values_text else ''})"
        return f"{text} ({why})" if why and self.message else text

    def values_text(self, values: dict[str, Any]) -> str:
        """The values of the fields the condition reads, e.g. `output.coverage_score = 0.2` (only on failure)."""
        if self._shown is None:
            self._shown = []
            for chain in field_chains(self.source):
                try:
                    self._shown.append((chain, compile_expression(chain)))
                except ExpressionError:
                    continue
        parts = []
        for chain, expr in self._shown:
            try:
                parts.append(f"{chain} = {_short(expr.evaluate(values))}")
            except ExpressionError:
                continue
        return ", ".join(parts)


ROOTS = ("input", "output", "act")


def field_chains(src: str, limit: int = 3) -> list[str]:
    """The attribute chains rooted at input/output/act that an expression reads (read from its syntax, never run)."""
    try:
        tree = ast.parse(src, mode="eval")
    except SyntaxError:
        return []
    parents: dict[int, ast.AST] = {}
    for node in ast.walk(tree):
        for child in ast.iter_child_nodes(node):
            parents[id(child)] = node
    found: list[str] = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Attribute):
            continue
        parent = parents.get(id(node))
        if isinstance(parent, ast.Call) and parent.func is node:
            continue  # a method, not a field
        if isinstance(parent, ast.Attribute):
            grand = parents.get(id(parent))
            if not (isinstance(grand, ast.Call) and grand.func is parent):
                continue  # only the longest chain is shown
        root: ast.AST = node
        while isinstance(root, ast.Attribute):
            root = root.value
        if isinstance(root, ast.Name) and root.id in ROOTS:
            text = ast.unparse(node)
            if text not in found:
                found.append(text)
    return found[:limit]


def _short(value: Any, limit: int = 60) -> str:
    if isinstance(value, BaseModel):
        value = value.model_dump(mode="json")
    elif isinstance(value, list):
        value = [v.model_dump(mode="json") if isinstance(v, BaseModel) else v for v in value]
    try:
        text = json.dumps(value, ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        text = repr(value)
    return shorten(text, limit - 3)


class _DeferredHook:
    """A hook imported on first use, so loading an untrusted file works and only running it is refused."""

    __slots__ = ("spec", "root", "trusted", "where", "fn")

    def __init__(self, spec: str, root: Path | None, trusted: bool, where: str) -> None:
        self.spec, self.root, self.trusted, self.where = spec, root, trusted, where
        self.fn: Callable[..., Any] | None = None

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if self.fn is None:
            self.fn = load_hook(self.spec, self.root, self.trusted, self.where)
        return self.fn(*args, **kwargs)
