"""The editing help in the studio (contractstudio.editing): completion as you type, quick fixes, rename,
definition and back, find, go to line, auto-indent; and a contract written from an empty template to a
clean check with completion and quick fixes alone."""

from __future__ import annotations

from pathlib import Path

from contractstudio.analysis.check import check_text
from contractstudio.editing.templates import template

from .conftest import settle


def editor_of(app):
    return app.screen.editor


async def end_of_file(pilot) -> None:
    editor = editor_of(pilot.app)
    last = editor.document.line_count - 1
    editor.move_cursor((last, len(editor.document[last])))
    await pilot.pause()


async def fix_until_clean(pilot, screen, most: int) -> None:
    """Apply the first quick fix of the first finding, again and again, until the analysis finds nothing."""
    for _ in range(most):
        found = screen.analysis.diagnostics  # infos too: a clean check is one with nothing to say
        if not found:
            return
        screen.editor.move_cursor((found[0].line - 1, found[0].column - 1))
        await pilot.press("f9")
        await pilot.pause()
        await pilot.press("enter")
        await settle(pilot)


async def test_completion_opens_as_you_type_and_tab_or_enter_accepts(make_app) -> None:
    app = make_app("multidoc_qa.contract.yaml")
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        editor = editor_of(app)
        editor.text = "".join(ln for ln in editor.text.splitlines(True) if not ln.startswith("on_failure:"))
        await settle(pilot)
        await end_of_file(pilot)
        await pilot.press("o", "n", "_", "f")
        menu = app.screen.menu
        assert menu.display and [i.label for i in menu.items] == ["on_failure"]
        await pilot.press("tab")
        assert editor.document[editor.cursor_location[0]] == "on_failure: "
        await pilot.press("r")
        assert [i.label for i in menu.items] == ["raise"]
        await pilot.press("down", "enter")  # moved into the list: Enter accepts
        assert editor.document[editor.cursor_location[0]] == "on_failure: raise"
        assert not menu.display


async def test_a_popup_that_opened_by_itself_never_takes_enter(make_app) -> None:
    app = make_app("multidoc_qa.contract.yaml")
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        editor = editor_of(app)
        editor.text = "".join(ln for ln in editor.text.splitlines(True) if not ln.startswith("on_failure:"))
        await settle(pilot)
        await end_of_file(pilot)
        await pilot.press(*"on_f")
        assert app.screen.menu.display
        await pilot.press("enter")  # not asked for: a new line, the word as typed
        row = editor.cursor_location[0]
        assert editor.document[row - 1] == "on_f" and editor.cursor_location[1] == 0
        await pilot.press(*"on_failure")  # the whole name typed: nothing to offer
        assert not app.screen.menu.display
        await pilot.press(":", " ", "ctrl+space")  # asked for: Enter accepts
        assert app.screen.menu.display
        first = app.screen.menu.items[0].text
        await pilot.press("enter")
        assert editor.document[editor.cursor_location[0]] == "on_failure: " + first
        await pilot.press("enter", *"description: '")  # a quote: the user's own string follows, no popup
        assert not app.screen.menu.display


async def test_the_popup_never_steals_a_keystroke(make_app) -> None:
    app = make_app("multidoc_qa.contract.yaml")
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        editor = editor_of(app)
        editor.text = "".join(ln for ln in editor.text.splitlines(True) if not ln.startswith("on_failure:"))
        await settle(pilot)
        await end_of_file(pilot)
        await pilot.press("enter", "o", "n")
        assert app.screen.menu.display
        await pilot.press("escape")  # closes the popup, the text stays
        assert not app.screen.menu.display and editor.document[editor.cursor_location[0]] == "on"
        await pilot.press("enter")  # with the popup closed, Enter is a new line again
        assert editor.cursor_location[1] == 0 and editor.document[editor.cursor_location[0] - 1] == "on"


async def test_quick_fix_lists_the_fixes_of_the_finding_and_applies_one(make_app, workspace: Path) -> None:
    path = workspace / "rag_router.pipeline.yaml"
    path.write_text(path.read_text().replace("    on_other: answer", "    # no on_other here\n"), encoding="utf-8")
    app = make_app("rag_router.pipeline.yaml")
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        assert [d.code for d in app.screen.analysis.diagnostics] == ["RTE305"]
        await pilot.press("f8")  # to the finding
        await pilot.press("f9")  # quick fix (also Ctrl+.)
        await pilot.pause()
        titles = [a.title for a in app.screen.actions]
        assert titles == ["Add 'on_other: search'", "Suppress RTE305 here"]
        await pilot.press("enter")
        await settle(pilot)
        assert "    on_other: search\n" in editor_of(app).text
        assert "# no on_other here" in editor_of(app).text  # comments kept
        assert app.edit_screen.analysis.diagnostics == []


