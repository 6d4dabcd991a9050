"""The editor's documents: TextArea's documents that keep their text whole (no join per key), count rows once per
edit, and never hand tree-sitter text nested deeper than it survives."""

from __future__ import annotations

import operator
from itertools import repeat
from typing import Any

from rich.cells import cell_len
from textual.geometry import Size
from textual.widgets.text_area import Document, EditResult, Location, SyntaxAwareDocument, WrappedDocument

from contractstudio.reading.builder import MAX_DEPTH
from contractstudio.studio.textual_internals import lay_out_one_row_per_line, wrap_settings

# tree-sitter's YAML scanner crashes the process (SIGSEGV) at about 255 levels of block nesting.
# Each level needs its own column, so the widest run of indentation and block indicators on a
# line bounds the nesting: past MAX_DEPTH (the analyzer's limit too), the text is never parsed.
MAX_HIGHLIGHT_INDENT = MAX_DEPTH
_TAB_COLUMNS = 8  # a tab may count as several columns in the scanner: count it as many


def block_indent(text: str) -> int:
    """The widest leading run of spaces, tabs and block indicators (`- `, `? `, `: `) on any line of the text."""
    widest = 0
    for piece in text.split("\n"):
        for line in piece.split("\r"):
            width = i = 0
            n = len(line)
            while i < n:
                c = line[i]
                if c == " ":
                    width += 1
                elif c == "\t":
                    width += _TAB_COLUMNS
                elif c in "-?:" and (i + 1 == n or line[i + 1] in " \t"):
                    width += 1
                else:
                    break
                i += 1
            widest = max(widest, width)
    return widest


class _KeptText(Document):
    """A document that keeps what TextArea asks of the whole text between edits: the joined text, its length and the
    widest line.

    TextArea reads `text` for every line it draws (to decide on a placeholder) and measures every line after each
    edit (`get_size`): both O(file) per keystroke, seconds per key in a 5 MB file (bench/bench_typing.py). Here the
    text is joined at most once per edit, and an edit measures only the lines it replaced and wrote.
    """

    _joined: str | None = None
    _length: int | None = None
    _widest: tuple[int, int, int] | None = None  # (tab width, widest line's cells, how many lines are that wide)

    @property
    def text(self) -> str:
        if self._joined is None:
            self._joined = super().text
        return self._joined

    @property
    def joined(self) -> str | None:
        """The text if it was joined since the last edit (else None: nothing is joined here)."""
        return self._joined

    @property
    def length(self) -> int:
        """len(self.text), without joining the lines."""
        if self._length is None:
            self._length = sum(map(len, self.lines)) + len(self.newline) * (self.line_count - 1)
        return self._length

    def get_size(self, tab_width: int) -> Size:
        if self._widest is None or self._widest[0] != tab_width:
            lines = self.lines
            if all(map(str.isascii, lines)) and all(map(str.isprintable, lines)):  # no tab, no control character
                widths = list(map(len, lines))  # a cell a character: no line measured in Python (a 5 MB first screen)
            else:
                widths = [cell_len(line.expandtabs(tab_width)) for line in lines]
            widest = max(widths, default=0)
            self._widest = (tab_width, widest, widths.count(widest))
        return Size(self._widest[1], self.line_count)

    revision = 0  # edits so far: what a wrap of the lines was made for (`_RowCountCache`)
    edited_from = 0  # the first row an edit changed since the highlighter last looked (editor_highlight.py)

    def replace_range(self, start: Location, end: Location, text: str) -> EditResult:
        self.revision += 1
        top, bottom = sorted((start, end))
        self.edited_from = min(self.edited_from, top[0])
        if self._length is not None:
            self._length += len(text) - len(self.get_text_range(top, bottom))
        self._joined = None
        widest = self._widest
        if widest is not None:  # the widest lines the edit replaces no longer count
            tab, cells, count = widest
            count -= sum(1 for line in self.lines[top[0] : bottom[0] + 1] if cell_len(line.expandtabs(tab)) == cells)
        result = super().replace_range(start, end, text)
        if widest is not None:
            written = [cell_len(line.expandtabs(tab)) for line in self.lines[top[0] : result.end_location[0] + 1]]
            most = max(written)
            if most > cells:
                self._widest = (tab, most, written.count(most))
            else:  # none as wide left: measure every line when next asked
                count += written.count(cells)
                self._widest = (tab, cells, count) if count > 0 else None
        return result


