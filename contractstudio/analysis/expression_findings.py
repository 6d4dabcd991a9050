"""The expression checker's findings (EXP*), positioned inside the YAML scalars that hold the expressions.

Every kind lists its expression sites (`Loaded.expression_sites`: the source,
the names in scope and their types); each is checked once per analysis
(`Loaded.checked_expressions`), and its issues, which carry offsets inside the
expression, become diagnostics pointing inside the scalar. The EXP codes are
declared by the expression checker itself (contractstudio/expressions/).

Two issues belong to a rule instead, which says more than the checker can:
a name out of scope in a tool's condition is a parameter the tool does not
have (TOL101, rules/tool_conditions.py), and a fallback value written as plain
words that does not parse is text missing its quotes (CON103, rules/contract_remedy.py).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Any

from contractstudio.analysis.loaded import CheckedExpression, Loaded
from contractstudio.analysis.positions import value_span
from contractstudio.findings.diagnostics import Diagnostic, make

if TYPE_CHECKING:
    from contractstudio.expressions import ExprIssue


def expression_findings(doc: Loaded) -> Iterator[Diagnostic]:
    """The diagnostics of every checked expression of a document, except those a rule reports."""
    for checked in doc.checked_expressions:
        if words_not_code(checked):
            continue
        site = checked.site
        issues = [i for i in checked.issues if unknown_parameter(checked, i) is None]
        yield from issue_diagnostics(doc, site.path, issues)


def issue_diagnostics(doc: Loaded, path: tuple[Any, ...], issues: Iterable[ExprIssue], prefix: str = "") -> Iterator[Diagnostic]:
    """Diagnostics for expression issues, positioned inside the expression's scalar."""
    subject = doc.subject(path)
    for issue in issues:
        span = value_span(doc, path, issue.start, issue.end)
        yield make(issue.code, prefix + issue.message, doc.file, span, hint=issue.hint, subject=subject)


def unknown_parameter(checked: CheckedExpression, issue: ExprIssue) -> str | None:
    """The name, when an issue is a name out of scope in a tool's condition (TOL101's finding), else None."""
    if checked.site.tool is None:
        return None
    # In a message template a name out of scope is an EXP501 of its placeholder.
    if (issue.code == "EXP501" and "not in scope" in issue.message) if checked.site.template else issue.code == "EXP202":
        return checked.site.src[issue.start:issue.end]
    return None


def words_not_code(checked: CheckedExpression) -> bool:
    """A fallback value written as plain words that does not parse as an expression (CON103's finding)."""
    return checked.site.plain_text and any(i.code in ("EXP101", "EXP202") for i in checked.issues)
