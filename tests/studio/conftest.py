"""Studio test set-up: a copied workspace, an empty user config, no cursor blink (stable snapshots)."""

from __future__ import annotations

import shutil
import threading
from collections.abc import Callable
from pathlib import Path

import pytest
from textual.pilot import Pilot
from textual.widgets import TextArea

from contractstudio.runtime.call_state import CallOptions
from contractstudio.studio.app import StudioApp
from contractstudio.studio.config import load_config

HERE = Path(__file__).parent
WORKSPACE = HERE / "workspace"


@pytest.fixture(autouse=True)
def _quiet_editor(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    # A blinking cursor makes snapshots flaky; the user's own config must never leak into a test.
    monkeypatch.setattr(TextArea, "cursor_blink", False)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))


@pytest.fixture(autouse=True)
def _press_waits_for_ordered_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    # The studio holds each key until the previous one is handled (studio/keys.py): Pilot's press returns when the
    # process looks idle, which may be before held keys are released; wait for them as a user's screen would show.
    # A dialog takes no key typed before it was drawn (studio/keys.py's Dialog), and Pilot stamps a key when it is
    # made: a user types into a dialog once it is shown, so a press waits for an open dialog to be drawn first.
    from contractstudio.studio.keys import Dialog

    pressed = Pilot.press

    async def press(self: Pilot, *keys: str) -> None:
        for _ in range(300):  # at most ~3 s
            screen = self.app.screen
            if not isinstance(screen, Dialog) or screen.drawn:
                break
            await self.pause(0.01)
        await pressed(self, *keys)
        handled = getattr(self.app, "keys_handled", None)
        if handled is not None:
            await handled()

    monkeypatch.setattr(Pilot, "press", press)


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    """A private copy of the test workspace (tests save files)."""
    target = tmp_path / "ws"
    shutil.copytree(WORKSPACE, target)
    return target


@pytest.fixture
def make_app(workspace: Path) -> Callable[..., StudioApp]:
    """Build the app on the workspace copy, optionally opening one file first."""

    def factory(*names: str, trusted: bool = False, call_options: Callable[[], CallOptions] | None = None) -> StudioApp:
        paths: list[str | Path] = [workspace / n for n in names] if names else [workspace]
        if names:
            paths.append(workspace)
        return StudioApp(paths, trusted=trusted, config=load_config(), call_options=call_options)

    return factory


async def settle(pilot) -> None:
    """Wait for the debounce, the analysis worker and the redraw.

    A fixed pause alone is not enough on a loaded machine (the debounce timer may not
    have fired yet), so wait until the edit screen shows the analysis of its current text.
    """
    await pilot.pause(0.3)
    await pilot.app.workers.wait_for_complete()
    for _ in range(40):  # at most ~4 s
        edit = next((s for s in pilot.app.screen_stack if hasattr(s, "live") and hasattr(s, "analysis")), None)
        if edit is None and isinstance(pilot.app, StudioApp):
            try:
                edit = pilot.app.edit_screen  # in another mode (graph, debug, eval): the studio's own accessor
            except LookupError:  # edit mode is not started
                edit = None
        current = edit is None or getattr(pilot.app, "buffer", None) is None or (
            edit.live.current is not None and edit._debounce is None
        )
        if current and not any(w.is_running for w in pilot.app.workers):
            break
        await pilot.pause(0.1)
        await pilot.app.workers.wait_for_complete()
    await pilot.pause()


@pytest.fixture
def regex_on_ui_thread(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The texts a regex from a file was matched against on the screen's (main) thread; a test expects none."""
    from contractstudio.documents import patterns

    seen: list[str] = []
    real_run = patterns.RegexBudget._run

    def run(self: patterns.RegexBudget, match, text: str) -> bool:
        if threading.current_thread() is threading.main_thread():
            seen.append(text)
        return real_run(self, match, text)

    monkeypatch.setattr(patterns.RegexBudget, "_run", run)
    return seen


def tree_labels(tree) -> str:
    """Every label of a Tree widget, depth first, one per line (what a user reads in it)."""
    labels: list[str] = []

    def walk(node) -> None:
        labels.append(str(node.label))
        for child in node.children:
            walk(child)

    walk(tree.root)
    return "\n".join(labels)
