"""Debug mode fed by a scenario's scripted replies (the Memray pattern: recorded input, no live model)."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import OptionList

import contractstudio as cs
from contractstudio.studio.screens.dialogs import TextPrompt
from contractstudio.symbolic import Expression, LLMDataModel, contract, use_model

from .conftest import settle
from .test_graph import plain

COVERAGE_ERROR = "Coverage score 0.20 is below the minimum 0.55."


async def open_debugger(app, pilot) -> None:
    await settle(pilot)
    await pilot.press("f4")
    await settle(pilot)  # the workspace's contracts are analyzed in a worker
    app.screen.query_one("#timeline").focus()


async def press_and_wait(pilot, *keys: str) -> None:
    for key in keys:
        await pilot.press(key)
        await pilot.app.workers.wait_for_complete()
        await pilot.pause()


def status(app) -> str:
    return str(app.screen.query_one("#debug-status").render())


def body(app) -> str:
    return plain(app.screen.query_one("#event-body").content)


async def test_stepping_through_a_scripted_remedy_loop_shows_the_error_sent_to_the_model(make_app) -> None:
    app = make_app("multidoc_qa.contract.yaml")
    async with app.run_test(size=(120, 40)) as pilot:
        await open_debugger(app, pilot)
        assert "remedied-after-low-coverage" in str(app.screen.query_one("#model-select").value) or \
            app.screen.query_one("#model-select").value == "scripted:0"
        await press_and_wait(pilot, "c")  # runs to the breakpoint on `post`
        assert "paused at" in status(app) and "post/stage_start" in status(app)
        await press_and_wait(pilot, "c")  # the first post fails; the remedy asks again; paused at post #1
        events = app.screen.events
        failed = [e for e in events if e.type == "validation_error"]
        assert failed and COVERAGE_ERROR in failed[0]["errors"][0]
        remedy = next(e for e in events if e.type == "llm_request" and e["purpose"] == "remedy_post")
        timeline = app.screen.query_one("#timeline", OptionList)
        timeline.highlighted = events.index(remedy)
        await pilot.pause()
        shown = body(app)
        assert "remedy_post" in shown
        assert COVERAGE_ERROR in shown  # the exact error text that went to the model
        assert "diff of the messages vs request #0" in shown
        await press_and_wait(pilot, "g")
        assert "success" in status(app) and "2 LLM call(s), 1 remedy attempt(s)" in status(app)
        assert "LLM calls 2" in plain(app.screen.query_one("#perf").content)


async def test_single_steps_advance_one_event_at_a_time(make_app) -> None:
    app = make_app("multidoc_qa.contract.yaml")
    async with app.run_test(size=(80, 24)) as pilot:
        await open_debugger(app, pilot)
        await press_and_wait(pilot, "s")
        assert len(app.screen.events) == 1 and "#1 input/stage_start" in status(app)
        await press_and_wait(pilot, "s", "s")
        assert len(app.screen.events) == 3


async def test_editing_the_error_text_changes_what_the_remedy_sends(make_app) -> None:
    app = make_app("multidoc_qa.contract.yaml")
    async with app.run_test(size=(120, 40)) as pilot:
        await open_debugger(app, pilot)
        await press_and_wait(pilot, "c")
        while app.screen.session.last.type != "validation_error":
            await press_and_wait(pilot, "s")
        await pilot.press("e")
        await pilot.pause()
        assert isinstance(app.screen, TextPrompt)
        area = app.screen.query_one("#prompt-text")
        area.text = "Please cite at least one snippet."
        await pilot.press("ctrl+s")
        await pilot.pause()
        await press_and_wait(pilot, "g")
        remedy = next(e for e in app.screen.events if e.type == "llm_request" and e["purpose"] == "remedy_post")
        sent = "\n".join(m["content"] for m in remedy["messages"])
        assert "Please cite at least one snippet." in sent
        assert COVERAGE_ERROR not in sent


async def test_breakpoints_toggle_per_stage(make_app) -> None:
    app = make_app("multidoc_qa.contract.yaml")
    async with app.run_test(size=(120, 40)) as pilot:
        await open_debugger(app, pilot)
        timeline = app.screen.query_one("#timeline", OptionList)
        timeline.highlighted = 4  # post
        await pilot.press("b")  # off
        timeline.highlighted = 3  # generate
        await pilot.press("b")  # on
        assert app.screen.breakpoints == {"generate"}
        assert "breakpoints: generate" in status(app)
        await press_and_wait(pilot, "c")
        assert "generate/stage_start" in status(app)


async def test_a_saved_trace_reopens_with_the_same_events(make_app, workspace: Path) -> None:
    app = make_app("multidoc_qa.contract.yaml")
    target = workspace / "call.trace.jsonl"
    async with app.run_test(size=(120, 40)) as pilot:
        await open_debugger(app, pilot)
        await press_and_wait(pilot, "g")
        count = len(app.screen.events)
        app.screen._save_trace(str(target))
        assert target.is_file()
        app.screen._reset()
        app.screen.open_trace(target)
        await pilot.pause()
        assert len(app.screen.events) == count
        assert "call.trace.jsonl" in status(app)
        assert app.screen.query_one("#timeline", OptionList).option_count == count


def test_litellm_is_imported_in_the_background_after_the_first_screen(tmp_path: Path) -> None:
    """Issue 15: the first screen never waits for litellm, and the first live call does not either (it is loaded by then)."""
    import subprocess
    import sys

    code = (
        "import asyncio, sys\n"
        "from contractstudio.studio.app import StudioApp\n"
        "from contractstudio.studio.screens.edit import EditScreen\n"
        "seen = {}\n"
        "mounted = EditScreen.on_mount\n"
        "def on_mount(self):\n"
        "    mounted(self)\n"
        "    seen['mount'] = 'litellm' in sys.modules\n"
        "    seen['models'] = sorted(m for m in ('pydantic', 'contractstudio.analysis.check') if m in sys.modules)\n"
        "    self.call_after_refresh(lambda: seen.setdefault('painted', 'litellm' in sys.modules))\n"
        "EditScreen.on_mount = on_mount\n"
        "async def main():\n"
        f"    app = StudioApp([{str(Path(__file__).parent / 'workspace' / 'multidoc_qa.contract.yaml')!r}])\n"
        "    async with app.run_test(size=(80, 24)) as pilot:\n"
        "        for _ in range(600):\n"
        "            await pilot.pause(0.1)\n"
        "            if ('painted' in seen and app.analysis is not None and 'litellm' in sys.modules\n"
        "                    and not any(w.is_running for w in app.workers)):  # it waits for 2 s without a key\n"
        "                break\n"
        "        print('first screen', seen.get('mount'), seen.get('painted'), seen.get('models'))\n"
        "        print('analyzed', app.analysis is not None, 'then in the background', 'litellm' in sys.modules)\n"
        "        from contractstudio.studio import calls\n"
        "        print('client ready', calls.client_ready())\n"
        "        await pilot.press('f4')\n"
        "        for _ in range(100):\n"
        "            await pilot.pause(0.1)\n"
        "            if app.screen._contracts_ready: break\n"
        "        app.screen.query_one('#timeline').focus()\n"
        "        await pilot.press('g'); await app.workers.wait_for_complete(); await pilot.pause()\n"
        "        print('scripted call', app.screen.session is not None and app.screen.session.done)\n"
        "asyncio.run(main())\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert "first screen False False []" in out.stdout, out.stdout + out.stderr  # drawn before litellm, pydantic, the analyzer
    assert "analyzed True then in the background True" in out.stdout, out.stdout + out.stderr
    assert "client ready True" in out.stdout and "scripted call True" in out.stdout, out.stdout + out.stderr


async def test_choosing_a_trace_in_the_file_list_opens_it_in_the_debugger(make_app, workspace: Path) -> None:
    from contractstudio.runtime.api import load

    contract = load(workspace / "multidoc_qa.contract.yaml")
    scenario = contract.scenario("remedied-after-low-coverage")
    target = workspace / "recorded.trace.jsonl"
    contract.call(scenario.input, list(scenario.responses), wait=False, trace=target)
    app = make_app("multidoc_qa.contract.yaml")
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        app.open_file(target)
        await pilot.pause()
        await pilot.pause()
        assert app.current_mode == "debug"
        assert "recorded.trace.jsonl" in status(app)
        assert len(app.screen.events) == sum(1 for _ in target.open())
        assert app.screen.query_one("#model-select").value == f"replay:{target}"
        assert "LLM calls 2" in plain(app.screen.query_one("#perf").content)


async def test_python_hooks_ask_for_trust_and_always_is_remembered(make_app, workspace: Path) -> None:
    import re

    from contractstudio.studio.screens.dialogs import Choice
    from contractstudio.trust import Trust

    text = (workspace / "multidoc_qa.contract.yaml").read_text().replace("name: multidoc_qa\n", "name: hooked_qa\n")
    text = re.sub(r"act:.*?\n(post:)", 'act:\n  python: "qa_hooks:retrieve"\n\\1', text, flags=re.S)
    (workspace / "hooked.contract.yaml").write_text(text)
    (workspace / "qa_hooks.py").write_text(
        "def retrieve(input, **kw):\n"
        "    return {'query': input.query, 'selected_sentences': [d.content for d in input.documents], 'target_snippet_count': 3}\n")
    app = make_app("hooked.contract.yaml")
    assert not app.trust.allows(workspace)
    async with app.run_test(size=(120, 40)) as pilot:
        await open_debugger(app, pilot)
        await press_and_wait(pilot, "g")
        assert isinstance(app.screen, Choice)
        assert "qa_hooks:retrieve" in str(app.screen.query_one("#dialog-body").render())
        await pilot.click("#choice-always")
        await pilot.pause()
        assert app.trust.allows(workspace) and Trust().allows(workspace)  # remembered: every face trusts it now
        app.screen.query_one("#timeline").focus()
        await press_and_wait(pilot, "g")
        assert "success" in status(app)
        act = next(e for e in app.screen.events if e.type == "act_value")
        assert act["value"]["selected_sentences"] == ["text"]


async def test_typed_yaml_input_runs_the_call(make_app) -> None:
    from textual.widgets import Select

    app = make_app("multidoc_qa.contract.yaml")
    async with app.run_test(size=(120, 40)) as pilot:
        await open_debugger(app, pilot)
        app.screen.query_one("#input-select", Select).value = "typed"
        await pilot.pause()
        assert isinstance(app.screen, TextPrompt)
        app.screen.query_one("#prompt-text").text = "query: typed question\ndocuments: [{id: T1, content: typed text}]\n"
        await pilot.press("ctrl+s")
        await pilot.pause()
        app.screen.query_one("#timeline").focus()
        await press_and_wait(pilot, "g")
        act = next(e for e in app.screen.events if e.type == "act_value")
        assert act["value"]["query"] == "typed question"


async def test_at_200_columns_the_timeline_widens_and_names_each_condition(make_app, workspace: Path) -> None:
    """Issue 19.8: the condition's id (which the trace records) is on its row and in its view, and the row is not cut."""
    contract = workspace / "multidoc_qa.contract.yaml"
    text = contract.read_text()
    floor = "  - assert: output.coverage_score >= 0.55"
    contract.write_text(text.replace(floor, "  - id: coverage_floor\n" + floor.replace("-", " ", 1)))
    app = make_app("multidoc_qa.contract.yaml")
    async with app.run_test(size=(200, 60)) as pilot:
        await open_debugger(app, pilot)
        await press_and_wait(pilot, "g")
        timeline = app.screen.query_one("#timeline", OptionList)
        rows = [plain(timeline.get_option_at_index(i).prompt) for i in range(timeline.option_count)]
        failed = next(i for i, r in enumerate(rows) if "FAIL" in r)
        assert "FAIL coverage_floor output.coverage_score >= 0.55" in rows[failed]
        assert timeline.size.width > 36 and timeline.content_size.width >= len(rows[failed])  # the whole row shows
        timeline.highlighted = failed
        await pilot.pause()
        assert "condition coverage_floor" in body(app)


