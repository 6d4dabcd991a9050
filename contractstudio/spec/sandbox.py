"""The evaluator of checked expressions: a tiny tree walker with hard resource bounds.

Nothing here calls `eval`/`exec`, looks up Python attributes by name, or
calls anything outside the allowlists below. Every value an expression
builds is measured (characters, expanded container items, integer bits)
before it is built, so bombs such as `'a' * 10**9` or `9**9**9` fail fast
with an ExpressionError instead of exhausting memory or time.
"""

from __future__ import annotations

import ast
import operator
import re
import weakref
from collections.abc import Callable
from functools import lru_cache
from typing import Any

from pydantic import BaseModel

MAX_STEPS = 1_000_000  # tree nodes visited per evaluation
MAX_ITERATIONS = 200_000  # comprehension iterations per evaluation
MAX_SIZE = 1_000_000  # characters of a string, or expanded items of a container
MAX_WORK = 10_000_000  # element operations done in C per evaluation: items built, scanned, compared
MAX_INT_BITS = 33_300  # about 10,000 decimal digits
MAX_REGEX = 500  # characters of a `matches` pattern
MAX_MATCH_TEXT = 100_000  # characters `matches` searches
MAX_NDIGITS = 100  # round(x, n)
MAX_FORMAT_WIDTH = 1_000  # width and precision in a format spec
REGEX_TIMEOUT_S = 1.0

_VIEWS = (type({}.keys()), type({}.values()), type({}.items()))
_CONTAINERS = (list, tuple, set, frozenset, dict) + _VIEWS
_ITERABLE = (str,) + _CONTAINERS
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
    if isinstance(value, _VIEWS):
        return "list"
    return type(value).__name__


# ----------------------------------------------------------------- measuring


