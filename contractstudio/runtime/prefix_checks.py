"""The prefix watch's checks: each value of a streaming reply judged against the analyzer's slots as it grows.

A value breaks its place only when every option of the place refuses it (analysis/prefix_decidable.py); the error
text is the one the whole-reply check gives for the same value (runtime/validation.py's format_errors on a
validator of that one clause, built as the output type builds it), and a monotone post condition is the compiled
condition itself, evaluated on the fields it reads so far.
"""

from __future__ import annotations

import os
from functools import lru_cache
from typing import Annotated, Any, Literal

from pydantic import Field, TypeAdapter, ValidationError

from contractstudio.analysis.monotone import Watched
from contractstudio.analysis.prefix_decidable import Option, Slot
from contractstudio.documents import patterns
from contractstudio.documents.constraints import TYPE_PATTERN_S, with_pattern
from contractstudio.reading.json_prefix import Listener
from contractstudio.runtime.validation import format_errors

WATCH_PATTERN_S = 0.2  # seconds of regex matching for the patterns the watch runs on one streamed reply

_WORDS = {"enum": "the Literal values", "maxLength": "max_length", "minLength": "min_length", "pattern": "pattern",
          "maxItems": "max_length", "maximum": "le",
          "exclusiveMaximum": "lt", "minimum": "ge", "exclusiveMinimum": "gt"}
_PYDANTIC_BOUND = {"maximum": "le", "exclusiveMaximum": "lt", "minimum": "ge", "exclusiveMinimum": "gt"}


_EMPTY = Slot()


class _Value:
    """A value being read at a slot: the string options it is judged against, its text so far, and the monotone
    conditions that read it (`keys`: its field chain from the output; None inside a list)."""

    __slots__ = ("slot", "path", "strings", "text", "keys", "conditions")

    def __init__(self, slot: Slot, path: str, keys: tuple[str, ...] | None, conditions: list[Monotone]) -> None:
        self.slot, self.path, self.keys, self.conditions = slot, path, keys, conditions
        self.strings = [o for o in slot.options if "string" in o.kinds]
        self.text: list[str] = []


class Monotone:
    """A post condition the analyzer found monotone, evaluated on the fields it reads as they grow (a field not
    yet written counts as empty: the least it can be, so a failure then is a failure whatever comes)."""

    __slots__ = ("check", "watched", "values")

    def __init__(self, check: Any, watched: tuple[Watched, ...], values: dict[str, Any]) -> None:
        self.check, self.watched, self.values = check, watched, values

    def failure(self, current: dict[tuple[str, ...], Any]) -> str | None:
        output: dict[str, Any] = {}
        for w in self.watched:
            node = output
            for key in w.chain[:-1]:
                node = node.setdefault(key, {})
            node[w.chain[-1]] = current.get(w.chain, "" if w.kind == "text" else [])
        applies, passed, error = self.check.evaluate({**self.values, "output": output})
        return None if passed or not applies else error


