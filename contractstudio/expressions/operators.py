"""The comparison, cost and binding rules shared by the tree walk and the closures (one semantics, two evaluators)."""

from __future__ import annotations

import ast
import operator
from itertools import islice
from typing import Any

import contractstudio.expressions.sandbox as sandbox
from contractstudio.expressions.sandbox import ExpressionError


def bind(target: ast.AST, value: Any, env: dict[str, Any]) -> None:
    if isinstance(target, ast.Name):
        if target.id.startswith("_"):
            raise ExpressionError("names starting with '_' are not allowed")
        env[target.id] = value
        return
    if isinstance(target, (ast.Tuple, ast.List)):
        items = list(islice(sandbox.iterate(value), len(target.elts) + 1))  # never copy a big value to unpack it
        if len(items) != len(target.elts):
            raise ExpressionError(f"cannot unpack {len(items)} values into {len(target.elts)} names")
        for t, v in zip(target.elts, items, strict=True):
            bind(t, v, env)
        return
    raise ExpressionError("a comprehension variable must be a plain name")


SCALARS = frozenset({int, float, bool, type(None)})


def charge(meter: sandbox.Meter, op: ast.cmpop, a: Any, b: Any) -> None:
    """Charge what a comparison does in C: `in` scans its right side, `==` walks both sides."""
    if type(a) in SCALARS and type(b) in SCALARS:
        return  # numbers, booleans, None: constant work
    if isinstance(op, (ast.In, ast.NotIn)):
        if isinstance(b, (str, list, tuple)):
            meter.scan(b)
    elif not isinstance(op, (ast.Is, ast.IsNot)) and isinstance(a, (list, tuple, dict, set)) and isinstance(b, (list, tuple, dict, set)):
        meter.work(min(meter.weight(a), meter.weight(b)))
    elif isinstance(a, str) and isinstance(b, str):
        meter.work(min(len(a), len(b)) // 8 + 1)
ORDERED = {ast.Lt: operator.lt, ast.LtE: operator.le, ast.Gt: operator.gt, ast.GtE: operator.ge}


def compare(op: ast.cmpop, a: Any, b: Any) -> bool:
    fn = ORDERED.get(type(op))
    if fn is not None:  # the commonest case first: numbers against a bound
        try:
            return bool(fn(a, b))
        except TypeError:
            raise ExpressionError(f"cannot order {sandbox.type_name(a)} and {sandbox.type_name(b)}") from None
    if isinstance(op, ast.Eq):
        return bool(a == b)
    if isinstance(op, ast.NotEq):
        return bool(a != b)
    if isinstance(op, ast.Is):
        return a is b
    if isinstance(op, ast.IsNot):
        return a is not b
    if isinstance(op, (ast.In, ast.NotIn)):
        if isinstance(b, str) and not isinstance(a, str):
            raise ExpressionError(f"'in <str>' needs a str on the left, not {sandbox.type_name(a)}")
        if not isinstance(b, (str, list, tuple, set, frozenset, dict)):
            raise ExpressionError(f"'in' needs a str, list or mapping on the right, not {sandbox.type_name(b)}")
        found = a in b
        return found if isinstance(op, ast.In) else not found
    raise ExpressionError("unsupported comparison")
