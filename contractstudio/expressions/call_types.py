"""The result types of calls to the allowlisted functions and methods, and the findings their arguments earn."""

from __future__ import annotations

import ast
from typing import Any, Protocol

import contractstudio.expressions.allowlist as allowlist
from contractstudio.documents.type_syntax import ANY, NONE, ListOf, Prim, TypeExpr, union_of, without_none
from contractstudio.documents.types import TypeSystem
from contractstudio.expressions.kinds import BOOL, FLOAT, INT, STR, element_of, kind_of


class Checker(Protocol):
    """What a call's type needs of the expression checker: the declared types and a way to report."""

    @property
    def types(self) -> TypeSystem | None: ...

    def issue(self, code: str, message: str, node: ast.AST | tuple[int, int], hint: str | None = None) -> None: ...

    def attr_span(self, node: ast.Attribute) -> tuple[int, int]: ...

# function name -> (min args, max args or None)
ARITY: dict[str, tuple[int, int | None]] = {
    "len": (1, 1), "min": (1, None), "max": (1, None), "sum": (1, 2), "abs": (1, 1), "all": (1, 1), "any": (1, 1),
    "round": (1, 2), "sorted": (1, 1), "str": (0, 1), "int": (0, 1), "float": (0, 1), "bool": (0, 1),
    "list": (0, 1), "set": (0, 1), "matches": (2, 2),
}
_STR_RESULT: dict[str, TypeExpr] = {"strip": STR, "lstrip": STR, "rstrip": STR, "lower": STR, "upper": STR, "title": STR, "capitalize": STR,
               "casefold": STR, "replace": STR, "join": STR, "removeprefix": STR, "removesuffix": STR,
               "count": INT, "find": INT, "rfind": INT, "split": ListOf(STR), "rsplit": ListOf(STR),
               "splitlines": ListOf(STR), "partition": ListOf(STR), "rpartition": ListOf(STR)}

def function_type(checker: Checker, node: ast.Call, name: str, args: list[tuple[TypeExpr, Any]]) -> TypeExpr:
    """The type of a call to an allowlisted function; wrong argument counts and kinds are findings."""
    low, high = ARITY[name]
    if len(args) < low or (high is not None and len(args) > high):
        want = f"{low}" if low == high else f"{low} to {high}" if high is not None else f"at least {low}"
        checker.issue("EXP301", f"{name}() takes {want} argument(s), not {len(args)}", node)
        return ANY
    kinds = [kind_of(t, checker.types) for t, _ in args]
    first = args[0][0] if args else ANY
    if name == "len":
        if kinds[0] in ("num", "bool", "none", "record"):
            checker.issue("EXP301", f"len() of a {without_none(first)} value", node)
        return INT
    if name == "matches":
        if kinds[0] in ("num", "bool", "list", "record"):
            checker.issue("EXP301", f"matches() searches text, not a {without_none(first)} value", node.args[0])
        pattern = args[1][1]
        if isinstance(pattern, str):
            problem = allowlist.regex_problem(pattern)
            if problem:
                checker.issue("EXP401" if "time" in problem or "longer" in problem else "EXP101", problem, node.args[1])
        return BOOL
    if name in ("all", "any", "bool"):
        return BOOL
    if name in ("str", "int", "float"):
        return Prim(name)
    if name == "round":
        return INT if len(args) == 1 else FLOAT
    if name in ("sorted", "list", "set"):
        if args and kinds[0] in ("num", "bool", "record"):
            checker.issue("EXP301", f"{name}() of a {without_none(first)} value: it is not iterable", node)
        return ListOf(element_of(first, checker.types)) if args else ListOf(ANY)
    if name in ("sum", "min", "max", "abs"):
        if name == "abs" or (name in ("min", "max") and len(args) > 1):
            return union_of([t for t, _ in args])
        if kinds[0] in ("num", "bool", "record", "str" if name == "sum" else ""):
            checker.issue("EXP301", f"{name}() of a {without_none(first)} value", node)
            return ANY
        item = element_of(first, checker.types)
        return INT if name == "sum" and item in (BOOL, INT) else item
    return ANY


def method_type(checker: Checker, func: ast.Attribute, recv: TypeExpr, args: list[tuple[TypeExpr, Any]]) -> TypeExpr:
    """The type of an allowlisted method called on a value of type `recv`."""
    kind, name = kind_of(recv, checker.types), func.attr
    where = checker.attr_span(func)
    if kind == "any":
        return ANY
    if kind == "str" and name in allowlist.STR_METHODS:
        if name == "join" and args and kind_of(element_of(args[0][0], checker.types), checker.types) == "num":
            checker.issue("EXP301", "join() needs a list of str, not numbers", func)
        return _STR_RESULT.get(name, BOOL)
    if kind == "list" and name in allowlist.LIST_METHODS:
        return INT
    if kind == "dict" and name in allowlist.DICT_METHODS:
        value = without_none(recv).value  # type: ignore[union-attr]
        return {"keys": ListOf(STR), "values": ListOf(value), "items": ListOf(ANY), "get": union_of([value, NONE])}[name]
    checker.issue("EXP301", f"a {without_none(recv)} value has no method '{name}'", where)
    return ANY
