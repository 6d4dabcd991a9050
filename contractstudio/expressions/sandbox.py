"""Values of the expression language with hard resource bounds: measuring, operators, field access.

Nothing here calls `eval`/`exec`, looks up Python attributes by name, or
calls anything outside the allowlists (allowlist.py). Every value an expression
builds is measured (characters, expanded container items, integer bits)
before it is built, so bombs such as `'a' * 10**9` or `9**9**9` fail fast
with an ExpressionError instead of exhausting memory or time.
"""

from __future__ import annotations

import ast
import operator
import weakref
from contextvars import ContextVar
from typing import Any

from pydantic import BaseModel

MAX_STEPS = 1_000_000  # tree nodes visited per evaluation
MAX_ITERATIONS = 200_000  # comprehension iterations per evaluation
MAX_SIZE = 1_000_000  # characters of a string, or expanded items of a container
MAX_WORK = 10_000_000  # element operations done in C per evaluation: items built, scanned, compared
MAX_INT_BITS = 14_000  # about 4,200 decimal digits: below the 4,300 digits Python converts to text (and JSON)
MAX_INT_DIGITS = 4_200
# Steps, iterations and element operations of EVERY evaluation of one file's analysis or one call together:
# a few expressions each just under the per-evaluation bounds, times many scenarios or placeholders, would
# otherwise add up to minutes. One evaluation at every per-evaluation bound still fits; the one that crosses it,
# and every later one, is refused. A real contract uses a tiny part of it.
MAX_SHARED_WORK = MAX_STEPS + MAX_ITERATIONS + MAX_WORK

VIEWS: Any = (type({}.keys()), type({}.values()), type({}.items()))
CONTAINERS = (list, tuple, set, frozenset, dict) + VIEWS
ITERABLE = (str,) + CONTAINERS
_NUMBER = (int, float)  # bool is an int


# Frame, code and function attributes of Python objects: refused even as mapping keys.
INTROSPECTION = frozenset(
    "gi_frame gi_code gi_running gi_yieldfrom gi_suspended cr_frame cr_code cr_await cr_running cr_origin "
    "ag_frame ag_code ag_await ag_running f_globals f_locals f_back f_builtins f_code f_lasti f_lineno f_trace "
    "tb_frame tb_next tb_lasti tb_lineno co_code co_consts co_names func_globals func_code func_closure "
    "func_defaults im_func im_self im_class".split()
)


class ExpressionError(Exception):
    """An expression was refused or failed while evaluating; `str(err)` says why."""

    def __init__(self, message: str, start: int = 0, end: int = 0) -> None:
        super().__init__(message)
        self.message = message
        self.start = start
        self.end = end


def type_name(value: Any) -> str:
    """A user-facing name of a value's type."""
    if value is None:
        return "None"
    if isinstance(value, BaseModel):
        return type(value).__name__
    if isinstance(value, VIEWS):
        return "list"
    return type(value).__name__


# ----------------------------------------------------------------- measuring


