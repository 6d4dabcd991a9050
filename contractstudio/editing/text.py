"""Applying text edits to a text (the studio does this; tests check the result of every fix)."""

from __future__ import annotations

from collections.abc import Iterable

from contractstudio.editing.items import TextEdit
from contractstudio.reading.source import text_rows


def offset(text: str, line: int, column: int) -> int:
    """The character offset of a 1-based (line, column) in a text (clamped to the text)."""
    pos = 0
    for _ in range(line - 1):
        nl = text.find("\n", pos)
        if nl < 0:
            return len(text)
        pos = nl + 1
    end = text.find("\n", pos)
    end = len(text) if end < 0 else end
    return min(pos + column - 1, end)


# The text's lines, cut at "\n" only (the editor's rows), once per text: hover, the detail line and symbols ask per
# position, and a 5 MB text split per ask was seconds on the studio's thread. Shared with `text_lines` (reading/source.py).
rows = text_rows


def apply_edits(text: str, edits: Iterable[TextEdit]) -> str:
    """The text with every edit applied (edits must not overlap; applied from the last to the first)."""
    spans = sorted(edits, key=lambda e: (e.span.line, e.span.column), reverse=True)
    for e in spans:
        start = offset(text, e.span.line, e.span.column)
        end = offset(text, e.span.end_line, e.span.end_column)
        if e.span.end_line > text.count("\n") + 1:
            end = len(text)
        text = text[:start] + e.new_text + text[end:]
    return text
