"""Setting up a call in the debugger: what the pickers offer, traces opened from the file list, typed input,
the live model's client loading in the background, and perf that adds up (issue 9.16, 9.17)."""

from __future__ import annotations

import shutil
import threading
from pathlib import Path

import pytest
from openai_server import OpenAIServer
from textual.widgets import Select

from contractstudio.studio.screens.dialogs import TextPrompt

from .conftest import settle
from .test_debug import open_debugger, press_and_wait, status
from .test_debug_faults import CONTRACT, GOOD, KEY, point_at
from .test_graph import plain

SAMPLES = Path(__file__).resolve().parents[2] / "samples"
B2_REPLY = '{"answer": "They store embeddings.", "evidence": [{"doc_id": "B2", "snippet": "store embeddings"}], "coverage_score": 0.9}'


def options(app, select: str) -> list[str]:
    return [str(value) for _, value in app.screen.query_one(select, Select)._options]


async def test_a_trace_opened_from_the_file_list_selects_its_input_and_its_replay(make_app, workspace: Path) -> None:
    from contractstudio.runtime.api import load

    contract = load(workspace / CONTRACT)
    example = contract.doc.examples[0].input  # not the first scenario's input
    target = workspace / "vector.trace.jsonl"
    contract.call(example, [B2_REPLY], wait=False, trace=target)
    app = make_app(CONTRACT)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        app.open_file(target)
        await pilot.pause()
        await pilot.pause()
        assert app.screen.query_one("#input-select", Select).value == f"trace:{target}"
        assert app.screen.query_one("#model-select", Select).value == f"replay:{target}"
        app.screen.query_one("#timeline").focus()
        await press_and_wait(pilot, "R", "g")  # the recorded call again: same input, same replies
        assert "success · 1 LLM call(s), 0 remedy attempt(s)" in status(app)
        assert not [e for e in app.screen.events if e.type == "replay_divergence"]


async def test_the_pickers_offer_only_what_belongs_to_the_chosen_contract(make_app, workspace: Path) -> None:
    for trace in ("grant_agent_turn.json-shape-repaired.jsonl", "multidoc_qa.answered-first-time.jsonl"):
        shutil.copy(SAMPLES / "traces" / trace, workspace / trace)
    app = make_app(CONTRACT)
    async with app.run_test(size=(120, 40)) as pilot:
        await open_debugger(app, pilot)
        models = options(app, "#model-select")
        inputs = options(app, "#input-select")
        assert [m for m in models if m.startswith("replay:")] == [f"replay:{workspace / 'multidoc_qa.answered-first-time.jsonl'}"]
        assert [i for i in inputs if i.startswith("trace:")] == [f"trace:{workspace / 'multidoc_qa.answered-first-time.jsonl'}"]


async def test_typed_input_starts_from_the_input_type_and_keeps_the_text_on_a_parse_error(make_app) -> None:
    app = make_app(CONTRACT)
    async with app.run_test(size=(120, 40)) as pilot:
        await open_debugger(app, pilot)
        app.screen.query_one("#input-select", Select).value = "typed"
        await pilot.pause()
        await pilot.pause()
        assert isinstance(app.screen, TextPrompt)
        editor = app.screen.query_one("#prompt-text")
        skeleton = editor.text
        assert "query: ''" in skeleton and "documents:" in skeleton and "content: ''" in skeleton and "max_snippets: 3" in skeleton
        editor.load_text("query: [unclosed\n")
        await pilot.press("ctrl+s")
        await pilot.pause()
        assert isinstance(app.screen, TextPrompt)  # still open, with the text
        assert app.screen.query_one("#prompt-text").text == "query: [unclosed\n"
        assert "Not valid input: input:2:1: the input is not valid YAML or JSON" in str(app.screen.query_one("#dialog-body").render())
        typed = "# mine\nquery: Why?\ndocuments: [{id: A1, content: text}]\n"
        app.screen.query_one("#prompt-text").load_text(typed)
        await pilot.press("ctrl+s")
        await pilot.pause()
        debug = app.screen
        assert debug.typed_input == {"query": "Why?", "documents": [{"id": "A1", "content": "text"}]}
        app.screen.query_one("#input-select", Select).value = "scenario:0"
        await pilot.pause()
        app.screen.query_one("#input-select", Select).value = "typed"
        await pilot.pause()
        await pilot.pause()
        assert app.screen.query_one("#prompt-text").text == typed  # reopening shows what was typed


async def test_the_llm_call_count_agrees_between_perf_and_status_after_an_edited_reply(make_app) -> None:
    app = make_app(CONTRACT)
    async with app.run_test(size=(120, 40)) as pilot:
        await open_debugger(app, pilot)
        while app.screen.session is None or app.screen.session.last.type != "llm_request":
            await press_and_wait(pilot, "s")
        await pilot.press("e")
        await pilot.pause()
        assert isinstance(app.screen, TextPrompt)
        app.screen.query_one("#prompt-text").load_text(GOOD)
        await pilot.press("ctrl+s")
        await pilot.pause()
        await press_and_wait(pilot, "g")
        assert "success · 1 LLM call(s)" in status(app)
        assert "LLM calls 1 " in plain(app.screen.query_one("#perf").content)