class Meter:
    """Counts steps, iterations and work, and measures expanded sizes (memoized by identity).

    Steps count tree nodes; work counts what one node can do in C (build, scan
    or compare n items), so `[x in input.big for x in input.big]` is bounded too.
    """

    __slots__ = ("steps", "iterations", "done", "_weights", "regex")

    def __init__(self) -> None:
        self.regex: Any = None  # the evaluation's RegexBudget (patterns.py), made on the first `matches`
        self.steps = 0
        self.iterations = 0
        self.done = 0
        self._weights: dict[int, tuple[Any, int]] = {}

    def work(self, n: int) -> None:
        self.done += n
        if self.done > MAX_WORK:
            raise ExpressionError(f"evaluation is too expensive (more than {MAX_WORK:,} element operations)")

    def scan(self, value: Any) -> Any:
        """Charge for one pass over a string or container, and return it."""
        if isinstance(value, str):
            self.work(len(value) // 8 + 1)
        elif isinstance(value, CONTAINERS):
            self.work(len(value) + 1)
        return value

    def step(self) -> None:
        self.steps += 1
        if self.steps > MAX_STEPS:
            raise ExpressionError(f"evaluation exceeded {MAX_STEPS:,} steps")

    def recount(self, n: int) -> None:
        """Undo `n` steps a fused closure counted at once, and count them one by one as the tree walk does (near the
        bound only: it raises where the walk would)."""
        self.steps -= n
        for _ in range(n):
            self.steps += 1
            if self.steps > MAX_STEPS:
                self.step()

    def iterate(self) -> None:
        self.iterations += 1
        if self.iterations > MAX_ITERATIONS:
            raise ExpressionError(f"comprehensions exceeded {MAX_ITERATIONS:,} iterations")

    def weight(self, value: Any) -> int:
        """Characters of a string, or items of a container counted with every nested item expanded."""
        if isinstance(value, str):
            return len(value)
        if not isinstance(value, CONTAINERS):
            return 1
        seen = self._weights.get(id(value))
        if seen is not None and seen[0] is value:
            return seen[1]
        total = len(value)
        weight = self.weight
        if isinstance(value, dict):
            for key, item in value.items():
                total += weight(key) + weight(item)
                if total > MAX_SIZE:
                    break
        else:
            for item in value:
                total += len(item) if isinstance(item, str) else weight(item)  # a string weighs its length
                if total > MAX_SIZE:
                    break
        self._weights[id(value)] = (value, total)  # keeps value alive so its id is not reused
        return total

    def bounded(self, value: Any) -> Any:
        """Return value, or raise when it is too large."""
        kind = type(value)
        if kind is bool or kind is float or value is None:  # the exact scalar types first: nothing to measure
            return value
        if isinstance(value, str):  # the commonest result first: its weight is its length
            if len(value) > MAX_SIZE:
                raise ExpressionError(f"result is too large (more than {MAX_SIZE:,} characters or items)")
            self.work(len(value) // 8 + 1)
            return value
        if isinstance(value, bool):
            return value
        if isinstance(value, int):
            if value.bit_length() > MAX_INT_BITS:
                raise ExpressionError(f"integer result is too large (more than about {MAX_INT_DIGITS:,} digits)")
        elif isinstance(value, complex):
            raise ExpressionError("the result is a complex number")
        elif isinstance(value, CONTAINERS):
            if self.weight(value) > MAX_SIZE:
                raise ExpressionError(f"result is too large (more than {MAX_SIZE:,} characters or items)")
            self.work(len(value) + 1)  # building it cost this much
        return value


class BudgetSpent(ExpressionError):
    """The shared expression budget of the analysis or call ran out; `str(err)` says how much it had."""


class ExpressionBudget:
    """Work shared by every evaluation of one file's analysis or one call (steps + iterations + element operations)."""

    __slots__ = ("limit", "used", "what", "reported")

    def __init__(self, limit: int | None = None, what: str = "this analysis") -> None:
        self.limit = MAX_SHARED_WORK if limit is None else limit  # read at each start: tests lower it
        self.used = 0
        self.what = what
        self.reported = False  # the analysis names the first expression refused, once

    @property
    def spent(self) -> bool:
        """Whether nothing is left: every further evaluation is refused."""
        return self.used > self.limit

    def refusal(self) -> BudgetSpent:
        """The error an evaluation gets once the budget is spent."""
        return BudgetSpent(f"the expression budget of {self.what} ({self.limit:,} operations) is spent")

    def charge(self, meter: Meter) -> None:
        """Add one evaluation's work; raises BudgetSpent when it crosses the limit."""
        self.used += meter.steps + meter.iterations + meter.done
        if self.spent:
            raise self.refusal()


SHARED_BUDGET: ContextVar[ExpressionBudget | None] = ContextVar("contractstudio_expression_budget", default=None)


def shared_expression_budget(budget: ExpressionBudget) -> _SharedExpressionBudget:
    """Every evaluation inside (this thread or task) draws on this budget: one file's analysis, one call."""
    return _SharedExpressionBudget(budget)


class _SharedExpressionBudget:
    """`shared_expression_budget`'s context: a class, not a generator, since every call (and step) enters one."""

    __slots__ = ("budget", "token")

    def __init__(self, budget: ExpressionBudget) -> None:
        self.budget = budget

    def __enter__(self) -> ExpressionBudget:
        self.token = SHARED_BUDGET.set(self.budget)
        return self.budget

    def __exit__(self, *exc: object) -> None:
        SHARED_BUDGET.reset(self.token)


def active_expression_budget() -> ExpressionBudget | None:
    """The budget `shared_expression_budget` made active, if any."""
    return SHARED_BUDGET.get()


# ----------------------------------------------------------------- operators with bounds


def is_number(value: Any) -> bool:
    """int, float or bool."""
    return isinstance(value, _NUMBER)


def binary(op: type[ast.operator], a: Any, b: Any, meter: Meter) -> Any:
    """Apply an arithmetic operator after checking its result cannot blow up."""
    if op is ast.Add:
        if isinstance(a, (str, list, tuple)) and type(a) is type(b):
            if meter.weight(a) + meter.weight(b) > MAX_SIZE:
                raise ExpressionError(f"result is too large (more than {MAX_SIZE:,} characters or items)")
            return meter.bounded(a + b)  # type: ignore[operator]  # same type, checked just above
        if is_number(a) and is_number(b):
            return meter.bounded(a + b)
        raise ExpressionError(f"cannot add {type_name(a)} and {type_name(b)}")
    if op is ast.Mult:
        seq, n = (a, b) if isinstance(a, (str, list, tuple)) else (b, a)
        if isinstance(seq, (str, list, tuple)) and isinstance(n, int):
            if n > 0 and meter.weight(seq) * n > MAX_SIZE:
                raise ExpressionError(f"repetition result is too large (more than {MAX_SIZE:,} characters or items)")
            return meter.bounded(seq * n)
        if is_number(a) and is_number(b):
            if isinstance(a, int) and isinstance(b, int) and a.bit_length() + b.bit_length() > MAX_INT_BITS:
                raise ExpressionError(f"integer result is too large (more than about {MAX_INT_DIGITS:,} digits)")
            return meter.bounded(a * b)
        raise ExpressionError(f"cannot multiply {type_name(a)} and {type_name(b)}")
    if op is ast.Pow:
        if not (is_number(a) and is_number(b)):
            raise ExpressionError(f"cannot raise {type_name(a)} to {type_name(b)}")
        if isinstance(a, int) and isinstance(b, int) and b > 0 and abs(a) > 1:
            if a.bit_length() * b > MAX_INT_BITS + 64:
                raise ExpressionError(f"power result is too large: exponent {b:,} is far too big")
        return meter.bounded(a**b)
    if op is ast.Mod and isinstance(a, str):
        raise ExpressionError("'%' formatting of strings is not supported")
    if op in (ast.Sub, ast.Div, ast.FloorDiv, ast.Mod):
        if not (is_number(a) and is_number(b)):
            if op is ast.Sub and isinstance(a, (set, frozenset)) and isinstance(b, (set, frozenset)):
                return a - b
            raise ExpressionError(f"unsupported operand types {type_name(a)} and {type_name(b)}")
        fn = {ast.Sub: operator.sub, ast.Div: operator.truediv, ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod}[op]
        return meter.bounded(fn(a, b))
    if op in (ast.BitAnd, ast.BitOr, ast.BitXor):
        ok = (isinstance(a, int) and isinstance(b, int)) or (
            isinstance(a, (set, frozenset)) and isinstance(b, (set, frozenset))) or (
            op is ast.BitOr and isinstance(a, dict) and isinstance(b, dict))
        if not ok:
            raise ExpressionError(f"unsupported operand types {type_name(a)} and {type_name(b)}")
        if isinstance(a, dict) and meter.weight(a) + meter.weight(b) > MAX_SIZE:
            raise ExpressionError("result is too large")
        fn = {ast.BitAnd: operator.and_, ast.BitOr: operator.or_, ast.BitXor: operator.xor}[op]
        return meter.bounded(fn(a, b))
    raise ExpressionError(f"operator {op.__name__} is not supported")


_PLAIN = (bool, int, float, str) + CONTAINERS
PLAIN_TYPES = frozenset((type(None),) + _PLAIN)


def truth(value: Any) -> bool:
    """Truthiness without calling anything user-defined (records are always true)."""
    if type(value) in PLAIN_TYPES or isinstance(value, _PLAIN):  # the exact types first: one set lookup
        return bool(value)
    return True


def iterate(value: Any, meter: Meter | None = None) -> Any:
    """An iterator over a string or container (charged to the meter when given); anything else is refused."""
    if isinstance(value, ITERABLE):
        if meter is not None:
            meter.work(len(value) + 1)
        return iter(value)
    raise ExpressionError(f"cannot iterate over a {type_name(value)} value")


# Keyed by the class's id, the entry dropped when the class dies (the studio rebuilds models on edits, and
# an old model class must be free to go): a plain dict lookup, where a WeakKeyDictionary builds a weakref
# on every access. The finalizer runs before the id can be reused.
FIELD_NAMES: dict[int, dict[str, str]] = {}


def _field_names(cls: type[BaseModel]) -> dict[str, str]:
    """Declared field name (its alias, or its Python name) -> Python attribute name, per model class."""
    names = FIELD_NAMES.get(id(cls))
    if names is None:
        names = {}
        for py_name, info in cls.model_fields.items():
            names[py_name] = py_name
            if info.alias:
                names[info.alias] = py_name
        FIELD_NAMES[id(cls)] = names
        weakref.finalize(cls, FIELD_NAMES.pop, id(cls), None)
    return names


def get_field(obj: Any, name: str) -> Any:
    """`obj.name`: a declared field of a record, or a key of a mapping. Never a Python attribute."""
    if name.startswith("_"):
        raise ExpressionError(f"names starting with '_' are not allowed: '{name}'")
    known = FIELD_NAMES.get(id(type(obj)))  # only live model classes are in it: one dict lookup per access
    if known is not None:
        py_name = known.get(name)
        if py_name is not None:
            return getattr(obj, py_name)
    if isinstance(obj, BaseModel):
        py_name = _field_names(type(obj)).get(name)
        if py_name is not None:
            return getattr(obj, py_name)
        extra = obj.model_extra or {}
        if name in extra:
            return extra[name]
        raise ExpressionError(f"'{name}' is not a field of {type(obj).__name__}")
    if isinstance(obj, dict):
        if name in INTROSPECTION:
            raise ExpressionError(f"'{name}' is a Python attribute, not a field; it is refused")
        if name in obj:
            return obj[name]
        raise ExpressionError(f"the mapping has no key '{name}'")
    raise ExpressionError(f"a {type_name(obj)} value has no field '{name}'")


def subscript(obj: Any, index: Any) -> Any:
    """`obj[index]` on strings, lists and mappings only."""
    if isinstance(obj, dict):
        if isinstance(index, (str, int, float, bool)) or index is None:
            if index in obj:
                return obj[index]
            raise ExpressionError(f"the mapping has no key {index!r}")
        raise ExpressionError(f"a mapping key cannot be a {type_name(index)} value")
    if isinstance(obj, (str, list, tuple)):
        if isinstance(index, slice) or isinstance(index, int):
            try:
                return obj[index]
            except IndexError:
                raise ExpressionError(f"index {index} is out of range (length {len(obj)})") from None
        raise ExpressionError(f"an index must be an int, not {type_name(index)}")
    raise ExpressionError(f"a {type_name(obj)} value cannot be indexed")
