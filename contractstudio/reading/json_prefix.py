"""One JSON document read as it arrives: whether the text so far can still become the document, and what it holds.

The reply check reads a whole reply with Python's `json` reader (reading/replies.py). While a reply streams, this
reader takes the same text a chunk at a time (each character once) and says at which character it stopped being the
start of any document Python's reader accepts; meanwhile it tells a `Listener` about each value as it grows (a
string's characters, a number once it ends, an array's items, an object's keys), so the prefix watch can see a
clause broken before the reply ends. It accepts exactly the documents Python's C reader accepts, a prefix at a time:
JSON blanks between tokens, `"\\uXXXX"` and the other escapes, no control characters in strings, numbers as JSON
writes them. (NaN and Infinity, which Python reads but the reply check refuses, are refused here too.)
"""

from __future__ import annotations

import re
from typing import Any

_BLANK = " \t\n\r"  # JSON's blanks (between tokens); around the document any str.isspace() (the reply is stripped)
_STRING_STOP = re.compile(r'["\\\x00-\x1f]')  # the end of a string's plain run
_ESCAPES = {'"': '"', "\\": "\\", "/": "/", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t"}
_HEX = frozenset("0123456789abcdefABCDEF")
_DIGITS = frozenset("0123456789")
_LITERALS = {"t": "true", "f": "false", "n": "null"}
_LITERAL_VALUES = {"true": True, "false": False, "null": None}
# what may follow a number's last character, by the number's state: (digits that continue it, other characters)
_NUMBER_NEXT = {"sign": ("int0", ""), "zero": ("", ".eE"), "int": ("int", ".eE"), "dot": ("frac", ""),
                "frac": ("frac", "eE"), "e": ("exp", "+-"), "esign": ("exp", ""), "exp": ("exp", "")}
_COMPLETE_NUMBER = frozenset({"zero", "int", "frac", "exp"})


class Listener:
    """What a reader reports while a document grows; each method may return a violation (any object) to stop at,
    or (`chars`) a violation and the position of the character that decided it."""

    def value(self, parent: Any, key: str | int | None, kind: str, at: int) -> Any:
        """A value starts under `parent` (None: the document) at `key`; kind: object array string number literal.
        Returns what the reader hands back for this value (its context), or None to hear nothing more of it."""
        return None

    def chars(self, ctx: Any, text: str, at: int) -> tuple[Any, int] | None:
        """More decoded characters of a string value (`at`: the position in the reply of the last one; a plain run's
        characters stand one per position before it, an escape's one character at the escape's last position)."""
        return None

    def string_end(self, ctx: Any, text: str, at: int) -> Any:
        """A string value is complete: its whole decoded text."""
        return None

    def number_end(self, ctx: Any, token: str, at: int) -> Any:
        """A number is complete (the character after it arrived): its token as written."""
        return None

    def item(self, ctx: Any, count: int, at: int) -> Any:
        """An array's `count`-th item starts."""
        return None

    def key(self, ctx: Any, name: str, count: int, at: int) -> Any:
        """An object's `count`-th key is complete."""
        return None


class JsonPrefix:
    """An incremental reader of one JSON document; `feed` returns the position where the text stopped being one."""

    __slots__ = ("listener", "state", "stack", "buf", "esc", "is_key", "num", "num_state", "lit", "dead", "done",
                 "started", "pending", "high", "violation", "_ctx")

    def __init__(self, listener: Listener | None = None) -> None:
        self.listener = listener or Listener()
        self.state = "value"  # value | after_value | key_or_end | key | colon | string | escape | unicode | number | literal
        self.stack: list[list[Any]] = []  # [kind "o"/"a", ctx, count, current key]
        self.buf: list[str] = []  # the decoded characters of the current string
        self.esc = ""  # the hex digits of a \\u escape so far
        self.high: str | None = None  # a high surrogate waiting for its low half
        self.is_key = False
        self.num: list[str] = []
        self.num_state = ""
        self.lit = ""
        self.dead: int | None = None  # the position where the text stopped being a JSON document
        self.done = False  # the document is complete (only blanks may follow)
        self.started = False
        self.pending: tuple[Any, str | int | None] = (None, None)  # (parent ctx, key) of the value expected next
        self.violation: tuple[Any, int] | None = None  # the first violation a listener returned, and its position
        self._ctx: Any = None  # the context of the string, number or literal being read

    @property
    def complete(self) -> bool:
        """Whether the text so far is a whole document (blanks after it aside)."""
        return self.dead is None and (self.done or (self.state == "number" and self.num_state in _COMPLETE_NUMBER
                                                    and not self.stack))

    def feed(self, text: str, offset: int) -> int | None:
        """Read more of the document (`offset`: the position of text[0] in the reply); the position where it broke."""
        if self.dead is not None:
            return self.dead
        i, n = 0, len(text)
        while i < n:
            if self.violation is not None:
                return self.dead
            state = self.state
            if state == "string":
                m = _STRING_STOP.search(text, i)
                end = m.start() if m else n
                if end > i:
                    self._chars(text[i:end], offset + end - 1)
                    i = end
                    continue
                c = text[i]
                if c == '"':
                    self._string_end(offset + i)
                elif c == "\\":
                    self.state = "escape"
                else:
                    return self._die(offset + i)  # a control character inside a string
                i += 1
                continue
            c = text[i]
            if not self._step(c, offset + i):
                return self.dead
            i += 1
        return self.dead

    def finish(self, at: int) -> int | None:
        """The text ended here (a closing fence): the position where it broke, unless it is a whole document."""
        if self.dead is None and self.state == "number" and self.num_state in _COMPLETE_NUMBER and not self.stack:
            self._number_end(at)
            self.done = True
        if self.dead is None and not self.done:
            self.dead = at
        return self.dead

    # -- one character outside a string's plain run

    def _die(self, at: int) -> int:
        self.dead = at
        return at

    def _step(self, c: str, at: int) -> bool:
        state = self.state
        if state == "number":
            digit_next, other_next = _NUMBER_NEXT[self.num_state]
            if c in _DIGITS and digit_next:
                self.num_state = "zero" if digit_next == "int0" and c == "0" else ("int" if digit_next == "int0" else digit_next)
                self.num.append(c)
                return True
            if c in other_next:
                self.num_state = "dot" if c == "." else ("e" if c in "eE" else "esign")
                self.num.append(c)
                return True
            if self.num_state not in _COMPLETE_NUMBER:
                self._die(at)
                return False
            self._number_end(at)
            return self._step(c, at)  # the character after the number, read as ever
        if state == "literal":
            word = self.lit
            want = _LITERALS[word[0]]
            if c != want[len(word)]:
                self._die(at)
                return False
            self.lit = word + c
            if len(self.lit) == len(want):
                self._after_value()
            return True
        if state == "escape":
            if c == "u":
                self.state, self.esc = "unicode", ""
                return True
            if c not in _ESCAPES:
                self._die(at)
                return False
            self.state = "string"
            self._chars(_ESCAPES[c], at)
            return True
        if state == "unicode":
            if c not in _HEX:
                self._die(at)
                return False
            self.esc += c
            if len(self.esc) == 4:
                self.state = "string"
                self._chars(chr(int(self.esc, 16)), at, escaped=True)
            return True
        blank = c in _BLANK or (not self.stack and c.isspace() and (self.done or not self.started))
        if blank:
            return True
        if self.done:
            self._die(at)
            return False
        if state == "value":
            return self._value(c, at)
        if state == "after_value":
            top = self.stack[-1]
            if c == ",":
                self.state = "key" if top[0] == "o" else "value"
                if top[0] == "a":
                    self.pending = (top[1], top[2])
                return True
            if (c == "}" and top[0] == "o") or (c == "]" and top[0] == "a"):
                self.stack.pop()
                self._after_value()
                return True
            self._die(at)
            return False
        if state in ("key_or_end", "key"):
            if c == '"':
                self.state, self.is_key, self.buf = "string", True, []
                return True
            if c == "}" and state == "key_or_end":
                self.stack.pop()
                self._after_value()
                return True
            self._die(at)
            return False
        if state == "colon":
            if c != ":":
                self._die(at)
                return False
            top = self.stack[-1]
            self.state, self.pending = "value", (top[1], top[3])
            return True
        self._die(at)  # pragma: no cover - every state is handled above
        return False

    def _value(self, c: str, at: int) -> bool:
        """The first character of a value (or `]` closing an empty array)."""
        top = self.stack[-1] if self.stack else None
        if c == "]" and top is not None and top[0] == "a" and top[2] == 0:
            self.stack.pop()
            self._after_value()
            return True
        parent, key = self.pending
        self.started = True
        if c == "{":
            kind = "object"
        elif c == "[":
            kind = "array"
        elif c == '"':
            kind = "string"
        elif c == "-" or c in _DIGITS:
            kind = "number"
        elif c in _LITERALS:
            kind = "literal"
        else:
            self._die(at)
            return False
        if top is not None and top[0] == "a":
            top[2] += 1
            if top[1] is not None:
                self._report(self.listener.item(top[1], top[2], at), at)
        ctx = self.listener.value(parent, key, kind, at) if parent is not None or top is None else None
        if c == "{":
            self.stack.append(["o", ctx, 0, None])
            self.state = "key_or_end"
        elif c == "[":
            self.stack.append(["a", ctx, 0, None])
            self.state, self.pending = "value", (ctx, 0)
        elif c == '"':
            self.state, self.is_key, self.buf = "string", False, []
            self._ctx = ctx
        elif kind == "number":
            self.state, self.num = "number", [c]
            self.num_state = "sign" if c == "-" else ("zero" if c == "0" else "int")
            self._ctx = ctx
        else:
            self.state, self.lit = "literal", c
            self._ctx = ctx
        return True

    # -- values ending

    def _chars(self, piece: str, at: int, escaped: bool = False) -> None:
        if self.high is not None:  # a surrogate pair's escapes become one character, as Python's reader makes them
            high, self.high = self.high, None
            if escaped and "\udc00" <= piece <= "\udfff":
                piece = (high + piece).encode("utf-16", "surrogatepass").decode("utf-16")
            else:
                piece = high + piece
        elif escaped and "\ud800" <= piece <= "\udbff":
            self.high = piece  # wait for the low half
            return
        self.buf.append(piece)
        if not self.is_key and self._ctx is not None:
            found = self.listener.chars(self._ctx, piece, at)
            if found is not None:
                self._report(found[0], found[1])

    def _string_end(self, at: int) -> None:
        if self.high is not None:
            self.buf.append(self.high)
            self.high = None
        text = "".join(self.buf)
        self.buf = []
        if self.is_key:
            top = self.stack[-1]
            top[2] += 1
            top[3] = text
            self.state = "colon"
            if top[1] is not None:
                self._report(self.listener.key(top[1], text, top[2], at), at)
            return
        if self._ctx is not None:
            self._report(self.listener.string_end(self._ctx, text, at), at)
        self._after_value()

    def _number_end(self, at: int) -> None:
        token = "".join(self.num)
        if self._ctx is not None:
            self._report(self.listener.number_end(self._ctx, token, at), at)
        self._after_value()

    def _after_value(self) -> None:
        self._ctx = None
        if not self.stack:
            self.state, self.done = "after_value", True
            return
        self.state = "after_value"

    def _report(self, found: Any, at: int) -> None:
        if found is not None and self.violation is None:
            self.violation = (found, at)
