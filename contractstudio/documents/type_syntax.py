"""Type strings ("list[Document]", "int | None", "Literal['a', 'b']") read into TypeExprs.

The declared types of a document (`types.py`), the expression checker and the prompts all speak TypeExpr;
this module has no pydantic in it, so reading a type string costs nothing more.
"""

from __future__ import annotations

import functools
import re
import typing
from dataclasses import dataclass
from typing import Any

PRIMITIVES = ("str", "int", "float", "bool", "any", "none")
MAX_TYPE_DEPTH = 32  # list[list[...]] deeper than this is a mistake (and would exhaust the parser's recursion)


class TypeSyntaxError(ValueError):
    """A malformed type string; `offset` is the character where the problem is."""

    def __init__(self, message: str, offset: int = 0) -> None:
        super().__init__(message)
        self.message = message
        self.offset = offset


@dataclass(frozen=True, slots=True)
class Prim:
    name: str  # one of PRIMITIVES

    def __str__(self) -> str:
        return "None" if self.name == "none" else self.name


@dataclass(frozen=True, slots=True)
class Ref:
    name: str  # a declared type name

    def __str__(self) -> str:
        return self.name


@dataclass(frozen=True, slots=True)
class ListOf:
    item: TypeExpr

    def __str__(self) -> str:
        return f"list[{self.item}]"


@dataclass(frozen=True, slots=True)
class DictOf:
    value: TypeExpr

    def __str__(self) -> str:
        return f"dict[str, {self.value}]"


@dataclass(frozen=True, slots=True)
class Union:
    options: tuple[TypeExpr, ...]

    def __str__(self) -> str:
        return " | ".join(str(o) for o in self.options)


@dataclass(frozen=True, slots=True)
class LiteralOf:
    values: tuple[Any, ...]

    def __str__(self) -> str:
        return "Literal[" + ", ".join(repr(v) for v in self.values) + "]"


TypeExpr = Prim | Ref | ListOf | DictOf | Union | LiteralOf
ANY = Prim("any")
NONE = Prim("none")


def union_of(options: typing.Iterable[TypeExpr]) -> TypeExpr:
    """A flattened, de-duplicated union (a single option is itself; `any` absorbs the rest)."""
    flat: list[TypeExpr] = []
    for opt in options:
        for o in opt.options if isinstance(opt, Union) else (opt,):
            if o == ANY:
                return ANY
            if o not in flat:
                flat.append(o)
    if not flat:
        return ANY
    return flat[0] if len(flat) == 1 else Union(tuple(flat))


def without_none(t: TypeExpr) -> TypeExpr:
    """The type with `None` removed from a union (T | None -> T)."""
    if isinstance(t, Union):
        rest = [o for o in t.options if o != NONE]
        return union_of(rest) if rest else NONE
    return t


# ----------------------------------------------------------------- parsing

_TOKEN = re.compile(
    r"\s*(?:(?P<name>[A-Za-z_][A-Za-z0-9_]*)|(?P<str>'[^'\\]*'|\"[^\"\\]*\")"
    r"|(?P<num>-?\d+(?:\.\d+)?)|(?P<punct>[\[\],|]))"
)
_ALIASES = {"string": "str", "integer": "int", "number": "float", "boolean": "bool", "Any": "any", "None": "none", "null": "none"}


