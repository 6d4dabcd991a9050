"""Expressions turned into nested closures once, then run on every call: the same semantics as the tree walk.

The tree walk of `walker.Walker` pays, at every node of every
evaluation, a dispatch on the node's type, a second Python call and the
reading of the node's fields. Contracted calls evaluate the same few
expressions again and again (they are most of the engine's own work), so each
allowlisted tree is built once into closures that already know their node's
fields. Every closure does exactly what its `e_*` method does, with the same
step count per node, the same sandbox operations and bounds, and the same
error texts; a node type without a closure is handed to the tree walk. The commonest shapes (a name's field, one
comparison, a str method, a plain function call) are built by fused.py, one closure for several nodes.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from typing import Any

import contractstudio.expressions.allowlist as allowlist
import contractstudio.expressions.fused as fused
import contractstudio.expressions.operators as operators
import contractstudio.expressions.sandbox as sandbox
from contractstudio.expressions.sandbox import MAX_STEPS, ExpressionError, Meter

Run = Callable[[dict[str, Any], Meter], Any]


def build(node: ast.AST, walker: Callable[[ast.AST, dict[str, Any], Meter], Any]) -> Run:
    """The closure evaluating `node` (`walker` evaluates a node type that has none)."""
    ex = operators  # the comparison, cost and binding rules the tree walk uses too

    def b(n: ast.AST) -> Run:
        maker = _MAKERS.get(type(n))
        if maker is None:
            return lambda env, m: walker(n, env, m)
        return maker(n, b, ex)

    return b(node)


def _constant(node: ast.Constant, b: Any, ex: Any) -> Run:
    value = node.value
    if fused.allowed_constant(node):
        def run_allowed(env: dict[str, Any], m: Meter) -> Any:
            m.steps += 1
            if m.steps > MAX_STEPS:
                m.step()
            return value
        return run_allowed

    def run(env: dict[str, Any], m: Meter) -> Any:
        m.steps += 1
        if m.steps > MAX_STEPS:
            m.step()
        raise ExpressionError(f"{type(value).__name__} literals are not allowed")
    return run


def _name(node: ast.Name, b: Any, ex: Any) -> Run:
    ident = node.id
    hidden = ident.startswith("_")

    def run(env: dict[str, Any], m: Meter) -> Any:
        m.steps += 1
        if m.steps > MAX_STEPS:
            m.step()
        if hidden:
            raise ExpressionError(f"names starting with '_' are not allowed: '{ident}'")
        if ident in env:
            return env[ident]
        raise ExpressionError(f"name '{ident}' is not defined")
    return run


def _subscript(node: ast.Subscript, b: Any, ex: Any) -> Run:
    obj = b(node.value)
    if isinstance(node.slice, ast.Slice):
        parts = [None if p is None else b(p) for p in (node.slice.lower, node.slice.upper, node.slice.step)]

        def run_slice(env: dict[str, Any], m: Meter) -> Any:
            m.steps += 1
            if m.steps > MAX_STEPS:
                m.step()
            target = obj(env, m)
            bounds = [None if p is None else p(env, m) for p in parts]
            if not all(p is None or (isinstance(p, int)) for p in bounds):
                raise ExpressionError("slice bounds must be ints")
            if bounds[2] == 0:
                raise ExpressionError("slice step cannot be zero")
            return m.bounded(sandbox.subscript(target, slice(*bounds)))
        return run_slice
    index = b(node.slice)

    def run(env: dict[str, Any], m: Meter) -> Any:
        m.steps += 1
        if m.steps > MAX_STEPS:
            m.step()
        target = obj(env, m)
        return sandbox.subscript(target, index(env, m))
    return run


def _sequence(node: ast.List | ast.Tuple | ast.Set, b: Any, ex: Any) -> Run:
    elts = [b(e) for e in node.elts]
    if isinstance(node, ast.Set):  # each element hashed as it comes, as the walk's set display does
        def run_set(env: dict[str, Any], m: Meter) -> Any:
            m.steps += 1
            if m.steps > MAX_STEPS:
                m.step()
            return m.bounded({e(env, m) for e in elts})
        return run_set

    def run(env: dict[str, Any], m: Meter) -> Any:
        m.steps += 1
        if m.steps > MAX_STEPS:
            m.step()
        return m.bounded([e(env, m) for e in elts])
    return run


def _dict(node: ast.Dict, b: Any, ex: Any) -> Run:
    pairs = [(None if k is None else b(k), b(v)) for k, v in zip(node.keys, node.values, strict=True)]

    def run(env: dict[str, Any], m: Meter) -> Any:
        m.steps += 1
        if m.steps > MAX_STEPS:
            m.step()
        out = {}
        for k, v in pairs:
            if k is None:
                raise ExpressionError("'**' unpacking is not allowed")
            out[k(env, m)] = v(env, m)
        return m.bounded(out)
    return run


def _binop(node: ast.BinOp, b: Any, ex: Any) -> Run:
    op, left, right, binary = type(node.op), b(node.left), b(node.right), sandbox.binary

    def run(env: dict[str, Any], m: Meter) -> Any:
        m.steps += 1
        if m.steps > MAX_STEPS:
            m.step()
        return binary(op, left(env, m), right(env, m), m)
    return run


def _unaryop(node: ast.UnaryOp, b: Any, ex: Any) -> Run:
    operand, op = b(node.operand), node.op
    is_not, negate, sign = isinstance(op, ast.Not), isinstance(op, ast.USub), isinstance(op, (ast.USub, ast.UAdd))

    def run(env: dict[str, Any], m: Meter) -> Any:
        m.steps += 1
        if m.steps > MAX_STEPS:
            m.step()
        value = operand(env, m)
        if is_not:
            return not sandbox.truth(value)
        if not isinstance(value, (int, float)) or not sign:
            raise ExpressionError(f"unary operator on a {sandbox.type_name(value)} value")
        return -value if negate else +value
    return run


def _boolop(node: ast.BoolOp, b: Any, ex: Any) -> Run:
    is_and, parts, truth = isinstance(node.op, ast.And), [b(v) for v in node.values], sandbox.truth

    def run(env: dict[str, Any], m: Meter) -> Any:
        m.steps += 1
        if m.steps > MAX_STEPS:
            m.step()
        value: Any = None
        for part in parts:
            value = part(env, m)
            if truth(value) != is_and:
                return value
        return value
    return run


def _ifexp(node: ast.IfExp, b: Any, ex: Any) -> Run:
    test, body, orelse, truth = b(node.test), b(node.body), b(node.orelse), sandbox.truth

    def run(env: dict[str, Any], m: Meter) -> Any:
        m.steps += 1
        if m.steps > MAX_STEPS:
            m.step()
        return body(env, m) if truth(test(env, m)) else orelse(env, m)
    return run


def _compare(node: ast.Compare, b: Any, ex: Any) -> Run:
    if len(node.ops) == 1:
        return fused.compare_one(node, b, ex)
    first = b(node.left)
    rest = [(op, b(c)) for op, c in zip(node.ops, node.comparators, strict=True)]
    compare, charge = ex.compare, ex.charge

    def run(env: dict[str, Any], m: Meter) -> Any:
        m.steps += 1
        if m.steps > MAX_STEPS:
            m.step()
        left = first(env, m)
        for op, comp in rest:
            right = comp(env, m)
            charge(m, op, left, right)
            if not compare(op, left, right):
                return False
            left = right
        return True
    return run


def _each(gens: list[tuple[Any, Run, list[Run], str | None]], index: int, env: dict[str, Any], m: Meter,
          bind: Callable[..., None], elt: Run, add: Callable[[Any], Any]) -> None:
    """As the walk's `loops`, with `add(elt(scope))` where it yields: one scope per level, rebound per item (each element
    is evaluated before the next item). A call per level, not a generator resumed through every level per element."""
    target, source, ifs, name = gens[index]
    last = index == len(gens) - 1
    inner = dict(env)
    truth = sandbox.truth
    for item in sandbox.iterate(source(env, m), m):
        m.iterations += 1
        if m.iterations > sandbox.MAX_ITERATIONS:
            m.iterations -= 1
            m.iterate()  # raises, counting as the walk does
        if name is not None:
            inner[name] = item
        else:
            bind(target, item, inner)
        passed = True
        for c in ifs:
            if not truth(c(inner, m)):
                passed = False
                break
        if not passed:
            continue
        if last:
            add(elt(inner, m))
        else:
            _each(gens, index + 1, inner, m, bind, elt, add)


def _generators(node: Any, b: Any) -> list[tuple[Any, Run, list[Run], str | None]]:
    out = []
    for gen in node.generators:
        target = gen.target
        name = target.id if isinstance(target, ast.Name) and not target.id.startswith("_") else None
        out.append((target, b(gen.iter), [b(c) for c in gen.ifs], name))
    return out


def _listcomp(node: ast.ListComp | ast.GeneratorExp | ast.SetComp, b: Any, ex: Any) -> Run:
    # Generator expressions are computed eagerly: no generator object (and no gi_frame) ever exists.
    gens, elt, bind, is_set = _generators(node, b), b(node.elt), ex.bind, isinstance(node, ast.SetComp)

    def run(env: dict[str, Any], m: Meter) -> Any:
        m.steps += 1
        if m.steps > MAX_STEPS:
            m.step()
        out: Any = set() if is_set else []
        _each(gens, 0, env, m, bind, elt, out.add if is_set else out.append)
        return m.bounded(out)
    return run


def _dictcomp(node: ast.DictComp, b: Any, ex: Any) -> Run:
    gens, key, value, bind = _generators(node, b), b(node.key), b(node.value), ex.bind

    def run(env: dict[str, Any], m: Meter) -> Any:
        m.steps += 1
        if m.steps > MAX_STEPS:
            m.step()
        out: dict[Any, Any] = {}
        _each(gens, 0, env, m, bind, lambda i, m: (key(i, m), value(i, m)), lambda kv: out.__setitem__(*kv))  # key first
        return m.bounded(out)
    return run


def _call(node: ast.Call, b: Any, ex: Any) -> Run:
    func = node.func
    args = [b(a) for a in node.args]
    if isinstance(func, ast.Name) and func.id in allowlist.FUNCTIONS:
        fname = func.id
        allowed = allowlist.FUNCTION_KEYWORDS.get(fname, set())
        keywords = [(kw.arg, None if kw.arg is None else b(kw.value)) for kw in node.keywords]
        if not keywords:
            return fused.plain_call(fname, args)

        def run(env: dict[str, Any], m: Meter) -> Any:
            m.steps += 1
            if m.steps > MAX_STEPS:
                m.step()
            values = [a(env, m) for a in args]
            if fname in env:
                raise ExpressionError("only allowlisted functions and methods can be called")
            kwargs = {}
            for arg, value in keywords:
                if arg is None or arg not in allowed:
                    raise ExpressionError(f"{fname}() takes no such keyword argument")
                kwargs[arg] = value(env, m)  # type: ignore[misc]
            try:
                return m.bounded(allowlist.FUNCTIONS[fname](m, *values, **kwargs))
            except TypeError as err:
                raise ExpressionError(f"{fname}(): {err}") from None
        return run
    if isinstance(func, ast.Attribute) and not node.keywords and func.attr in allowlist.METHOD_NAMES:
        return fused.method_call(func, args, b)

    def refused(env: dict[str, Any], m: Meter) -> Any:
        m.steps += 1
        if m.steps > MAX_STEPS:
            m.step()
        for a in args:
            a(env, m)
        raise ExpressionError("only allowlisted functions and methods can be called")
    return refused


_MAKERS: dict[type, Callable[[Any, Any, Any], Run]] = {
    ast.Constant: _constant, ast.Name: _name, ast.Attribute: fused.attribute, ast.Subscript: _subscript,
    ast.List: _sequence, ast.Tuple: _sequence, ast.Set: _sequence, ast.Dict: _dict, ast.BinOp: _binop,
    ast.UnaryOp: _unaryop, ast.BoolOp: _boolop, ast.IfExp: _ifexp, ast.Compare: _compare,
    ast.ListComp: _listcomp, ast.GeneratorExp: _listcomp, ast.SetComp: _listcomp, ast.DictComp: _dictcomp,
    ast.Call: _call,
}
