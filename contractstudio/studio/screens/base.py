"""What every mode screen shares: the studio it belongs to, typed (no screen guesses the app's attributes)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Protocol, cast

from textual.screen import Screen

if TYPE_CHECKING:
    from contractstudio.analysis.check import Context
    from contractstudio.runtime.call_state import CallOptions
    from contractstudio.studio.analyses import Analysis
    from contractstudio.studio.keymap import CheckedKeymap
    from contractstudio.studio.widgets.findings import Place
    from contractstudio.studio.workspace import Buffer, Workspace
    from contractstudio.trust import Trust


class Studio(Protocol):
    """What the screens read and ask of the StudioApp (the app's own type is not imported: it imports the screens).

    mypy checks that StudioApp is one (`studio/app.py`, `as_studio`).
    """

    workspace: Workspace
    buffer: Buffer | None
    analysis: Analysis | None
    counts: dict[Path, tuple[int, int]]
    trust: Trust
    keymap: CheckedKeymap
    threshold_choice: tuple[Path, str, float, str] | None  # (file, condition id, threshold, assert | when): Eval's sweep

    def context_for(self, path: Path | None) -> Context: ...
    def current_text(self) -> str: ...
    def is_dirty(self) -> bool: ...
    def open_file(self, path: Path) -> None: ...
    def go_to(self, place: Place) -> None: ...
    def analysis_finished(self, analysis: Analysis) -> None: ...
    def worker_failed(self, title: str, error: BaseException | None) -> None: ...
    def action_reload(self) -> None: ...
    def load_model_client(self) -> None: ...
    def call_options(self) -> CallOptions: ...
    def write_threshold_choice(self) -> None: ...


class StudioScreen(Screen[None]):
    """A mode screen of the studio (edit, graph, debug, eval)."""

    @property
    def studio(self) -> Studio:
        """The running studio (`self.app`, with its own attributes typed)."""
        return cast("Studio", self.app)
