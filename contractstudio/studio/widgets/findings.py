"""The diagnostics panel: code, severity, message and hint; Enter jumps to a finding or a related place."""

from __future__ import annotations

from dataclasses import dataclass

from rich.table import Table
from rich.text import Text
from textual.binding import Binding
from textual.message import Message
from textual.widgets import OptionList
from textual.widgets.option_list import Option

from contractstudio.findings.diagnostics import SEVERITY_RANK, Diagnostic
from contractstudio.studio.textual_internals import measure_rows_again

SEVERITY_LABEL = {"error": "E", "warning": "W", "info": "I"}
SEVERITY_STYLE = {"error": "bold red", "warning": "bold yellow", "info": "bold cyan"}


@dataclass(frozen=True, slots=True)
class Place:
    """Where a jump lands (1-based)."""

    file: str
    line: int
    column: int


class FindingsPanel(OptionList):
    """One entry per finding, followed by its related places (each navigable)."""

    BINDINGS = [Binding("enter", "select", "Jump", id="findings.jump")]  # in the footer while the panel has the focus

    class Jump(Message):
        """The user chose a place to go to."""

        def __init__(self, panel: FindingsPanel, place: Place, diagnostic: Diagnostic) -> None:
            super().__init__()
            self.panel = panel
            self.place = place
            self.diagnostic = diagnostic

        @property
        def control(self) -> FindingsPanel:
            return self.panel

    class Chosen(Message):
        """The highlighted finding changed (the graph highlights PIP201 paths from it)."""

        def __init__(self, panel: FindingsPanel, diagnostic: Diagnostic | None) -> None:
            super().__init__()
            self.panel = panel
            self.diagnostic = diagnostic

        @property
        def control(self) -> FindingsPanel:
            return self.panel

    def __init__(self, **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self.diagnostics: list[Diagnostic] = []
        self._targets: list[tuple[Place, Diagnostic]] = []

    def on_mount(self) -> None:
        # A scroll bar that comes or goes narrows or widens the rows, but is no resize: OptionList kept each finding's
        # height measured at the old width, and a hint wrapped onto one more line lost its last line (issue 35.11).
        # Measured again as Textual does on a resize.
        self.watch(self, "show_vertical_scrollbar", lambda: measure_rows_again(self), init=False)

    def show(self, diagnostics: list[Diagnostic]) -> None:
        """Replace the list, keeping the highlighted row where possible.

        Errors first, then warnings, then infos, each by place: a few rows high, the panel shows the errors even
        when long infos come before them in the text.
        """
        diagnostics = sorted(diagnostics, key=_worst_first)
        if diagnostics == self.diagnostics and self.option_count:
            return
        keep = self.highlighted
        self.diagnostics = list(diagnostics)
        self._targets = []
        options: list[Option] = []
        for d in diagnostics:
            self._targets.append((Place(d.file, d.line, d.column), d))
            options.append(Option(self._render_finding(d)))
            for r in d.related:
                self._targets.append((Place(r.file, r.line, r.column), d))
                line = Text(f"{r.line}:{r.column} ", style="bold")
                line.append(r.message)
                options.append(Option(_hanging(Text("   ↳ ", style="dim"), line)))
        self.clear_options()
        if not options:
            self.add_option(Option(Text("No findings.", style="dim"), disabled=True))
            return
        self.add_options(options)
        if keep is not None:
            self.highlighted = min(keep, len(options) - 1)

    @staticmethod
    def _render_finding(d: Diagnostic) -> Table:
        text = Text()
        text.append(f"{d.line}:{d.column} ", style="bold")
        text.append(f"{d.code} ", style=SEVERITY_STYLE[d.severity])
        text.append(d.message)
        finding = _hanging(Text(f"{SEVERITY_LABEL[d.severity]} ", style=SEVERITY_STYLE[d.severity]), text)
        if d.hint:  # the whole hint, wrapped under itself like the CLI's `= hint:` line, never cut at the panel's edge
            finding.add_row("", Text(f"hint: {d.hint}", style="italic dim"))
        return finding

    def target(self, index: int | None) -> tuple[Place, Diagnostic] | None:
        if index is None or not 0 <= index < len(self._targets):
            return None
        return self._targets[index]

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        found = self.target(event.option_index)
        if found:
            self.post_message(self.Jump(self, *found))

    def on_option_list_option_highlighted(self, event: OptionList.OptionHighlighted) -> None:
        event.stop()
        found = self.target(event.option_index)
        self.post_message(self.Chosen(self, found[1] if found else None))


def _worst_first(d: Diagnostic) -> tuple[int, int, int]:
    return -SEVERITY_RANK[d.severity], d.line, d.column


def _hanging(lead: Text, body: Text) -> Table:
    """`lead` then `body`, the body's wrapped lines indented under its first (a finding reads as one block)."""
    grid = Table.grid()
    grid.add_column(width=lead.cell_len, no_wrap=True)
    grid.add_column(ratio=1, overflow="fold")
    grid.add_row(lead, body)
    return grid
