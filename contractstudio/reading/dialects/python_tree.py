"""What the `ast` of a `.py` file says, for the SymbolicAI reader: dotted names, the `@contract` decorator, the
file's pydantic models and their fields, literal values, and the quoting a literal shares with YAML's styles.

Pure questions about the tree (no nodes of ours are built here, nothing is imported or run); the reader
(`symbolicai.py`) turns the answers into the native contract documents at the class's spans.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from typing import Any

MODEL_BASES = ("LLMDataModel", "BaseModel")  # what a model of the file subclasses (or a model defined before it)


def literal_style(text: str, value: Any) -> str:
    """The YAML style whose column arithmetic a Python literal shares: a simple one-line quoted string is `"` / `'`.

    Anything else (triple quotes, prefixes, implicit concatenation, escapes) is `|`, so a position inside it is the
    whole string rather than a wrong column.
    """
    if not isinstance(value, str) or text == value:
        return ""
    simple = len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"" and text[:3] not in ('"""', "'''") and "\n" not in text
    return text[0] if simple and text[1:-1] == value else "|"


def dotted(node: ast.AST) -> str:
    """`a.b.c` of a name, an attribute chain or a call's function; '' for anything else."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return f"{dotted(node.value)}.{node.attr}"
    if isinstance(node, ast.Call):
        return dotted(node.func)
    return ""


def contract_decorator(cls: ast.ClassDef) -> ast.expr | None:
    """The class's `@contract` / `@x.contract(...)` decorator, or None."""
    return next((d for d in cls.decorator_list if dotted(d).rsplit(".", 1)[-1] == "contract"), None)


def name_node(definition: ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef) -> ast.AST:
    """A node spanning a definition's name (`class Name` / `def name`), for findings about the whole definition."""
    node = ast.Name(definition.name)
    node.lineno = node.end_lineno = definition.lineno
    node.col_offset = definition.col_offset  # the `class` / `def` keyword starts the line's definition
    keyword = {ast.ClassDef: "class ", ast.AsyncFunctionDef: "async def "}.get(type(definition), "def ")
    node.end_col_offset = definition.col_offset + len(keyword) + len(definition.name)
    return node


def models_of(classes: list[ast.ClassDef]) -> dict[str, ast.ClassDef]:
    """The file's pydantic models: subclasses of LLMDataModel or BaseModel, or of a model defined before them."""
    models: dict[str, ast.ClassDef] = {}
    for cls in classes:
        if any(dotted(b).rsplit(".", 1)[-1] in MODEL_BASES or dotted(b) in models for b in cls.bases):
            models[cls.name] = cls
    return models


def fields_of(cls: ast.ClassDef) -> Iterator[tuple[str, ast.expr, ast.expr | None]]:
    """(name, annotation, value) of a model's own annotated fields."""
    for name, ann, value, _target in fields_with_targets(cls, {}):
        yield name, ann, value


def fields_with_targets(cls: ast.ClassDef, models: dict[str, ast.ClassDef]) -> Iterator[tuple[str, ast.expr, ast.expr | None, ast.expr]]:
    """A model's annotated fields, those of its bases in the file first (ClassVar and private names left out)."""
    for base in cls.bases:
        parent = models.get(dotted(base))
        if parent is not None and parent is not cls:
            yield from fields_with_targets(parent, models)
    for stmt in cls.body:
        if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name) and not stmt.target.id.startswith("_"):
            if "ClassVar" in ast.unparse(stmt.annotation):
                continue
            yield stmt.target.id, stmt.annotation, stmt.value, stmt.target


def is_field_call(value: ast.expr | None) -> bool:
    """Whether a field's value is pydantic's `Field(...)`."""
    return isinstance(value, ast.Call) and dotted(value.func).rsplit(".", 1)[-1] == "Field"


def field_kwargs(value: ast.expr | None) -> dict[str, ast.expr]:
    """The keywords of a `Field(...)` value (a positional default as `default`); {} for any other value."""
    if not is_field_call(value):
        return {}
    assert isinstance(value, ast.Call)
    kwargs = {kw.arg: kw.value for kw in value.keywords if kw.arg is not None}
    if value.args and "default" not in kwargs and not (isinstance(value.args[0], ast.Constant) and value.args[0].value is Ellipsis):
        kwargs["default"] = value.args[0]  # Field(default, ...) positionally
    return kwargs


def literal(node: ast.expr) -> Any:
    """A literal's value (`ast.literal_eval`), or None when it is not one."""
    try:
        return ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return None


def monotone_post(cls: ast.ClassDef) -> list[tuple[ast.Constant, ast.expr]]:
    """The strings of a class's `monotone_post = (...)` (post conditions in the expression language, monotone in the
    output: checked after `post`, and on a streamed reply where the analyzer shows them monotone), with the target."""
    found: list[tuple[ast.Constant, ast.expr]] = []
    for stmt in cls.body:
        target = stmt.targets[0] if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 else \
            stmt.target if isinstance(stmt, ast.AnnAssign) else None
        value = getattr(stmt, "value", None)
        if isinstance(target, ast.Name) and target.id == "monotone_post" and isinstance(value, (ast.Tuple, ast.List)):
            found += [(item, target) for item in value.elts if isinstance(item, ast.Constant) and isinstance(item.value, str)]
    return found