class _PlainDocument(_KeptText):
    """The editor's document when the text is not highlighted."""


class _GuardedSyntaxDocument(SyntaxAwareDocument):
    """A syntax-aware document that stops handing its text to tree-sitter once an edit indents past the limit."""

    parsing = True

    def replace_range(self, start: Location, end: Location, text: str) -> EditResult:
        if self.parsing:
            top, bottom = sorted((start, end))
            edited = self[top[0]][: top[1]] + text + self[bottom[0]][bottom[1]:]  # the lines as they will be
            if block_indent(edited) > MAX_HIGHLIGHT_INDENT:
                self.parsing = False
        if not self.parsing:
            return Document.replace_range(self, start, end, text)
        return super().replace_range(start, end, text)

    def query_syntax_tree(self, query: Any, start_point: tuple[int, int] | None = None,
                          end_point: tuple[int, int] | None = None) -> dict[str, list[Any]]:
        return super().query_syntax_tree(query, start_point, end_point) if self.parsing else {}


class _SyntaxDocument(_KeptText, _GuardedSyntaxDocument):
    """The editor's highlighted document: guarded, and keeping its text and sizes between edits."""


def _has_tab(lines: list[str]) -> bool:
    return any(map(operator.contains, lines, repeat("\t")))  # each line looked at in C: no Python step per line


class _RowCountCache(WrappedDocument):
    """WrappedDocument whose `height` is remembered between edits.

    TextArea reads `height` once per rendered line and it sums over every line of the file:
    O(file) per row, the largest cost of a redraw in a big file (see bench/bench_studio.py).
    """

    _rows: int | None = None
    _wrapped_as: tuple[int, int, int] | None = None  # (width, tab width, the document's revision) of the wrap

    def wrap(self, width: int, tab_width: int | None = None) -> None:
        # TextArea wraps every line again on any resize: the same width and tab width of the same revision of the
        # text need none (a 5 MB file's rewrap took 3 s whenever the detail line under the editor came or went).
        revision = self._revision()
        if revision is not None and (width, tab_width or wrap_settings(self)[1], revision) == self._wrapped_as:
            return
        self._rows = None
        self._row_per_line = False
        if width or not self._unwrapped(tab_width):
            super().wrap(width, tab_width)
        self._wrapped_as = None if revision is None else (width, wrap_settings(self)[1], revision)

    def _unwrapped(self, tab_width: int | None) -> bool:
        """Not wrapping and no tab in the text: Textual's wrap, whose only work then is measuring each line's tabs
        (8 s of a 5 MB one-document file's first screen, six times over), laid out as one row per line with nothing
        stored per line (`lay_out_one_row_per_line`). False where a line has a tab (Textual's own wrap measures them)."""
        self._row_per_line = not _has_tab(self.document.lines)
        if self._row_per_line:
            lay_out_one_row_per_line(self, tab_width)
        return self._row_per_line

    _row_per_line = False  # laid out one row per line: the layout follows the document's edits by itself

    def wrap_range(self, start: Location, old_end: Location, new_end: Location) -> None:
        self._rows = None
        if self._row_per_line:
            top, bottom = sorted((start[0], new_end[0]))
            if _has_tab(self.document.lines[top : bottom + 1]):  # a tab came in: Textual's layout measures it from now on
                self._row_per_line = False
                super().wrap(0, wrap_settings(self)[1])
        else:
            super().wrap_range(start, old_end, new_end)
        revision = self._revision()
        if self._wrapped_as is not None and revision is not None:  # the wrap follows the edit: of this revision now
            self._wrapped_as = (self._wrapped_as[0], self._wrapped_as[1], revision)

    def _revision(self) -> int | None:
        return getattr(self.document, "revision", None)  # None: a document that does not count its edits

    @property
    def height(self) -> int:
        if not wrap_settings(self)[0]:  # not wrapped: a row per line
            return self.document.line_count
        if self._rows is None:
            self._rows = super().height
        return self._rows
