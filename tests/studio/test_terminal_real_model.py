"""The studio's Debug stepping a live call to a real model, in a real terminal (tmux), as a user does it (issue 33.5).

The contract is samples/local/sentiment.contract.yaml pointed at llama-cpp-python's server with SmolLM2-135M
(tests/real_model.py) through a loopback forwarder: pick the contract and its example, the live model, step through
generate, see the real reply and its token counts, save the trace; then the forwarder is closed (no server any more)
and the saved trace is opened and replayed offline to the same result.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from real_model import LoopbackProxy, RealServer

from .terminal import Terminal, needs_tmux

pytestmark = [needs_tmux, pytest.mark.real_model, pytest.mark.slow, pytest.mark.timeout(600),
              pytest.mark.xdist_group("real_model")]

SENTIMENT = Path(__file__).parent.parent.parent / "samples" / "local" / "sentiment.contract.yaml"


def test_real_debug_steps_a_live_call_saves_its_trace_and_replays_it_offline(real_server: RealServer,
                                                                              tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    proxy = LoopbackProxy(real_server.api_base)
    contract = workspace / SENTIMENT.name
    contract.write_text(SENTIMENT.read_text().replace("http://127.0.0.1:8080/v1", proxy.api_base))
    term = Terminal.studio([contract, workspace], tmp_path / "config", (140, 45), isolated=True)
    try:
        term.wait_for("0 errors")
        term.press("F4")  # Debug: the contract, its first example, and the live model are chosen
        shown = term.wait_for(r"ready · breakpoints")
        assert "review_sentiment" in shown and "example: loved" in shown and "live: openai/smollm2" in shown
        for _step in range(30):  # step by step through generate until the real reply is in
            term.press("s")
            shown = term.wait_for(r"paused at #\d+|success|failed")
            if "reply #0" in shown:
                break
        reply = term.wait_for(r"tokens [1-9]\d* \+ [1-9]\d*")  # the server's own usage, on the reply's view
        assert re.search(r'"label": ?"(pos|neg)"', reply), reply  # the model's raw reply, as it came
        assert proxy.seconds  # it went to the server
        term.press("g")
        shown = term.wait_for(r"success · 1 LLM call\(s\)")
        assert re.search(r"LLM calls 1 · tokens [1-9]\d*\+[1-9]\d*", shown), shown  # perf counts the same tokens
        term.press("w")  # save the trace: the dialog offers the contract's folder
        term.wait_dialog("Save the trace")  # a dialog takes no key typed before it was drawn (studio/keys.py)
        term.press("Enter")
        trace = workspace / "review_sentiment.trace.jsonl"
        term.wait_for("Saved the trace")
        assert trace.is_file()
        proxy.close()  # no model server from here on: the replay is offline
        asked = len(proxy.seconds)
        term.press("o")
        term.wait_dialog("Open a trace")
        term.press("Enter")
        term.wait_for(r"trace review_sentiment\.trace\.jsonl: \d+ events")
        term.press("R")  # run the recorded call again: its input and its replies
        shown = term.wait_for(r"ready · replies: the input's own")  # the trace's input with its own replay
        assert "replay: review_senti" in shown
        term.press("g")
        shown = term.wait_for(r"success · 1 LLM call\(s\)")
        assert re.search(r"LLM calls 1 · tokens [1-9]\d*\+[1-9]\d*", shown), shown  # the recorded usage, replayed
        assert len(proxy.seconds) == asked
        term.press("C-q")
    finally:
        term.close()
        proxy.close()
