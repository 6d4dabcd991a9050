"""The debugger on a streamed reply: the reply shown as it grows, the time to its first token, where it was cut and why.

Offline: a scenario with `stream: true` streams its scripted replies in token-sized pieces, and the prefix watch is
the test's own (tests/test_early_stop.py's LabelWatch), as the studio's call options carry it.
"""

from __future__ import annotations

import threading
from dataclasses import replace
from pathlib import Path
from typing import Any

from test_early_stop import CONTRACT, DOOMED, GOOD, LABEL_ERROR, WATCHED

from contractstudio.runtime import models

from .test_debug import body, open_debugger, press_and_wait, status
from .test_graph import plain

SCENARIO = f"""\
scenarios:
  - name: doomed-then-good
    input: {{text: I love this phone}}
    stream: true
    responses:
      - '{DOOMED}'
      - '{GOOD}'
"""


def _workspace_contract(workspace: Path) -> None:
    (workspace / "verdict.contract.yaml").write_text(CONTRACT + SCENARIO)


async def test_the_debugger_shows_where_a_streamed_reply_was_cut_and_why(make_app, workspace: Path) -> None:
    _workspace_contract(workspace)
    app = make_app("verdict.contract.yaml", call_options=lambda: replace(WATCHED))
    async with app.run_test(size=(120, 40)) as pilot:
        await open_debugger(app, pilot)
        await press_and_wait(pilot, "g")
        assert "success" in status(app) and "2 LLM call(s), 1 remedy attempt(s)" in status(app)
        events = app.screen.events
        stop = next(e for e in events if e.type == "early_stop")
        timeline = app.screen.query_one("#timeline")
        row = plain(timeline.get_option_at_index(events.index(stop)).prompt)
        assert f"cut at character {DOOMED.index('maybe')}" in row and "output.label" in row
        timeline.highlighted = events.index(stop)
        await pilot.pause()
        shown = body(app)
        assert "cut while the model was still writing" in shown and LABEL_ERROR in shown
        assert "the rest of the reply, not waited for" in shown
        assert '{"label": "maybe ✂' in shown.replace("\n", "")  # the reply up to the cut, the cut marked
        perf = plain(app.screen.query_one("#perf").content)
        assert "first token" in perf and "early stops 1" in perf


async def test_the_debugger_shows_a_reply_growing_while_it_streams(make_app, workspace: Path, monkeypatch) -> None:
    _workspace_contract(workspace)
    halfway, go_on = threading.Event(), threading.Event()

    def held_pieces(pieces: list[str], sink: Any, times: Any = None) -> tuple[str, int]:
        for index, piece in enumerate(pieces):  # the model stops writing after 8 pieces until the test has looked
            if index == 8:
                halfway.set()
                go_on.wait(10)
            sink.take(piece)
        return sink.text, len(pieces)

    monkeypatch.setattr(models, "stream_pieces", held_pieces)
    app = make_app("verdict.contract.yaml", call_options=lambda: replace(WATCHED, watch_for=None))
    async with app.run_test(size=(120, 40)) as pilot:
        await open_debugger(app, pilot)
        screen = app.screen
        while not any(e.type == "llm_request" for e in screen.events):
            await press_and_wait(pilot, "s")
        await pilot.press("s")  # the reply starts streaming in the stepping worker
        halfway.wait(10)
        for _ in range(100):
            await pilot.pause(0.01)
            if "reply streaming in" in body(app):
                break
        shown = body(app)
        go_on.set()
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert "reply streaming in… 8 chunks" in shown and "first token after" in shown
        assert '{"label": "maybe' in shown and "it is hard" not in shown
        assert screen.events[-1].type == "llm_response" and screen.events[-1].text == DOOMED
        assert "streamed in" in body(app) and "the first after" in body(app)
