"""What a generated function (generated.py) can name: its globals, our sandbox's operations and error texts only.

The error texts are the tree walk's (walker.py) and the closures' (closures.py, fused.py);
tests/test_expression_closures.py holds the three evaluators to the same texts.
"""

from __future__ import annotations

from typing import Any

import contractstudio.expressions.allowlist as allowlist
import contractstudio.expressions.operators as operators
import contractstudio.expressions.sandbox as sandbox
from contractstudio.expressions.sandbox import ExpressionError


def _steps_exceeded() -> ExpressionError:
    return ExpressionError(f"evaluation exceeded {GLOBALS['_MAX']:,} steps")


def _iterations_exceeded() -> ExpressionError:
    return ExpressionError(f"comprehensions exceeded {GLOBALS['_MAXIT']:,} iterations")


def _undefined(name: str) -> ExpressionError:
    return ExpressionError(f"name '{name}' is not defined")


def _hidden(name: str) -> ExpressionError:
    return ExpressionError(f"names starting with '_' are not allowed: '{name}'")


def _literal(value: Any) -> ExpressionError:
    return ExpressionError(f"{type(value).__name__} literals are not allowed")


def _order_error(a: Any, b: Any) -> ExpressionError:
    return ExpressionError(f"cannot order {sandbox.type_name(a)} and {sandbox.type_name(b)}")


def _unary_error(value: Any) -> ExpressionError:
    return ExpressionError(f"unary operator on a {sandbox.type_name(value)} value")


def _slice_of(lower: Any, upper: Any, step: Any) -> slice:
    if not all(p is None or isinstance(p, int) for p in (lower, upper, step)):
        raise ExpressionError("slice bounds must be ints")
    if step == 0:
        raise ExpressionError("slice step cannot be zero")
    return slice(lower, upper, step)


def _work_exceeded() -> ExpressionError:
    return ExpressionError(f"evaluation is too expensive (more than {sandbox.MAX_WORK:,} element operations)")


def _too_large() -> ExpressionError:
    return ExpressionError(f"result is too large (more than {sandbox.MAX_SIZE:,} characters or items)")


def _not_iterable(value: Any) -> ExpressionError:
    return ExpressionError(f"cannot iterate over a {sandbox.type_name(value)} value")


def _not_callable() -> ExpressionError:
    return ExpressionError("only allowlisted functions and methods can be called")


def _no_keyword(fname: str) -> ExpressionError:
    return ExpressionError(f"{fname}() takes no such keyword argument")


def _call_error(fname: str, err: TypeError) -> ExpressionError:
    return ExpressionError(f"{fname}(): {err}")


def describe(err: Exception) -> ExpressionError:
    """The ExpressionError a Python error of an allowlisted operation becomes (every evaluator's)."""
    if isinstance(err, RecursionError):
        return ExpressionError("the expression nests too deeply")
    if isinstance(err, MemoryError):
        return ExpressionError("the expression ran out of memory")
    text = str(err) or type(err).__name__
    if isinstance(err, ZeroDivisionError):
        return ExpressionError("division by zero")
    if isinstance(err, OverflowError):
        return ExpressionError(f"number too large: {text}")
    return ExpressionError(text)


# The generated functions' globals: everything their source can name. No `__builtins__` of Python's: an empty one.
GLOBALS: dict[str, Any] = {
    "__builtins__": {},
    # the bounds (tests lower `_MAX` here as in sandbox) and the budget
    "_MAX": sandbox.MAX_STEPS, "_MAXIT": sandbox.MAX_ITERATIONS, "_MAXWORK": sandbox.MAX_WORK, "_MAXSIZE": sandbox.MAX_SIZE,
    "_budget": sandbox.SHARED_BUDGET.get, "_Meter": sandbox.Meter,
    # the sandbox's operations and the allowlist's
    "_fields": sandbox.FIELD_NAMES, "_get_field": sandbox.get_field, "_subscript": sandbox.subscript,
    "_binary": sandbox.binary, "_compare": operators.compare, "_charge": operators.charge,
    "_truth": sandbox.truth, "_call_method": allowlist.call_method, "_describe": describe,
    # the types they test
    "_SCALARS": operators.SCALARS, "_PLAIN_TYPES": sandbox.PLAIN_TYPES, "_NUM": (int, float), "_ITERABLE": sandbox.ITERABLE,
    "_SIZED": allowlist.SIZED, "_CONTAINERS": sandbox.CONTAINERS, "_UNMEASURED": frozenset({bool, float, type(None)}),
    # Python's own, by these names only
    "_type": type, "_id": id, "_isinstance": isinstance, "_bool": bool, "_set": set, "_list": list, "_str": str,
    "_len": len, "_getattr": getattr, "_Exception": Exception, "_KeyError": KeyError, "_TypeError": TypeError,
    # the errors, with the walk's texts
    "_ExpressionError": ExpressionError, "_steps_exceeded": _steps_exceeded, "_iterations_exceeded": _iterations_exceeded,
    "_work_exceeded": _work_exceeded, "_too_large": _too_large, "_undefined": _undefined, "_hidden": _hidden,
    "_literal": _literal, "_order_error": _order_error, "_unary_error": _unary_error, "_slice_of": _slice_of,
    "_not_iterable": _not_iterable, "_not_callable": _not_callable, "_no_keyword": _no_keyword,
    "_call_error": _call_error, "_len_error": allowlist.len_error,
}
