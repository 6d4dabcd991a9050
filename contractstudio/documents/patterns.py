"""Regular expressions written in files, run within a time budget that the GIL cannot stretch.

Every regex a file supplies (an agent's `tool_pattern`, `matches()` in expressions,
a type's `pattern:` that pydantic's linear engine cannot run) is checked, compiled and run here.
The checked subset is Python's `re` syntax (so
no fuzzy matching or recursion) with a bounded length and a bounded expansion of
counted repeats (compiling `(?:x{65535}){65535}` never ends). The patterns run on
the `regex` package: its matcher checks a deadline while it backtracks
(`timeout=`) and releases the GIL while it runs (`concurrent=True`), so a
catastrophic pattern neither hangs a command nor freezes the studio's UI thread
while a worker analyzes. One `RegexBudget` is shared by every regex of one
expression evaluation, one validation or one file's analysis, so many slow searches
cannot add up to a hang either. Type patterns that pydantic-core's Rust engine can
compile run there (no backtracking: linear time); the rest (look-around,
back-references) run here, on the budget `shared_budget` makes active.
"""

from __future__ import annotations

import re
import time
from contextvars import ContextVar
from functools import lru_cache
from typing import Any

MAX_PATTERN = 500  # characters of a regular expression from a file
MAX_PATTERN_WEIGHT = 10_000  # items of a pattern with its counted repeats expanded: bounds the time to compile it
MAX_NESTING = 50  # groups inside groups


class PatternError(ValueError):
    """A regular expression from a file is refused (invalid, too long, too expensive to compile)."""


class RegexTimeout(Exception):
    """The regex budget ran out; `str(err)` says how much time it had."""


def pattern_problem(pattern: str) -> str | None:
    """Why a pattern is refused (too long, not Python regex syntax, nesting or repeats too large), or None."""
    if len(pattern) > MAX_PATTERN:
        return f"the regular expression is longer than {MAX_PATTERN} characters"
    try:
        parsed = parse_pattern(pattern)
    except re.error as err:
        return f"invalid regular expression: {err}"
    except RecursionError:
        return "the regular expression nests too deeply"
    except Exception as err:  # noqa: BLE001 - sre's parser has other failure modes (e.g. OverflowError)
        return f"invalid regular expression: {err}"
    try:
        weight = _weight(parsed, 0)
    except _TooDeep:
        return f"the regular expression nests groups more than {MAX_NESTING} levels deep"
    if weight > MAX_PATTERN_WEIGHT:
        return (f"the regular expression repeats too much: its counted repeats expand to more than "
                f"{MAX_PATTERN_WEIGHT:,} items")
    return None


def parse_pattern(pattern: str) -> Any:
    """The pattern parsed by Python's own regex parser (re.error when it is not Python syntax)."""
    try:
        import re._parser as sre  # type: ignore[import-not-found]
    except ImportError:  # pragma: no cover - Python < 3.11
        import sre_parse as sre
    return sre.parse(pattern)


class _TooDeep(Exception):
    pass


def _weight(items: Any, depth: int) -> int:
    """Items of a parsed pattern with counted repeats multiplied out (an unbounded repeat counts its minimum)."""
    if depth > MAX_NESTING:
        raise _TooDeep
    total = 0
    for op, arg in items:
        name = str(op)
        if name in ("MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT"):
            low, high, sub = arg
            count = low if str(high) == "MAXREPEAT" or high is None else max(low, high)
            total += max(1, count) * _weight(sub, depth + 1)
        elif name == "SUBPATTERN":
            total += _weight(arg[-1], depth + 1)
        elif name == "BRANCH":
            total += sum(_weight(alt, depth + 1) for alt in arg[1])
        elif name in ("ASSERT", "ASSERT_NOT"):
            total += _weight(arg[1], depth + 1)
        elif name == "ATOMIC_GROUP":
            total += _weight(arg, depth + 1)
        elif name == "GROUPREF_EXISTS":
            total += _weight(arg[1], depth + 1) + (_weight(arg[2], depth + 1) if arg[2] else 0)
        else:
            total += 1
        if total > MAX_PATTERN_WEIGHT:
            return total
    return total


@lru_cache(maxsize=512)
def _compile(pattern: str) -> Any:
    problem = pattern_problem(pattern)
    if problem:
        raise PatternError(problem)
    import regex  # imported on first use: `check` of a file without patterns never pays for it

    try:
        return regex.compile(pattern)
    except Exception as err:  # noqa: BLE001 - a pattern `re` parses but `regex` refuses
        raise PatternError(f"invalid regular expression: {err}") from None


class RegexBudget:
    """Seconds of regex work (compiling and matching) shared by every regex of one evaluation or one file's analysis."""

    __slots__ = ("seconds", "left")

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.left = seconds

    def _spent(self) -> RegexTimeout:
        self.left = 0.0
        return RegexTimeout(f"regular expressions took more than {self.seconds:g} s")

    def compile(self, pattern: str) -> Any:
        """The compiled pattern (cached); PatternError when refused, RegexTimeout when the budget is spent."""
        if self.left <= 0:
            raise self._spent()
        start = time.perf_counter()
        try:
            return _compile(pattern)
        finally:
            self.left -= time.perf_counter() - start

    def search(self, pattern: str, text: str) -> bool:
        """Whether the pattern matches somewhere in the text."""
        return self._run(self.compile(pattern).search, text)

    def fullmatch(self, pattern: str, text: str) -> bool:
        """Whether the pattern matches the whole text."""
        return self._run(self.compile(pattern).fullmatch, text)

    def could_match(self, pattern: str, text: str) -> bool:
        """Whether some text that starts with `text` has a match at its start (partial matching: the prefix watch)."""
        compiled = self.compile(pattern)
        return self._run(lambda t, **kw: compiled.match(t, partial=True, **kw), text)

    def _run(self, match: Any, text: str) -> bool:
        if self.left <= 0:
            raise self._spent()
        start = time.perf_counter()
        try:
            # concurrent=True: the GIL is released while the matcher runs, so other threads (the UI) go on.
            return match(text, timeout=self.left, concurrent=True) is not None
        except TimeoutError:
            raise self._spent() from None
        finally:
            self.left -= time.perf_counter() - start


_ACTIVE: ContextVar[RegexBudget | None] = ContextVar("contractstudio_regex_budget", default=None)


def shared_budget(budget: RegexBudget) -> _SharedBudget:
    """Every type pattern checked inside (this thread or task) draws on this budget: one validation, one file's analysis."""
    return _SharedBudget(budget)


class _SharedBudget:
    """`shared_budget`'s context: a class, not a generator, since every validation of a value enters one (issue 24)."""

    __slots__ = ("budget", "token")

    def __init__(self, budget: RegexBudget) -> None:
        self.budget = budget

    def __enter__(self) -> RegexBudget:
        self.token = _ACTIVE.set(self.budget)
        return self.budget

    def __exit__(self, *exc: object) -> None:
        _ACTIVE.reset(self.token)


def active_budget(seconds: float) -> RegexBudget:
    """The budget `shared_budget` made active, or a new one of `seconds` for a check made outside any."""
    return _ACTIVE.get() or RegexBudget(seconds)
