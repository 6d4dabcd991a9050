"""The YAML editor: Textual's TextArea with finding markers in the gutter, highlighting parsed around the view
(editor_highlight.py), and no highlighting for text nested deeper than tree-sitter survives."""

from __future__ import annotations

import math
import sys
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from typing import Any

from rich.segment import Segment
from rich.style import Style
from textual import events
from textual.geometry import Offset, Region, Spacing
from textual.reactive import Reactive, reactive
from textual.strip import Strip
from textual.widgets import TextArea
from textual.widgets.text_area import DocumentNavigator, Selection, SyntaxAwareDocument, TextAreaTheme

from contractstudio.findings.diagnostics import SEVERITY_RANK, Diagnostic
from contractstudio.studio.textual_internals import TextAreaSteps, adopt, row_lines, undo_steps
from contractstudio.studio.widgets.editor_documents import (
    MAX_HIGHLIGHT_INDENT,
    _GuardedSyntaxDocument,
    _KeptText,
    _PlainDocument,
    _RowCountCache,
    _SyntaxDocument,
    block_indent,
)
from contractstudio.studio.widgets.editor_highlight import WHOLE_TEXT_LINES, RegionHighlighter

# Above this many lines, only the rows around the viewport are parsed and highlighted (editor_highlight.py):
# TextArea parses and queries the whole text on every edit, which grows with the file (bench/bench_typing.py).
LARGE_FILE_LINES = WHOLE_TEXT_LINES
# Rows highlighted beyond the viewport on each side: every key queries and compares the whole window (150 rows a
# side took 6.4 ms a key in the 5 MB file, 20 take 3.7 ms); a scroll past it builds the window again (3 ms).
_WINDOW_MARGIN = 20
MARKER_GLYPHS = {"error": "●", "warning": "▲", "info": "•"}

# Textual's "css" syntax colours are VS Code's dark ones (`:` and `-` in #CCCCCC): on a light background they all
# but vanish (colour 251 on 231 in a 256-colour terminal). A light studio theme takes GitHub light's syntax colours
# over the same theme-derived background, cursor and gutter.
LIGHT_SYNTAX = TextAreaTheme("contractstudio-light-syntax",
                             syntax_styles=dict(TextAreaTheme.get_builtin_theme("github_light").syntax_styles))  # type: ignore[union-attr]


class YamlTextArea(TextAreaSteps):
    """A TextArea whose YAML highlighting is off for text nested deeper than tree-sitter can parse (every YAML text area),
    with syntax colours that suit the studio's theme (light or dark)."""

    def on_mount(self) -> None:
        self.register_theme(LIGHT_SYNTAX)
        self.watch(self.app, "theme", self._follow_theme, init=True)

    def _follow_theme(self) -> None:
        self.theme = "css" if self.app.current_theme.dark else LIGHT_SYNTAX.name

    def set_document(self, text: str, language: str | None) -> None:
        if language and block_indent(text) > MAX_HIGHLIGHT_INDENT:
            language = None  # plain text: the highlighter would crash on it (the analyzer reports YML006)
        super().set_document(text, language)
        # Same data; edits checked before tree-sitter parses them; the text and sizes kept between edits.
        adopt(self.document, _SyntaxDocument if isinstance(self.document, SyntaxAwareDocument) else _PlainDocument)

    @property
    def highlighting(self) -> bool:
        """Whether the text is highlighted (off when it nests deeper than tree-sitter can parse)."""
        return isinstance(self.document, _GuardedSyntaxDocument) and self.document.parsing


def _outer_first(span: tuple[int, int | None, str]) -> tuple[int, float]:
    """A highlight span's place in its row: by start, the longer (an enclosing node) first; equal spans keep theirs."""
    start, end, _name = span
    return start, -(end if end is not None else math.inf)