class Checks(Listener):
    """The listener that judges each value against its slot's options (a violation: every option refuses it)."""

    def __init__(self, root: Slot, root_name: str, monotone: list[Monotone]) -> None:
        self.root, self.root_name = root, root_name
        # The patterns of one reply share a budget, far below a validation's (TYPE_PATTERN_S): the watch only saves
        # tokens, and a pattern it cannot run in time is left to the whole reply (pydantic's engine is linear).
        self.budget = patterns.RegexBudget(WATCH_PATTERN_S)
        self.watching: dict[tuple[str, ...], list[Monotone]] = {}
        self.on_way: set[tuple[str, ...]] = set()  # the objects a watched field is inside of
        self.current: dict[tuple[str, ...], Any] = {}
        for cond in monotone:
            for w in cond.watched:
                self.watching.setdefault(w.chain, []).append(cond)
                self.on_way.update(w.chain[:i] for i in range(len(w.chain)))

    def value(self, parent: Any, key: str | int | None, kind: str, at: int) -> Any:
        keys: tuple[str, ...] | None
        if parent is None:
            slot: Slot | None = self.root
            path, keys = self.root_name, ()
        else:
            slot = parent.slot.child(key if isinstance(key, str) else None)
            path = f"{parent.path}[{key}]" if isinstance(key, int) else f"{parent.path}.{key}"
            keys = parent.keys + (key,) if parent.keys is not None and isinstance(key, str) else None
        conditions = self.watching.get(keys, []) if keys is not None else []
        if (slot is None or not slot.options) and not conditions and not (keys is not None and keys in self.on_way):
            return None
        return _Value(slot or _EMPTY, path, keys, conditions)

    def chars(self, ctx: _Value, text: str, at: int) -> tuple[Any, int] | None:
        if not ctx.strings and not ctx.conditions:
            return None
        before = ctx.text[0] if ctx.text else ""
        ctx.text[:] = [before + text]
        if ctx.strings:
            found = self._refused(ctx, before, text, at)
            if found is not None:
                return found
        if ctx.conditions:
            assert ctx.keys is not None
            return self._monotone(ctx, lambda n: before + text[:n], len(text), at - len(text) + 1)
        return None

    def _monotone(self, ctx: _Value, value_at: Any, n: int, first_at: int) -> tuple[Any, int] | None:
        """The first of the last `n` steps of a field (`value_at(k)`: its value k steps in) at which a monotone
        condition fails: found by halving, as failing once means failing from then on."""
        assert ctx.keys is not None
        for cond in ctx.conditions:
            self.current[ctx.keys] = value_at(n)
            if cond.failure(self.current) is None:
                continue
            low, high = 1, n  # the failure happens at some step in 1..n
            while low < high:
                mid = (low + high) // 2
                self.current[ctx.keys] = value_at(mid)
                if cond.failure(self.current) is None:
                    low = mid + 1
                else:
                    high = mid
            self.current[ctx.keys] = value_at(low)
            error = cond.failure(self.current)
            self.current[ctx.keys] = value_at(n)
            return (cond.check.label, error), first_at + low - 1
        return None

    def _refused(self, ctx: _Value, before: str, text: str, at: int) -> tuple[Any, int] | None:
        deciding, refused = -1, None
        for o in ctx.strings:  # each option refuses at its own character; the string is refused at the last of them
            found = self._refuses_at(o, before, text)
            if found is None:
                return None  # this option still takes the string
            if found[0] > deciding:
                deciding, refused = found
        assert refused is not None
        return _violation(ctx.path, refused, before + text[:deciding + 1]), at - (len(text) - 1 - deciding)

    def string_end(self, ctx: _Value, text: str, at: int) -> Any:
        refused: tuple[str, Any] | None = None
        for o in ctx.strings:
            if o.enum is not None and text not in o.enum:
                refused = refused or ("enum", o.enum)
            elif o.min_length is not None and len(text) < o.min_length:
                refused = refused or ("minLength", o.min_length)
            elif o.pattern is not None and not self._matches(o.pattern, text, whole=True):
                refused = refused or ("pattern", o.pattern)
            else:
                return None
        return _violation(ctx.path, refused, text) if refused is not None else None

    def _matches(self, pattern: str, text: str, whole: bool) -> bool:
        """Whether the string (whole: searched, as pydantic does) or some continuation of it (anchored) may match;
        True when the pattern cannot be run within the budget (nothing is decided then)."""
        try:
            patterns.RegexBudget(TYPE_PATTERN_S).compile(pattern)  # compiled once (cached) on a validation's budget
            return self.budget.search(pattern, text) if whole else self.budget.could_match(pattern, text)
        except (patterns.PatternError, patterns.RegexTimeout):
            return True

    def _refuses_at(self, option: Option, before: str, text: str) -> tuple[int, tuple[str, Any]] | None:
        """The index in `text` (what follows `before` in a string) of the first character the option refuses, and why."""
        first: tuple[int, tuple[str, Any]] | None = None
        if option.enum is not None:
            kept = max((len(_common(v[len(before):], text)) for v in option.enum if v.startswith(before)), default=-1)
            if kept < len(text):
                first = (max(kept, 0), ("enum", option.enum))
        if option.max_length is not None and len(before) + len(text) > option.max_length:
            at = max(option.max_length - len(before), 0)
            if first is None or at < first[0]:
                first = (at, ("maxLength", option.max_length))
        if option.anchored and option.pattern is not None and (first is None or first[0] > 0) \
                and not self._matches(option.pattern, before + text[:first[0] if first else len(text)], whole=False):
            end = first[0] if first else len(text)
            at = next(i for i in range(end) if not self._matches(option.pattern, before + text[:i + 1], whole=False))
            first = (at, ("pattern", option.pattern))
        return first

    def number_end(self, ctx: _Value, token: str, at: int) -> Any:
        options = [o for o in ctx.slot.options if "number" in o.kinds]
        if not options:
            return None
        number: float = float(token) if any(c in token for c in ".eE") else int(token)
        refused: tuple[str, Any] | None = None
        for o in options:
            failed = [(k, v) for k, v in o.bounds if not _within(number, k, v)]
            if not failed:
                return None
            refused = refused or (failed[0][0], (failed[0][1], o.integer))
        assert refused is not None
        return _violation(ctx.path, refused, number)

    def item(self, ctx: _Value, count: int, at: int) -> Any:
        if ctx.conditions:
            found = self._monotone(ctx, lambda n: [None] * n, count, at - count + 1)
            if found is not None:
                return found[0]
        options = [o for o in ctx.slot.options if "array" in o.kinds]
        if not options or not all(o.max_items is not None and count > o.max_items for o in options):
            return None
        return _violation(ctx.path, ("maxItems", options[0].max_items), [None] * count,
                          shown=f"a list of {count} items so far")


