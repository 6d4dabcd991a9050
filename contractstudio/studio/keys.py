"""Keys are handled one at a time, in the order they were pressed: the next key is handed out only when the
previous one, and every message it caused, has been handled.

Textual forwards each key to the focused widget's queue as soon as it arrives. A key the widget handles itself
(a letter in a TextArea) is applied there; a key handled by a binding (Backspace, Delete, the arrows) first
bubbles up through each parent's queue to the app, which runs the binding. When keys come faster than the
editor handles them (key repeat, a paste typed by tmux, a slow keystroke), a letter that came after Backspace is
typed before Backspace deletes, and Backspace then deletes the letter. The same happens to the first keys
after a dialog closes: they go to the dialog's field, which is gone once the dismissal is handled.

So the studio holds every key from the terminal in its own queue and releases it only when the app is quiet:
no node of the app has a message waiting (the key's own bubbling, the Submitted of a dialog's field, the
dismissal and its callback). Each wait is a callback queued behind the waiting messages of a busy node.

While a key is held or handled, and until the screen is drawn after it, the model client's import waits at its next
module (studio/give_way.py); an analysis of a text a key changed is stopped (studio/stoppable.py, screens/edit.py).
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import sys
import time
from typing import Any

from textual import events
from textual.content import Content
from textual.message_pump import MessagePump
from textual.screen import ScreenResultType
from textual.widgets import Button

from contractstudio.studio import give_way
from contractstudio.studio.textual_internals import AppSteps, ModalScreenSteps, app_nodes, textual_time

# A node that never stops getting messages (an animation) must not hold the keys back for ever.
MAX_WAITS_PER_KEY = 200
# While an analysis runs in a worker thread, every step of a key (the input thread reading it, the screen's thread
# applying it, the output thread writing it) waits for the interpreter lock; Python hands it over after 5 ms by
# default. 0.5 ms keeps a key's few hand-overs within a frame (bench/bench_typing.py), for a little of the worker's speed.
KEY_SWITCH_S = 0.0005
# How often a wait looks whether its node closed, and how long a node may hold one key's messages before it is
# taken to be stuck (a key's handling on a loaded machine takes seconds at worst, never this long).
CLOSING_CHECK_S = 0.1
STUCK_NODE_S = 30.0


class OrderedKeys(AppSteps[None]):
    """An app whose keys are handled strictly one after another (see the module's docstring)."""

    _held_keys: asyncio.Queue[events.Key] | None = None
    _key_pump: asyncio.Task[None] | None = None
    _released_key: events.Key | None = None
    last_key_at = 0.0  # time.monotonic() of the last key from the terminal (0: none yet)
    _keys_idle: asyncio.Event | None = None  # set while no key is held or being handled
    _imports_give_way: contextlib.ExitStack | None = None

    def run(self, *args: Any, **kwargs: Any) -> Any:
        """Run in a terminal, with the screen's thread given the interpreter back quickly (see KEY_SWITCH_S)."""
        interval = sys.getswitchinterval()
        sys.setswitchinterval(KEY_SWITCH_S)
        try:
            return super().run(*args, **kwargs)
        finally:
            sys.setswitchinterval(interval)

    async def on_event(self, event: events.Event) -> None:
        if isinstance(event, events.Key) and not event.is_forwarded and event is not self._released_key:
            self.last_key_at = time.monotonic()
            give_way.keys_arrived()  # the model client's import waits at its next module until the key is drawn
            if self._held_keys is None:
                self._imports_give_way = contextlib.ExitStack()
                self._imports_give_way.enter_context(give_way.imports_give_way())
                self._held_keys = asyncio.Queue()
                self._keys_idle = asyncio.Event()
                self._key_pump = asyncio.create_task(self._release_keys(self._held_keys, self._keys_idle), name="ordered keys")
            self._keys_idle.clear()  # type: ignore[union-attr]
            self._held_keys.put_nowait(event)
            return
        if event is self._released_key and not self.is_running:
            return  # released as the app shut down: its screens are gone
        if event is self._released_key and isinstance(self.screen, Dialog) and not self.screen.takes(event):
            return  # typed before the dialog was drawn: meant for what was on the screen then
        await super().on_event(event)

    def keys_waiting(self) -> bool:
        """Whether keys are held that the app has not been given yet (work for the key before them may skip)."""
        return self._held_keys is not None and not self._held_keys.empty()

    async def keys_handled(self) -> None:
        """Return when every key pressed so far has been handled (what a test waits for after pressing keys)."""
        if self._keys_idle is not None:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._keys_idle.wait(), timeout=30.0)

    async def _release_keys(self, held: asyncio.Queue[events.Key], idle: asyncio.Event) -> None:
        """Hand each held key to the app, then wait until it and all it caused are handled."""
        while True:
            if held.empty():
                idle.set()
                self.call_after_refresh(self._keys_drawn)
            key = await held.get()
            self._released_key = key
            self.post_message(key)
            try:
                await self._quiet()
            except Exception as error:  # noqa: BLE001 - the keys must go on whatever went wrong in one wait
                self.log.error("ordered keys:", error)

    async def _quiet(self) -> None:
        """Return when no running node of the app has a message waiting (the app's own queue first: the released key)."""
        await _after_waiting(self)
        for _ in range(MAX_WAITS_PER_KEY):
            busy = next((n for n in (self, *app_nodes(self)) if n.message_queue_size and n.is_running), None)
            if busy is None or not await _after_waiting(busy):
                return

    def _keys_drawn(self) -> None:
        """The screen is drawn after the last key: background work goes on, unless another key came meanwhile."""
        if self._keys_idle is not None and self._keys_idle.is_set():
            give_way.keys_done()

    def before_shutdown(self) -> None:
        if self._key_pump is not None:
            self._key_pump.cancel()
        if self._imports_give_way is not None:
            self._imports_give_way.close()  # and the way is open: no worker waits for keys that will never come
        super().before_shutdown()


