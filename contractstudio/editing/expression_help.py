"""Completion inside expressions and message templates: names in scope, fields, methods, functions.

The type of `output.evidence[0]` before a `.` comes from the expression
checker itself (`expressions.check`), so what is offered is exactly what the
checker accepts.
"""

from __future__ import annotations

import re

from contractstudio.documents.type_syntax import ANY, DictOf, ListOf, Prim, TypeExpr, Union, without_none
from contractstudio.documents.types import TypeSystem
from contractstudio.editing.items import CompletionItem
from contractstudio.expressions import allowlist, check
from contractstudio.expressions.call_types import ARITY
from contractstudio.expressions.kinds import kind_of
from contractstudio.findings.diagnostics import Span

# the lookbehind starts a chain only where a name starts: a search tried from inside every name of a long line (quadratic)
_CHAIN = re.compile(r"(?<![A-Za-z0-9_])([A-Za-z_][A-Za-z0-9_]*(?:\s*\[[^\[\]]*\]|\s*\.\s*[A-Za-z_][A-Za-z0-9_]*)*)"
                    r"\s*\.\s*([A-Za-z_][A-Za-z0-9_]*)?$")
_NAME = re.compile(r"(?<![A-Za-z0-9_.])([A-Za-z_][A-Za-z0-9_]*)?$")
_LOOP = re.compile(r"\bfor\s+([A-Za-z_][A-Za-z0-9_]*)\s+in\s+([A-Za-z_][A-Za-z0-9_.\[\]\s]*?)(?=\s+if\b|\s*[\]\)}]|$)")
KEYWORDS = ("and", "or", "not", "in", "is", "None", "True", "False", "if", "else", "for")
FUNCTION_DOCS = {
    "len": "Number of items of a list, dict or str.", "min": "The smallest item.", "max": "The largest item.",
    "sum": "The sum of the items.", "abs": "Absolute value.", "all": "True when every item is true.",
    "any": "True when some item is true.", "round": "A number rounded to n digits.", "sorted": "The items in order.",
    "str": "Text of a value.", "int": "An integer from a value.", "float": "A float from a value.", "bool": "Truth of a value.",
    "list": "A list of the items.", "set": "The distinct items.", "matches": "True when the regex matches the text (bounded time).",
}


def open_placeholder(text: str) -> str | None:
    """The text of the `{...}` placeholder the cursor is in at the end of a template prefix, or None."""
    i, start = 0, None
    while i < len(text):
        if text.startswith("{{", i) and start is None:
            i += 2
            continue
        if text[i] == "{" and start is None:
            start = i + 1
        elif text[i] == "}" and start is not None:
            start = None
        i += 1
    return text[start:] if start is not None else None


def _with_loop_variables(src: str, scope: dict[str, TypeExpr], types: TypeSystem) -> dict[str, TypeExpr]:
    """The scope plus comprehension variables (`for d in input.documents`) typed by what they iterate."""
    inner = dict(scope)
    for _ in range(3):  # nested comprehensions name each other's variables
        changed = False
        for m in _LOOP.finditer(src):
            name, iterable = m.group(1), m.group(2).strip()
            if name in inner:
                continue
            t, _issues = check(iterable, inner, types)
            if t is None:
                continue
            base = without_none(t)
            item = base.item if isinstance(base, ListOf) else Prim("str") if kind_of(base, types) == "str" else ANY
            inner[name] = item
            changed = True
        if not changed:
            break
    return inner


def complete_expression(before: str, whole: str, scope: dict[str, TypeExpr], types: TypeSystem, replace: Span) -> list[CompletionItem]:
    """Items for the cursor at the end of `before` (the expression text typed so far; `whole`: all of it)."""
    scope = _with_loop_variables(whole, scope, types)
    m = _CHAIN.search(before)
    if m:
        t, _ = check(m.group(1), scope, types)
        return members(t if t is not None else ANY, types, replace)
    if _NAME.search(before) is None:
        return []
    items = [CompletionItem(n, "name", str(t), insert_text=n, replace=replace, sort_text=f"0{n}") for n, t in scope.items()]
    for name, (low, high) in ARITY.items():
        args = "x" if low == high == 1 else "text, regex" if name == "matches" else "..."
        items.append(CompletionItem(name, "function", f"{name}({args})", FUNCTION_DOCS.get(name, ""), insert_text=f"{name}(",
                                    replace=replace, sort_text=f"1{name}"))
    items += [CompletionItem(k, "keyword", insert_text=k, replace=replace, sort_text=f"2{k}") for k in KEYWORDS]
    return items


def members(t: TypeExpr, types: TypeSystem, replace: Span) -> list[CompletionItem]:
    """Fields of a record, or the allowed methods of a str, list or dict value."""
    base = without_none(t)
    options = base.options if isinstance(base, Union) else (base,)
    items: list[CompletionItem] = []
    seen: set[str] = set()
    for option in options:
        specs = types.fields(option)
        if specs is not None:
            field_types = types.field_types(option) or {}
            for name, spec in specs.items():
                if name in seen:
                    continue
                seen.add(name)
                detail = str(field_types.get(name, ANY)) + ("" if spec.required else " (optional)")
                items.append(CompletionItem(name, "field", detail, spec.description or "", insert_text=name, replace=replace,
                                            sort_text=f"0{len(items):04d}"))
            continue
        kind = kind_of(option, types)
        methods = {"str": allowlist.STR_METHODS, "list": allowlist.LIST_METHODS, "dict": allowlist.DICT_METHODS}.get(kind, {})
        if isinstance(option, DictOf) and not methods:
            methods = allowlist.DICT_METHODS
        for name in sorted(methods):
            if name not in seen:
                seen.add(name)
                items.append(CompletionItem(name, "method", f"{kind} method", insert_text=f"{name}(", replace=replace,
                                            sort_text=f"1{name}"))
    return items
