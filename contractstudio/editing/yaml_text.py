"""Minimal text edits of YAML, computed from the exact spans of the nodes: everything else stays as written.

An entry added to a block mapping goes on a new line after the mapping's last
line, at the indentation of its first key; one added to a flow mapping goes
before its closing brace. Comments, quoting and key order are never touched,
because nothing but the inserted or deleted characters changes.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from contractstudio.editing.items import TextEdit
from contractstudio.findings.diagnostics import Span
from contractstudio.reading.source import MapNode, Node, ScalarNode, SeqNode


def last_line(node: Node, lines: list[str]) -> int:
    """The last line that holds characters of a node (block collections end where the next token starts)."""
    if isinstance(node, ScalarNode):
        if node.end_line > node.line and node.end_column == 1:
            return node.end_line - 1
        return node.end_line
    if is_flow(node, lines):
        return node.end_line
    if isinstance(node, MapNode) and node.pairs:
        key, value = node.pairs[-1]
        return max(last_line(key, lines), last_line(value, lines))
    if isinstance(node, SeqNode) and node.items:
        return last_line(node.items[-1], lines)
    return node.line


def is_flow(node: Node, lines: list[str]) -> bool:
    """Whether a collection is written in flow style (`{...}` / `[...]`)."""
    if not 0 < node.line <= len(lines):
        return False
    return lines[node.line - 1][node.column - 1 : node.column] in ("{", "[")


def _after_line(line: int, lines: list[str], text: str) -> TextEdit:
    """Insert whole lines of `text` after a 1-based line."""
    if line >= len(lines):  # the last line, with no newline after it
        end = len(lines[line - 1]) + 1
        return TextEdit(Span(line, end, line, end), "\n" + text.rstrip("\n"))
    return TextEdit(Span(line + 1, 1, line + 1, 1), text)


def add_entry(mapping: MapNode, key: str, value: str, lines: list[str]) -> TextEdit:
    """Add `key: value` to a mapping (value may be several lines, already indented relative to the key)."""
    if is_flow(mapping, lines):
        at = Span(mapping.end_line, mapping.end_column - 1, mapping.end_line, mapping.end_column - 1)
        sep = ", " if mapping.pairs else ""
        return TextEdit(at, f"{sep}{key}: {value.strip()}")
    indent = (mapping.pairs[0][0].column - 1) if mapping.pairs else mapping.column - 1
    return _after_line(last_line(mapping, lines), lines, entry_text(indent, key, value))


def entry_text(indent: int, key: str, value: str) -> str:
    """`key: value` lines at an indentation; a multi-line value goes below the key, indented two more."""
    pad = " " * indent
    if "\n" not in value:
        return f"{pad}{key}: {value}\n"
    body = "".join(f"{pad}  {ln}\n" if ln else "\n" for ln in value.rstrip("\n").split("\n"))
    return f"{pad}{key}:\n{body}"


def add_item(seq: SeqNode, item_lines: list[str], lines: list[str]) -> TextEdit:
    """Append a block-style item (its lines relative to the dash) to a block sequence."""
    indent = " " * (seq.column - 1)
    text = "".join(f"{indent}{'- ' if i == 0 else '  '}{ln}\n" for i, ln in enumerate(item_lines))
    return _after_line(last_line(seq, lines), lines, text)


def delete_entry(mapping: MapNode, index: int, lines: list[str]) -> TextEdit | None:
    """Remove one key and its value from a block mapping (whole lines), or None when it shares lines with others."""
    key, value = mapping.pairs[index]
    first, last = key.line, last_line(value, lines)
    if is_flow(mapping, lines) or lines[first - 1][: key.column - 1].strip(" -"):
        return None
    if lines[first - 1][: key.column - 1].strip() == "-":
        return None  # the first key of a list item carries the dash
    return TextEdit(Span(first, 1, last + 1, 1), "")


def walk(node: Node | None, path: tuple[Any, ...] = ()) -> Iterator[tuple[tuple[Any, ...], Node]]:
    """Every node of a tree with its path, parents first; a node shared by aliases is visited once (no alias bombs)."""
    if node is None:
        return
    stack: list[tuple[tuple[Any, ...], Node]] = [(path, node)]
    seen: set[int] = set()
    while stack:
        p, n = stack.pop()
        if id(n) in seen:
            continue
        seen.add(id(n))
        yield p, n
        if isinstance(n, MapNode):
            stack.extend((p + (k.value,), v) for k, v in reversed(n.pairs) if isinstance(k, ScalarNode))
        elif isinstance(n, SeqNode):
            stack.extend((p + (i,), v) for i, v in reversed(list(enumerate(n.items))))
