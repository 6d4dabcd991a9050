"""Parsing expressions: a tree plus the map from tree positions back to characters of the source.

Expressions may span lines (YAML block scalars), so the text is parsed inside
parentheses; positions are converted from the parser's UTF-8 byte columns to
character offsets of the original text, and syntax errors point inside it.
"""

from __future__ import annotations

import ast
import re
import warnings
from dataclasses import dataclass
from functools import lru_cache

from contractstudio.findings.diagnostics import declare

# The codes of the expression checker, declared where they are found (EXP101 here; EXP2xx-4xx in
# checker.py; EXP501 in templates.py).
declare("EXP101", "expression-syntax", "error", "An expression that does not parse.")

MAX_SOURCE = 10_000  # characters of one expression
MAX_DEPTH = 60  # nesting of the syntax tree; keeps the evaluator's recursion shallow


@dataclass(frozen=True, slots=True)
class ExprIssue:
    """One finding inside an expression; start/end are character offsets into its source."""

    code: str
    message: str
    start: int
    end: int
    hint: str | None = None


@dataclass(slots=True)
class Parsed:
    """A parsed expression and the map from tree positions back to its source."""

    src: str
    tree: ast.Expression
    lines: list[str]
    starts: list[int]

    def offset(self, lineno: int, col: int) -> int:
        """Character offset in `src` of a (1-based line, UTF-8 byte column) position of the wrapped text."""
        if not 0 < lineno <= len(self.lines):
            return len(self.src)
        char_col = len(self.lines[lineno - 1].encode("utf-8")[:col].decode("utf-8", "ignore"))
        return max(0, min(len(self.src), self.starts[lineno - 1] + char_col - 1))

    def span(self, node: ast.AST) -> tuple[int, int]:
        start = self.offset(node.lineno, node.col_offset)  # type: ignore[attr-defined]
        end_line, end_col = getattr(node, "end_lineno", None), getattr(node, "end_col_offset", None)
        end = self.offset(end_line, end_col) if end_line is not None and end_col is not None else start + 1
        return start, max(end, start + 1)


def _line_starts(text: str) -> tuple[list[str], list[int]]:
    lines = re.split(r"\r\n|\r|\n", text)
    starts, pos = [], 0
    for m in re.finditer(r"[^\r\n]*(\r\n|\r|\n|$)", text):
        starts.append(pos)
        pos = m.end()
        if m.group(1) == "":
            break
    return lines, starts[: len(lines)]


@lru_cache(maxsize=2048)
def parse(src: str) -> Parsed | ExprIssue:
    """Parse an expression (it may span lines); an ExprIssue (EXP101/EXP401) when it cannot be."""
    if not isinstance(src, str):
        return ExprIssue("EXP101", "an expression must be text", 0, 1)
    if len(src) > MAX_SOURCE:
        return ExprIssue("EXP401", f"the expression is longer than {MAX_SOURCE:,} characters", 0, len(src))
    if not src.strip():
        return ExprIssue("EXP101", "the expression is empty", 0, max(1, len(src)))
    # Parenthesized so an expression may continue over several lines, as it does in YAML block scalars.
    wrapped = "(" + src + "\n)"
    lines, starts = _line_starts(wrapped)
    try:
        tree = _quiet_parse(wrapped)
    except SyntaxError as err:
        return _syntax_issue(src, err, starts)
    except (ValueError, MemoryError, RecursionError) as err:
        return ExprIssue("EXP101", f"the expression cannot be parsed: {err}", 0, len(src))
    depth = _depth(tree)
    if depth > MAX_DEPTH:
        return ExprIssue("EXP401", f"the expression nests deeper than {MAX_DEPTH} levels", 0, len(src))
    return Parsed(src, tree, lines, starts)


def _quiet_parse(text: str) -> ast.Expression:
    # Python's SyntaxWarnings ("'str' object is not callable") would reach the user's terminal; our issues say it.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return ast.parse(text, mode="eval")


def _syntax_issue(src: str, err: SyntaxError, starts: list[int]) -> ExprIssue:
    """EXP101 at the parser's position inside the expression (not in the parentheses we wrapped it in)."""
    line, col = err.lineno or 1, (err.offset or 1) - 1
    at = (starts[line - 1] if 0 < line <= len(starts) else 0) + col  # index in the wrapped text
    msg = err.msg or "invalid syntax"
    if 1 <= at <= len(src):
        start = at - 1
    else:  # the problem is at our added '(' or ')': the unwrapped text may say where
        raw_start, raw_msg = _raw_position(src)
        if raw_start is None:
            start = max(0, len(src.rstrip()) - 1)
            msg = "the expression ends too early" if at > len(src) else msg
        else:
            start, msg = raw_start, raw_msg or msg
    return ExprIssue("EXP101", f"syntax error: {msg}", start, start + 1)


def _raw_position(src: str) -> tuple[int | None, str | None]:
    try:
        _quiet_parse(src)
    except SyntaxError as raw:
        if not isinstance(raw, IndentationError) and raw.offset and raw.offset >= 1:
            raw_starts = _line_starts(src)[1]
            line = raw.lineno or 1
            base = raw_starts[line - 1] if 0 < line <= len(raw_starts) else 0
            return max(0, min(len(src) - 1, base + raw.offset - 1)), raw.msg
    except (ValueError, MemoryError, RecursionError):
        pass
    return None, None


def _depth(tree: ast.AST) -> int:
    deepest, stack = 0, [(tree, 1)]
    while stack:
        node, d = stack.pop()
        deepest = max(deepest, d)
        if d > MAX_DEPTH:
            break
        stack.extend((child, d + 1) for child in ast.iter_child_nodes(node))
    return deepest
