"""Every private part of Textual the studio still needs, in one place (issue 36.7).

Each item says why the studio needs it and which public API would replace it. Every other module of the package uses
Textual's public API only: tests/studio/test_textual_internals.py scans contractstudio/ for a private Textual import,
attribute or override, or a `__class__` swap, outside this module (naming its file and line), and pins each item here
against the installed Textual, so an upgrade that renames one fails there, saying what it was for.

Private steps Textual calls (a TextArea's document being set, an app shutting down) are forwarded here to public
methods of the base classes below, which the studio's subclasses override; their private state is read through
properties and functions of the same names.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any, TypeVar, overload

from textual._time import get_time
from textual.app import App, ReturnType
from textual.binding import BindingsMap
from textual.cache import LRUCache
from textual.dom import DOMNode
from textual.keys import _character_to_key
from textual.message_pump import MessagePump
from textual.screen import ModalScreen, ScreenResultType
from textual.strip import Strip
from textual.widgets import OptionList, Select, TextArea
from textual.widgets._footer import FooterKey
from textual.widgets.text_area import DocumentBase, Edit, EditHistory, Selection, WrappedDocument

__all__ = ["AppSteps", "FooterKey", "ModalScreenSteps", "RowsOfLines", "TextAreaSteps", "adopt", "app_nodes", "builtin_grammar",
           "class_bindings", "key_name",
           "lay_out_one_row_per_line", "measure_rows_again", "offered_values", "own_bindings", "row_lines",
           "textual_time", "undo_steps", "wrap_settings"]

# FooterKey (textual.widgets._footer): the footer fits our key hints by measuring and hiding Textual's own key widgets
# (widgets/footer.py). Public replacement: FooterKey exported from textual.widgets.

Swapped = TypeVar("Swapped")
Row = TypeVar("Row")


def adopt(instance: object, subclass: type[Swapped]) -> Swapped:
    """The same object, now of our subclass of its class (its data untouched; only methods and class defaults added).

    Why: TextArea builds its Document / SyntaxAwareDocument and WrappedDocument itself, with no way to choose their
    class; building ours instead would read (and wrap) a 5 MB text twice. Public replacement: a document factory
    (a `document_class` / `wrapped_document_class`) on TextArea.
    """
    if not issubclass(subclass, type(instance)):
        raise TypeError(f"{subclass.__name__} is not a subclass of {type(instance).__name__}: Textual builds another class now")
    instance.__class__ = subclass
    return instance  # type: ignore[return-value]


def builtin_grammar(language: str) -> tuple[Any, Any]:
    """Textual's own tree-sitter language and highlight query for one of its builtin languages (textual._tree_sitter's
    get_language, TextArea._get_builtin_highlight_query): what TextArea(language=...) highlights with.

    Why: the editor parses only the rows around the view (widgets/editor_highlight.py), with the grammar and query
    TextArea would use. Public replacement: a public language registry with each language's highlight query.
    """
    from textual._tree_sitter import get_language
    from textual.widgets.text_area import SyntaxAwareDocument

    grammar = get_language(language)
    if grammar is None:
        raise LookupError(f"Textual has no tree-sitter grammar for {language!r} (textual[syntax] brings them)")
    return grammar, SyntaxAwareDocument("", grammar).prepare_query(TextArea._get_builtin_highlight_query(language))  # noqa: SLF001


def textual_time() -> float:
    """Now, on the clock Textual stamps a key's `time` with.

    Why: a dialog takes only keys typed after it was drawn (studio/keys.py), compared with the key's `time`, which is
    textual._time's clock (monotonic; perf_counter on Windows). Public replacement: a clock exported by Textual, or
    events stamped with time.monotonic().
    """
    return get_time()


def app_nodes(app: App[Any]) -> Iterable[MessagePump]:
    """Every node the app has mounted, on any screen of any mode (App._registry).

    Why: the ordered keys (studio/keys.py) release the next key only when no node has a message waiting. Public
    replacement: none; walking `app.screen_stack` misses the other modes' screens and nodes being mounted.
    """
    return app._registry  # noqa: SLF001


def key_name(character: str) -> str:
    """Textual's key name for a character typed in the user's keymap (`?` -> question_mark; textual.keys).

    Public replacement: a public inverse of textual.keys.key_to_character.
    """
    return _character_to_key(character)


def class_bindings(owner: type[DOMNode]) -> BindingsMap:
    """A widget or screen class's own and inherited bindings, without an instance (DOMNode._merged_bindings).

    Why: the palette and the keymap list every mode's keys before the modes exist. Public replacement: none.
    """
    return owner._merged_bindings or BindingsMap()  # noqa: SLF001


def own_bindings(node: DOMNode) -> BindingsMap:
    """A node's bindings map, which the keymap edits in place (DOMNode._bindings).

    Why: a remapped key must win over the focused widget's own (priority), and Textual has no public way to change
    a binding's priority once the node exists. Public replacement: App.set_keymap with a priority.
    """
    return node._bindings  # noqa: SLF001


def offered_values(select: Select[Any]) -> list[Any]:
    """The values a Select offers (Select._options).

    Why: the studio's pickers check a value is offered before selecting it (selecting another raises). Public
    replacement: a public `options` (or `has_value`) on Select.
    """
    return [value for _prompt, value in select._options]  # noqa: SLF001


def measure_rows_again(options: OptionList) -> None:
    """Forget an OptionList's measured rows and draw it again (OptionList._clear_caches).

    Why: a scroll bar that comes or goes changes the rows' width without a resize, and OptionList keeps each row's
    height measured at the old width (widgets/findings.py). Public replacement: OptionList doing so itself.
    """
    options._clear_caches()  # noqa: SLF001


def undo_steps(history: EditHistory) -> list[list[Edit]]:
    """The undo stack of a TextArea's history, one list of edits per step (EditHistory._undo_stack).

    Why: a rename's or a quick fix's edits are joined into one step of undo. Public replacement: a way to group
    edits (a transaction) on TextArea or EditHistory.
    """
    return history._undo_stack  # type: ignore[return-value]  # noqa: SLF001


def row_lines(wrapped: WrappedDocument) -> Sequence[tuple[int, int]]:
    """Each screen row's (document line, section of that line) (WrappedDocument._offset_to_line_info).

    Why: the editor's finding markers go on the gutter of a line's first row. Public replacement: a public
    row -> location map (WrappedDocument.offset_to_location answers per row only).
    """
    return wrapped._offset_to_line_info  # noqa: SLF001


def wrap_settings(wrapped: WrappedDocument) -> tuple[int, int]:
    """The width (0: not wrapping) and tab width the wrapped document was last wrapped with (its _width, _tab_width).

    Why: the editor's row-count cache skips a wrap of the same text at the same settings. Public replacement: public
    `width` and `tab_width` on WrappedDocument.
    """
    return wrapped._width, wrapped._tab_width  # noqa: SLF001


class RowsOfLines(Sequence[Row]):
    """One entry per line of a document, each made when asked from the line's index and never stored: what a
    layout of one row per line keeps per row, which is the row's own index (or nothing) for every line."""

    __slots__ = ("document", "entry")

    def __init__(self, document: DocumentBase, entry: Callable[[int], Row]) -> None:
        self.document, self.entry = document, entry

    def __len__(self) -> int:
        return self.document.line_count  # follows the document's edits: a line added is a row added

    @overload
    def __getitem__(self, index: int) -> Row: ...
    @overload
    def __getitem__(self, index: slice) -> list[Row]: ...
    def __getitem__(self, index: int | slice) -> Row | list[Row]:
        count = self.document.line_count
        if isinstance(index, slice):
            return [self.entry(n) for n in range(*index.indices(count))]
        n = index + count if index < 0 else index
        if not 0 <= n < count:
            raise IndexError(index)
        return self.entry(n)