async def test_rename_definition_and_back(make_app) -> None:
    app = make_app("rag_router.pipeline.yaml")
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        editor = editor_of(app)
        row = next(i for i, ln in enumerate(editor.document.lines) if ln.strip() == "next: dispatch")
        editor.move_cursor((row, editor.document[row].index("dispatch")))
        await pilot.press("f12")
        target = editor.cursor_location
        assert editor.document[target[0]].strip() == "- id: dispatch"
        await pilot.press("alt+left")
        assert editor.cursor_location[0] == row
        await pilot.press("shift+f6")
        await pilot.pause()
        for _ in range(len("dispatch")):
            await pilot.press("backspace")
        await pilot.press(*"route_reply", "enter")
        await settle(pilot)
        assert "next: route_reply" in editor.text and "id: route_reply" in editor.text and "dispatch" not in editor.text
        assert app.edit_screen.analysis.diagnostics == []


async def test_find_find_next_and_go_to_line(make_app) -> None:
    app = make_app("rag_router.pipeline.yaml")
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        editor = editor_of(app)
        await pilot.press("ctrl+f")
        await pilot.pause()
        await pilot.press(*"call_model", "enter")
        await pilot.pause()
        first = editor.cursor_location
        assert editor.selected_text == "call_model"
        await pilot.press("ctrl+n")
        assert editor.cursor_location[0] > first[0] and editor.selected_text == "call_model"
        await pilot.press("ctrl+l")
        await pilot.pause()
        await pilot.press(*"12:5", "enter")
        await pilot.pause()
        assert editor.cursor_location == (11, 4)


async def test_enter_keeps_the_indentation_and_indents_after_a_key(make_app) -> None:
    app = make_app("rag_router.pipeline.yaml")
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        editor = editor_of(app)
        row = next(i for i, ln in enumerate(editor.document.lines) if ln.strip() == "next: dispatch")
        editor.move_cursor((row, len(editor.document[row])))
        await pilot.press("enter")
        assert editor.cursor_location == (row + 1, 4)  # the step's keys are at 4
        await pilot.press(*"extra:", "enter")
        assert editor.cursor_location == (row + 2, 6)  # one level more after `key:`
        await pilot.press("escape")  # the popup may be open; Escape closes it, nothing else


async def test_a_contract_from_the_empty_template_to_a_clean_check_with_completion_and_quick_fixes(
        make_app, workspace: Path) -> None:
    path = workspace / "qa.contract.yaml"
    path.write_text(template("contract", "qa"), encoding="utf-8")
    app = make_app("qa.contract.yaml")
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        screen = app.edit_screen
        editor = screen.editor

        # Keys and type names by completion: `input` -> Question (declared by a quick fix below).
        await end_of_file(pilot)
        await pilot.press(*"pro")
        assert [i.label for i in screen.menu.items] == ["prompt"]
        await pilot.press("tab", *"Answer the question.", "escape", "enter")
        await settle(pilot)

        await fix_until_clean(pilot, screen, 12)  # every remaining finding, by its first quick fix
        final = editor.text
        report = check_text(final, str(path))
        assert report.diagnostics == []
        assert final.startswith("kind: contract\nname: qa\nprompt: Answer the question.\n")
        assert "input: Input" in final and "output: Output" in final and "  Output:\n" in final and "post:\n" in final
        assert "contractstudio: ignore" not in final  # fixed, not silenced


async def test_a_pipeline_from_the_empty_template_to_a_clean_check_with_completion_and_quick_fixes(
        make_app, workspace: Path) -> None:
    """A second step written with completion (its keys, its action, the step id `next:` names), the rest by quick fixes."""
    path = workspace / "triage.pipeline.yaml"
    path.write_text(template("pipeline", "triage").replace("    end: true\n", "    next: \n"), encoding="utf-8")
    app = make_app("triage.pipeline.yaml")
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        screen = app.edit_screen
        editor = screen.editor
        await end_of_file(pilot)
        await pilot.press(*"  - id: answer", "enter")
        await pilot.press(*"act")
        assert "action" in [i.label for i in screen.menu.items]
        await pilot.press("tab", *"call_mo")
        assert [i.label for i in screen.menu.items] == ["call_model"]
        await pilot.press("tab", "escape", "enter")
        await pilot.press(*"pro")
        await pilot.press("tab", *"answer_prompt", "escape")
        await settle(pilot)
        # the first step's `next:` names the new step, by completion of step ids
        line = editor.text.splitlines().index("    next: ")
        editor.move_cursor((line, len("    next: ")))
        await pilot.press(*"ans")
        assert [i.label for i in screen.menu.items] == ["answer"]
        await pilot.press("tab", "escape")
        await settle(pilot)
        await fix_until_clean(pilot, screen, 6)  # what is left (the new step has no way to end)
        final = editor.text
        assert check_text(final, str(path)).diagnostics == []
        assert "    next: answer\n" in final and "  - id: answer\n    action: call_model\n    prompt: answer_prompt\n" in final
        assert "contractstudio: ignore" not in final


