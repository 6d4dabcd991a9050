"""Positions inside YAML scalars: where character offsets of a value (an expression) are in the file.

`source.inner_span` maps single-line and literal (`|`) scalars; values folded
over several lines (`>` blocks, multi-line plain or quoted scalars) had their
line breaks turned into spaces, and are mapped here, each mapping verified
against the scalar's value so a wrong position is never guessed.
"""

from __future__ import annotations

from typing import Any

from contractstudio.analysis.loaded import Loaded
from contractstudio.findings.diagnostics import Span
from contractstudio.reading.source import ScalarNode, inner_span, node_at, text_lines


def value_span(loaded: Loaded, path: tuple[Any, ...], start: int = 0, end: int | None = None) -> Span:
    """The span of characters [start, end) inside the scalar at path (the whole node when unknown)."""
    node = node_at(loaded.doc.root, path)
    if isinstance(node, ScalarNode) and end is not None:
        segments = None
        if node.style in (">", "|"):
            segments = _block(node, loaded.text)
        elif node.style in ("", "'", '"') and node.line != node.end_line:
            segments = _flow(node, loaded.text)
        if segments:
            return _locate(segments, start, end)
        return inner_span(node, start, end, loaded.text)
    return loaded.span(path)


# A multi-line value as segments: (offset in the value, line, 1-based column, the segment's text).
Segments = list[tuple[int, int, int, str]]


def _locate(segments: Segments, start: int, end: int) -> Span:
    for offset, line, col, piece in segments:
        if start <= offset + len(piece):
            first = col + max(0, start - offset)
            return Span(line, first, line, first + max(1, min(end, offset + len(piece)) - max(start, offset)))
    offset, line, col, piece = segments[-1]
    return Span(line, col + len(piece), line, col + len(piece) + 1)


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


def _block(node: ScalarNode, text: str) -> Segments | None:
    """Segments of a `|` or `>` block, rebuilt with YAML's folding rules and checked against the value."""
    lines = text_lines(text)[node.line : node.end_line]  # the content lines below the indicator
    first = next((ln for ln in lines if ln.strip()), None)
    if first is None:
        return None
    indent = _indent(first)
    folded = node.style == ">"
    value = ""
    segments: Segments = []
    previous: str | None = None  # "normal" or "more" (more-indented) for the last content line
    empty = 0
    for i, ln in enumerate(lines):
        if not ln.strip():
            empty += 1
            continue
        if _indent(ln) < indent:
            break  # the block ended
        more = _indent(ln) > indent
        if previous is not None:
            if folded and previous == "normal" and not more:
                value += "\n" * empty if empty else " "
            else:
                value += "\n" * (empty + 1)
        else:
            value += "\n" * empty
        segments.append((len(value), node.line + 1 + i, indent + 1, ln[indent:]))
        value += ln[indent:]
        previous, empty = ("more" if more else "normal"), 0
    return segments if value.rstrip("\n") == node.text.rstrip("\n") else None


def _flow(node: ScalarNode, text: str) -> Segments | None:
    """Segments of a plain or quoted scalar written over several lines (no escapes, no blank lines)."""
    lines = text_lines(text)
    if node.end_line > len(lines):
        return None
    quote = 1 if node.style else 0
    value = ""
    segments: Segments = []
    for number in range(node.line, node.end_line + 1):
        raw = lines[number - 1]
        if number == node.line:
            col = node.column + quote
            piece = raw[col - 1 :]
        else:
            stripped = raw.lstrip(" \t")
            col = len(raw) - len(stripped) + 1
            piece = stripped
        if number == node.end_line:
            piece = piece[: max(0, node.end_column - 1 - quote - (col - 1))]
        piece = piece.rstrip(" \t")
        if not piece:
            return None  # a blank line is a line break in the value, not a space
        if segments:
            value += " "
        segments.append((len(value), number, col, piece))
        value += piece
    return segments if value == node.text else None
