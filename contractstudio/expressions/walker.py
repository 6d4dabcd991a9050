"""The tree walk of an allowlisted expression: the reference semantics that the closures are tested against.

It also evaluates trees too deep to build into closures. Every node costs a step; every built value is measured.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from typing import Any

import contractstudio.expressions.allowlist as allowlist
import contractstudio.expressions.sandbox as sandbox
from contractstudio.expressions.operators import bind, charge, compare
from contractstudio.expressions.sandbox import ExpressionError
from contractstudio.expressions.syntax import Parsed


class Walker:
    """Walks an allowlisted tree. Every node costs a step; every built value is measured."""

    def __init__(self, parsed: Parsed) -> None:
        self.parsed = parsed
        self.meter = sandbox.Meter()

    def eval(self, node: ast.AST, env: dict[str, Any]) -> Any:
        # The hottest function of a contracted call: the step count and the dispatch are inlined.
        meter = self.meter
        meter.steps += 1
        if meter.steps > sandbox.MAX_STEPS:
            meter.step()  # raises with the message
        method = _DISPATCH.get(type(node))
        if method is None:  # unreachable for a checked tree; kept as a second fence
            raise ExpressionError(f"'{type(node).__name__}' is not allowed in an expression")
        return method(self, node, env)

    def e_Constant(self, node: ast.Constant, env: dict[str, Any]) -> Any:
        if node.value is None or isinstance(node.value, (bool, int, float, str)):
            return node.value
        raise ExpressionError(f"{type(node.value).__name__} literals are not allowed")

    def e_Name(self, node: ast.Name, env: dict[str, Any]) -> Any:
        if node.id.startswith("_"):
            raise ExpressionError(f"names starting with '_' are not allowed: '{node.id}'")
        if node.id in env:
            return env[node.id]
        raise ExpressionError(f"name '{node.id}' is not defined")

    def e_Attribute(self, node: ast.Attribute, env: dict[str, Any]) -> Any:
        return sandbox.get_field(self.eval(node.value, env), node.attr)

    def e_Subscript(self, node: ast.Subscript, env: dict[str, Any]) -> Any:
        obj = self.eval(node.value, env)
        if isinstance(node.slice, ast.Slice):
            parts = [None if p is None else self.eval(p, env) for p in (node.slice.lower, node.slice.upper, node.slice.step)]
            if not all(p is None or (isinstance(p, int)) for p in parts):
                raise ExpressionError("slice bounds must be ints")
            if parts[2] == 0:
                raise ExpressionError("slice step cannot be zero")
            return self.meter.bounded(sandbox.subscript(obj, slice(*parts)))  # a slice is a copy
        return sandbox.subscript(obj, self.eval(node.slice, env))

    def e_List(self, node: ast.List | ast.Tuple, env: dict[str, Any]) -> Any:
        return self.meter.bounded([self.eval(e, env) for e in node.elts])

    e_Tuple = e_List

    def e_Set(self, node: ast.Set, env: dict[str, Any]) -> Any:
        return self.meter.bounded({self.eval(e, env) for e in node.elts})

    def e_Dict(self, node: ast.Dict, env: dict[str, Any]) -> Any:
        out = {}
        for k, v in zip(node.keys, node.values, strict=True):
            if k is None:
                raise ExpressionError("'**' unpacking is not allowed")
            out[self.eval(k, env)] = self.eval(v, env)
        return self.meter.bounded(out)

    def e_BinOp(self, node: ast.BinOp, env: dict[str, Any]) -> Any:
        return sandbox.binary(type(node.op), self.eval(node.left, env), self.eval(node.right, env), self.meter)

    def e_UnaryOp(self, node: ast.UnaryOp, env: dict[str, Any]) -> Any:
        value = self.eval(node.operand, env)
        if isinstance(node.op, ast.Not):
            return not sandbox.truth(value)
        if not isinstance(value, (int, float)) or not isinstance(node.op, (ast.USub, ast.UAdd)):
            raise ExpressionError(f"unary operator on a {sandbox.type_name(value)} value")
        return -value if isinstance(node.op, ast.USub) else +value

    def e_BoolOp(self, node: ast.BoolOp, env: dict[str, Any]) -> Any:
        is_and = isinstance(node.op, ast.And)
        value: Any = None
        for part in node.values:
            value = self.eval(part, env)
            if sandbox.truth(value) != is_and:
                return value
        return value

    def e_IfExp(self, node: ast.IfExp, env: dict[str, Any]) -> Any:
        return self.eval(node.body if sandbox.truth(self.eval(node.test, env)) else node.orelse, env)

    def e_Compare(self, node: ast.Compare, env: dict[str, Any]) -> Any:
        left = self.eval(node.left, env)
        for op, comp in zip(node.ops, node.comparators, strict=True):
            right = self.eval(comp, env)
            self.charge(op, left, right)
            if not compare(op, left, right):
                return False
            left = right
        return True

    def charge(self, op: ast.cmpop, a: Any, b: Any) -> None:
        charge(self.meter, op, a, b)

    def e_ListComp(self, node: ast.ListComp | ast.GeneratorExp, env: dict[str, Any]) -> Any:
        # Generator expressions are computed eagerly: no generator object (and no gi_frame) ever exists.
        return self.meter.bounded([self.eval(node.elt, inner) for inner in self.loops(node.generators, 0, env)])

    e_GeneratorExp = e_ListComp

    def e_SetComp(self, node: ast.SetComp, env: dict[str, Any]) -> Any:
        return self.meter.bounded({self.eval(node.elt, inner) for inner in self.loops(node.generators, 0, env)})

    def e_DictComp(self, node: ast.DictComp, env: dict[str, Any]) -> Any:
        return self.meter.bounded({self.eval(node.key, i): self.eval(node.value, i) for i in self.loops(node.generators, 0, env)})

    def loops(self, gens: list[ast.comprehension], index: int, env: dict[str, Any]) -> Iterator[dict[str, Any]]:
        """The environments of a comprehension's iterations, one per item that passes the `if`s.

        One scope per loop level, rebound on each item: every consumer evaluates the element before asking
        for the next environment, so nothing outlives its iteration (a copy per item was the hot spot).
        """
        gen = gens[index]
        last = index == len(gens) - 1
        target, ifs, meter = gen.target, gen.ifs, self.meter
        name = target.id if isinstance(target, ast.Name) and not target.id.startswith("_") else None
        inner = dict(env)
        for item in sandbox.iterate(self.eval(gen.iter, env), meter):
            meter.iterate()
            if name is not None:
                inner[name] = item
            else:
                bind(target, item, inner)
            passed = True
            for c in ifs:
                if not sandbox.truth(self.eval(c, inner)):
                    passed = False
                    break
            if not passed:
                continue
            if last:
                yield inner
            else:
                yield from self.loops(gens, index + 1, inner)

    def e_Call(self, node: ast.Call, env: dict[str, Any]) -> Any:
        func = node.func
        args = [self.eval(a, env) for a in node.args]
        if isinstance(func, ast.Name) and func.id in allowlist.FUNCTIONS and func.id not in env:
            kwargs = {}
            for kw in node.keywords:
                if kw.arg is None or kw.arg not in allowlist.FUNCTION_KEYWORDS.get(func.id, set()):
                    raise ExpressionError(f"{func.id}() takes no such keyword argument")
                kwargs[kw.arg] = self.eval(kw.value, env)
            try:
                return self.meter.bounded(allowlist.FUNCTIONS[func.id](self.meter, *args, **kwargs))
            except TypeError as err:
                raise ExpressionError(f"{func.id}(): {err}") from None
        if isinstance(func, ast.Attribute) and not node.keywords and func.attr in allowlist.METHOD_NAMES:
            receiver = self.eval(func.value, env)
            try:
                return allowlist.call_method(receiver, func.attr, args, self.meter)
            except TypeError as err:
                raise ExpressionError(f"{func.attr}(): {err}") from None
        raise ExpressionError("only allowlisted functions and methods can be called")


_DISPATCH = {getattr(ast, name[2:]): fn for name, fn in vars(Walker).items() if name.startswith("e_")}
