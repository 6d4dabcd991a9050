"""Debug mode on a contracted Python class (issue 20.4): listed from a trusted folder's .py files, stepped like YAML."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

from textual.widgets import OptionList, Select

import contractstudio as cs
from contractstudio.runtime.python_classes import load_class
from contractstudio.studio.screens.dialogs import Choice
from contractstudio.symbolic import use_model

from .test_debug import body, open_debugger, press_and_wait, status

SAMPLE = Path(__file__).parents[2] / "samples" / "python" / "multidoc_qa_agent.py"
CLASS = "MultiDocQAgent"


def recorded_call(workspace: Path) -> Path:
    """The sample class copied into the workspace and one call of it recorded by `use_model(trace=...)`."""
    module_path = workspace / SAMPLE.name
    shutil.copy(SAMPLE, module_path)
    agent = load_class(module_path, CLASS, True)
    sample = sys.modules[agent.cls.__module__]
    target = workspace / "agent_calls.jsonl"
    with use_model(cs.ScriptedModel(list(sample.SCRIPTED_REPLIES)), wait=False, trace=target):
        agent.instance(input=sample.QUESTION)
    return target


async def choose_class(app, pilot, recorded: Path) -> None:
    """Debug's pickers: the class, its recorded input (which pairs the trace's replay)."""
    await open_debugger(app, pilot)
    names = [doc.name for _, doc in app.screen.contracts]
    assert CLASS in names
    app.screen.query_one("#contract-select", Select).value = names.index(CLASS)
    await pilot.pause()
    app.screen.query_one("#input-select", Select).value = f"trace:{recorded}"
    await pilot.pause()
    assert app.screen.query_one("#model-select", Select).value == f"replay:{recorded}"
    app.screen.query_one("#timeline").focus()


async def test_a_trusted_folder_s_python_class_steps_through_the_same_stages_as_a_yaml_call(make_app, workspace: Path) -> None:
    recorded = recorded_call(workspace)
    doc = cs.load(workspace / "multidoc_qa.contract.yaml")
    scenario = doc.scenario("remedied-after-low-coverage")
    yaml_stages = [e.stage for e in doc.call(scenario.input, list(scenario.responses), wait=False).trace
                   if e.type == "stage_start"]
    app = make_app(trusted=True)
    async with app.run_test(size=(120, 40)) as pilot:
        await choose_class(app, pilot, recorded)
        await press_and_wait(pilot, "c")  # on to the breakpoint on `post`, as for YAML
        assert "post/stage_start" in status(app)
        await press_and_wait(pilot, "g")
        assert "success" in status(app)
        events = app.screen.events
        assert [e.stage for e in events if e.type == "stage_start"] == yaml_stages
        remedy = next(e for e in events if e.type == "llm_request" and e["purpose"] == "remedy_post")
        app.screen.query_one("#timeline", OptionList).highlighted = events.index(remedy)
        await pilot.pause()
        assert "diff of the messages vs request #0" in body(app)
        assert "LLM calls 2" in str(app.screen.query_one("#perf").render())


async def test_a_failing_python_post_shows_its_message_and_the_file_and_line_that_raised(make_app, workspace: Path) -> None:
    recorded = recorded_call(workspace)
    module_path = workspace / SAMPLE.name
    line = next(i for i, text in enumerate(module_path.read_text().splitlines(), 1) if "Coverage score {output" in text)
    app = make_app(trusted=True)
    async with app.run_test(size=(120, 40)) as pilot:
        await choose_class(app, pilot, recorded)
        await press_and_wait(pilot, "g")
        events = app.screen.events
        failed = next(e for e in events if e.type == "condition" and not e["passed"])
        app.screen.query_one("#timeline", OptionList).highlighted = events.index(failed)
        await pilot.pause()
        shown = " ".join(body(app).split())
        assert "Coverage score 0.30 is below the minimum 0.55." in shown
        assert f"{module_path.name}:{line}" in shown


async def test_an_untrusted_folder_lists_its_class_with_a_note_and_never_imports_it(make_app, workspace: Path) -> None:
    marker = workspace / "imported.marker"
    text = SAMPLE.read_text().replace("import sys\n", f"import sys\nopen({str(marker)!r}, 'w').close()\n", 1)
    (workspace / SAMPLE.name).write_text(text)
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await open_debugger(app, pilot)
        assert CLASS in [doc.name for _, doc in app.screen.contracts]
        assert f"Python class {CLASS}: its folder is not trusted" in " ".join(status(app).split())
        names = [doc.name for _, doc in app.screen.contracts]
        app.screen.query_one("#contract-select", Select).value = names.index(CLASS)
        await pilot.pause()
        app.screen.query_one("#timeline").focus()
        await press_and_wait(pilot, "g")
        assert isinstance(app.screen, Choice)  # asked to trust the folder, as for hooks
        await pilot.click("#choice-cancel")
        await pilot.pause()
    assert not marker.exists()


async def test_a_class_opened_alone_lists_the_calls_recorded_beside_it_as_inputs_and_replays(tmp_path: Path) -> None:
    # Issue 35.8: the studio opened on the .py file alone offered only typed YAML; `python agent.py calls.jsonl`
    # had written the class's calls beside it.
    from contractstudio.studio.app import StudioApp
    from contractstudio.studio.config import load_config

    folder = tmp_path / "agent"
    folder.mkdir()
    recorded = recorded_call(folder).rename(folder / "calls.jsonl")
    app = StudioApp([folder / SAMPLE.name], trusted=True, config=load_config())
    async with app.run_test(size=(120, 40)) as pilot:
        await open_debugger(app, pilot)
        inputs = [label for label, _ in app.screen.query_one("#input-select", Select)._options]
        assert "recorded: calls.jsonl" in [str(label) for label in inputs]
        app.screen.query_one("#input-select", Select).value = f"trace:{recorded}"
        await pilot.pause()
        assert app.screen.query_one("#model-select", Select).value == f"replay:{recorded}"


async def test_trust_now_goes_on_with_the_run_that_asked_for_it(make_app, workspace: Path) -> None:
    # Issue 35.8: after "Trust now" the user had to press G again.
    recorded_call(workspace)
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await open_debugger(app, pilot)
        names = [doc.name for _, doc in app.screen.contracts]
        app.screen.query_one("#contract-select", Select).value = names.index(CLASS)
        await pilot.pause()
        app.screen.query_one("#timeline").focus()
        await press_and_wait(pilot, "g")
        assert isinstance(app.screen, Choice)
        await pilot.click("#choice-once")
        for _ in range(100):
            await pilot.app.workers.wait_for_complete()
            await pilot.pause(0.05)
            if "success" in status(app) or "failed" in status(app):
                break
        assert "success" in status(app) or "failed" in status(app), status(app)  # the call ran to its end
