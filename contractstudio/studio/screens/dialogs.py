"""Modal dialogs: choices before losing work, worker errors, a path prompt, and the key list (each a keys.Dialog:
no key typed before it was drawn, a letter key for every button)."""

from __future__ import annotations

from collections.abc import Callable

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.widgets import Button, Input, Label, Static

from contractstudio.studio.keys import Dialog


class Choice(Dialog[str]):
    """A question with a few buttons; dismisses with the chosen id (escape: the last, which cancels)."""

    BINDINGS = [Binding("escape", "cancel", "Cancel", id="dialog.cancel")]

    def __init__(self, title: str, body: str, choices: list[tuple[str, str]]) -> None:
        super().__init__(classes="dialog")
        self.title_text = title
        self.body = body
        self.choices = choices

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog-box"):
            yield Label(self.title_text, id="dialog-title")
            yield Static(self.body, id="dialog-body")
            with Horizontal(id="dialog-buttons"):
                for i, (key, label) in enumerate(self.choices):
                    yield Button(label, id=f"choice-{key}", variant="primary" if i == 0 else "default")

    def on_mount(self) -> None:
        self.query_one(Button).focus()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self.dismiss((event.button.id or "").removeprefix("choice-"))

    def action_cancel(self) -> None:
        self.dismiss("cancel")


def unsaved_changes(name: str, doing: str) -> Choice:
    """Save / Discard / Cancel before `doing` (quit, open another file, reload)."""
    return Choice("Unsaved changes", f"{name} has unsaved changes. Save them before you {doing}?",
                  [("save", "Save"), ("discard", "Discard"), ("cancel", "Cancel")])


def changed_on_disk(name: str) -> Choice:
    """Another program changed the file: never overwrite without asking."""
    return Choice("Changed on disk", f"{name} was changed on disk by another program since you opened it.\n"
                  "Reload it (your edits are lost), overwrite it with your version, or cancel?",
                  [("cancel", "Cancel"), ("reload", "Reload"), ("overwrite", "Overwrite")])


class ErrorDialog(Dialog[None]):
    """A failed background job: what failed and why, never a traceback on the screen."""

    BINDINGS = [Binding("escape,enter", "close", "Close", id="dialog.close")]

    def __init__(self, title: str, message: str) -> None:
        super().__init__(classes="dialog")
        self.title_text = title
        self.message = message

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog-box", classes="error"):
            yield Label(self.title_text, id="dialog-title")
            yield Static(Text(self.message), id="dialog-body")
            with Horizontal(id="dialog-buttons"):
                yield Button("Close", variant="error", id="close")

    def on_mount(self) -> None:
        self.query_one(Button).focus()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self.dismiss(None)

    def action_close(self) -> None:
        self.dismiss(None)


class PathPrompt(Dialog[str | None]):
    """Ask for a file path (export targets); escape cancels."""

    BINDINGS = [Binding("escape", "cancel", "Cancel", id="dialog.cancel")]

    def __init__(self, title: str, default: str, action: str = "write") -> None:
        super().__init__(classes="dialog")
        self.title_text = title
        self.default = default
        self.action = action  # what Enter does: write, open

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog-box"):
            yield Label(self.title_text, id="dialog-title")
            yield Input(self.default, id="path-input")
            yield Static(f"Enter to {self.action}, Escape to cancel.", id="dialog-body")

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.dismiss(event.value.strip() or None)

    def action_cancel(self) -> None:
        self.dismiss(None)


# Keys some terminals or tmux never send as such; each of these actions has another key that every terminal sends.
TERMINAL_SENSITIVE = ("Keys marked ~ terminal-sensitive: Ctrl+Space arrives as Ctrl+@ in tmux and many terminals (both work); "
                      "tmux cannot send Ctrl+. (use F9); Alt+… needs Alt/Option sent as Meta; Shift+F6 / Shift+F8 are "
                      "not sent by some terminals (use the palette, Ctrl+P). Ctrl+B is left to tmux (Ctrl+\\ toggles the file list).")


class HelpScreen(Dialog[None]):
    """Every key of the app and of the current mode, with its binding id (for the keymap file)."""

    BINDINGS = [Binding("escape,f1,q", "close", "Close", id="help.close")]

    def __init__(self, rows: list[tuple[str, str, str, str]], config_path: str) -> None:
        super().__init__(classes="dialog")
        self.rows = rows
        self.config_path = config_path

    def compose(self) -> ComposeResult:
        text = Text()
        scope = None
        for where, key, description, binding_id in self.rows:
            if where != scope:
                scope = where
                text.append(f"\n{where}\n", style="bold underline")
            text.append(f"  {key:<14}", style="bold")
            text.append(f"{description:<30}")
            text.append(f" {binding_id}\n", style="dim")
        text.append("\nRemap keys in ", style="dim")
        text.append(self.config_path, style="bold")
        text.append(":\n  keymap:\n    edit.save: ctrl+w\n", style="dim")
        text.append("Ctrl+P opens the command palette: every action is there.\n", style="dim")
        text.append(TERMINAL_SENSITIVE, style="dim")
        with Vertical(id="help-box"):
            yield Label("Keys", id="dialog-title")
            with VerticalScroll():
                yield Static(text, id="help-text")

    def action_close(self) -> None:
        self.dismiss(None)


class TextPrompt(Dialog[str | None]):
    """Multi-line text (typed YAML input, an edited reply or error texts); Ctrl+S or Use accepts."""

    BINDINGS = [
        Binding("escape", "cancel", "Cancel", id="dialog.cancel"),
        Binding("ctrl+s", "accept", "Use", priority=True, id="dialog.accept"),
    ]

    def __init__(self, title: str, text: str, language: str | None = "yaml", help_text: str = "",
                 check: Callable[[str], str | None] | None = None) -> None:
        super().__init__(classes="dialog")
        self.title_text = title
        self.text = text
        self.language = language
        self.help_text = help_text
        self.check = check  # why the text cannot be used (shown, and the dialog stays open with the text), or None

    def compose(self) -> ComposeResult:
        from contractstudio.studio.widgets.editor import YamlTextArea  # YAML highlighting never sees too-deep text

        with Vertical(id="prompt-box"):
            yield Label(self.title_text, id="dialog-title")
            yield YamlTextArea(self.text, language=self.language, id="prompt-text", soft_wrap=True, show_line_numbers=False)
            yield Static(self.help_text or "Ctrl+S uses this text, Escape cancels.", id="dialog-body")
            with Horizontal(id="dialog-buttons"):
                yield Button("Use", variant="primary", id="use")
                yield Button("Cancel", id="cancel")

    def on_mount(self) -> None:
        self.query_one("#prompt-text").focus()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        if event.button.id == "use":
            self.action_accept()
        else:
            self.dismiss(None)

    def action_accept(self) -> None:
        from textual.widgets import TextArea

        text = self.query_one("#prompt-text", TextArea).text
        problem = self.check(text) if self.check is not None else None
        if problem:
            self.query_one("#dialog-body", Static).update(Text(problem, style="bold red"))
            return
        self.dismiss(text)

    def action_cancel(self) -> None:
        self.dismiss(None)
