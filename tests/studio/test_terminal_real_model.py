"""The studio's Debug stepping a live call to a real model, in a real terminal (tmux), as a user does it (issue 33.5).

The contract is samples/local/sentiment.contract.yaml pointed at llama-cpp-python's server with SmolLM2-135M
(tests/real_model.py) through a loopback forwarder: pick the contract and its example, the live model, step through
generate, see the real reply and its token counts, save the trace; then the forwarder is closed (no server any more)
and the saved trace is opened and replayed offline to the same result.
"""

from __future__ import annotations

import re
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest
from real_model import LoopbackProxy, RealServer

from .test_terminal import pytestmark as needs_tmux

pytestmark = [needs_tmux, pytest.mark.real_model, pytest.mark.slow, pytest.mark.timeout(600),
              pytest.mark.xdist_group("real_model")]

SENTIMENT = Path(__file__).parent.parent.parent / "samples" / "local" / "sentiment.contract.yaml"
SOCKET = f"cs-real-{uuid.uuid4().hex[:8]}"  # a tmux server of this module's own


def tmux(*args: str, check: bool = False) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["tmux", "-L", SOCKET, "-f", "/dev/null", *args], capture_output=True, text=True, check=check)


def screen(session: str) -> str:
    return tmux("capture-pane", "-p", "-t", session).stdout


def wait_for(session: str, pattern: str, seconds: float = 60.0) -> str:
    """The screen once `pattern` (a regular expression) is on it."""
    deadline = time.monotonic() + seconds
    shown = ""
    while time.monotonic() < deadline:
        shown = screen(session)
        if re.search(pattern, shown):
            return shown
        time.sleep(0.2)
    raise AssertionError(f"{pattern!r} never appeared; the screen was:\n{shown}")


def keys(session: str, *names: str) -> None:
    tmux("send-keys", "-t", session, *names, check=True)


def test_real_debug_steps_a_live_call_saves_its_trace_and_replays_it_offline(real_server: RealServer,
                                                                              tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    proxy = LoopbackProxy(real_server.api_base)
    contract = workspace / SENTIMENT.name
    contract.write_text(SENTIMENT.read_text().replace("http://127.0.0.1:8080/v1", proxy.api_base))
    session = f"cs-real-{uuid.uuid4().hex[:8]}"
    command = f"XDG_CONFIG_HOME={tmp_path / 'config'} {sys.executable} -I -m contractstudio {contract} {workspace}"
    for _attempt in range(3):  # a fresh tmux server can exit while it starts ("server exited unexpectedly")
        started = tmux("new-session", "-d", "-s", session, "-x", "140", "-y", "45", command)
        if started.returncode == 0:
            break
        time.sleep(0.5)
    assert started.returncode == 0, started.stderr
    try:
        wait_for(session, "0 errors")
        keys(session, "F4")  # Debug: the contract, its first example, and the live model are chosen
        shown = wait_for(session, r"ready · breakpoints")
        assert "review_sentiment" in shown and "example: loved" in shown and "live: openai/smollm2" in shown
        for _step in range(30):  # step by step through generate until the real reply is in
            keys(session, "s")
            shown = wait_for(session, r"paused at #\d+|success|failed")
            if "reply #0" in shown:
                break
        reply = wait_for(session, r"tokens [1-9]\d* \+ [1-9]\d*")  # the server's own usage, on the reply's view
        assert re.search(r'"label": ?"(pos|neg)"', reply), reply  # the model's raw reply, as it came
        assert proxy.seconds  # it went to the server
        keys(session, "g")
        shown = wait_for(session, r"success · 1 LLM call\(s\)")
        assert re.search(r"LLM calls 1 · tokens [1-9]\d*\+[1-9]\d*", shown), shown  # perf counts the same tokens
        keys(session, "w")  # save the trace: the dialog offers the contract's folder
        wait_for(session, "Save the trace")
        time.sleep(1)  # a dialog takes no key typed before it was drawn (studio/keys.py): a user reads it first
        keys(session, "Enter")
        trace = workspace / "review_sentiment.trace.jsonl"
        wait_for(session, "Saved the trace")
        assert trace.is_file()
        proxy.close()  # no model server from here on: the replay is offline
        asked = len(proxy.seconds)
        keys(session, "o")
        wait_for(session, "Open a trace")
        time.sleep(1)
        keys(session, "Enter")
        wait_for(session, r"trace review_sentiment\.trace\.jsonl: \d+ events")
        keys(session, "R")  # run the recorded call again: its input and its replies
        shown = wait_for(session, r"ready · replies: the input's own")  # the trace's input with its own replay
        assert "replay: review_senti" in shown
        keys(session, "g")
        shown = wait_for(session, r"success · 1 LLM call\(s\)")
        assert re.search(r"LLM calls 1 · tokens [1-9]\d*\+[1-9]\d*", shown), shown  # the recorded usage, replayed
        assert len(proxy.seconds) == asked
        keys(session, "C-q")
    finally:
        tmux("kill-server")
        proxy.close()
