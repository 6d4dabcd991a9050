"""Post conditions marked `monotone: true` (issue 37.2): which are monotone in the output, and what a prefix shows.

A condition is monotone when a reply that breaks it part-way cannot pass it by going on: once a string field's
text holds a forbidden phrase it keeps it, once it or a list is longer than a bound it stays longer. The analyzer
accepts these forms, joined with `and`, and refuses every other with CON133 (never trusting the mark alone):

    len(output.f) <= E      len(output.f) < E      E >= len(output.f)      E > len(output.f)
    S not in output.f       not (S in output.f)

where `output.f` is a chain of fields ending at a `str` or a `list` (optional or not), read off the output's JSON
Schema (a YAML type and a Python contract's model alike), and E, S do not read the output. A `when` guard may
read the input, never the output. The runtime's prefix watch evaluates the condition itself on the value so far
(runtime/prefix_checks.py), so its message is the whole-reply check's.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Any

FORMS = ("len(output.f) <= N", "len(output.f) < N", "N >= len(output.f)", "'phrase' not in output.f")


@dataclass(frozen=True)
class Watched:
    """An output field a monotone condition reads as the reply grows."""

    chain: tuple[str, ...]  # the field's keys from the output, e.g. ("answer",)
    kind: str  # "text" (a string: its characters) or "items" (a list: its item count)


@dataclass(frozen=True)
class Monotonicity:
    """What the analyzer found of a condition marked monotone: the fields it watches, or why it is not monotone."""

    watched: tuple[Watched, ...]
    problem: str | None
    reads_input: bool  # its bound or guard reads the input or the act value (the watch needs the call's values)


def monotonicity(source: str | None, when: str | None, schema: dict[str, Any] | None) -> Monotonicity:
    """Whether a condition (its `assert` and `when`) is monotone in the output whose JSON Schema is `schema` (a YAML
    contract's type and a Python contract's model alike; None: the type cannot be built)."""
    if source is None:
        return Monotonicity((), "a Python hook is not read by the analyzer, so it cannot be shown monotone", False)
    if schema is None:
        return Monotonicity((), "the output type cannot be built (its own finding says why)", False)
    try:
        tree = ast.parse(source.strip(), mode="eval").body
        guard = ast.parse(when.strip(), mode="eval").body if when else None
    except (SyntaxError, ValueError):
        return Monotonicity((), "it cannot be read (the expression's own finding says why)", False)
    root = schema
    if guard is not None and _reads(guard, "output"):
        return Monotonicity((), "its `when` guard reads the output, which a reply still being written does not have yet",
                            False)
    watched: list[Watched] = []
    problem = _monotone(tree, root, watched)
    reads_input = any(_reads(node, name) for node in (tree, guard) if node is not None for name in ("input", "act"))
    return Monotonicity(tuple(dict.fromkeys(watched)) if problem is None else (), problem, reads_input)


def _monotone(node: ast.expr, root: dict[str, Any], watched: list[Watched]) -> str | None:
    if isinstance(node, ast.BoolOp) and isinstance(node.op, ast.And):
        for value in node.values:
            problem = _monotone(value, root, watched)
            if problem:
                return problem
        return None
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not) and isinstance(node.operand, ast.Compare) \
            and len(node.operand.ops) == 1 and isinstance(node.operand.ops[0], ast.In):
        node = ast.Compare(node.operand.left, [ast.NotIn()], node.operand.comparators)
    if not isinstance(node, ast.Compare) or len(node.ops) != 1:
        return f"only these forms are monotone in the output, joined with `and`: {', '.join(FORMS)}"
    op, left, right = node.ops[0], node.left, node.comparators[0]
    if isinstance(op, (ast.Gt, ast.GtE)):
        op, left, right = (ast.Lt() if isinstance(op, ast.Gt) else ast.LtE()), right, left
    if isinstance(op, (ast.Lt, ast.LtE)):
        if _is_len(right) and not _is_len(left):
            return "a lower bound on a length is not monotone: a value still too short can grow to pass it"
        if not _is_len(left):
            return "an upper bound is monotone only on `len(output.f)`: a number or a text compared whole is not " \
                   "known until it is written out"
        if _reads(right, "output"):
            return "its bound reads the output, which may still change as the reply grows"
        assert isinstance(left, ast.Call)
        return _field(left.args[0], root, ("text", "items"), watched)
    if isinstance(op, ast.NotIn):
        if _reads(left, "output"):
            return "the phrase it looks for reads the output, which may still change as the reply grows"
        return _field(right, root, ("text",), watched)
    return f"only these forms are monotone in the output, joined with `and`: {', '.join(FORMS)}"


def _field(node: ast.expr, root: dict[str, Any], kinds: tuple[str, ...], watched: list[Watched]) -> str | None:
    chain: list[str] = []
    while isinstance(node, ast.Attribute):
        chain.append(node.attr)
        node = node.value
    if not (isinstance(node, ast.Name) and node.id == "output") or not chain:
        return "it must read a field of the output (`output.f`, `output.a.b`): a value grows only field by field"
    chain.reverse()
    defs = {**root.get("definitions", {}), **root.get("$defs", {})}
    at: dict[str, Any] | None = _resolve(root, defs)
    for name in chain:
        props = at.get("properties") if at is not None else None
        at = _resolve(props[name], defs) if isinstance(props, dict) and name in props else None
        if at is None:
            return f"`output.{'.'.join(chain)}` is not a field of the output type (or may be of several types)"
    assert at is not None
    kind = {"string": "text", "array": "items"}.get(str(at.get("type")))
    if kind is None or kind not in kinds:
        grows = "a str" if kinds == ("text",) else "a str or a list"
        what = _TYPE_WORDS.get(str(at.get("type")), "a value of several types")
        return f"`output.{'.'.join(chain)}` is {what}: only {grows} grows with the reply"
    watched.append(Watched(tuple(chain), kind))
    return None


_TYPE_WORDS = {"integer": "an int", "number": "a float", "boolean": "a bool", "object": "an object", "null": "None",
               "string": "a str", "array": "a list"}


def _resolve(node: Any, defs: dict[str, Any]) -> dict[str, Any] | None:
    """A schema node with its `$ref`s followed and an optional's null left out; None for a union of several types."""
    for _ in range(64):
        if not isinstance(node, dict):
            return None
        if isinstance(node.get("$ref"), str):
            node = defs.get(node["$ref"].rsplit("/", 1)[-1])
            continue
        members = node.get("anyOf") or node.get("oneOf")
        if isinstance(members, list):
            kept = [m for m in members if not (isinstance(m, dict) and m.get("type") == "null")]
            if len(kept) != 1:
                return None
            node = kept[0]
            continue
        if isinstance(node.get("allOf"), list) and len(node["allOf"]) == 1:
            node = node["allOf"][0]
            continue
        return node
    return None


def _is_len(node: ast.expr) -> bool:
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "len" \
        and len(node.args) == 1 and not node.keywords


def _reads(node: ast.AST, name: str) -> bool:
    return any(isinstance(n, ast.Name) and n.id == name for n in ast.walk(node))
