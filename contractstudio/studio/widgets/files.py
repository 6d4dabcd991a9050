"""The workspace file list, grouped by kind."""

from __future__ import annotations

from pathlib import Path

from rich.text import Text
from textual.message import Message
from textual.widgets import OptionList
from textual.widgets.option_list import Option

from contractstudio.studio.workspace import KINDS, Workspace

GROUP_TITLES = {"contract": "Contracts", "agent": "Agents", "pipeline": "Pipelines", "tools": "Tools", "trace": "Traces",
                "dataset": "Datasets", "results": "Eval results"}


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
                errors, warnings = counts.get(f.path, (0, 0))
                label = Text(no_wrap=True, overflow="ellipsis")
                # Marks first: a narrow list cuts the end of long names, never the news.
                if errors:
                    label.append("● ", style="bold red")
                elif warnings:
                    label.append("▲ ", style="bold yellow")
                else:
                    label.append("  ")
                shown = f.path.stem if f.kind in ("trace", "dataset", "results") else workspace.display(f.path)
                suffix = f".{f.kind}.yaml"
                label.append(shown[: -len(suffix)] if shown.endswith(suffix) else shown)  # the group title says the kind
                if f.path in dirty:
                    label.append(" *", style="bold yellow")
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
