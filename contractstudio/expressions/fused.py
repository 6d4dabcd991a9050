"""Common shapes of an expression fused into one closure each (closures.py builds every other node).

`input.query` (a name and its field), `a >= 0.55` (one comparison, a constant read rather than run), `s.strip()` (a str
method) and `len(xs)` (a function called without keywords) are most of what a contract's conditions evaluate. Each
fused closure does what the closures of its nodes did in the same order, with the same sandbox operations and error
texts, and counts a step for every node it stands for; near the step bound `Meter.recount` counts them one by one, so
the bound falls, and the work charged is, where the tree walk's is (tests/test_expression_closures.py).
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from typing import Any

import contractstudio.expressions.allowlist as allowlist
import contractstudio.expressions.sandbox as sandbox
from contractstudio.expressions.sandbox import MAX_STEPS, ExpressionError, Meter

Run = Callable[[dict[str, Any], Meter], Any]


def allowed_constant(node: ast.AST) -> bool:
    """A constant the walk returns (anything else is refused when evaluated)."""
    return isinstance(node, ast.Constant) and (node.value is None or isinstance(node.value, (bool, int, float, str)))


def attribute(node: ast.Attribute, b: Any, ex: Any) -> Run:
    attr, get_field, declared = node.attr, sandbox.get_field, sandbox.FIELD_NAMES
    if attr.startswith("_"):  # refused by get_field, after its value is evaluated
        value = b(node.value)

        def run_hidden(env: dict[str, Any], m: Meter) -> Any:
            m.steps += 1
            if m.steps > MAX_STEPS:
                m.step()
            return get_field(value(env, m), attr)
        return run_hidden
    if isinstance(node.value, ast.Name) and not node.value.id.startswith("_"):
        # `input.query`: the name's node and the attribute's in one closure, two steps as the walk counts them.
        ident = node.value.id

        def run_named(env: dict[str, Any], m: Meter) -> Any:
            m.steps += 2
            if m.steps > MAX_STEPS:
                m.recount(2)
            if ident not in env:
                raise ExpressionError(f"name '{ident}' is not defined")
            obj = env[ident]
            known = declared.get(id(type(obj)))  # a record's declared field: get_field's own first lookup
            if known is not None:
                py_name = known.get(attr)
                if py_name is not None:
                    return getattr(obj, py_name)
            return get_field(obj, attr)
        return run_named
    value = b(node.value)

    def run(env: dict[str, Any], m: Meter) -> Any:
        m.steps += 1
        if m.steps > MAX_STEPS:
            m.step()
        obj = value(env, m)
        known = declared.get(id(type(obj)))
        if known is not None:
            py_name = known.get(attr)
            if py_name is not None:
                return getattr(obj, py_name)
        return get_field(obj, attr)
    return run


def compare_one(node: ast.Compare, b: Any, ex: Any) -> Run:
    """`a OP b`, the common case: numbers and None compare in constant work; a constant right side is read, not run."""
    first, op, right_node = b(node.left), node.ops[0], node.comparators[0]
    compare, charge, scalars, ordered = ex.compare, ex.charge, ex.SCALARS, ex.ORDERED.get(type(node.ops[0]))
    constant = allowed_constant(right_node)
    fixed: Any = right_node.value if constant else None  # type: ignore[attr-defined]
    second = None if constant else b(right_node)

    def run(env: dict[str, Any], m: Meter) -> Any:
        m.steps += 1
        if m.steps > MAX_STEPS:
            m.step()
        left = first(env, m)
        if second is None:
            m.steps += 1
            if m.steps > MAX_STEPS:
                m.step()
            right = fixed
        else:
            right = second(env, m)
        if type(left) not in scalars or type(right) not in scalars:
            charge(m, op, left, right)
        if ordered is None:
            return compare(op, left, right)
        try:
            return bool(ordered(left, right))
        except TypeError:
            raise ExpressionError(f"cannot order {sandbox.type_name(left)} and {sandbox.type_name(right)}") from None
    return run


def method_call(func: ast.Attribute, args: list[Run], b: Any) -> Run:
    """`receiver.method(args)` of an allowlisted method: a str method but `join` (which scans its argument too) runs
    `call_method`'s own path for a str, looked up once; anything else goes to `call_method`."""
    method, call_method = func.attr, allowlist.call_method
    on_str = allowlist.STR_METHODS.get(method) if method != "join" else None
    if not args and isinstance(func.value, ast.Name) and not func.value.id.startswith("_"):
        # `s.strip()`: no arguments, so the receiver's step follows the call's at once.
        ident = func.value.id

        def run_named(env: dict[str, Any], m: Meter) -> Any:
            m.steps += 2
            if m.steps > MAX_STEPS:
                m.recount(2)
            if ident not in env:
                raise ExpressionError(f"name '{ident}' is not defined")
            obj = env[ident]
            try:
                if on_str is not None and isinstance(obj, str):
                    m.scan(obj)
                    return m.bounded(on_str(obj))
                return call_method(obj, method, [], m)
            except TypeError as err:
                raise ExpressionError(f"{method}(): {err}") from None
        return run_named
    receiver = b(func.value)

    def run(env: dict[str, Any], m: Meter) -> Any:
        m.steps += 1
        if m.steps > MAX_STEPS:
            m.step()
        values = [a(env, m) for a in args] if len(args) > 1 else [args[0](env, m)] if args else []
        obj = receiver(env, m)
        try:
            if on_str is not None and isinstance(obj, str):
                m.scan(obj)
                return m.bounded(on_str(obj, *values))
            return call_method(obj, method, values, m)
        except TypeError as err:
            raise ExpressionError(f"{method}(): {err}") from None
    return run


def plain_call(fname: str, args: list[Run]) -> Run:
    """An allowlisted function called without keywords, e.g. `len(input.documents)`."""
    fn = allowlist.FUNCTIONS[fname]
    if len(args) == 1:
        [arg] = args

        def run_one(env: dict[str, Any], m: Meter) -> Any:
            m.steps += 1
            if m.steps > MAX_STEPS:
                m.step()
            value = arg(env, m)
            if fname in env:
                raise ExpressionError("only allowlisted functions and methods can be called")
            try:
                return m.bounded(fn(m, value))
            except TypeError as err:
                raise ExpressionError(f"{fname}(): {err}") from None
        return run_one

    def run(env: dict[str, Any], m: Meter) -> Any:
        m.steps += 1
        if m.steps > MAX_STEPS:
            m.step()
        values = [a(env, m) for a in args]
        if fname in env:
            raise ExpressionError("only allowlisted functions and methods can be called")
        try:
            return m.bounded(fn(m, *values))
        except TypeError as err:
            raise ExpressionError(f"{fname}(): {err}") from None
    return run
