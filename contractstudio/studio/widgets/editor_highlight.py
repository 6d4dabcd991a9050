"""The editor's YAML highlighting: tree-sitter parses the rows around the view, never the whole text.

Textual's TextArea keeps a tree-sitter tree of the whole document and parses it again after every edit. For YAML
that re-parse is as slow as a first parse once a document holds a long list (tree-sitter-yaml reuses little of
the old tree): 1.3 s a key in a 5 MB one-document contract, 8 ms in one of 500 lines, and the first screen of a
5 MB file paid two whole parses. Here a highlighting parses only a region: the rows around the view and, before
them, the first line of every entry that holds the region's first row (found by indentation), so that each row is
parsed inside the same collections, block scalars and flow collections as in the whole text. A text of at most
`WHOLE_TEXT_LINES` lines is parsed whole, as TextArea parses it.

What a region cannot see: a flow collection or a quoted scalar opened more than `CONTEXT_ROWS` rows above the view
on a line that holds none of the view's entries (a JSON-style document whose lines are not indented), or closed
more than `CONTEXT_ROWS` rows below it; rows inside such a construct can be drawn as if it were not open. And
a text that is not YAML (a quote or bracket typed and not closed yet) is recovered from within the region, where
TextArea's whole-text parse can mark an error over the whole text (no theme draws it) and read keys around it
differently.
`tests/studio/test_region_highlighting.py` compares the rows shown with TextArea's whole-text highlighting.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from functools import cache
from itertools import chain
from typing import Any

from textual.widgets.text_area import SyntaxAwareDocument

from contractstudio.studio.textual_internals import builtin_grammar
from contractstudio.studio.widgets.editor_documents import MAX_HIGHLIGHT_INDENT, block_indent

WHOLE_TEXT_LINES = 400  # a text this short is parsed whole on every edit (a few ms), exactly as TextArea does
CONTEXT_ROWS = 30  # rows parsed beyond the highlighted ones on each side: what a row's look can depend on nearby

Span = tuple[int, int | None, str]  # (start column, end column or None: to the end of the row, highlight name)


@cache
def yaml_grammar() -> tuple[Any, Any]:
    """Textual's own tree-sitter YAML language and highlight query (the ones TextArea(language="yaml") uses)."""
    return builtin_grammar("yaml")


def _indent(line: str) -> int | None:
    """The line's indentation in spaces; None for a blank or comment-only line (no entry starts there)."""
    body = line.lstrip(" ")
    if not body or body[0] == "#" or body.isspace():
        return None
    return len(line) - len(body)


def _is_item(line: str, indent: int) -> bool:
    return line.startswith("-", indent) and line[indent + 1 : indent + 2] in ("", " ", "\t")


def enclosing_rows(lines: Sequence[str], row: int, known: tuple[int, list[int]] | None = None) -> list[int]:
    """The rows above `row` whose lines start the entries that hold it, nearest first.

    Going up, a line is taken when it is indented less than the last one taken (a block scalar's or multi-line
    scalar's first line, a key, an item), or as much when the last one taken is a `- ` item and it is not: a key
    whose sequence is not indented (`steps:` over `- id: a`). It stops at a line that is not indented.

    `known`: (a row above `row`, its enclosing rows): above that row only its enclosing rows can be taken (a row
    the scan from there passed over is indented at least as deep as what this scan still needs), so a view scrolled
    down a long list scans the rows it moved past, not every row up to the list's key.
    """
    taken: list[int] = []
    line = lines[row] if row < len(lines) else ""
    need = _indent(line)
    if need is None:  # a blank or comment row: any line above may hold it
        need, item = 1 << 30, False
    else:
        item = _is_item(line, need)
        if need == 0 and not item:
            return taken
    rows: Iterable[int] = range(row - 1, -1, -1)
    if known is not None and known[0] < row:
        rows = chain(range(row - 1, known[0] - 1, -1), known[1])
    for above in rows:
        text = lines[above]
        if text[:1] == " " or not text:  # indented or empty: measure it
            indent = _indent(text)
            if indent is None or indent > need:
                continue
        else:
            indent = 0 if text[0] != "#" else None
            if indent is None:
                continue
        is_item = _is_item(text, indent)
        if indent < need or (indent == need and item and not is_item):
            taken.append(above)
            need, item = indent, is_item
            if need == 0 and not item:
                break
    return taken


def region_end(lines: Sequence[str], bottom: int) -> int:
    """The last row parsed for rows up to `bottom`: `CONTEXT_ROWS` further, then on to the row before the next line
    indented no deeper than any line since `bottom`, so that no flow collection or quoted scalar that starts there
    is cut open (tree-sitter would mark an error back over the rows shown). At most `_MAX_END_ROWS` further."""
    count = len(lines)
    last = min(count - 1, bottom + CONTEXT_ROWS)
    indents = [i for i in map(_indent, lines[bottom + 1 : last + 1]) if i is not None]
    least = min(indents, default=1 << 30)
    for row in range(last + 1, min(count, last + _MAX_END_ROWS)):
        indent = _indent(lines[row])
        if indent is not None and indent <= least:
            return row - 1
    return min(count - 1, last + _MAX_END_ROWS - 1)


_MAX_END_ROWS = 500


class RegionHighlighter:
    """Highlights of the rows [top, bottom] of a text, from a parse of the region around them (see the module)."""

    def __init__(self) -> None:
        self.highlighting = True  # False when the last region nested deeper than tree-sitter survives
        self._held: tuple[int, list[int]] | None = None  # (the region's first row, its enclosing rows): kept between
        # edits below that row (an edit above it may change them: the document says, `_KeptText.edited_from`)

    def forget_above(self, row: int) -> None:
        """Lines at `row` or below it changed: what was found above the region stays true unless the region is below."""
        if self._held is not None and row < self._held[0]:
            self._held = None

    def highlights(self, lines: Sequence[str], top: int, bottom: int) -> dict[int, list[Span]]:
        count = len(lines)
        if count <= WHOLE_TEXT_LINES:
            first, last, above = 0, count - 1, []
        else:
            first, last = max(0, top - CONTEXT_ROWS), region_end(lines, bottom)
            if self._held is None or self._held[0] != first:
                self._held = (first, enclosing_rows(lines, first, self._held))
            above = self._held[1]
        rows = [*reversed(above), *range(first, last + 1)]  # the parsed text's rows, as rows of the whole text
        text = "\n".join(lines[row] for row in rows)
        self.highlighting = block_indent(text) <= MAX_HIGHLIGHT_INDENT  # the scanner crashes past it (SIGSEGV)
        found: dict[int, list[Span]] = {}
        if not self.highlighting:
            return found
        language, query = yaml_grammar()
        captures = SyntaxAwareDocument(text, language).query_syntax_tree(query)
        skip = len(above)  # parsed rows above the region: context only
        rows.append(last + 1)  # a node can end at the start of the row after the text
        for name, nodes in captures.items():
            for node in nodes:
                (r0, c0), (r1, c1) = node.start_point, node.end_point
                if r1 < skip:
                    continue
                if r0 == r1:
                    if top <= rows[r0] <= bottom:
                        found.setdefault(rows[r0], []).append((c0, c1, name))
                    continue
                for parsed in range(max(r0, skip), r1 + 1):  # as TextArea marks a node over several rows
                    row = rows[parsed]
                    if top <= row <= bottom:
                        span = (c0, None, name) if parsed == r0 else (0, c1, name) if parsed == r1 else (0, None, name)
                        found.setdefault(row, []).append(span)
        return found
