"""The workspace file list, grouped by kind; each file's label fits the list and tells it apart from the others."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from rich.text import Text
from textual.binding import Binding
from textual.message import Message
from textual.widgets import OptionList
from textual.widgets.option_list import Option

from contractstudio.studio.workspace import KINDS, Workspace

GROUP_TITLES = {"contract": "Contracts", "agent": "Agents", "pipeline": "Pipelines", "tools": "Tools", "trace": "Traces",
                "dataset": "Datasets", "results": "Eval results"}


ELLIPSIS = "…"


def elide_middle(text: str, room: int, head: int | None = None) -> str:
    """`text` in `room` characters: its first `head` and its last ones around `…` when it is longer (a path's middle
    is its least telling part: the root folder and the file's name stay). By default the tail is the whole file name."""
    if len(text) <= room:
        return text
    if room <= 1:
        return ELLIPSIS[:room]
    if head is None:
        head = room - 1 - len(text.rpartition("/")[2])
        head = head if head >= 0 else (room - 1) // 2  # the name itself is too long: its start and its end
    head = max(0, min(head, room - 1))
    tail = room - 1 - head
    return text[:head] + ELLIPSIS + (text[-tail:] if tail else "")


def unique_labels(names: Sequence[str], room: int) -> list[str]:
    """Each name in `room` characters, and names that differ shown differently.

    A long name loses its middle (elide_middle); when two would then look alike, the cut moves until every one of
    them reads apart, and when no cut of that size does, each shows the part where they differ.
    """
    out = [elide_middle(n, room) for n in names]
    if room <= 1:
        return out
    alike: dict[str, list[int]] = {}
    for i, label in enumerate(out):
        alike.setdefault(label, []).append(i)
    for label, group in alike.items():
        distinct = {names[i] for i in group}
        if len(distinct) < 2:
            continue
        others = set(out) - {label}
        default = len(label.partition(ELLIPSIS)[0])
        for head in sorted(range(room), key=lambda h: (abs(h - default), h)):
            tried = {names[i]: elide_middle(names[i], room, head) for i in group}
            if len(set(tried.values())) == len(distinct) and not others & set(tried.values()):
                break
        else:  # a long start and end in common: show where they part
            start = min(_first_difference(a, b) for a in distinct for b in distinct if a != b)
            tried = {n: (ELLIPSIS + n[start:start + room - 2] + ELLIPSIS if len(n) > start + room - 1
                         else ELLIPSIS + n[-(room - 1):]) for n in distinct}
        for i in group:
            out[i] = tried[names[i]]
    return out


def _first_difference(a: str, b: str) -> int:
    return next((i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), min(len(a), len(b)))


class FileList(OptionList):
    """Files by kind; selecting one opens it. Labels are made for the list's width, again when it changes."""

    BINDINGS = [Binding("enter", "select", "Open", id="files.open")]  # in the footer while the list has the focus

    class Open(Message):
        def __init__(self, path: Path) -> None:
            super().__init__()
            self.path = path

    def __init__(self, **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self._paths: dict[str, Path] = {}
        self._shown: tuple[Workspace, Path | None, set[Path], dict[Path, tuple[int, int]]] | None = None
        self._room = 0

    def _label_room(self, lines: int) -> int:
        """Columns a label may take: the list's inside, less a scroll bar when the lines need one (0: not laid out)."""
        inside = self.content_region
        if inside.width <= 0:
            return 0
        padding = self.get_component_styles("option-list--option").padding.width
        bar = self.styles.scrollbar_size_vertical if lines > inside.height else 0
        return max(inside.width - padding - bar, 1)

    def on_resize(self) -> None:
        if self._shown is not None and self._label_room(self.option_count) != self._room:
            self.show(*self._shown)

    def show(self, workspace: Workspace, current: Path | None = None, dirty: set[Path] | None = None,
             counts: dict[Path, tuple[int, int]] | None = None) -> None:
        """Rebuild the list; the current file is highlighted, unsaved files carry a `*`."""
        dirty = dirty or set()
        counts = counts or {}
        self._shown = (workspace, current, dirty, counts)
        self._paths = {}
        options: list[Option] = []
        highlight: int | None = None
        groups = [(kind, [f for f in workspace.files if f.kind == kind]) for kind in [*KINDS, None]]
        groups = [(kind, files) for kind, files in groups if files]
        names = {f.path: _shown_name(workspace, f.path, f.kind) for _, files in groups for f in files}
        self._room = self._label_room(len(names) + len(groups))
        # Marks take 2 columns, an unsaved file's ` *` 2 more; 0: not laid out yet (made again when it is).
        room = self._room - 2 if self._room else 10_000
        labels = dict(zip(names, unique_labels(list(names.values()), room), strict=True))
        for kind, files in groups:
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
                if f.path in dirty:
                    label.append(elide_middle(names[f.path], room - 2))  # room for its ` *`
                    label.append(" *", style="bold yellow")
                else:
                    label.append(labels[f.path])
                key = f"f{len(self._paths)}"
                self._paths[key] = f.path
                if current is not None and f.path == current:
                    highlight = len(options)
                options.append(Option(label, id=key))
        keep, page = self.highlighted, self.scroll_offset.y
        self.clear_options()
        self.add_options(options or [Option(Text("No contract files here.", style="dim"), disabled=True)])
        if highlight is not None:
            self.highlighted = highlight
        elif keep is not None and options:
            self.highlighted = min(keep, len(options) - 1)
        if self.highlighted == keep and page:
            # Drawn again in place (counts arriving, a file saved): the page the author scrolled to stays, where
            # highlighting the same option again would scroll back to it.
            self.scroll_to(y=page, animate=False, immediate=True)

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        path = self._paths.get(event.option.id or "")
        if path is not None:
            self.post_message(self.Open(path))


def _shown_name(workspace: Workspace, path: Path, kind: str | None) -> str:
    """A file's name in the list: its path in the workspace (a JSON Lines file: its stem), less what its group says."""
    shown = path.stem if kind in ("trace", "dataset", "results") else workspace.display(path)
    suffix = f".{kind}.yaml"
    return shown[: -len(suffix)] if shown.endswith(suffix) else shown