class _Parser:
    def __init__(self, text: str) -> None:
        self.text = text
        self.tokens: list[tuple[str, str, int]] = []
        pos = 0
        stop = len(text.rstrip())  # never `text[pos:].strip()` per token: that is quadratic in the type's length
        while pos < stop:
            m = _TOKEN.match(text, pos)
            if not m or m.end() == pos:
                bad = pos + len(text[pos:]) - len(text[pos:].lstrip())
                raise TypeSyntaxError(f"unexpected character {text[bad]!r} in type", bad)
            kind = m.lastgroup or ""
            self.tokens.append((kind, m.group(kind), m.start(kind)))
            pos = m.end()
        self.i = 0
        self.depth = 0

    def peek(self) -> tuple[str, str, int] | None:
        return self.tokens[self.i] if self.i < len(self.tokens) else None

    def expect(self, value: str) -> None:
        tok = self.peek()
        if tok is None or tok[1] != value:
            where = tok[2] if tok else len(self.text)
            got = f"'{tok[1]}'" if tok else "the end"
            raise TypeSyntaxError(f"expected '{value}' but found {got}", where)
        self.i += 1

    def union(self) -> TypeExpr:
        options = [self.primary()]
        while (tok := self.peek()) is not None and tok[1] == "|":
            self.i += 1
            options.append(self.primary())
        return union_of(options)

    def primary(self) -> TypeExpr:
        self.depth += 1
        try:
            return self._primary()
        finally:
            self.depth -= 1

    def _primary(self) -> TypeExpr:
        tok = self.peek()
        if self.depth > MAX_TYPE_DEPTH:
            raise TypeSyntaxError(f"the type nests deeper than {MAX_TYPE_DEPTH} levels", tok[2] if tok else len(self.text))
        if tok is None:
            raise TypeSyntaxError("a type name is missing", len(self.text))
        kind, value, where = tok
        if kind != "name":
            raise TypeSyntaxError(f"expected a type name but found '{value}'", where)
        self.i += 1
        name = _ALIASES.get(value, value)
        if name in ("list", "List"):
            self.expect("[")
            item = self.union()
            self.expect("]")
            return ListOf(item)
        if name in ("dict", "Dict"):
            self.expect("[")
            key = self.union()
            if key != Prim("str"):
                raise TypeSyntaxError("dictionary keys must be str (JSON objects have string keys)", where)
            self.expect(",")
            val = self.union()
            self.expect("]")
            return DictOf(val)
        if name == "Optional":
            self.expect("[")
            inner = self.union()
            self.expect("]")
            return union_of([inner, NONE])
        if name == "Literal":
            self.expect("[")
            values: list[Any] = [self.literal()]
            while (t := self.peek()) is not None and t[1] == ",":
                self.i += 1
                values.append(self.literal())
            self.expect("]")
            return LiteralOf(tuple(dict.fromkeys(values)))
        if name in PRIMITIVES:
            return Prim(name)
        if (nxt := self.peek()) is not None and nxt[1] == "[":
            raise TypeSyntaxError(f"'{value}' takes no parameters (generic types: list, dict, Literal, Optional)", nxt[2])
        return Ref(value)

    def literal(self) -> Any:
        tok = self.peek()
        if tok is None:
            raise TypeSyntaxError("a literal value is missing", len(self.text))
        kind, value, where = tok
        self.i += 1
        if kind == "str":
            return value[1:-1]
        if kind == "num":
            return float(value) if "." in value else int(value)
        if value in ("True", "False"):
            return value == "True"
        if value == "None":
            return None
        raise TypeSyntaxError(f"Literal values are quoted strings, numbers, True, False or None, not '{value}'", where)


@functools.lru_cache(maxsize=4096)
def _parse_cached(text: str) -> TypeExpr:
    return _parse(text)


def parse_type(text: str) -> TypeExpr:
    """Parse a type string; raises TypeSyntaxError(message, offset). Results are shared (TypeExpr is frozen)."""
    if not isinstance(text, str):
        raise TypeSyntaxError("the type is empty", 0)
    return _parse_cached(text)  # files repeat the same few type strings: parse each once


def _parse(text: str) -> TypeExpr:
    if not text.strip():
        raise TypeSyntaxError("the type is empty", 0)
    parser = _Parser(text)
    result = parser.union()
    extra = parser.peek()
    if extra is not None:
        raise TypeSyntaxError(f"unexpected '{extra[1]}' after the type", extra[2])
    return result


def refs(t: TypeExpr) -> list[str]:
    """Every declared-type name a type expression mentions."""
    if isinstance(t, Ref):
        return [t.name]
    if isinstance(t, ListOf):
        return refs(t.item)
    if isinstance(t, DictOf):
        return refs(t.value)
    if isinstance(t, Union):
        return [n for o in t.options for n in refs(o)]
    return []