async def _after_waiting(node: MessagePump) -> bool:
    """Return once the node has handled the messages it has now (and the one it is handling); False if it could not.

    There is no deadline but a stuck node's: on a loaded machine a key's handling can take seconds, and giving the
    next key out before it ends sends that key where the first one left focus (a closing dialog's field).
    """
    done = asyncio.Event()
    if not node.call_later(done.set):
        return False  # closing: what it holds will never be handled
    stuck_at = time.monotonic() + STUCK_NODE_S
    while not done.is_set():
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(done.wait(), timeout=CLOSING_CHECK_S)
        if done.is_set():
            break
        if not node.is_running:
            return False  # its task ended (cancelled, or closed at once) before it reached the callback
        if time.monotonic() > stuck_at:
            node.log.error(f"ordered keys: {node!r} handled nothing in {STUCK_NODE_S:.0f} s; the keys go on")
            return False
    return True


class Dialog(ModalScreenSteps[ScreenResultType]):
    """A modal dialog: it takes no key typed before it was drawn, and each of its buttons has a letter key,
    underlined in its label.

    A dialog can come late (a busy machine, an analysis before it): a key typed meanwhile was meant for what the
    user saw then, and must not answer a question they have not read (it replaced the export path). A key's time
    is when the terminal's input was read; a dialog takes keys from the end of its first paint.
    """

    _drawn_at = math.inf  # time of the first paint's end (Textual's clock, as a key's `time`)

    def on_mount(self) -> None:
        self.call_after_refresh(self._drawn)
        self._letters: dict[str, Button] = {}
        for button in self.query(Button):
            label = str(button.label)
            at = next((i for i, c in enumerate(label) if c.isalpha() and c.lower() not in self._letters), None)
            if at is not None:
                self._letters[label[at].lower()] = button
                # Content compares by its text alone: set, not assigned (an assignment of the same text is no change).
                button.set_reactive(Button.label, Content(label).stylize("underline", at, at + 1))
                button.refresh()

    def painted(self) -> None:
        """The dialog's paint is written to the terminal: from its first, the user sees it (and a key typed from then
        on is for it), however long the loop takes to come to the callbacks after the refresh."""
        if self.is_current:
            self._drawn()

    def _drawn(self) -> None:
        if self._drawn_at == math.inf:
            self._drawn_at = textual_time()

    @property
    def drawn(self) -> bool:
        """Whether the dialog has been drawn (it takes keys typed from now on)."""
        return self._drawn_at != math.inf

    def takes(self, key: events.Key) -> bool:
        """Whether the key was typed after the dialog was drawn."""
        return key.time >= self._drawn_at

    def on_key(self, event: events.Key) -> None:
        """A button's letter presses it (a field or text area that has the focus takes letters first)."""
        button = self._letters.get((event.character or "").lower())
        if button is not None and not button.disabled:
            event.stop()
            event.prevent_default()
            button.press()
