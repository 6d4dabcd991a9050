"""The YAML editor: Textual's TextArea with finding markers in the gutter and windowed highlighting for big files."""

from __future__ import annotations

from collections.abc import Iterable

from rich.segment import Segment
from rich.style import Style
from textual.document._wrapped_document import WrappedDocument
from textual.strip import Strip
from textual.widgets import TextArea

from contractstudio.findings.diagnostics import SEVERITY_RANK, Diagnostic

# Above this many lines, tree-sitter highlights are queried only around the viewport:
# TextArea re-queries the whole tree on every edit, which grows with the file (see bench/bench_studio.py).
LARGE_FILE_LINES = 400
_WINDOW_MARGIN = 150
MARKER_GLYPHS = {"error": "●", "warning": "▲", "info": "•"}


class _RowCountCache(WrappedDocument):
    """WrappedDocument whose `height` is remembered between edits.

    TextArea reads `height` once per rendered line and it sums over every line of the file:
    O(file) per row, the largest cost of a redraw in a big file (see bench/bench_studio.py).
    """

    _rows: int | None = None

    def wrap(self, *args, **kwargs):
        self._rows = None
        return super().wrap(*args, **kwargs)

    def wrap_range(self, *args, **kwargs):
        self._rows = None
        return super().wrap_range(*args, **kwargs)

    @property
    def height(self) -> int:
        if self._rows is None:
            self._rows = super().height
        return self._rows


class ContractEditor(TextArea):
    """TextArea.code_editor for YAML, marking lines that have findings."""

    def __init__(self, text: str = "", **kwargs: object) -> None:
        super().__init__(
            text,
            language="yaml",
            soft_wrap=False,
            tab_behavior="indent",
            show_line_numbers=True,
            highlight_cursor_line=True,
            **kwargs,  # type: ignore[arg-type]
        )
        self.indent_width = 2
        self.markers: dict[int, str] = {}  # 0-based line -> worst severity
        self._window: tuple[int, int] | None = None

    def _set_document(self, text: str, language: str | None) -> None:
        super()._set_document(text, language)
        self.wrapped_document.__class__ = _RowCountCache  # same data, a cached row count

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
            self._line_cache.clear()
            self.refresh()

    def _marker_style(self, severity: str) -> Style:
        theme = self.app.current_theme
        color = {"error": theme.error, "warning": theme.warning}.get(severity) or theme.primary
        return Style(color=color, bold=True)

    def _render_line(self, y: int) -> Strip:
        strip = super()._render_line(y)
        if not self.markers or not self.show_line_numbers:
            return strip
        try:
            line_index, section = self.wrapped_document._offset_to_line_info[y + int(self.scroll_offset.y)]
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

    def _build_highlight_map(self) -> None:
        if not self.is_large or not self._highlight_query:
            self._window = None
            super()._build_highlight_map()
            return
        self._line_cache.clear()
        highlights = self._highlights
        highlights.clear()
        top = max(0, int(self.scroll_offset.y) - _WINDOW_MARGIN)
        bottom = int(self.scroll_offset.y) + max(self.size.height, 50) + _WINDOW_MARGIN
        self._window = (top, bottom)
        captures = self.document.query_syntax_tree(self._highlight_query, (top, 0), (bottom, 0))
        for name, nodes in captures.items():
            for node in nodes:
                (r0, c0), (r1, c1) = node.start_point, node.end_point
                if r0 == r1:
                    highlights[r0].append((c0, c1, name))
                    continue
                highlights[r0].append((c0, None, name))
                for row in range(r0 + 1, r1):
                    highlights[row].append((0, None, name))
                highlights[r1].append((0, c1, name))

    def watch_scroll_y(self, old_value: float, new_value: float) -> None:
        super().watch_scroll_y(old_value, new_value)
        if self._window is not None:
            top, bottom = self._window
            view_top = int(new_value)
            if view_top < top or view_top + self.size.height > bottom:
                self._build_highlight_map()
                self.refresh()