async def test_the_perf_table_fits_at_80x24(make_app) -> None:
    app = make_app(CONTRACT)
    async with app.run_test(size=(80, 24)) as pilot:
        await open_debugger(app, pilot)
        await press_and_wait(pilot, "g")
        perf = app.screen.query_one("#perf")
        lines = plain(perf.content).splitlines()
        assert len(lines) <= perf.content_region.height  # nothing scrolled away
        assert max(len(line) for line in lines) <= perf.content_region.width  # nothing cut off
        shown = " ".join(lines)
        for stage in ("input", "pre", "act", "generate", "post", "overhead", "total"):
            assert stage in shown
        assert shown.count("%") >= 7


@pytest.fixture
def server():
    with OpenAIServer() as srv:
        yield srv


@pytest.mark.timeout(60)
async def test_the_model_client_loads_in_the_background_and_a_live_call_waits_for_it(make_app, workspace: Path, server,
                                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    from contractstudio.runtime import live as models

    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    point_at(workspace, server)
    server.script(GOOD)
    gate = threading.Event()
    real = models._litellm

    def slow_import():
        gate.wait(20)
        return real()

    monkeypatch.setattr(models, "_litellm", slow_import)
    monkeypatch.setattr(models, "_LOGS_FILTERED", False)  # as in a fresh process
    app = make_app(CONTRACT)
    async with app.run_test(size=(120, 40)) as pilot:
        for _ in range(100):  # the first analysis, after which the studio starts loading the client by itself
            await pilot.pause(0.1)
            if any(w.group == "model-client" for w in app.workers):
                break
        await pilot.press("f4")
        for _ in range(100):  # the contracts' analysis (settle would wait for the held import too)
            await pilot.pause(0.1)
            if app.screen._contracts_ready:
                break
        app.screen.query_one("#model-select", Select).value = "live"
        await pilot.pause()
        assert "loading model client" in status(app)  # the screen stays usable meanwhile
        app.screen.query_one("#timeline").focus()
        await pilot.press("g")
        await pilot.pause()
        assert app.screen.session is None and server.requests == []  # the call waits: the import is no part of it
        assert "the call starts when it is ready" in status(app)
        gate.set()
        for _ in range(100):
            await app.workers.wait_for_complete()
            await pilot.pause(0.1)
            if app.screen.session is not None and app.screen.session.done:
                break
        assert "success · 1 LLM call(s)" in status(app) and server.requests  # (a slow machine may retry once)


SECOND_SCENARIO = """  - name: answered-first-time
    input: {query: q2, documents: [{id: A1, content: text}]}
    responses:
      - '{"answer": "y", "evidence": [{"doc_id": "A1", "snippet": "text"}], "coverage_score": 0.9}'
    expect: {successful: true, llm_calls: 1}
"""


async def test_an_input_brings_its_own_replies_and_a_model_picked_by_hand_afterwards_stays(make_app, workspace: Path) -> None:
    """Issue 19.9: choosing a scenario's (or a trace's) input chooses its scripted (replay) model with it."""
    with (workspace / CONTRACT).open("a") as f:
        f.write(SECOND_SCENARIO)
    app = make_app(CONTRACT)
    async with app.run_test(size=(160, 40)) as pilot:
        await open_debugger(app, pilot)
        inputs, models = app.screen.query_one("#input-select", Select), app.screen.query_one("#model-select", Select)
        assert (inputs.value, models.value) == ("scenario:0", "scripted:remedied-after-low-coverage")
        inputs.value = "scenario:1"  # the user picks the other scenario's input
        await pilot.pause()
        assert models.value == "scripted:answered-first-time"
        assert "replies: the input's own" in status(app)
        app.screen.query_one("#timeline").focus()
        await press_and_wait(pilot, "g")
        assert "success · 1 LLM call(s), 0 remedy attempt(s)" in status(app)  # its own one reply, not the other's two
        models.value = "scripted:remedied-after-low-coverage"  # then picks a model by hand
        await pilot.pause()
        assert "replies: the input's own" not in status(app)
        app.screen.query_one("#timeline").focus()
        await press_and_wait(pilot, "R", "g")
        assert models.value == "scripted:remedied-after-low-coverage"  # the hand pick stays for the run
        assert "2 LLM call(s), 1 remedy attempt(s)" in status(app)
        await pilot.press("f3")
        await pilot.press("f4")
        await settle(pilot)
        assert (inputs.value, models.value) == ("scenario:1", "scripted:remedied-after-low-coverage")