def lay_out_one_row_per_line(wrapped: WrappedDocument, tab_width: int | None) -> None:
    """What WrappedDocument.wrap(0, tab_width) makes of lines without a tab, as entries made when asked (RowsOfLines):
    row n is line n, with no wrap offset and no tab. Nothing is made per line: opening a 5 MB file does not lay out
    its 200,000 lines before the first screen (the four lists took 0.6-1.2 s of the screen's thread).

    Why: Textual's unwrapped layout measures every line's tabs and stores four entries per line, and TextArea reads
    the rows' lines from WrappedDocument._offset_to_line_info. Valid while no line has a tab and nothing wraps: the
    editor's wrapped document lays the text out again the moment an edit brings a tab (`_RowCountCache`). Public
    replacement: a faster wrap of width 0 in Textual, or a public row -> line map TextArea reads.
    """
    document = wrapped.document
    wrapped._width = 0  # noqa: SLF001
    if tab_width:
        wrapped._tab_width = tab_width  # noqa: SLF001
    wrapped._wrap_offsets = RowsOfLines(document, lambda n: [])  # type: ignore[assignment]  # noqa: SLF001
    wrapped._offset_to_line_info = RowsOfLines(document, lambda n: (n, 0))  # type: ignore[assignment]  # noqa: SLF001
    wrapped._line_index_to_offsets = RowsOfLines(document, lambda n: [n])  # type: ignore[assignment]  # noqa: SLF001
    wrapped._tab_width_cache = RowsOfLines(document, lambda n: [0] if document[n] else [])  # type: ignore[assignment]  # noqa: SLF001


class AppSteps(App[ReturnType]):
    """Textual's App, with the private steps the studio takes part in as public methods to override."""

    async def _shutdown(self) -> None:
        self.before_shutdown()
        await super()._shutdown()

    def before_shutdown(self) -> None:
        """Called as the app starts to shut down, before its screens close (App._shutdown).

        Why: the ordered keys stop handing out keys and open the model client's import (studio/keys.py). Public
        replacement: none runs this early (the app's Unmount comes after every screen closed).
        """

    def _handle_exception(self, error: Exception) -> None:
        self.exception_in_handler(error)

    def exception_in_handler(self, error: Exception) -> None:
        """A handler raised (App._handle_exception): Textual's own handling exits, showing the traceback.

        Why: the studio shows a modal and writes the traceback to a file instead, so the user's text survives.
        Public replacement: none (App has no public hook for an exception in a handler).
        """
        super()._handle_exception(error)