async def test_at_80x24_the_perf_lists_every_stage_and_the_footer_shows_only_whole_keys(make_app) -> None:
    """Issue 19.8: after the window shrinks the perf is redrawn for its width; no footer key runs under `^p palette`."""
    from textual.widgets._footer import FooterKey

    app = make_app("multidoc_qa.contract.yaml")
    async with app.run_test(size=(200, 60)) as pilot:
        await open_debugger(app, pilot)
        await press_and_wait(pilot, "g")
        await pilot.resize_terminal(80, 24)
        await pilot.pause(0.2)
        perf = app.screen.query_one("#perf")
        shown = plain(perf.content)
        for stage in ("input", "pre", "act", "generate", "post", "forward", "finalize"):
            assert f"\n{stage}" in shown or f"  {stage}" in shown
        assert perf.size.height >= len(shown.rstrip("\n").splitlines())  # every line of it is on screen
        keys = list(app.screen.query(FooterKey))
        palette = next(k for k in keys if k.has_class("-command-palette"))
        visible = [k for k in keys if k.display and k is not palette]
        assert visible and all(k.region.right <= palette.region.x for k in visible)
        assert palette.region.right == app.size.width  # nothing left of the key under it in the last column
        await pilot.resize_terminal(200, 60)
        await pilot.pause(0.2)
        # Room again: every key is back, but the current mode's own (F4 does nothing in Debug mode).
        assert all(k.display for k in app.screen.query(FooterKey) if k.action != "mode('debug')")