async def test_reload_keeps_the_cursor(make_app, workspace: Path) -> None:
    app = make_app("rag_router.pipeline.yaml")
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        editor = editor_of(app)
        editor.move_cursor((20, 6))
        path = workspace / "rag_router.pipeline.yaml"
        path.write_text("# edited elsewhere\n" + path.read_text(), encoding="utf-8")
        await pilot.press("ctrl+r")
        await settle(pilot)
        assert editor.document[0] == "# edited elsewhere" and editor.cursor_location == (20, 6)


async def test_a_new_file_from_the_template_of_its_kind(make_app, workspace: Path) -> None:
    app = make_app("rag_router.pipeline.yaml")
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press("ctrl+right_square_bracket")
        await pilot.pause()
        for _ in range(len("new.contract.yaml")):
            await pilot.press("backspace")
        await pilot.press(*"triage.pipeline.yaml", "enter")
        await settle(pilot)
        created = workspace / "triage.pipeline.yaml"
        assert created.read_text(encoding="utf-8") == template("pipeline", "triage")
        assert app.buffer.path.resolve() == created.resolve() and editor_of(app).text == template("pipeline", "triage")
        assert app.edit_screen.analysis.diagnostics == []


async def test_open_in_editor_runs_it_and_reloads_with_the_cursor_kept(make_app, workspace: Path, tmp_path: Path,
                                                                      monkeypatch) -> None:
    script = tmp_path / "fake_editor.py"
    script.write_text("import sys\np = sys.argv[1]\n"
                      "import os\nsaid = 'had the current folder on its path' if os.getcwd() in sys.path else 'added by the editor'\n"
                      "open(p, 'a').write('# ' + said + '\\n')\n", encoding="utf-8")
    import os
    import sys

    monkeypatch.setenv("EDITOR", f"{sys.executable} {script}")
    monkeypatch.setenv("PYTHONPATH", os.pathsep)  # an empty entry: the folder the editor starts in, never passed on
    monkeypatch.delenv("VISUAL", raising=False)
    app = make_app("rag_router.pipeline.yaml")
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        editor = editor_of(app)
        editor.move_cursor((10, 4))
        await pilot.press("f10")
        await settle(pilot)
        assert editor.text.endswith("# added by the editor\n") and editor.cursor_location == (10, 4)


async def test_a_quick_fix_asked_for_while_typing_waits_for_the_analysis_made_in_its_worker(make_app, monkeypatch) -> None:
    import threading

    from contractstudio.analysis.incremental import Analyzer

    on_ui_thread: list[str] = []
    check = Analyzer.check

    def watched(self, text: str, *args, **kwargs):
        if threading.current_thread() is threading.main_thread():
            on_ui_thread.append(text[:20])
        return check(self, text, *args, **kwargs)

    from contractstudio.analysis import check as front

    check_text = front.check_text

    def watched_text(*args, **kwargs):
        if threading.current_thread() is threading.main_thread():
            on_ui_thread.append("check_text")
        return check_text(*args, **kwargs)

    monkeypatch.setattr(Analyzer, "check", watched)
    monkeypatch.setattr(front, "check_text", watched_text)
    app = make_app("rag_router.pipeline.yaml")
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        editor = editor_of(app)
        row = next(i for i, ln in enumerate(editor.document.lines) if ln.strip() == "next: answer")
        editor.move_cursor((row, len(editor.document[row])))
        await pilot.press(*"x")  # `answerx`: an unknown step, and F9 before the analysis of this text
        await pilot.press("f9")
        await settle(pilot)
        titles = [a.title for a in app.screen.actions]
        assert "Change 'answerx' to 'answer'" in titles
    assert on_ui_thread == []