class ModalScreenSteps(ModalScreen[ScreenResultType]):
    """Textual's ModalScreen, with its paint as a public step to override."""

    def _compositor_refresh(self) -> None:
        super()._compositor_refresh()
        self.painted()

    def painted(self) -> None:
        """Called after each paint of the screen was handed to the terminal (Screen._compositor_refresh).

        Why: a dialog takes keys from its first paint (studio/keys.py); `call_after_refresh` runs only once the loop
        comes to the callbacks after the refresh, late under load, and a key typed meanwhile at a dialog the user sees
        was dropped. Public replacement: none (no event says a screen was written to the terminal).
        """


class TextAreaSteps(TextArea):
    """Textual's TextArea, with the private steps and state the editor builds on given public names."""

    def _set_document(self, text: str, language: str | None) -> None:
        self.set_document(text, language)

    def set_document(self, text: str, language: str | None) -> None:
        """A new document, wrapped document and highlights for the text (TextArea._set_document).

        Why: the editor turns highlighting off for text tree-sitter would crash on, and makes the documents its own
        (`adopt`). Public replacement: a document factory on TextArea.
        """
        super()._set_document(text, language)

    def refresh_layout(self) -> None:
        """Wrap the document again and measure the widget's virtual size (TextArea._rewrap_and_refresh_virtual_size).

        Why: the editor sets its own documents (no whole-text tree-sitter tree) and ends as TextArea's _set_document
        ends. Public replacement: a document factory on TextArea.
        """
        self._rewrap_and_refresh_virtual_size()

    def _build_highlight_map(self) -> None:
        self.build_highlight_map()

    def build_highlight_map(self) -> None:
        """Query the syntax tree for every row's highlights (TextArea._build_highlight_map).

        Why: a big file is highlighted around the viewport only. Public replacement: none.
        """
        super()._build_highlight_map()

    def _render_line(self, y: int) -> Strip:
        return self.render_row(y)

    def render_row(self, y: int) -> Strip:
        """Draw one row of the widget (TextArea._render_line; its cache of drawn rows is `drawn_rows`).

        Why: the editor draws finding markers over the gutter. Public replacement: a gutter hook on TextArea.
        """
        return super()._render_line(y)

    def _watch_selection(self, previous_selection: Selection, selection: Selection) -> None:
        self.selection_changed(previous_selection, selection)

    def selection_changed(self, previous_selection: Selection, selection: Selection) -> None:
        """TextArea's own watcher of `selection` (TextArea._watch_selection: the cursor's scroll, the bracket match).

        Why: the editor repaints only the rows a selection left and reached, and must see the matched bracket before
        TextArea moves it (the public `watch_selection` runs after). Public replacement: none.
        """
        super()._watch_selection(previous_selection, selection)

    @property
    def drawn_rows(self) -> LRUCache[Any, Strip]:
        """TextArea's cache of drawn rows (TextArea._line_cache).

        Why: the editor keys and forgets rows as TextArea does, only the rows that changed. Public replacement: none.
        """
        return self._line_cache

    @property
    def highlights(self) -> Any:
        """Each row's highlight spans (TextArea._highlights: row -> [(start, end, name)]), filled by the highlight map."""
        return self._highlights

    @property
    def highlight_query(self) -> Any:
        """The tree-sitter query of the document's language (TextArea._highlight_query); None: no highlighting."""
        return self._highlight_query

    @property
    def cursor_offset(self) -> tuple[int, int]:
        """The cursor's (x, y) in the wrapped document (TextArea._cursor_offset): part of a drawn row's key, and
        where a jump scrolls to. Public replacement: TextArea.cursor_screen_offset is relative to the screen."""
        return self._cursor_offset

    def recompute_cursor_offset(self) -> None:
        """Measure the cursor's offset again (TextArea._recompute_cursor_offset), as TextArea does before scrolling."""
        self._recompute_cursor_offset()

    @property
    def has_cursor(self) -> bool:
        """Whether the cursor is drawn at all (TextArea._has_cursor): no cursor, no scroll to it."""
        return self._has_cursor

    @property
    def cursor_shown(self) -> bool:
        """The cursor's blink phase (TextArea._cursor_visible): part of a drawn row's key."""
        return self._cursor_visible

    def replace_via_keyboard(self, insert: str, start: tuple[int, int], end: tuple[int, int]) -> object:
        """Replace a range as a typed key does (TextArea._replace_via_keyboard: refused when read-only, one undo step
        with the keys around it). Public replacement: TextArea.replace, which ends the undo step."""
        return self._replace_via_keyboard(insert, start, end)