class Review(LLMDataModel):
    text: str


class Rating(LLMDataModel):
    score: float


@contract(remedy_retry_params={"tries": 1, "delay": 0})
class Rate(Expression):
    @property
    def prompt(self) -> str:
        return "Rate it."

    def post(self, output: Rating) -> bool:
        if output.score < 0.5:
            raise ValueError(f"Score {output.score} is below 0.5.")
        return True

    def forward(self, input: Review) -> Rating:
        return self.contract_result


async def test_a_python_contract_s_trace_opens_in_the_debugger(make_app, workspace: Path) -> None:
    target = workspace / "calls.jsonl"
    with use_model(cs.ScriptedModel(['{"score": 0.2}', '{"score": 0.8}']), wait=False, trace=target):
        Rate()(input=Review(text="fine"))
    app = make_app("multidoc_qa.contract.yaml")
    async with app.run_test(size=(120, 40)) as pilot:
        await open_debugger(app, pilot)
        app.screen.open_trace(target)
        await pilot.pause()
        assert len(app.screen.events) == len(cs.Trace.read(target)) and "calls.jsonl" in status(app)
        errors = [e for e in app.screen.events if e.type == "validation_error"]
        assert errors and errors[0]["errors"] == ["Score 0.2 is below 0.5."]


async def test_after_restart_the_stage_outline_is_shown_and_a_breakpoint_can_be_set_before_stepping(make_app) -> None:
    """Issue 35.11: R emptied the timeline, so no stage could be chosen for a breakpoint before the first step."""
    from contractstudio.runtime.events import STAGES

    app = make_app("multidoc_qa.contract.yaml")
    async with app.run_test(size=(120, 40)) as pilot:
        await open_debugger(app, pilot)
        timeline = app.screen.query_one("#timeline", OptionList)
        for keys in (("R",), ("s", "R")):  # before any step, and after one
            await press_and_wait(pilot, *keys)
            assert [plain(timeline.get_option_at_index(i).prompt).strip(" ●\n") for i in range(timeline.option_count)] == list(STAGES)
        timeline.highlighted = STAGES.index("act")
        await press_and_wait(pilot, "b")
        assert "breakpoints: act, post" in status(app)
        await press_and_wait(pilot, "c")
        assert "paused at" in status(app) and "act/stage_start" in status(app)


