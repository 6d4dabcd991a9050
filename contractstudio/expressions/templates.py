"""Message templates of conditions: `{expr}` and `{expr:fmt}` placeholders, checked and rendered.

    check_template(msg, scope, types) -> [ExprIssue]   EXP501 (EXP401/EXP301 keep their codes)
    render_template(msg, values)      -> str           each placeholder evaluated as an expression

`{{` and `}}` are literal braces; conversions (`!r`) and nested fields in a
format spec are refused. Placeholders are expressions of language.py, with
its allowlist and bounds; a rendered message is bounded too.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import contractstudio.expressions.allowlist as allowlist
from contractstudio.documents.type_syntax import TypeExpr
from contractstudio.documents.types import TypeSystem
from contractstudio.expressions.language import check, compile_expression
from contractstudio.expressions.sandbox import ExpressionError
from contractstudio.expressions.syntax import ExprIssue
from contractstudio.findings.diagnostics import declare

declare("EXP501", "bad-message-template", "error", "A `message` template that does not parse or names unknown fields.")

MAX_TEMPLATE = 20_000  # characters of a rendered message


@dataclass(frozen=True, slots=True)
class TemplateField:
    """One `{expr:spec}` placeholder: the expression text, its offset in the message, and the spec."""

    expr: str
    start: int
    spec: str


def template_fields(msg: str) -> tuple[list[str | TemplateField], ExprIssue | None]:
    """Split a template into literal text and fields ({{ and }} are braces); an EXP501 issue if it does not parse."""
    parts: list[str | TemplateField] = []
    text: list[str] = []
    i, n = 0, len(msg)
    while i < n:
        ch = msg[i]
        if ch == "}":
            if msg.startswith("}}", i):
                text.append("}")
                i += 2
                continue
            return parts, ExprIssue("EXP501", "single '}' in the message: write '}}' for a brace", i, i + 1)
        if ch != "{":
            text.append(ch)
            i += 1
            continue
        if msg.startswith("{{", i):
            text.append("{")
            i += 2
            continue
        end, split, problem = _field_end(msg, i + 1)
        if problem:
            return parts, ExprIssue("EXP501", problem, i, max(i + 1, end))
        if text:
            parts.append("".join(text))
            text = []
        body_end = split if split is not None else end
        expr, spec = msg[i + 1 : body_end], (msg[split + 1 : end] if split is not None else "")
        if "{" in spec or "}" in spec:
            return parts, ExprIssue("EXP501", "nested fields in a format spec ('{x:{y}}') are not supported", i, end + 1)
        bang = _conversion(expr)
        if bang is not None:
            return parts, ExprIssue("EXP501", "conversions like '!r' are not supported in message templates", i + 1 + bang, body_end)
        if not expr.strip():
            return parts, ExprIssue("EXP501", "empty placeholder '{}': write an expression inside the braces", i, end + 1)
        parts.append(TemplateField(expr, i + 1, spec))
        i = end + 1
    if text:
        parts.append("".join(text))
    return parts, None


def _field_end(msg: str, i: int) -> tuple[int, int | None, str | None]:
    """Scan a placeholder body from i: (index of its closing '}', index of its top-level ':', problem)."""
    depth, quote, split = 0, "", None
    while i < len(msg):
        ch = msg[i]
        if quote:
            if ch == "\\":
                i += 2
                continue
            if ch == quote:
                quote = ""
        elif ch in "'\"":
            quote = ch
        elif ch in "([{":
            depth += 1
        elif ch in ")]}":
            if depth == 0 and ch == "}":
                return i, split, None
            depth = max(0, depth - 1)
        elif ch == ":" and depth == 0 and split is None:
            split = i
        i += 1
    return i, split, "unclosed '{' in the message: write '{{' for a literal brace"


def _conversion(expr: str) -> int | None:
    """The offset of a trailing `!r`/`!s`/`!a` conversion, or None."""
    stripped = expr.rstrip()
    if len(stripped) >= 2 and stripped[-2] == "!" and stripped[-1] in "rsa" and not stripped.endswith("!=" ):
        return len(stripped) - 2
    return None


def check_template(msg: str, scope: dict[str, TypeExpr], types: TypeSystem | None = None) -> list[ExprIssue]:
    """Check a message template; field problems are EXP501 (EXP401/EXP301 keep their codes)."""
    if not isinstance(msg, str):
        return []

    parts, problem = template_fields(msg)
    issues = [problem] if problem else []
    for part in parts:
        if not isinstance(part, TemplateField):
            continue
        spec_problem = allowlist.spec_problem(part.spec) if part.spec else None
        if spec_problem:
            at = part.start + len(part.expr) + 1
            issues.append(ExprIssue("EXP501", spec_problem, at, at + len(part.spec)))
        _, found = check(part.expr, scope, types)
        for i in found:
            code = i.code if i.code in ("EXP401", "EXP301") else "EXP501"
            message = i.message if code != "EXP501" else f"in the message placeholder: {i.message}"
            issues.append(ExprIssue(code, message, part.start + i.start, part.start + i.end, i.hint))
    return issues


def render_template(msg: str, values: dict[str, Any]) -> str:
    """Render a message template with the given names; raises ExpressionError when it cannot."""

    parts, problem = template_fields(msg)
    if problem:
        raise ExpressionError(problem.message, problem.start, problem.end)
    out: list[str] = []
    size = 0
    for part in parts:
        if isinstance(part, TemplateField):
            value = compile_expression(part.expr).evaluate(values)
            piece = allowlist.format_value(value, part.spec)
        else:
            piece = part
        size += len(piece)
        if size > MAX_TEMPLATE:
            raise ExpressionError(f"the message is longer than {MAX_TEMPLATE:,} characters")
        out.append(piece)
    return "".join(out)
