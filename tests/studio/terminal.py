"""The real studio in a real terminal (a private tmux server): start it, send keys as a terminal sends them, read the
screen. The keys are the bindings' own (named for tmux by keymap.tmux_name), so a test checks the key a user is told."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import time
import uuid
from collections.abc import Callable
from pathlib import Path

import pytest

from contractstudio.studio.keymap import normalize, tmux_name

# Outside CI a machine without tmux skips these; CI installs tmux (scripts/test.sh) and never skips them.
needs_tmux = pytest.mark.skipif(shutil.which("tmux") is None and os.environ.get("CI") != "true", reason="tmux is not installed")


def binding_keys(binding_id: str) -> list[str]:
    """The keys of a binding of the studio, as Textual names them (`ctrl+s`, `f7`)."""
    from contractstudio.studio.app import StudioApp, studio_scopes

    for bindings in studio_scopes(StudioApp._merged_bindings).values():
        for b in bindings:
            if b.id == binding_id:
                return [normalize(k) for k in b.key.split(",")]
    raise KeyError(binding_id)


def sendable(binding_id: str) -> list[str]:
    """The binding's keys as tmux's send-keys names them; a key no terminal sends as such (ctrl+.) is left out."""
    return [name for name in (tmux_name(k) for k in binding_keys(binding_id)) if name]


class Terminal:
    """One studio in a tmux session of its own server (no user config), W columns by H rows."""

    def __init__(self, command: str, size: tuple[int, int]) -> None:
        self.socket = f"cs-keys-{uuid.uuid4().hex[:8]}"
        self.session = "studio"
        for _attempt in range(3):  # a fresh tmux server can exit while it starts ("server exited unexpectedly")
            # COLUMNS and LINES, when the test's environment has them, would be the app's size, not the window's
            started = self.tmux("new-session", "-d", "-s", self.session, "-x", str(size[0]), "-y", str(size[1]),
                                f"env -u COLUMNS -u LINES {command}")
            if started.returncode == 0:
                break
            time.sleep(0.5)
        assert started.returncode == 0, started.stderr

    @classmethod
    def studio(cls, args: list[Path | str], config: Path, size: tuple[int, int], *, env: str = "", isolated: bool = False,
               then: str = "") -> Terminal:
        """`python -m contractstudio ARGS` with its own config folder; `env`: a prefix (`env A= B=1`), `isolated`:
        python's -I, `then`: a shell command after the studio ends (`; echo $? > FILE`)."""
        paths = " ".join(str(a) for a in args)
        flags = "-I " if isolated else ""
        return cls(f"{env} XDG_CONFIG_HOME={config} {sys.executable} {flags}-m contractstudio {paths}{then}", size)

    def tmux(self, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(["tmux", "-L", self.socket, "-f", "/dev/null", *args], capture_output=True, text=True)

    def screen(self) -> str:
        return self.tmux("capture-pane", "-p", "-t", self.session).stdout

    def rows(self) -> list[str]:
        return self.screen().splitlines()

    def press(self, *keys: str) -> None:
        """Send keys one at a time, as a user types them (tmux names: C-s, F7, M-Left, Escape, or a character)."""
        for key in keys:
            self.tmux("send-keys", "-t", self.session, *(["-l", key] if len(key) == 1 else [key]))

    def wait(self, test: str | Callable[[str], bool], seconds: float = 45.0, what: str = "") -> str:
        """The screen once `test` (a text on it, or a predicate of it) holds; an error naming what never came."""
        check = (lambda s: test in s) if isinstance(test, str) else test
        deadline = time.monotonic() + seconds
        screen = ""
        while time.monotonic() < deadline:
            screen = self.screen()
            if check(screen):
                return screen
            time.sleep(0.05)
        raise AssertionError(f"{what or repr(test)} never showed; the screen was:\n{screen}")

    def wait_for(self, pattern: str, seconds: float = 60.0) -> str:
        """The screen once the regular expression `pattern` matches on it."""
        found = re.compile(pattern)
        return self.wait(lambda s: found.search(s) is not None, seconds, what=repr(pattern))

    def wait_dialog(self, text: str, seconds: float = 45.0) -> str:
        """A dialog once it is shown, and a moment more: a dialog takes no key read before the end of its first paint
        (studio/keys.py's Dialog), which comes a little after tmux shows it; a person never types within that moment."""
        screen = self.wait(text, seconds)
        time.sleep(0.3)
        return screen

    def close(self) -> None:
        self.tmux("kill-server")
