"""Studio test set-up: a copied workspace, an empty user config, no cursor blink (stable snapshots)."""

from __future__ import annotations

import asyncio
import contextlib
import shutil
import threading
import time
import unicodedata
from collections.abc import Callable
from pathlib import Path

import pytest
from textual import events
from textual.app import App
from textual.keys import REPLACED_KEYS, _character_to_key, _get_unicode_name_from_key
from textual.pilot import Pilot
from textual.widgets import TextArea
from textual.worker import WorkerCancelled, WorkerFailed

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
    # The studio says when a key is handled, so a press waits for that and no longer: Textual's own press waits for
    # the process to look idle twice per key (at least 40 ms, up to 2 s while a worker thread runs), most of the
    # studio tests' time. Other apps keep Textual's press.
    from contractstudio.studio.keys import Dialog, OrderedKeys

    pressed = Pilot.press

    async def dialog_drawn(pilot: Pilot) -> None:
        for _ in range(300):  # at most ~3 s
            screen = pilot.app.screen
            if not isinstance(screen, Dialog) or screen.drawn:
                break
            await pilot.pause(0.01)

    async def press(self: Pilot, *keys: str) -> None:
        app = self.app
        if not isinstance(app, OrderedKeys):
            await dialog_drawn(self)
            await pressed(self, *keys)
            return
        for key in keys:
            await dialog_drawn(self)  # each key is typed once the one before it is handled (as a user waits to see it)
            app.post_message(key_event(key, app))
            await queue_read(app)  # the app has taken the key (held it: keys_handled waits for it from now)
            await app.keys_handled()
            await drawn(app)  # and the screen is drawn after it: what it opened after the paint (a popup) is shown
        await self._wait_for_screen()

    monkeypatch.setattr(Pilot, "press", press)


def key_event(key: str, app: App) -> events.Key:
    """The key event Textual's Pilot.press makes of a key name ("a", "enter", "ctrl+s", ":")."""
    if len(key) == 1 and not key.isalnum():
        key = _character_to_key(key)
    try:
        char: str | None = unicodedata.lookup(_get_unicode_name_from_key(REPLACED_KEYS.get(key, key)))
    except KeyError:
        char = key if len(key) == 1 else None
    event = events.Key(key, char)
    event.set_sender(app)
    return event


async def drawn(app: App) -> None:
    """Return once the screen has been drawn after what the app has handled so far, and the callbacks waiting for
    that paint have run."""
    done = asyncio.Event()
    if app.call_after_refresh(done.set):
        await asyncio.wait_for(done.wait(), timeout=30)


async def queue_read(app: App) -> None:
    """Return once the app has read every message in its queue now (a callback queued behind them has run)."""
    done = asyncio.Event()
    if app.call_later(done.set):
        await asyncio.wait_for(done.wait(), timeout=30)


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


async def workers_ended(app: App) -> None:
    """Return once the app's workers have ended, however they ended (a failed one is what the studio shows)."""
    with contextlib.suppress(WorkerFailed, WorkerCancelled):
        await app.workers.wait_for_complete()


async def settle(pilot) -> None:
    """Wait for the debounce, the analysis worker and the redraw.

    A fixed pause is not enough on a loaded machine (the debounce timer may not have fired yet) and too long on a
    quiet one, so wait until the edit screen shows the analysis of its current text (an edit makes the shown one
    stale: `live.current` is None until the new one is accepted) and no worker runs.
    """
    await pilot.pause()
    await workers_ended(pilot.app)
    deadline = time.monotonic() + 10  # the condition, not the time, ends the wait (before: at most ~4 s, then on)
    while time.monotonic() < deadline:
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
        await pilot.pause(0.02)
        await workers_ended(pilot.app)
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
