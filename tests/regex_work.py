"""Counting the work of a regular expression, deterministically: a plain backtracking matcher over the parse of
Python's own `re` that counts every step. `re` has no step counter and a timing assertion would flake; this
matcher has none of `re`'s shortcuts, so the work it counts is an upper bound of the shape of `re`'s: when the
count doubles with the input, `re` is linear there; when it quadruples, `re` backtracks quadratically.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable
from re import _constants as C  # type: ignore[attr-defined]
from re import _parser as P  # type: ignore[attr-defined]
from typing import Any

Cont = Callable[[int], bool]


class Unsupported(Exception):
    """A construct this counter does not model (none of the project's patterns uses one)."""


class Work:
    """The steps a search (or an anchored match) of one pattern takes over one text."""

    def __init__(self, pattern: re.Pattern[str]) -> None:
        self.items = P.parse(pattern.pattern, pattern.flags)
        self.ignore_case = bool(pattern.flags & re.I)
        self.multiline = bool(pattern.flags & re.M)
        self.dotall = bool(pattern.flags & re.S)
        self.steps = 0
        self.text = ""

    def count(self, text: str, search: bool) -> int:
        """Steps to find the first match (search) or to try one at 0 (match)."""
        self.steps, self.text = 0, text
        limit = sys.getrecursionlimit()
        sys.setrecursionlimit(max(limit, 50_000))
        try:
            for start in range(len(text) + 1 if search else 1):
                if self._seq(list(self.items), 0, start, lambda _end: True):
                    break
        finally:
            sys.setrecursionlimit(limit)
        return self.steps

    # ------------------------------------------------------------ one character

    def _word(self, ch: str) -> bool:
        return ch.isalnum() or ch == "_"

    def _category(self, code: Any, ch: str) -> bool:
        table = {C.CATEGORY_DIGIT: ch.isdecimal(), C.CATEGORY_SPACE: ch.isspace(), C.CATEGORY_WORD: self._word(ch)}
        negated = {C.CATEGORY_NOT_DIGIT: C.CATEGORY_DIGIT, C.CATEGORY_NOT_SPACE: C.CATEGORY_SPACE,
                   C.CATEGORY_NOT_WORD: C.CATEGORY_WORD}
        if code in table:
            return table[code]
        if code in negated:
            return not table[negated[code]]
        raise Unsupported(str(code))

    def _in(self, members: list[Any], ch: str) -> bool:
        forms = {ch, ch.lower(), ch.upper()} if self.ignore_case else {ch}
        negate = False
        hit = False
        for op, av in members:
            if op is C.NEGATE:
                negate = True
            elif op is C.LITERAL:
                hit = hit or any(ord(f) == av for f in forms)
            elif op is C.RANGE:
                hit = hit or any(av[0] <= ord(f) <= av[1] for f in forms)
            elif op is C.CATEGORY:
                hit = hit or self._category(av, ch)
            else:
                raise Unsupported(str(op))
        return hit != negate

    def _one(self, op: Any, av: Any, ch: str) -> bool:
        if op is C.LITERAL:
            return ch == chr(av) or (self.ignore_case and ch.lower() == chr(av).lower())
        if op is C.NOT_LITERAL:
            return not (ch == chr(av) or (self.ignore_case and ch.lower() == chr(av).lower()))
        if op is C.ANY:
            return self.dotall or ch != "\n"
        return self._in(av, ch)

    def _at(self, code: Any, pos: int) -> bool:
        t, n = self.text, len(self.text)
        if code is C.AT_BEGINNING:
            return pos == 0 or (self.multiline and t[pos - 1] == "\n")
        if code is C.AT_BEGINNING_STRING:
            return pos == 0
        if code is C.AT_END:
            return pos == n or (pos == n - 1 and t[pos] == "\n") or (self.multiline and t[pos] == "\n")
        if code is C.AT_END_STRING:
            return pos == n
        if code in (C.AT_BOUNDARY, C.AT_NON_BOUNDARY):
            before = pos > 0 and self._word(t[pos - 1])
            after = pos < n and self._word(t[pos])
            return (before != after) == (code is C.AT_BOUNDARY)
        raise Unsupported(str(code))

    # ------------------------------------------------------------ sequences, with a continuation

    def _seq(self, items: list[Any], i: int, pos: int, k: Cont) -> bool:
        self.steps += 1
        if i == len(items):
            return k(pos)
        op, av = items[i]

        def rest(end: int) -> bool:
            return self._seq(items, i + 1, end, k)

        if op in (C.LITERAL, C.NOT_LITERAL, C.ANY, C.IN):
            return pos < len(self.text) and self._one(op, av, self.text[pos]) and rest(pos + 1)
        if op is C.AT:
            return self._at(av, pos) and rest(pos)
        if op is C.SUBPATTERN:
            return self._seq(list(av[-1]), 0, pos, rest)
        if op is C.BRANCH:
            return any(self._seq(list(alt), 0, pos, rest) for alt in av[1])
        if op in (C.MAX_REPEAT, C.MIN_REPEAT):
            return self._repeat(op is C.MAX_REPEAT, av, pos, rest)
        if op in (C.ASSERT, C.ASSERT_NOT):
            direction, body = av
            if direction == 1:
                found = self._seq(list(body), 0, pos, lambda _end: True)
            else:
                width = body.getwidth()[0]
                found = pos >= width and self._seq(list(body), 0, pos - width, lambda end: end == pos)
            return (found == (op is C.ASSERT)) and rest(pos)
        raise Unsupported(str(op))

    def _repeat(self, greedy: bool, av: Any, pos: int, k: Cont) -> bool:
        low, high, body = av
        body = list(body)

        def again(count: int, at: int) -> bool:
            self.steps += 1

            def more() -> bool:
                return count < high and self._seq(body, 0, at, lambda end: end != at and again(count + 1, end))

            def stop() -> bool:
                return count >= low and k(at)

            return (more() or stop()) if greedy else (stop() or more())

        return again(0, pos)


def searched_methods(source: str, name: str) -> set[str]:
    """How a module uses its pattern `name`: the methods called on it (search, match, finditer, ...)."""
    return set(re.findall(rf"\b{re.escape(name)}\.(\w+)\(", source))