async def test_ctrl_space_as_a_terminal_sends_it_opens_completion(make_app) -> None:
    from textual import events

    app = make_app("multidoc_qa.contract.yaml")
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        editor = editor_of(app)
        editor.text = "".join(ln for ln in editor.text.splitlines(True) if not ln.startswith("on_failure:"))
        await settle(pilot)
        await end_of_file(pilot)
        await pilot.press("enter", "o", "n", "escape")
        assert not app.screen.menu.display
        app.post_message(events.Key("ctrl+@", "\x00"))  # tmux and many terminals send NUL for Ctrl+Space
        await pilot.pause()
        await pilot.pause()
        assert app.screen.menu.display


async def test_completion_opens_at_once_after_a_dot(make_app) -> None:
    app = make_app("multidoc_qa.contract.yaml")
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        editor = editor_of(app)
        row = next(n for n, line in enumerate(editor.text.splitlines()) if "assert: output.answer" in line)
        editor.replace("    assert: ", (row, 0), (row, len(editor.document[row])))
        await settle(pilot)
        editor.move_cursor((row, len("    assert: ")))
        await pilot.press(*"output.")  # typed as a user types it; no letter after the dot yet: the fields come at once
        menu = app.screen.menu
        assert menu.display and [i.label for i in menu.items][:3] == ["answer", "evidence", "coverage_score"]


async def test_at_80x24_a_popup_opened_near_the_right_edge_or_the_bottom_is_shown_whole(make_app) -> None:
    """Seen by hand under tmux at 80x24: completion at the end of a long condition drew the popup past the screen's edge."""
    app = make_app("multidoc_qa.contract.yaml")
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        editor = editor_of(app)
        row = next(n for n, line in enumerate(editor.text.splitlines()) if "assert: output.answer" in line)
        line = "  - assert: output.answer.strip() != '' and len(output.answer) < 4000 and output."
        editor.replace(line[:-1], (row, 0), (row, len(editor.document[row])))
        await settle(pilot)
        editor.move_cursor((row, len(line) - 1), center=False)
        editor.scroll_to(y=max(0, row - editor.size.height + 2), animate=False)  # the line at the bottom of the editor
        await pilot.pause()
        await pilot.press(".")
        await pilot.pause()
        menu = app.screen.menu
        assert menu.display and menu.items
        screen = app.screen.region
        assert menu.region.right <= screen.right and menu.region.bottom <= screen.bottom, (menu.region, screen)


async def test_a_rename_is_one_undo_and_one_redo(make_app) -> None:
    # A rename of several places took one Ctrl+Z per place, with findings in between (issue 35, point 3).
    app = make_app("rag_router.pipeline.yaml")
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        editor = editor_of(app)
        before = editor.text
        row = next(i for i, ln in enumerate(editor.document.lines) if ln.strip() == "- id: dispatch")
        editor.move_cursor((row, editor.document[row].index("dispatch")))
        await pilot.press("shift+f6")
        await pilot.pause()
        await pilot.press(*["backspace"] * len("dispatch"), *"route_reply", "enter")
        await settle(pilot)
        renamed = editor.text
        assert renamed.count("route_reply") >= 2 and "dispatch" not in renamed
        await pilot.press("ctrl+z")
        await settle(pilot)
        assert editor.text == before
        assert app.edit_screen.analysis.diagnostics == []
        await pilot.press("ctrl+y")
        await settle(pilot)
        assert editor.text == renamed


async def test_a_space_typed_right_after_a_completion_that_ends_in_one_is_not_doubled(make_app) -> None:
    # Accepting `on_failure` inserts `on_failure: `; the author's own space made two (issue 35, point 5).
    app = make_app("multidoc_qa.contract.yaml")
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        editor = editor_of(app)
        editor.text = "".join(ln for ln in editor.text.splitlines(True) if not ln.startswith("on_failure:"))
        await settle(pilot)
        await end_of_file(pilot)
        await pilot.press(*"on_f", "tab", "left", "right", "space")  # moved in between: the space is typed
        row = editor.cursor_location[0]
        assert editor.document[row] == "on_failure:  "
        await pilot.press(*["backspace"] * len("on_failure:  "))
        assert editor.document[row] == ""
        await pilot.press(*"on_f", "tab", "space")
        assert editor.document[row] == "on_failure: " and editor.cursor_location == (row, len("on_failure: "))
        await pilot.press("space")  # a second space is the author's own
        assert editor.document[row] == "on_failure:  "
        await pilot.press("backspace", *"raise")
        assert editor.document[row] == "on_failure: raise"


