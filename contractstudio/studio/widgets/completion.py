"""The completion popup under the cursor, and the small dialogs of the editing help (quick fix, ask)."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.widgets import Input, Label, OptionList, Static
from textual.widgets.option_list import Option

from contractstudio.editing.items import CodeAction, CompletionItem
from contractstudio.studio.keys import Dialog

MAX_SHOWN = 8  # rows of the popup; more items scroll


class CompletionMenu(OptionList):
    """Completion items near the cursor; the editor keeps the focus (typing goes on refining)."""

    can_focus = False

    def __init__(self) -> None:
        super().__init__(id="completion")
        self.items: list[CompletionItem] = []
        self.display = False
        self.automatic = False  # opened by typing, not by Ctrl+Space: Enter is a new line until the user moves in it
        self.moved = False

    def show_items(self, items: list[CompletionItem], x: int, y: int, automatic: bool = False) -> None:
        """Show items with their top-left corner at (x, y) of the screen."""
        if not self.display:
            self.automatic, self.moved = automatic, False
        elif not automatic:
            self.automatic = False  # asked for (Ctrl+Space) while it was open by itself
        self.items = items
        self.clear_options()
        width = max(len(i.label) + len(i.detail) + 4 for i in items)
        for item in items:
            detail = f"  [dim]{item.detail}[/dim]" if item.detail else ""
            self.add_option(Option(f"{item.label}{detail}"))
        width = min(60, max(16, width))
        height = min(MAX_SHOWN, len(items)) + 2
        self.styles.width, self.styles.height = width, height
        # Whole on the screen: left of the cursor near the right edge, above its line near the bottom (80x24).
        screen = self.screen.size
        if y + height > screen.height:
            y = max(0, y - 1 - height)
        self.styles.offset = (max(0, min(x, screen.width - width)), y)
        self.highlighted = 0
        self.display = True

    def hide(self) -> None:
        self.display = False
        self.items = []

    @property
    def chosen(self) -> CompletionItem | None:
        if not self.display or self.highlighted is None or not 0 <= self.highlighted < len(self.items):
            return None
        return self.items[self.highlighted]

    def move(self, step: int) -> None:
        self.moved = True
        if self.items:
            self.highlighted = ((self.highlighted or 0) + step) % len(self.items)


class QuickFixes(Dialog[int | None]):
    """The fixes of the finding under the cursor; Enter applies one, Escape closes."""

    BINDINGS = [Binding("escape", "cancel", "Cancel", id="dialog.cancel")]

    def __init__(self, actions: list[CodeAction]) -> None:
        super().__init__(classes="dialog")
        self.actions = actions

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog-box"):
            yield Label("Quick fix", id="dialog-title")
            yield OptionList(*[Option(a.title) for a in self.actions], id="fixes")
            yield Static("Enter applies, Escape closes.", id="dialog-body")

    def on_mount(self) -> None:
        self.query_one(OptionList).focus()

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        self.dismiss(event.option_index)

    def action_cancel(self) -> None:
        self.dismiss(None)


class Ask(Dialog[str | None]):
    """One line of text (a new name, a search, a line number); Enter accepts, Escape cancels."""

    BINDINGS = [Binding("escape", "cancel", "Cancel", id="dialog.cancel")]

    def __init__(self, title: str, default: str = "", help_text: str = "Enter to accept, Escape to cancel.") -> None:
        super().__init__(classes="dialog")
        self.title_text, self.default, self.help_text = title, default, help_text

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog-box"):
            yield Label(self.title_text, id="dialog-title")
            yield Input(self.default, id="ask-input")
            yield Static(self.help_text, id="dialog-body")

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.dismiss(event.value.strip() or None)

    def action_cancel(self) -> None:
        self.dismiss(None)