async def test_after_running_to_the_end_the_timeline_shows_the_last_event_the_panel_shows(make_app, workspace: Path) -> None:
    """Issue 35.11: after `g` the timeline stayed on its first rows while the event panel showed the last event."""
    sample = Path(__file__).resolve().parents[2] / "samples" / "multidoc_qa.contract.yaml"
    (workspace / "multidoc_qa.contract.yaml").write_text(sample.read_text())
    app = make_app("multidoc_qa.contract.yaml")
    async with app.run_test(size=(120, 40)) as pilot:
        await open_debugger(app, pilot)
        inputs = app.screen.query_one("#input-select")
        inputs.value = next(v for label, v in inputs._options if "falls-back" in str(label))  # 40 events and more
        await pilot.pause()
        app.screen.query_one("#timeline").focus()
        await press_and_wait(pilot, "g")
        await pilot.pause()
        timeline = app.screen.query_one("#timeline", OptionList)
        last = timeline.option_count - 1
        assert timeline.highlighted == last and timeline.option_count > timeline.scrollable_content_region.height
        assert timeline.scroll_offset.y <= last < timeline.scroll_offset.y + timeline.scrollable_content_region.height


async def test_a_scripted_request_shows_the_structure_a_live_call_to_the_contracts_model_would_send(make_app) -> None:
    """Issue 35.11: a scripted run sends no schema (its replies are fixed), but its request view shows the mode and the
    exact `response_format` a live call to the contract's own model (openai/gpt-4o-mini) would send."""
    app = make_app("multidoc_qa.contract.yaml")
    async with app.run_test(size=(120, 60)) as pilot:
        await open_debugger(app, pilot)
        assert str(app.screen.query_one("#model-select").value).startswith("scripted")
        for _ in range(30):
            await press_and_wait(pilot, "s")
            if any(e.type == "llm_request" for e in app.screen.events):
                break
        request = next(e for e in app.screen.events if e.type == "llm_request")
        assert request.get("structured_output") is None  # the scripted call itself asked for no structure
        app.screen.query_one("#timeline", OptionList).highlighted = app.screen.events.index(request)
        await pilot.pause()
        shown = body(app)
        assert "structured output a live call to openai/gpt-4o-mini would send: json_schema" in shown, shown
        assert '"name": "AnswerWithEvidence"' in shown and '"strict": true' in shown  # the response_format itself
        assert '"coverage_score"' in shown