def _common(a: str, b: str) -> str:
    """The longest common start of two texts."""
    return os.path.commonprefix([a, b])


def _within(number: float, keyword: str, limit: float) -> bool:
    if keyword == "maximum":
        return number <= limit
    if keyword == "exclusiveMaximum":
        return number < limit
    if keyword == "minimum":
        return number >= limit
    return number > limit


@lru_cache(maxsize=256)
def _adapter(constraint: tuple[str, Any]) -> TypeAdapter[Any]:
    """A validator of one clause alone, so its error reads word for word as the whole-reply check's."""
    keyword, value = constraint
    if keyword == "enum":
        return TypeAdapter(Literal[value])  # type: ignore[arg-type]
    if keyword in ("maxLength", "minLength", "pattern"):
        words = {"maxLength": "max_length", "minLength": "min_length", "pattern": "pattern"}[keyword]
        annotation, constraints = with_pattern(str, {words: value})  # the same validator the output type is built with
        return TypeAdapter(Annotated[annotation, Field(**constraints)])  # type: ignore[arg-type]
    if keyword == "maxItems":
        return TypeAdapter(Annotated[list[Any], Field(max_length=value)])
    limit, integer = value
    if integer:
        return TypeAdapter(Annotated[int, Field(**{_PYDANTIC_BOUND[keyword]: limit})])
    return TypeAdapter(Annotated[float, Field(**{_PYDANTIC_BOUND[keyword]: limit})])


def _violation(path: str, constraint: tuple[str, Any], value: Any, shown: str | None = None) -> tuple[str, str]:
    """(the clause, the error text the whole-reply check gives for this value)."""
    keyword, limit = constraint
    clause = f"{path}: {_WORDS.get(keyword, keyword)}"
    try:
        _adapter((keyword, tuple(limit) if isinstance(limit, list) else limit)).validate_python(value)
    except ValidationError as err:
        lines = format_errors(err, path, shown)
        if lines:
            return clause, lines[0]
    return clause, f"{path}: breaks {clause}"  # pragma: no cover - the value was refused by the same clause
