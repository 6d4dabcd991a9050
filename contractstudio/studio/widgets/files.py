"""The workspace file list, grouped by kind."""

from __future__ import annotations

from pathlib import Path

from rich.text import Text
from textual.message import Message
from textual.widgets import OptionList
from textual.widgets.option_list import Option

from contractstudio.studio.workspace import KINDS, Workspace

GROUP_TITLES = {"contract": "Contracts", "agent": "Agents", "pipeline": "Pipelines", "tools": "Tools", "trace": "Traces"}


class FileList(OptionList):
    """Files by kind; selecting one opens it."""

    class Open(Message):
        def __init__(self, path: Path) -> None:
            super().__init__()
            self.path = path

    def __init__(self, **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self._paths: dict[str, Path] = {}

    def show(self, workspace: Workspace, current: Path | None = None, dirty: set[Path] | None = None,
             counts: dict[Path, tuple[int, int]] | None = None) -> None:
        """Rebuild the list; the current file is highlighted, unsaved files carry a `*`."""
        dirty = dirty or set()
        counts = counts or {}
        self._paths = {}
        options: list[Option] = []
        highlight: int | None = None
        groups = [*KINDS, None]
        for kind in groups:
            files = [f for f in workspace.files if f.kind == kind]
            if not files:
                continue
            options.append(Option(Text(GROUP_TITLES.get(kind or "", "Other"), style="bold underline"), disabled=True))
            for f in files:
                label = Text("  ", no_wrap=True, overflow="ellipsis")
                shown = workspace.display(f.path)
                suffix = f".{f.kind}.yaml"
                if shown.endswith(suffix):  # the group title already says the kind
                    label.append(shown[: -len(suffix)])
                    label.append(suffix, style="dim")
                else:
                    label.append(shown)
                if f.path in dirty:
                    label.append(" *", style="bold yellow")
                errors, warnings = counts.get(f.path, (0, 0))
                if errors:
                    label.append(f" ●{errors}", style="red")
                elif warnings:
                    label.append(f" ▲{warnings}", style="yellow")
                key = f"f{len(self._paths)}"
                self._paths[key] = f.path
                if current is not None and f.path == current:
                    highlight = len(options)
                options.append(Option(label, id=key))
        keep = self.highlighted
        self.clear_options()
        self.add_options(options or [Option(Text("No contract files here.", style="dim"), disabled=True)])
        if highlight is not None:
            self.highlighted = highlight
        elif keep is not None and options:
            self.highlighted = min(keep, len(options) - 1)

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        path = self._paths.get(event.option.id or "")
        if path is not None:
            self.post_message(self.Open(path))
