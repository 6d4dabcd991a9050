"""Expressions checked and compiled: `check` (static types), `compile_expression`, `Expression.evaluate`.

Evaluation only ever walks a tree that passed the allowlist; attribute access
reads declared fields of records and keys of mappings, never Python attributes.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

import contractstudio.expressions.allowlist as allowlist
import contractstudio.expressions.closures as closures
import contractstudio.expressions.generated as generated
import contractstudio.expressions.helpers as helpers
import contractstudio.expressions.sandbox as sandbox
from contractstudio.documents.type_syntax import TypeExpr
from contractstudio.documents.types import TypeSystem
from contractstudio.expressions.checker import Checker
from contractstudio.expressions.sandbox import SHARED_BUDGET, ExpressionError
from contractstudio.expressions.syntax import ExprIssue, Parsed, parse
from contractstudio.expressions.walker import Walker

__all__ = ["ExprIssue", "ExpressionError", "Expression", "check", "compile_expression"]



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


WARM_EVALUATIONS = 4  # evaluations of one expression on the closures before it is written as one function


@dataclass(frozen=True, slots=True)
class Expression:
    """A compiled expression: evaluate it with `evaluate(values)`."""

    src: str
    tree: ast.expr
    parsed: Parsed
    run: list[Any] = field(default_factory=list, compare=False, repr=False)  # [`evaluator()`, settled], on first use

    @property
    def names(self) -> frozenset[str]:
        """The free names the expression reads (e.g. {'input', 'output'})."""
        nodes = list(ast.walk(self.tree))
        bound = {n.id for n in nodes if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
        called = {id(n.func) for n in nodes
                  if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id in allowlist.FUNCTIONS}
        return frozenset(n.id for n in nodes if isinstance(n, ast.Name) and n.id not in bound and id(n) not in called)

    def evaluate(self, values: dict[str, Any], *, walk: bool = False) -> Any:
        """Evaluate with the given names; raises ExpressionError on any failure.

        `walk=True` uses the tree walk, the reference the closures (closures.py) and the generated function
        (generated.py) are tested against.
        """
        if walk:
            return _translated(_walked, self, values)
        return (self.run[0] if self.run else self.evaluator())(values)

    def evaluator(self) -> Callable[[dict[str, Any]], Any]:
        """What `evaluate` runs now. Its first WARM_EVALUATIONS evaluations run on the closures (closures.py), cheap to
        build; then the tree is written as one generated function (generated.py: about 0.5 ms to write and compile,
        paid only by an expression evaluated again and again, as a contract's conditions are by its calls, and not by
        the one-off evaluations of a file's analysis); a tree it does not write stays on the closures."""
        run = self.run
        if not run:
            closed = self.with_closures()
            left = [WARM_EVALUATIONS]

            def warming(values: dict[str, Any]) -> Any:
                left[0] -= 1
                if left[0] <= 0:  # two threads may both write it: either function is the same evaluator
                    run[:] = [generated.build(self.tree) or closed, True]
                return closed(values)

            run[:] = [warming, False]
        return run[0]

    @property
    def settled(self) -> bool:
        """Whether `evaluator()` is the one it keeps (warmed up): a caller may hold on to it."""
        return len(self.run) == 2 and self.run[1] is True

    def with_closures(self) -> Callable[[dict[str, Any]], Any]:
        """The closures of the tree, with the call's budget and the errors' texts (a tree too deep for them is walked)."""
        parsed = self.parsed

        def walk(node: ast.AST, env: dict[str, Any], meter: sandbox.Meter) -> Any:
            evaluator = Walker(parsed)
            evaluator.meter = meter
            return evaluator.eval(node, env)

        try:
            run = closures.build(self.tree, walk)
        except RecursionError:
            tree = self.tree

            def run(env: dict[str, Any], meter: sandbox.Meter) -> Any:
                return walk(tree, env, meter)

        def evaluate(values: dict[str, Any]) -> Any:
            return _translated(_closed, run, values)
        return evaluate


def _walked(expr: Expression, values: dict[str, Any]) -> Any:
    walker = Walker(expr.parsed)
    shared = sandbox.active_expression_budget()
    if shared is None:
        return walker.eval(expr.tree, dict(values))
    if shared.spent:
        raise shared.refusal()
    try:
        return walker.eval(expr.tree, dict(values))
    finally:
        shared.charge(walker.meter)


def _closed(run: Any, values: dict[str, Any]) -> Any:
    # The closures never write to the names they are given (a comprehension binds in its own scope), so they read
    # the caller's dict without a copy; the budget's check and charge are `spent` and `charge`.
    meter = sandbox.Meter()
    shared = SHARED_BUDGET.get()
    if shared is None:
        return run(values, meter)
    if shared.used > shared.limit:
        raise shared.refusal()
    try:
        return run(values, meter)
    finally:  # a failed evaluation did its work too
        shared.used += meter.steps + meter.iterations + meter.done
        if shared.used > shared.limit:
            raise shared.refusal()


def _translated(how: Callable[[Any, dict[str, Any]], Any], what: Any, values: dict[str, Any]) -> Any:
    """`how(what, values)`, any failure an ExpressionError with the text the generated function gives it too."""
    try:
        return how(what, values)
    except ExpressionError:
        raise
    except Exception as err:  # noqa: BLE001 - any Python error of an allowlisted operation becomes a clear message
        raise helpers.describe(err) from None


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
