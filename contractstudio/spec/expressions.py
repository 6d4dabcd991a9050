"""The safe expression language of FORMAT.md: check, compile, evaluate; message templates.

    check(src, scope, types)          -> (type, [ExprIssue])   static: allowlist, names, fields, types
    compile_expression(src)           -> Expression            refuses anything outside the allowlist
    Expression.evaluate(values)       -> value                 a bounded tree walk, never eval/exec
    check_template(msg, scope, types) -> [ExprIssue]           `{expr}` / `{expr:fmt}` placeholders
    render_template(msg, values)      -> str

Evaluation only ever walks a tree that passed the allowlist; attribute access
reads declared fields of records and keys of mappings, never Python attributes.
"""

from __future__ import annotations

import ast
import operator
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import lru_cache
from itertools import islice
from typing import Any

from contractstudio.spec import allowlist, evaluation, sandbox
from contractstudio.spec.checker import Checker
from contractstudio.spec.syntax import ExprIssue, Parsed, parse
from contractstudio.spec.sandbox import ExpressionError
from contractstudio.spec.types import TypeExpr, TypeSystem

__all__ = [
    "ExprIssue", "ExpressionError", "Expression", "check", "compile_expression", "check_template",
    "render_template", "template_fields",
]



def check(src: str, scope: dict[str, TypeExpr], types: TypeSystem | None = None) -> tuple[TypeExpr | None, list[ExprIssue]]:
    """Type-check an expression against the names in scope; returns its type (None if unknown) and issues."""
    parsed = parse(src)
    if isinstance(parsed, ExprIssue):
        return None, [parsed]
    checker = Checker(parsed, scope, types)
    try:
        result = checker.run()
    except RecursionError:
        return None, [ExprIssue("EXP401", "the expression nests too deeply", 0, len(src))]
    return result, _unique(checker.issues)


def _unique(issues: list[ExprIssue]) -> list[ExprIssue]:
    seen: set[tuple[str, int, int, str]] = set()
    out = []
    for i in issues:
        key = (i.code, i.start, i.end, i.message)
        if key not in seen:
            seen.add(key)
            out.append(i)
    return sorted(out, key=lambda i: (i.start, i.code))


@dataclass(frozen=True, slots=True)
class Expression:
    """A compiled expression: evaluate it with `evaluate(values)`."""

    src: str
    tree: ast.expr
    parsed: Parsed
    run: list[Any] = field(default_factory=list, compare=False, repr=False)  # the closures, built on first use

    @property
    def names(self) -> frozenset[str]:
        """The free names the expression reads (e.g. {'input', 'output'})."""
        nodes = list(ast.walk(self.tree))
        bound = {n.id for n in nodes if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
        called = {id(n.func) for n in nodes if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id in allowlist.FUNCTIONS}
        return frozenset(n.id for n in nodes if isinstance(n, ast.Name) and n.id not in bound and id(n) not in called)

    def evaluate(self, values: dict[str, Any], *, walk: bool = False) -> Any:
        """Evaluate with the given names; raises ExpressionError on any failure.

        `walk=True` uses the tree walk, the reference the closures (evaluation.py) are tested against.
        """
        try:
            if walk:
                return _Evaluator(self.parsed).eval(self.tree, dict(values))
            run = self.run[0] if self.run else self._build()
            return run(dict(values), sandbox.Meter())
        except ExpressionError:
            raise
        except RecursionError:
            raise ExpressionError("the expression nests too deeply") from None
        except MemoryError:
            raise ExpressionError("the expression ran out of memory") from None
        except Exception as err:  # any Python error of an allowlisted operation becomes a clear message
            raise ExpressionError(_describe(err)) from None


    def _build(self) -> Any:
        """The closures of the tree (evaluation.py); a tree too deep to build is walked instead."""
        parsed = self.parsed

        def walk(node: ast.AST, env: dict[str, Any], meter: sandbox.Meter) -> Any:
            evaluator = _Evaluator(parsed)
            evaluator.meter = meter
            return evaluator.eval(node, env)

        try:
            run = evaluation.build(self.tree, walk)
        except RecursionError:
            tree = self.tree

            def run(env: dict[str, Any], meter: sandbox.Meter) -> Any:
                return walk(tree, env, meter)
        self.run.append(run)
        return run


def _describe(err: Exception) -> str:
    text = str(err) or type(err).__name__
    if isinstance(err, ZeroDivisionError):
        return "division by zero"
    if isinstance(err, OverflowError):
        return f"number too large: {text}"
    return text


@lru_cache(maxsize=2048)
def compile_expression(src: str) -> Expression:
    """Parse and allowlist-check an expression; raises ExpressionError when it is refused."""
    parsed = parse(src)
    if isinstance(parsed, ExprIssue):
        raise ExpressionError(parsed.message, parsed.start, parsed.end)
    checker = Checker(parsed, None, None)
    try:
        checker.run()
    except RecursionError:
        raise ExpressionError("the expression nests too deeply") from None
    errors = [i for i in checker.issues if i.code in ("EXP101", "EXP401")]
    if errors:
        first = min(errors, key=lambda i: i.start)
        raise ExpressionError(first.message, first.start, first.end)
    return Expression(src, parsed.tree.body, parsed)


class _Evaluator:
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
            if not _compare(op, left, right):
                return False
            left = right
        return True

    def charge(self, op: ast.cmpop, a: Any, b: Any) -> None:
        _charge(self.meter, op, a, b)

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
                _bind(target, item, inner)
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


_DISPATCH = {getattr(ast, name[2:]): fn for name, fn in vars(_Evaluator).items() if name.startswith("e_")}


def _bind(target: ast.AST, value: Any, env: dict[str, Any]) -> None:
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
            _bind(t, v, env)
        return
    raise ExpressionError("a comprehension variable must be a plain name")


_SCALARS = frozenset({int, float, bool, type(None)})


def _charge(meter: sandbox.Meter, op: ast.cmpop, a: Any, b: Any) -> None:
    """Charge what a comparison does in C: `in` scans its right side, `==` walks both sides."""
    if type(a) in _SCALARS and type(b) in _SCALARS:
        return  # numbers, booleans, None: constant work
    if isinstance(op, (ast.In, ast.NotIn)):
        if isinstance(b, (str, list, tuple)):
            meter.scan(b)
    elif not isinstance(op, (ast.Is, ast.IsNot)) and isinstance(a, (list, tuple, dict, set)) and isinstance(b, (list, tuple, dict, set)):
        meter.work(min(meter.weight(a), meter.weight(b)))
    elif isinstance(a, str) and isinstance(b, str):
        meter.work(min(len(a), len(b)) // 8 + 1)
_ORDERED = {ast.Lt: operator.lt, ast.LtE: operator.le, ast.Gt: operator.gt, ast.GtE: operator.ge}


def _compare(op: ast.cmpop, a: Any, b: Any) -> bool:
    fn = _ORDERED.get(type(op))
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


# Message templates live in templates.py; their names stay importable from here.
from contractstudio.spec.templates import (  # noqa: E402
    MAX_TEMPLATE, TemplateField, check_template, render_template, template_fields,
)