class Meter:
    """Counts steps, iterations and work, and measures expanded sizes (memoized by identity).

    Steps count tree nodes; work counts what one node can do in C (build, scan
    or compare n items), so `[x in input.big for x in input.big]` is bounded too.
    """

    def __init__(self) -> None:
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
        elif isinstance(value, _CONTAINERS):
            self.work(len(value) + 1)
        return value

    def step(self) -> None:
        self.steps += 1
        if self.steps > MAX_STEPS:
            raise ExpressionError(f"evaluation exceeded {MAX_STEPS:,} steps")

    def iterate(self) -> None:
        self.iterations += 1
        if self.iterations > MAX_ITERATIONS:
            raise ExpressionError(f"comprehensions exceeded {MAX_ITERATIONS:,} iterations")

    def weight(self, value: Any) -> int:
        """Characters of a string, or items of a container counted with every nested item expanded."""
        if isinstance(value, str):
            return len(value)
        if not isinstance(value, _CONTAINERS):
            return 1
        seen = self._weights.get(id(value))
        if seen is not None and seen[0] is value:
            return seen[1]
        total = len(value)
        items = value.items() if isinstance(value, dict) else value
        for item in items:
            if isinstance(item, tuple) and isinstance(value, dict):
                total += self.weight(item[0]) + self.weight(item[1])
            else:
                total += self.weight(item)
            if total > MAX_SIZE:
                break
        self._weights[id(value)] = (value, total)  # keeps value alive so its id is not reused
        return total

    def bounded(self, value: Any) -> Any:
        """Return value, or raise when it is too large."""
        if isinstance(value, bool):
            return value
        if isinstance(value, int):
            if value.bit_length() > MAX_INT_BITS:
                raise ExpressionError("integer result is too large (more than about 10,000 digits)")
        elif isinstance(value, complex):
            raise ExpressionError("the result is a complex number")
        elif isinstance(value, (str,) + _CONTAINERS):
            if self.weight(value) > MAX_SIZE:
                raise ExpressionError(f"result is too large (more than {MAX_SIZE:,} characters or items)")
            self.work(len(value) // (8 if isinstance(value, str) else 1) + 1)  # building it cost this much
        return value


# ----------------------------------------------------------------- operators with bounds


def _num(value: Any) -> bool:
    return isinstance(value, _NUMBER)


def binary(op: type[ast.operator], a: Any, b: Any, meter: Meter) -> Any:
    """Apply an arithmetic operator after checking its result cannot blow up."""
    if op is ast.Add:
        if isinstance(a, (str, list, tuple)) and type(a) is type(b):
            if meter.weight(a) + meter.weight(b) > MAX_SIZE:
                raise ExpressionError(f"result is too large (more than {MAX_SIZE:,} characters or items)")
            return meter.bounded(a + b)
        if _num(a) and _num(b):
            return meter.bounded(a + b)
        raise ExpressionError(f"cannot add {type_name(a)} and {type_name(b)}")
    if op is ast.Mult:
        seq, n = (a, b) if isinstance(a, (str, list, tuple)) else (b, a)
        if isinstance(seq, (str, list, tuple)) and isinstance(n, int):
            if n > 0 and meter.weight(seq) * n > MAX_SIZE:
                raise ExpressionError(f"repetition result is too large (more than {MAX_SIZE:,} characters or items)")
            return meter.bounded(seq * n)
        if _num(a) and _num(b):
            if isinstance(a, int) and isinstance(b, int) and a.bit_length() + b.bit_length() > MAX_INT_BITS:
                raise ExpressionError("integer result is too large (more than about 10,000 digits)")
            return meter.bounded(a * b)
        raise ExpressionError(f"cannot multiply {type_name(a)} and {type_name(b)}")
    if op is ast.Pow:
        if not (_num(a) and _num(b)):
            raise ExpressionError(f"cannot raise {type_name(a)} to {type_name(b)}")
        if isinstance(a, int) and isinstance(b, int) and b > 0 and abs(a) > 1:
            if a.bit_length() * b > MAX_INT_BITS + 64:
                raise ExpressionError(f"power result is too large: exponent {b:,} is far too big")
        return meter.bounded(a**b)
    if op is ast.Mod and isinstance(a, str):
        raise ExpressionError("'%' formatting of strings is not supported")
    if op in (ast.Sub, ast.Div, ast.FloorDiv, ast.Mod):
        if not (_num(a) and _num(b)):
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


def truth(value: Any) -> bool:
    """Truthiness without calling anything user-defined (records are always true)."""
    if value is None or isinstance(value, (bool, int, float, str) + _CONTAINERS):
        return bool(value)
    return True


def iterate(value: Any, meter: Meter | None = None) -> Any:
    """An iterator over a string or container (charged to the meter when given); anything else is refused."""
    if isinstance(value, _ITERABLE):
        if meter is not None:
            meter.work(len(value) + 1)
        return iter(value)
    raise ExpressionError(f"cannot iterate over a {type_name(value)} value")


# Weak keys: the studio rebuilds models on edits, and an old model class must be free to go.
_FIELD_NAMES: weakref.WeakKeyDictionary[type, dict[str, str]] = weakref.WeakKeyDictionary()


def _field_names(cls: type[BaseModel]) -> dict[str, str]:
    """Declared field name (its alias, or its Python name) -> Python attribute name, per model class."""
    names = _FIELD_NAMES.get(cls)
    if names is None:
        names = {}
        for py_name, info in cls.model_fields.items():
            names[py_name] = py_name
            if info.alias:
                names[info.alias] = py_name
        _FIELD_NAMES[cls] = names
    return names


def get_field(obj: Any, name: str) -> Any:
    """`obj.name`: a declared field of a record, or a key of a mapping. Never a Python attribute."""
    if name.startswith("_"):
        raise ExpressionError(f"names starting with '_' are not allowed: '{name}'")
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


# ----------------------------------------------------------------- text


def to_text(value: Any, limit: int = MAX_SIZE) -> str:
    """`str(value)` for expression values, bounded, without calling user-defined code."""
    parts: list[str] = []
    size = 0

    def put(s: str) -> None:
        nonlocal size
        size += len(s)
        if size > limit:
            raise ExpressionError(f"text is too long (more than {limit:,} characters)")
        parts.append(s)

    def walk(v: Any, top: bool, depth: int) -> None:
        if depth > 100:
            raise ExpressionError("value nests too deeply to convert to text")
        if isinstance(v, str):
            put(v if top else repr(v))
        elif v is None or isinstance(v, (bool, int, float)):
            put(repr(v) if isinstance(v, float) else str(v))
        elif isinstance(v, BaseModel):
            put(type(v).__name__ + "(")
            for i, (k, item) in enumerate(v):
                put((", " if i else "") + f"{k}=")
                walk(item, False, depth + 1)
            put(")")
        elif isinstance(v, dict):
            put("{")
            for i, (k, item) in enumerate(v.items()):
                put(", " if i else "")
                walk(k, False, depth + 1)
                put(": ")
                walk(item, False, depth + 1)
            put("}")
        elif isinstance(v, (list, tuple, set, frozenset) + _VIEWS):
            opener, closer = ("[", "]") if not isinstance(v, (set, frozenset)) else ("{", "}")
            put(opener)
            for i, item in enumerate(v):
                put(", " if i else "")
                walk(item, False, depth + 1)
            put(closer)
        else:
            raise ExpressionError(f"cannot convert a {type_name(v)} value to text")

    walk(value, True, 0)
    return "".join(parts)


_SPEC = re.compile(r"(?:(?P<fill>.)?(?P<align>[<>=^]))?(?P<sign>[-+ ])?z?#?0?(?P<width>\d+)?[_,]?(?:\.(?P<precision>\d+))?(?P<type>[bcdeEfFgGnosxX%])?\Z", re.S)


def spec_problem(spec: str) -> str | None:
    """Why a format spec is refused (not the format mini-language, or too wide), or None."""
    m = _SPEC.match(spec)
    if m is None:
        return f"invalid format spec '{spec}'"
    for part in ("width", "precision"):
        if m.group(part) and int(m.group(part)) > MAX_FORMAT_WIDTH:
            return f"format {part} {m.group(part)} is larger than {MAX_FORMAT_WIDTH}"
    return None


def format_value(value: Any, spec: str) -> str:
    """`format(value, spec)` for numbers and strings, with width and precision bounded."""
    if not spec:
        return to_text(value)
    problem = spec_problem(spec)
    if problem:
        raise ExpressionError(problem)
    if not (value is None or isinstance(value, (str, int, float))):
        raise ExpressionError(f"format spec ':{spec}' applies to numbers and strings, not {type_name(value)}")
    try:
        return format(to_text(value) if value is None else value, spec)
    except (ValueError, TypeError) as err:
        raise ExpressionError(f"cannot format {type_name(value)} with ':{spec}': {err}") from None


# ----------------------------------------------------------------- regular expressions


def regex_problem(pattern: str) -> str | None:
    """Why a `matches` pattern is refused (too long, invalid, or exponential backtracking), or None."""
    if len(pattern) > MAX_REGEX:
        return f"the regular expression is longer than {MAX_REGEX} characters"
    try:
        import re._parser as sre  # type: ignore[import-not-found]
    except ImportError:  # pragma: no cover - Python < 3.11
        import sre_parse as sre  # type: ignore[no-redef]
    try:
        parsed = sre.parse(pattern)
    except re.error as err:
        return f"invalid regular expression: {err}"
    except RecursionError:
        return "the regular expression nests too deeply"
    except Exception as err:  # noqa: BLE001 - sre's parser has other failure modes (e.g. OverflowError)
        return f"invalid regular expression: {err}"
    return _nested_repeat(parsed, inside=False)


def _nested_repeat(items: Any, inside: bool) -> str | None:
    for op, arg in items:
        name = str(op)
        if name in ("MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT"):
            low, high, sub = arg
            unbounded = high is None or high > 1 or str(high) == "MAXREPEAT"
            if unbounded and inside:
                return "nested repetition (like '(a+)+') can take exponential time"
            if unbounded and any(str(o) == "BRANCH" for o, _ in _flatten(sub)):
                return "repeated alternation (like '(a|aa)+') can take exponential time"
            found = _nested_repeat(sub, inside or unbounded)
            if found:
                return found
        elif name == "SUBPATTERN":
            found = _nested_repeat(arg[-1], inside)
            if found:
                return found
        elif name == "BRANCH":
            for alt in arg[1]:
                found = _nested_repeat(alt, inside)
                if found:
                    return found
        elif name in ("ASSERT", "ASSERT_NOT"):
            found = _nested_repeat(arg[1], inside)
            if found:
                return found
    return None


def _flatten(items: Any) -> list[tuple[Any, Any]]:
    out = []
    for op, arg in items:
        out.append((op, arg))
        if str(op) == "SUBPATTERN":
            out.extend(_flatten(arg[-1]))
    return out


@lru_cache(maxsize=256)
def _compiled(pattern: str) -> Any:
    problem = regex_problem(pattern)
    if problem:
        raise ExpressionError(problem)
    try:  # the `regex` package (a litellm dependency) can stop a slow match; `re` cannot
        import regex

        return regex.compile(pattern)
    except ImportError:  # pragma: no cover
        return re.compile(pattern)
    except Exception as err:  # a pattern `re` accepts but `regex` does not
        raise ExpressionError(f"invalid regular expression: {err}") from None


def matches(text: Any, pattern: Any) -> bool:
    """True when the regular expression matches somewhere in the text."""
    if not isinstance(text, str) or not isinstance(pattern, str):
        raise ExpressionError(f"matches(text, regex) needs two strings, got {type_name(text)} and {type_name(pattern)}")
    if len(text) > MAX_MATCH_TEXT:
        raise ExpressionError(f"matches() searches at most {MAX_MATCH_TEXT:,} characters")
    compiled = _compiled(pattern)
    try:
        if isinstance(compiled, re.Pattern):
            return compiled.search(text) is not None
        return compiled.search(text, timeout=REGEX_TIMEOUT_S) is not None
    except TimeoutError:
        raise ExpressionError("the regular expression took too long") from None


# ----------------------------------------------------------------- allowlisted functions and methods


def _sum(meter: Meter, items: Any, start: Any = 0) -> Any:
    total = start
    if not _num(total):
        raise ExpressionError("sum() adds numbers only")
    for item in iterate(items, meter):
        if not _num(item):
            raise ExpressionError(f"sum() adds numbers only, not {type_name(item)}")
        total = meter.bounded(total + item)
    return total


def _round(meter: Meter, x: Any, n: Any = None) -> Any:
    if not _num(x) or not (n is None or isinstance(n, int)):
        raise ExpressionError("round(x, n) needs a number and an int")
    if n is not None and abs(n) > MAX_NDIGITS:
        raise ExpressionError(f"round() digits must be between -{MAX_NDIGITS} and {MAX_NDIGITS}")
    return round(x) if n is None else round(x, n)


def _len(meter: Meter, x: Any) -> int:
    if isinstance(x, (str,) + _CONTAINERS):
        return len(x)
    raise ExpressionError(f"len() of a {type_name(x)} value")


def _minmax(fn: Callable[..., Any]) -> Callable[..., Any]:
    def run(meter: Meter, *args: Any, **kw: Any) -> Any:
        items = list(iterate(args[0], meter)) if len(args) == 1 else list(args)
        if not items and "default" in kw:
            return kw["default"]
        if not items:
            raise ExpressionError(f"{fn.__name__}() of an empty sequence")
        return fn(items)

    return run


def _abs(meter: Meter, x: Any) -> Any:
    if not _num(x):
        raise ExpressionError(f"abs() of a {type_name(x)} value")
    return abs(x)


def _int(meter: Meter, x: Any = 0) -> int:
    if isinstance(x, str):
        x = x.strip()
        if len(x) > 4000:
            raise ExpressionError("the text is too long to convert to an int")
    elif not _num(x):
        raise ExpressionError(f"cannot convert a {type_name(x)} value to int")
    return int(x)


def _float(meter: Meter, x: Any = 0.0) -> float:
    if not (isinstance(x, str) or _num(x)):
        raise ExpressionError(f"cannot convert a {type_name(x)} value to float")
    return float(x)


def _sorted(meter: Meter, x: Any, reverse: bool = False) -> list[Any]:
    items = list(iterate(x, meter))
    meter.work(len(items) * max(1, len(items).bit_length()))  # n log n comparisons
    return meter.bounded(sorted(items, reverse=bool(reverse)))


FUNCTIONS: dict[str, Callable[..., Any]] = {
    "len": _len,
    "min": _minmax(min),
    "max": _minmax(max),
    "sum": _sum,
    "abs": _abs,
    "all": lambda m, x: all(truth(v) for v in iterate(x, m)),
    "any": lambda m, x: any(truth(v) for v in iterate(x, m)),
    "round": _round,
    "sorted": _sorted,
    "str": lambda m, x="": to_text(x),
    "int": _int,
    "float": _float,
    "bool": lambda m, x=False: truth(x),
    "list": lambda m, x=(): m.bounded(list(iterate(x, m))),
    "set": lambda m, x=(): m.bounded(set(iterate(x, m))),
    "matches": lambda m, text, pattern: matches(text, pattern),
}
FUNCTION_KEYWORDS: dict[str, set[str]] = {"sorted": {"reverse"}, "min": {"default"}, "max": {"default"}}


def _replace(s: str, old: str, new: str, count: int = -1) -> str:
    hits = (len(s) + 1) if old == "" else s.count(old)
    if count >= 0:
        hits = min(hits, count)
    if len(s) + hits * max(0, len(new) - len(old)) > MAX_SIZE:
        raise ExpressionError("replace() result is too large")
    return s.replace(old, new, count)


def _join(sep: str, items: Any) -> str:
    parts = list(iterate(items))
    if not all(isinstance(p, str) for p in parts):
        raise ExpressionError("join() needs a list of strings")
    if sum(len(p) for p in parts) + len(sep) * max(0, len(parts) - 1) > MAX_SIZE:
        raise ExpressionError("join() result is too large")
    return sep.join(parts)


STR_METHODS: dict[str, Callable[..., Any]] = {
    name: getattr(str, name)
    for name in (
        "strip lstrip rstrip lower upper title capitalize casefold startswith endswith count find rfind "
        "split rsplit splitlines isdigit isalpha isalnum isspace islower isupper isnumeric isdecimal istitle "
        "removeprefix removesuffix partition rpartition"
    ).split()
}
STR_METHODS["replace"] = _replace
STR_METHODS["join"] = _join
LIST_METHODS: dict[str, Callable[..., Any]] = {"count": lambda xs, v: xs.count(v), "index": lambda xs, v: xs.index(v)}
DICT_METHODS: dict[str, Callable[..., Any]] = {
    "keys": lambda d: list(d.keys()),
    "values": lambda d: list(d.values()),
    "items": lambda d: list(d.items()),
    "get": lambda d, k, default=None: d.get(k, default) if isinstance(k, (str, int, float, bool)) or k is None else default,
}
METHOD_NAMES = set(STR_METHODS) | set(LIST_METHODS) | set(DICT_METHODS)


def call_method(obj: Any, name: str, args: list[Any], meter: Meter) -> Any:
    """Call an allowlisted method of a str, list or dict (never a method looked up on the object)."""
    if isinstance(obj, str):
        table = STR_METHODS
    elif isinstance(obj, (list, tuple)):
        table = LIST_METHODS
    elif isinstance(obj, dict):
        table = DICT_METHODS
    else:
        raise ExpressionError(f"a {type_name(obj)} value has no method '{name}'")
    fn = table.get(name)
    if fn is None:
        raise ExpressionError(f"method '{name}' of {type_name(obj)} is not allowed")
    if name == "join" and args:
        meter.scan(args[0])
    if name == "get":
        return fn(obj, *args)  # a reference to an existing value: nothing is built or scanned
    meter.scan(obj)
    return meter.bounded(fn(obj, *args))