class ContractEditor(YamlTextArea):
    """TextArea.code_editor for YAML, marking lines that have findings."""

    # What the window's rows looked like at the last highlighting: (line count, row -> (text, highlights)); and the
    # rows a big file's last highlighting covered (None: the whole text). Class defaults: TextArea builds its
    # highlights while it is made, before __init__ below sets anything (an attribute set there forgot that build).
    _drawn: tuple[int, dict[int, tuple[str, tuple[Any, ...]]]] | None = None
    _window: tuple[int, int] | None = None
    _type_over: tuple[Selection, str] | None = None  # (where, character): see type_over
    _regions: RegionHighlighter | None = None  # the YAML highlighter (None: plain text)

    # TextArea repaints its whole widget whenever the selection is set, which every key does: every row on screen went
    # through Textual's styles cache again. Here a new selection repaints the rows it left and the rows it reached
    # (`selection_changed`), and an edit the rows it changed (`_forget_changed_rows`). The editor never wraps, so a
    # document row is a row of the widget's virtual height.
    selection: Reactive[Selection] = reactive(Selection(), init=False, always_update=True, repaint=False)

    def __init__(self, text: str = "", **kwargs: object) -> None:
        # TextArea sets its text, then sets it again when its language is set (Textual's watcher), and wraps it once
        # more when the indent width changes: three layouts of a 5 MB text on the way to the first screen. Here
        # TextArea is made empty and the text is set once, at the indent width it is shown with.
        super().__init__(
            "",
            language="yaml",
            soft_wrap=False,
            tab_behavior="indent",
            show_line_numbers=True,
            highlight_cursor_line=True,
            **kwargs,  # type: ignore[arg-type]
        )
        self.set_reactive(TextArea.indent_width, 2)
        if text:
            self.set_document(text, "yaml")
        self.markers: dict[int, str] = {}  # 0-based line -> worst severity
        self._typed: str | None = None
        self.key_hook: Callable[[str], bool] | None = None  # sees tab / enter / escape first (the completion popup)

    def type_over(self, character: str) -> None:
        """Take the next key as typed already when it is `character` and the cursor has not moved.

        A completion that ends in a space (`message: `) is followed by the author's own space out of habit: as
        editors do with a closing bracket they inserted, that key only confirms what is there. Any other key, or
        a move of the cursor, and the next space is typed as usual.
        """
        self._type_over = (self.selection, character)

    def selection_changed(self, previous_selection: Selection, selection: Selection) -> None:
        if self._type_over is not None and self._type_over[0] != selection:
            self._type_over = None
        bracket = self.matching_bracket_location
        super().selection_changed(previous_selection, selection)
        last = self.document.line_count - 1
        rows = [min(row, last) for row, _ in (*previous_selection, *selection)]
        self.refresh_lines(min(rows), max(rows) - min(rows) + 1)  # the rows selected, and the cursor's (its number too)
        for marked in {bracket, self.matching_bracket_location} - {None}:
            self.refresh_lines(marked[0])  # type: ignore[index]

    def scroll_cursor_visible(self, center: bool = False, animate: bool = False) -> Offset:
        """TextArea's, except that `center` centres the cursor's row only (a jump to a finding, a definition, a line).

        TextArea centres the column too: a finding at column 42 of a 54-column view scrolled every row 17 columns
        sideways, and Home to the line's indentation left it 2 columns off. Sideways the view moves only as far as
        the cursor needs to be seen, as it does for an arrow key.
        """
        if not center or not self.has_cursor:
            return super().scroll_cursor_visible(center, animate)
        self.recompute_cursor_offset()
        x, y = self.cursor_offset
        cursor, spacing = Region(x, y, width=3, height=1), Spacing(right=self.gutter_width)  # as TextArea measures it
        down = self.scroll_to_region(cursor, spacing=spacing, animate=animate, force=True, center=True, x_axis=False)
        across = self.scroll_to_region(cursor, spacing=spacing, animate=animate, force=True, y_axis=False)
        return Offset(across.x, down.y)

    @contextmanager
    def one_undo(self) -> Iterator[None]:
        """Every edit made inside is one step of undo and of redo (a rename of many places, a quick fix).

        TextArea's history starts a step at each edit of more than one character: a rename of 4 places took
        4 undos, each analysed and shown on its way back. Here the steps the edits made are joined into one.
        """
        history = self.history
        stack = undo_steps(history)  # no public way to join steps
        history.checkpoint()
        last = stack[-1] if stack else None
        try:
            yield
        finally:
            made: list[Any] = []
            while stack and stack[-1] is not last:
                made.append(stack.pop())
            if made:
                stack.append([edit for batch in reversed(made) for edit in batch])  # in the order they were made
            history.checkpoint()  # the next key starts a step of its own

    @property
    def text_length(self) -> int:
        """len(self.text), without joining the lines (what "modified" compares first)."""
        document = self.document
        return document.length if isinstance(document, _KeptText) else len(document.text)

    def text_snapshot(self) -> Callable[[], str]:
        """The text as it is now, joined where the result is called (a worker): joining a 5 MB file's lines holds the
        screen's thread 5-7 ms, copying their list under 1 ms."""
        document = self.document
        if isinstance(document, _KeptText) and document.joined is not None:
            joined = document.joined
            return lambda: joined
        lines, newline = list(document.lines), document.newline
        return lambda: newline.join(lines)

    def take_typed(self) -> str | None:
        """The character before the cursor when keys were typed since the last call (None after a paste, a fix, undo)."""
        typed, self._typed = self._typed, None
        if typed is None:
            return None
        row, col = self.cursor_location
        return self.document[row][col - 1 : col] or None

    async def on_key(self, event: events.Key) -> None:
        """Before TextArea's own key handling (which runs after, unless a key is taken here)."""
        type_over, self._type_over = self._type_over, None
        if type_over is not None and type_over == (self.selection, event.character) and not self.read_only:
            event.stop()  # typed already (see type_over)
            event.prevent_default()
            return
        if self.key_hook is not None and self.key_hook(event.key):
            event.stop()  # the completion popup took it (Tab / Enter accept, Escape closes)
            event.prevent_default()
            return
        if event.is_printable:
            self._typed = event.character
        if event.key == "enter" and not self.read_only:
            # Auto-indent: keep the line's indentation, one level more after `key:` or `- key:`.
            event.stop()
            event.prevent_default()
            row, col = self.cursor_location
            line = self.document[row]
            indent = len(line) - len(line.lstrip(" "))
            if line[indent:].startswith("- "):
                indent += 2  # the item's content starts after its dash
            if line[:col].rstrip().endswith(":"):
                indent += self.indent_width
            start, end = self.selection
            self.replace_via_keyboard("\n" + " " * indent, start, end)
            return
        if event.key == "escape" and not self.read_only:
            # TextArea's Escape moves focus to the next widget without a word (and then typing goes nowhere);
            # here it only ends a selection. The file list and findings are Ctrl+O and Ctrl+G away.
            event.stop()
            event.prevent_default()
            if not self.selection.is_empty:
                self.selection = Selection.cursor(self.selection.end)
            return

    def set_document(self, text: str, language: str | None) -> None:
        """TextArea's, with the editor's own documents and highlighter: no tree-sitter tree of the whole text (its
        parse is seconds for a 5 MB file, and again after every key: editor_highlight.py), and the text laid out
        without measuring each line (`_RowCountCache`)."""
        self._regions = RegionHighlighter() if language else None
        self._drawn = self._window = None
        self.document = _PlainDocument(text)
        self.wrapped_document = _RowCountCache(self.document, tab_width=self.indent_width)
        self.navigator = DocumentNavigator(self.wrapped_document)
        self.build_highlight_map()
        self.move_cursor((0, 0))
        self.refresh_layout()  # as TextArea's own ends

    @property
    def highlighting(self) -> bool:
        """Whether the rows around the view are highlighted (off where they nest deeper than tree-sitter can parse)."""
        return self._regions is not None and self._regions.highlighting

    def set_findings(self, diagnostics: Iterable[Diagnostic]) -> None:
        """Mark each line that holds a finding with its worst severity."""
        markers: dict[int, str] = {}
        for d in diagnostics:
            row = d.line - 1
            old = markers.get(row)
            if old is None or SEVERITY_RANK[d.severity] > SEVERITY_RANK[old]:
                markers[row] = d.severity
        if markers != self.markers:
            self.markers = markers
            self.drawn_rows.clear()
            self.refresh()

    def _marker_style(self, severity: str) -> Style:
        theme = self.app.current_theme
        color = {"error": theme.error, "warning": theme.warning}.get(severity) or theme.primary
        return Style(color=color, bold=True)

    def render_line(self, y: int) -> Strip:
        """TextArea's line cache, without its placeholder check when there is no placeholder to draw.

        TextArea.render_line first asks `not self.text and self.placeholder`: the whole text joined for the first row
        drawn after every edit, 4 ms of the screen's thread per key in a 5 MB file. The rest is TextArea's own cache
        of drawn rows, keyed as it keys it (tests/studio/test_drawn_rows.py compares the two row by row).
        """
        if self.placeholder:
            return super().render_line(y)
        scroll_x, scroll_y = self.scroll_offset
        row = scroll_y + y
        selection = self.selection
        _, cursor_y = self.cursor_offset
        key = (self.size, scroll_x, row,
               selection if selection.contains_line(row) or self.soft_wrap else selection.end[0] == row,
               selection.end if self.cursor_shown and self.cursor_blink and row == cursor_y else None,
               self.theme, self.matching_bracket_location, self.match_cursor_bracket, self.soft_wrap,
               self.show_line_numbers, self.read_only, self.show_cursor, self.suggestion)
        if (line := self.drawn_rows.get(key)) is None:
            line = self.drawn_rows[key] = self.render_row(y)
        return line

    def render_row(self, y: int) -> Strip:
        strip = super().render_row(y)
        if not self.markers or not self.show_line_numbers:
            return strip
        try:
            line_index, section = row_lines(self.wrapped_document)[y + int(self.scroll_offset.y)]  # no public row->line map
        except IndexError:
            return strip
        severity = self.markers.get(line_index)
        if severity is None or section != 0:
            return strip
        at = self.gutter_width - 2  # the gutter is the number then two spaces; the marker takes the first
        head, _, tail = strip.divide([at, at + 1, strip.cell_length])
        mark = Strip([Segment(MARKER_GLYPHS[severity], self._marker_style(severity))], 1)
        return Strip.join([head, mark, tail])

    # Windowed highlighting -------------------------------------------------------------

    @property
    def is_large(self) -> bool:
        return self.document.line_count > LARGE_FILE_LINES

    def build_highlight_map(self) -> None:
        highlights = self.highlights
        highlights.clear()
        document, regions = self.document, self._regions
        whole = not self.is_large
        top, bottom = (0, document.line_count - 1) if whole else self._window_rows()
        self._window = None if whole else (top, bottom)
        if regions is not None:
            if isinstance(document, _KeptText):  # what was found above the region holds unless an edit was above it
                regions.forget_above(document.edited_from)
                document.edited_from = sys.maxsize
            highlights.update(regions.highlights(document.lines, top, bottom))
        for spans in highlights.values():
            # The query's nodes come in an order that an edit elsewhere can change; a row's spans are drawn in
            # order (a later one over an earlier one), so they are put in one: outer before inner, as in the text.
            spans.sort(key=_outer_first)
        self._forget_changed_rows(*self._window_rows())

    def _window_rows(self) -> tuple[int, int]:
        """The rows around the viewport that are highlighted (a big file) and compared after an edit (every file).

        At least 50 rows high: the first build comes before the editor has a size."""
        top = max(0, int(self.scroll_offset.y) - _WINDOW_MARGIN)
        return top, int(self.scroll_offset.y) + max(self.size.height, 50) + _WINDOW_MARGIN

    def _forget_changed_rows(self, top: int, bottom: int) -> None:
        """Draw again the window's rows whose text or highlights changed, not every row.

        TextArea keys a drawn line by its row, not by its text, so it forgets every line after each edit: a key typed
        into a 5 MB file drew the whole screen again (the largest part of its echo). Here a row is drawn again when
        its text or its highlights differ from the last build's; when rows moved (a line added or removed) all are.
        """
        document, lines = self.document, self.document.line_count
        rows = range(top, min(bottom, lines - 1) + 1)
        drawn = {row: (document[row], tuple(self.highlights.get(row, ()))) for row in rows}
        before, self._drawn = self._drawn, (lines, drawn)
        if before is None or before[0] != lines:
            self.drawn_rows.clear()
            self.refresh()
            return
        changed = {row for row, look in drawn.items() if before[1].get(row) != look}
        if changed:
            cache = self.drawn_rows
            for key in [k for k in cache.keys() if k[2] in changed]:  # the key's third part is the row (no soft wrap)
                cache.discard(key)
            for row in changed:
                self.refresh_lines(row)

    def watch_scroll_y(self, old_value: float, new_value: float) -> None:
        super().watch_scroll_y(old_value, new_value)
        if self._window is not None:
            top, bottom = self._window
            view_top = int(new_value)
            if view_top < top or view_top + self.size.height > bottom:
                self.build_highlight_map()
                self.refresh()