async def test_an_edit_s_findings_are_shown_before_the_symbols_and_no_name_is_looked_up_on_the_screen_s_thread(
        make_app, monkeypatch) -> None:
    # The editing help's symbols of a 5 MB one-document file took 2.4-3 s after each analysis, before its findings
    # were posted (issue 35, point 1): they come after the findings now, in a worker of their own.
    import asyncio
    import threading

    from contractstudio.editing import symbols

    collect = symbols.occurrences
    running, release, on_ui_thread = threading.Event(), threading.Event(), []

    def slow(loaded):
        if "editing.occurrences" in loaded.memo:
            pass  # collected already: a lookup
        elif threading.current_thread() is threading.main_thread():
            on_ui_thread.append(loaded.kind)  # collected here: the screen's thread holds for the whole document
        else:
            running.set()
            release.wait(10)
        return collect(loaded)

    app = make_app("rag_router.pipeline.yaml")
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        monkeypatch.setattr(symbols, "occurrences", slow)
        editor = editor_of(app)
        row = next(i for i, ln in enumerate(editor.document.lines) if ln.strip() == "next: answer")
        editor.move_cursor((row, len(editor.document[row])))
        await pilot.press("x")  # `answerx`: a step no step declares
        for _ in range(100):
            await pilot.pause(0.05)
            if any("answerx" in d.message for d in app.screen.findings.diagnostics):
                break
        assert running.is_set() and not release.is_set()
        assert any("answerx" in d.message for d in app.screen.findings.diagnostics)  # shown while symbols are collected
        await pilot.press("shift+f6")  # rename: waits for the symbols, never collects them here
        await pilot.pause(0.2)
        release.set()
        await asyncio.sleep(0)
        await settle(pilot)
        await pilot.pause(0.2)
        from contractstudio.studio.widgets.completion import Ask

        assert isinstance(app.screen, Ask) and app.screen.title_text == "Rename step 'answerx' to"
    assert on_ui_thread == []


async def test_completion_as_you_type_waits_for_the_file_s_first_analysis(make_app, monkeypatch) -> None:
    # Issue 35.1: on the 5 MB examples the first keys after opening completed while the first analysis (2 s) ran:
    # each read the whole file for its `kind:` on the screen's thread and the first imported the editing help there
    # (80-190 ms keys). Completion's facts come from an analysis; it opens by itself once there is one.
    import threading

    from contractstudio.editing.live import LiveDocument

    analyze, released = LiveDocument.analyze, threading.Event()

    def held(self, *args, **kwargs):
        released.wait(10)
        return analyze(self, *args, **kwargs)

    monkeypatch.setattr(LiveDocument, "analyze", held)
    app = make_app("multidoc_qa.contract.yaml")
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause(0.3)
        await end_of_file(pilot)
        await pilot.press("enter", "j", "s")
        await pilot.pause(0.2)
        assert app.screen.live.report is None and not app.screen.menu.display
        released.set()
        await settle(pilot)
        await pilot.press("o")
        assert app.screen.menu.display and [i.label for i in app.screen.menu.items] == ["json_reply"]


async def test_a_key_in_the_middle_of_a_long_list_makes_completion_read_again_only_the_rows_it_changed(
        make_app, workspace: Path) -> None:
    # Issue 35.1: in the middle of the 5 MB chain each completion joined and searched again every row above the cursor
    # (12-13 ms of the screen's thread a key) though a key changes one row. Measured as the memory a completion
    # allocates (joined rows and what was found in them are new strings and lists), near the top and in the middle.
    import tracemalloc

    steps = 8000
    body = "".join(f"  - id: s{n}\n    action: call_model\n    description: step {n}\n    next: s{n + 1}\n"
                   for n in range(steps))
    (workspace / "long.pipeline.yaml").write_text(
        f"kind: pipeline\nname: chain\nentry_step_id: s0\nsteps:\n{body}  - id: s{steps}\n    action: call_model\n"
        "    end: true\n")
    app = make_app("long.pipeline.yaml")
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        screen, editor = app.screen, editor_of(app)

        def allocated_by_a_completion_after_a_key(step: int) -> int:
            row = 4 + 4 * step + 2  # the step's description
            editor.move_cursor((row, len(editor.document[row])))
            screen.action_complete()  # the rows as they were: what the key before this one left
            editor.insert("x")  # a key (no key event: nothing else completes meanwhile)
            tracemalloc.start()
            try:
                screen.action_complete()
                return tracemalloc.get_traced_memory()[1]
            finally:
                tracemalloc.stop()

        top, middle = allocated_by_a_completion_after_a_key(3), allocated_by_a_completion_after_a_key(steps // 2)
        assert middle < 2 * top + 100_000, (top, middle)  # the rows above the middle: about 400 KB joined
