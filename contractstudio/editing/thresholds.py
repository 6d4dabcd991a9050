"""A condition's numeric threshold (`output.coverage_score >= 0.55`): found in its expression's syntax (never
run), rewritten to another value, and the quick fix that writes a chosen value into the file (eval --judge --sweep
chooses it against labelled outputs; docs/eval.md)."""

from __future__ import annotations

import ast
from dataclasses import dataclass

from contractstudio.analysis.check import FileReport
from contractstudio.editing.items import CodeAction, TextEdit
from contractstudio.findings.diagnostics import Span
from contractstudio.reading.source import MapNode, ScalarNode, SeqNode

_OPS = {ast.GtE: ">=", ast.Gt: ">", ast.LtE: "<=", ast.Lt: "<"}


@dataclass(frozen=True, slots=True)
class Threshold:
    """The one number a condition compares a value with: where it is in the expression, and how it compares."""

    key: str  # `assert` or `when`
    start: int  # character offsets of the number in the expression's text
    end: int
    value: float
    op: str  # as read with the value on the left: `value >= threshold` is ">="
    subject: str  # the compared expression's text (`output.coverage_score`)


def find_threshold(source: str, key: str = "assert") -> Threshold | None:
    """The single `EXPR OP NUMBER` (or `NUMBER OP EXPR`) comparison of an expression, or None (none, or several)."""
    try:
        tree = ast.parse(source, mode="eval")
    except SyntaxError:
        return None
    found: list[Threshold] = []
    lines = source.split("\n")
    for node in ast.walk(tree):
        if not isinstance(node, ast.Compare) or len(node.ops) != 1 or type(node.ops[0]) not in _OPS:
            continue
        left, right, op = node.left, node.comparators[0], _OPS[type(node.ops[0])]
        number, subject = (right, left) if _is_number(right) else (left, right) if _is_number(left) else (None, None)
        if number is None or subject is None or number.lineno != 1 or len(lines) != 1:
            continue
        if number is left:  # NUMBER OP EXPR: read with the value on the left
            op = {">=": "<=", ">": "<", "<=": ">=", "<": ">"}[op]
        assert isinstance(number, ast.Constant) and isinstance(number.value, int | float)
        found.append(Threshold(key, number.col_offset, number.end_col_offset or number.col_offset, float(number.value), op,
                               ast.unparse(subject)))
    return found[0] if len(found) == 1 else None


def _is_number(node: ast.AST) -> bool:
    return isinstance(node, ast.Constant) and isinstance(node.value, int | float) and not isinstance(node.value, bool)


def number_text(value: float) -> str:
    """A threshold as written: `0.4`, `3` (never `0.39999999999999997`)."""
    text = f"{value:.6g}"
    return text if "e" not in text else repr(value)


def with_threshold(source: str, found: Threshold, value: float) -> str:
    """The expression with its threshold replaced."""
    return source[: found.start] + number_text(value) + source[found.end :]


def threshold_action(report: FileReport, condition_id: str, value: float, key: str = "assert") -> CodeAction | None:
    """The quick fix that writes `value` as the threshold of post condition `condition_id` (its `assert`, or its
    `when`): one edit of the number, where it is written in the file. None when the condition or its number is not
    found, or the expression is not a plain or quoted one-line scalar (a folded one is left to the author)."""
    for loaded in report.documents:
        root = loaded.doc.root
        post = root.get("post") if isinstance(root, MapNode) else None
        if not isinstance(post, SeqNode):
            continue
        for item in post.items:
            if not isinstance(item, MapNode) or getattr(item.get("id"), "value", None) != condition_id:
                continue
            node = item.get(key)
            if not isinstance(node, ScalarNode) or node.style not in ("", '"', "'") or node.line != node.end_line:
                return None
            found = find_threshold(str(node.value), key)
            if found is None:
                return None
            shift = 0 if node.style == "" else 1  # past the opening quote (the number has no character to escape)
            if node.style and str(node.value)[: found.end] != str(node.text)[: found.end]:
                return None  # escapes before the number: the offsets of the value are not the file's
            start = node.column + shift + found.start
            text = number_text(value)
            return CodeAction(f"Set the threshold of {condition_id} to {text} (was {number_text(found.value)})",
                              (TextEdit(Span(node.line, start, node.line, start + found.end - found.start), text),))
    return None
