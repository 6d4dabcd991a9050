"""The safe expression language of FORMAT.md: parse, allowlist, type-check and evaluate with hard bounds.

    check(src, scope, types)          -> (type, [ExprIssue])   static: allowlist, names, fields, types
    compile_expression(src)           -> Expression            refuses anything outside the allowlist
    Expression.evaluate(values)       -> value                 one bounded function of ours per tree (generated.py),
                                                               never eval/exec of the expression's text
    check_template(msg, scope, types) -> [ExprIssue]           `{expr}` / `{expr:fmt}` placeholders
    render_template(msg, values)      -> str
"""

from contractstudio.expressions.language import Expression, ExpressionError, ExprIssue, check, compile_expression
from contractstudio.expressions.templates import (
    MAX_TEMPLATE,
    TemplateField,
    check_template,
    render_template,
    template_fields,
)

__all__ = [
    "MAX_TEMPLATE", "ExprIssue", "ExpressionError", "Expression", "TemplateField", "check", "check_template",
    "compile_expression", "render_template", "template_fields",
]
