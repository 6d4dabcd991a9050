"""The real app in a real terminal (tmux): it starts, draws its first screen, and quits on Ctrl+Q."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

# Outside CI a machine without tmux skips these; CI installs tmux (scripts/test.sh) and never skips them.
pytestmark = pytest.mark.skipif(shutil.which("tmux") is None and os.environ.get("CI") != "true", reason="tmux is not installed")


SOCKET = f"cs-test-{uuid.uuid4().hex[:8]}"  # our own tmux server: never someone's, with its own window sizes


def tmux(*args: str, **kw: object) -> subprocess.CompletedProcess[str]:
    """tmux on this test's private server, with no user config."""
    return subprocess.run(["tmux", "-L", SOCKET, "-f", "/dev/null", *args], capture_output=True, text=True, **kw)  # type: ignore[call-overload]


def capture(session: str) -> str:
    return tmux("capture-pane", "-p", "-t", session).stdout


def wait_for(session: str, text: str, seconds: float = 20.0) -> str:
    deadline = time.monotonic() + seconds
    screen = ""
    while time.monotonic() < deadline:
        screen = capture(session)
        if text in screen:
            return screen
        time.sleep(0.1)
    raise AssertionError(f"{text!r} never appeared; the screen was:\n{screen}")


def test_the_real_app_starts_in_tmux_and_quits(workspace: Path, tmp_path: Path) -> None:
    session = f"cs-test-{uuid.uuid4().hex[:8]}"
    before = {p: p.read_bytes() for p in workspace.iterdir()}
    done = tmp_path / "exit-code"
    command = (f"XDG_CONFIG_HOME={tmp_path / 'config'} {sys.executable} -m contractstudio {workspace / 'maybe_unset.pipeline.yaml'} "
               f"{workspace}; echo $? > {done}")
    for _attempt in range(3):  # a fresh tmux server can exit while it starts ("server exited unexpectedly")
        started = tmux("new-session", "-d", "-s", session, "-x", "120", "-y", "40", command)
        if started.returncode == 0:
            break
        time.sleep(0.5)
    assert started.returncode == 0, started.stderr
    try:
        wait_for(session, "PIP201")  # the broken pipeline's finding, live
        screen = wait_for(session, "1 error ·")  # and the status line that counts it (drawn a moment later under load)
        assert "maybe_unset.pipeline.yaml" in screen
        tmux("send-keys", "-t", session, "F3", check=True)
        wait_for(session, "▶ entry")
        tmux("send-keys", "-t", session, "C-q", check=True)
        deadline = time.monotonic() + 15
        while not done.exists() and time.monotonic() < deadline:
            time.sleep(0.1)
        assert done.exists(), capture(session)
        assert done.read_text().strip() == "0"
    finally:
        tmux("kill-server")
    assert {p: p.read_bytes() for p in workspace.iterdir()} == before  # quitting changed no file
