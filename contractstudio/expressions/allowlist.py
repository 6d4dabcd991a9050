"""The allowlisted functions and methods of the expression language, text conversion and `matches`.

Each is implemented here (never looked up on a value), checks its arguments,
and charges what it does to the evaluation's Meter, so no call can run code the
file did not spell out or outgrow the bounds of sandbox.py.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import lru_cache
from typing import Any

from pydantic import BaseModel

from contractstudio.documents import patterns
from contractstudio.expressions.sandbox import (
    CONTAINERS,
    MAX_SIZE,
    VIEWS,
    ExpressionError,
    Meter,
    is_number,
    iterate,
    truth,
    type_name,
)

MAX_MATCH_TEXT = 100_000  # characters `matches` searches
MAX_NDIGITS = 100  # round(x, n)
MAX_FORMAT_WIDTH = 1_000  # width and precision in a format spec
REGEX_BUDGET_S = 1.0  # seconds of regex work in one evaluation, every `matches` call together


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
        elif isinstance(v, int) and not isinstance(v, bool):
            try:
                put(str(v))
            except ValueError:  # Python converts at most 4,300 digits (sys.get_int_max_str_digits) to text
                raise ExpressionError(f"an integer of about {int(v.bit_length() * 0.30103):,} digits is too long "
                                      "to convert to text") from None
        elif v is None or isinstance(v, (bool, float)):
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
        elif isinstance(v, (list, tuple, set, frozenset) + VIEWS):
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


_SPEC = re.compile(r"(?:(?P<fill>.)?(?P<align>[<>=^]))?(?P<sign>[-+ ])?z?#?0?(?P<width>\d+)?[_,]?"
                   r"(?:\.(?P<precision>\d+))?(?P<type>[bcdeEfFgGnosxX%])?\Z", re.S)


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
    """Why a `matches` pattern is refused (see patterns.pattern_problem, or exponential backtracking), or None."""
    problem = patterns.pattern_problem(pattern)
    if problem:
        return problem
    return _nested_repeat(patterns.parse_pattern(pattern), inside=False)


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
def _refused(pattern: str) -> str | None:
    return regex_problem(pattern)


def matches(meter: Meter, text: Any, pattern: Any) -> bool:
    """True when the regular expression matches somewhere in the text, within the evaluation's regex budget."""
    if not isinstance(text, str) or not isinstance(pattern, str):
        raise ExpressionError(f"matches(text, regex) needs two strings, got {type_name(text)} and {type_name(pattern)}")
    if len(text) > MAX_MATCH_TEXT:
        raise ExpressionError(f"matches() searches at most {MAX_MATCH_TEXT:,} characters")
    problem = _refused(pattern)
    if problem:
        raise ExpressionError(problem)
    if meter.regex is None:
        meter.regex = patterns.RegexBudget(REGEX_BUDGET_S)
    try:
        return meter.regex.search(pattern, text)
    except patterns.PatternError as err:
        raise ExpressionError(str(err)) from None
    except patterns.RegexTimeout as err:
        raise ExpressionError(f"{err} in this evaluation") from None


# ----------------------------------------------------------------- allowlisted functions and methods


def _sum(meter: Meter, items: Any, start: Any = 0) -> Any:
    total = start
    if not is_number(total):
        raise ExpressionError("sum() adds numbers only")
    for item in iterate(items, meter):
        if not is_number(item):
            raise ExpressionError(f"sum() adds numbers only, not {type_name(item)}")
        total = meter.bounded(total + item)
    return total


def _round(meter: Meter, x: Any, n: Any = None) -> Any:
    if not is_number(x) or not (n is None or isinstance(n, int)):
        raise ExpressionError("round(x, n) needs a number and an int")
    if n is not None and abs(n) > MAX_NDIGITS:
        raise ExpressionError(f"round() digits must be between -{MAX_NDIGITS} and {MAX_NDIGITS}")
    return round(x) if n is None else round(x, n)


SIZED = (str,) + CONTAINERS  # what `len` measures (a generated function asks it inline: generated.py)


def len_error(x: Any) -> ExpressionError:
    return ExpressionError(f"len() of a {type_name(x)} value")


def _len(meter: Meter, x: Any) -> int:
    if isinstance(x, SIZED):
        return len(x)
    raise len_error(x)


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
    if not is_number(x):
        raise ExpressionError(f"abs() of a {type_name(x)} value")
    return abs(x)


def _int(meter: Meter, x: Any = 0) -> int:
    if isinstance(x, str):
        x = x.strip()
        if len(x) > 4000:
            raise ExpressionError("the text is too long to convert to an int")
    elif not is_number(x):
        raise ExpressionError(f"cannot convert a {type_name(x)} value to int")
    return int(x)


def _float(meter: Meter, x: Any = 0.0) -> float:
    if not (isinstance(x, str) or is_number(x)):
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
    # generated.py writes `len`, `all` and `any` of one argument inline (tests/test_expression_closures.py holds them equal)
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
    "matches": matches,
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

