"""Edit mode as a user sees it: findings follow typing, Enter jumps, nothing is lost."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from contractstudio.studio.screens.dialogs import Choice
from contractstudio.studio.widgets.findings import FindingsPanel

from .conftest import settle

CONTRACT = "multidoc_qa.contract.yaml"


def codes(app) -> list[str]:
    return [d.code for d in app.screen.findings.diagnostics]


async def test_typing_an_error_shows_a_finding_and_fixing_it_clears_it(make_app) -> None:
    app = make_app(CONTRACT)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        assert codes(app) == []
        editor = app.screen.editor
        editor.move_cursor((1, 0))
        await pilot.press(*"oops: [")
        await pilot.press("enter")
        await settle(pilot)
        assert codes(app) == ["YML001"]
        d = app.screen.findings.diagnostics[0]
        assert editor.markers == {d.line - 1: "error"}  # the line with the finding is marked
        status = str(app.screen.query_one("#status").render())
        assert "1 error ·" in status and "modified" in status
        for _ in range(8):
            await pilot.press("backspace")
        await settle(pilot)
        assert codes(app) == []
        assert editor.markers == {}
        assert "0 errors" in str(app.screen.query_one("#status").render())


async def test_only_the_newest_edit_is_shown(make_app) -> None:
    app = make_app(CONTRACT)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        editor = app.screen.editor
        editor.move_cursor((1, 0))
        await pilot.press(*"x: [")  # broken, then fixed before the debounce ends
        await pilot.press("backspace", "backspace", "backspace", "backspace")
        await settle(pilot)
        assert codes(app) == []


async def test_enter_on_a_finding_jumps_to_it_and_to_its_related_place(make_app) -> None:
    app = make_app(CONTRACT)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        editor = app.screen.editor
        editor.move_cursor((20, 0))
        await pilot.press(*"  bad: [1, ")
        await settle(pilot)
        diagnostic = app.screen.findings.diagnostics[0]
        assert diagnostic.code == "YML001" and diagnostic.related
        editor.move_cursor((0, 0))
        await pilot.press("ctrl+g")
        panel = app.screen.query_one(FindingsPanel)
        assert panel.has_focus
        panel.highlighted = 0
        await pilot.press("enter")
        await pilot.pause()
        assert editor.has_focus
        assert editor.cursor_location == (diagnostic.line - 1, diagnostic.column - 1)
        await pilot.press("ctrl+g")
        panel.highlighted = 1  # the related place, listed under its finding
        await pilot.press("enter")
        await pilot.pause()
        related = diagnostic.related[0]
        assert editor.cursor_location == (related.line - 1, related.column - 1)


async def test_ctrl_g_highlights_the_first_finding_so_enter_jumps_at_once(make_app) -> None:
    app = make_app(CONTRACT)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        editor = app.screen.editor
        editor.move_cursor((20, 0))
        await pilot.press(*"  bad: [1, ")
        await settle(pilot)
        first = app.screen.findings.diagnostics[0]
        editor.move_cursor((0, 0))
        await pilot.press("ctrl+g")
        assert app.screen.findings.highlighted == 0  # a row to act on, shown highlighted
        await pilot.press("enter")
        await pilot.pause()
        assert editor.has_focus and editor.cursor_location == (first.line - 1, first.column - 1)


async def test_f8_moves_to_the_next_finding(make_app) -> None:
    app = make_app(CONTRACT)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        editor = app.screen.editor
        editor.move_cursor((1, 0))
        await pilot.press(*"kind2: [")
        await settle(pilot)
        editor.move_cursor((0, 0))
        await pilot.press("f8")
        d = app.screen.findings.diagnostics[0]
        assert editor.cursor_location == (d.line - 1, d.column - 1)


async def test_quit_with_unsaved_changes_asks_and_cancel_keeps_the_text(make_app, workspace: Path) -> None:
    app = make_app(CONTRACT)
    before = (workspace / CONTRACT).read_text()
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press(*"# note")
        await pilot.press("ctrl+q")
        await pilot.pause()
        assert isinstance(app.screen, Choice)
        assert "unsaved changes" in str(app.screen.query_one("#dialog-body").render())
        await pilot.press("escape")  # cancel
        await pilot.pause()
        assert app.is_running
        assert app.screen.editor.text.startswith("# note")
        await pilot.press("ctrl+q")
        await pilot.pause()
        await pilot.click("#choice-discard")
        await pilot.pause()
    assert not app.is_running
    assert (workspace / CONTRACT).read_text() == before


async def test_quit_without_changes_is_immediate_and_writes_nothing(make_app, workspace: Path) -> None:
    app = make_app(CONTRACT)
    stamps = {p: p.stat().st_mtime_ns for p in workspace.iterdir()}
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await pilot.press("ctrl+q")
        await pilot.pause()
    assert not app.is_running
    assert {p: p.stat().st_mtime_ns for p in workspace.iterdir()} == stamps


async def test_opening_another_file_with_unsaved_changes_asks_first(make_app, workspace: Path) -> None:
    app = make_app(CONTRACT)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press(*"# draft")
        app.open_file(workspace / "rag_router.pipeline.yaml")
        await pilot.pause()
        assert isinstance(app.screen, Choice)
        await pilot.click("#choice-save")
        await pilot.pause()
        await settle(pilot)
        assert app.buffer.path.name == "rag_router.pipeline.yaml"
        assert (workspace / CONTRACT).read_text().startswith("# draft")


async def test_save_is_atomic_and_keeps_permissions(make_app, workspace: Path) -> None:
    target = workspace / CONTRACT
    os.chmod(target, 0o640)
    app = make_app(CONTRACT)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press(*"# saved")
        await pilot.press("ctrl+s")
        await pilot.pause()
        assert target.read_text().startswith("# saved")
        assert stat.S_IMODE(target.stat().st_mode) == 0o640
        assert not [p for p in workspace.iterdir() if p.name.endswith(".tmp")]
        assert "modified" not in str(app.screen.query_one("#status").render())


async def test_a_failed_save_leaves_the_old_file_whole(make_app, workspace: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    target = workspace / CONTRACT
    before = target.read_text()
    app = make_app(CONTRACT)

    def broken_replace(src: str, dst: str) -> None:
        raise OSError(28, "No space left on device")

    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press(*"# lost?")
        monkeypatch.setattr(os, "replace", broken_replace)
        await pilot.press("ctrl+s")
        await pilot.pause()
        monkeypatch.undo()
        assert target.read_text() == before
        assert not [p for p in workspace.iterdir() if p.name.endswith(".tmp")]
        assert any("Could not save" in n.message for n in app._notifications)
        assert app.screen.editor.text.startswith("# lost?")


async def test_a_file_changed_on_disk_is_never_silently_overwritten(make_app, workspace: Path) -> None:
    target = workspace / CONTRACT
    app = make_app(CONTRACT)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press(*"# mine")
        target.write_text("kind: contract\nname: theirs\n")
        await pilot.press("ctrl+s")
        await pilot.pause()
        assert isinstance(app.screen, Choice)
        assert "changed on disk" in str(app.screen.query_one("#dialog-body").render())
        await pilot.press("escape")
        await pilot.pause()
        assert target.read_text() == "kind: contract\nname: theirs\n"
        await pilot.press("ctrl+s")
        await pilot.pause()
        await pilot.click("#choice-overwrite")
        await pilot.pause()
        assert target.read_text().startswith("# mine")


async def test_a_clean_buffer_reloads_when_the_file_changes_on_disk(make_app, workspace: Path) -> None:
    target = workspace / CONTRACT
    app = make_app(CONTRACT)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        target.write_text(target.read_text() + "# appended elsewhere\n")
        app.check_disk()
        await settle(pilot)
        assert app.screen.editor.text.endswith("# appended elsewhere\n")


async def test_export_is_refused_while_the_file_has_errors(make_app, workspace: Path) -> None:
    app = make_app(CONTRACT)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        app.screen.editor.move_cursor((1, 0))
        await pilot.press(*"x: [")
        await settle(pilot)
        app._export_to(str(workspace / "out.yaml"))
        await pilot.pause()
        assert not (workspace / "out.yaml").exists()
        messages = [n.message for n in app._notifications]
        assert any("Export refused" in m and "YML001" in m for m in messages)


async def test_export_writes_validated_yaml(make_app, workspace: Path) -> None:
    app = make_app(CONTRACT)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press("f6")
        await pilot.pause()
        await pilot.press("enter")  # accept the proposed path
        await pilot.pause()
    out = workspace / "multidoc_qa.contract.export.yaml"
    assert out.read_text() == (workspace / CONTRACT).read_text()


async def test_a_failing_analysis_shows_an_error_modal_and_the_text_stays(make_app, monkeypatch: pytest.MonkeyPatch) -> None:
    from contractstudio.studio.screens import edit
    from contractstudio.studio.screens.dialogs import ErrorDialog

    app = make_app(CONTRACT)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)

        def broken(*args, **kwargs):
            raise RuntimeError("the analyzer tripped")

        monkeypatch.setattr("contractstudio.analysis.check.check_text", broken)
        monkeypatch.setattr("contractstudio.analysis.incremental.Analyzer.check", broken)  # what the edit screen runs
        monkeypatch.setattr(edit, "check_text", broken, raising=False)
        monkeypatch.setattr(edit, "DEBOUNCE_S", 2.0)  # the three keys are typed before the analysis that fails
        await pilot.press(*"# x")
        await settle(pilot)
        assert isinstance(app.screen, ErrorDialog)
        assert "the analyzer tripped" in str(app.screen.query_one("#dialog-body").render())
        await pilot.press("escape")
        await pilot.pause()
        assert app.screen.editor.text.startswith("# x")
        assert "analysis failed" in str(app.screen.query_one("#status").render())


async def test_a_slow_analysis_of_an_older_text_never_replaces_the_newest_findings(make_app) -> None:
    """Issue 19.7: the edit screen drives the live document; the analysis of an older text, finishing after the text
    changed, is dropped (one analysis runs at a time: the newest text's follows it, issue 19.6)."""
    import asyncio
    import threading

    app = make_app(CONTRACT)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        screen = app.screen
        started, release = threading.Event(), threading.Event()
        real = screen.live.analyze

        def slow_for_the_broken_text(text, context, name=None, **kwargs):
            if "oops: [" in text:
                started.set()
                release.wait(10)  # still running when the author fixed the text
            return real(text, context, name, **kwargs)

        screen.live.analyze = slow_for_the_broken_text
        drawn: list[list[str]] = []
        show = screen.findings.show
        screen.findings.show = lambda diagnostics: (drawn.append([d.code for d in diagnostics]), show(diagnostics))[1]
        screen.editor.move_cursor((1, 0))
        await pilot.press(*"oops: [", "enter")
        await asyncio.get_running_loop().run_in_executor(None, started.wait, 10)
        for _ in range(8):
            await pilot.press("backspace")
        await pilot.pause(0.5)  # the fixed text's debounce runs out while the broken text's analysis still runs
        release.set()  # the broken text's analysis finishes: stale, it is dropped; then the fixed text is analyzed
        await settle(pilot)
        assert screen.live.current is not None and codes(app) == []
        assert all("YML001" not in codes for codes in drawn)  # the stale findings were never drawn
        assert "0 errors" in str(screen.query_one("#status").render())


def rows_shown(widget) -> list[str]:
    """The rows of a widget as they are drawn on the screen now (what a user reads in it)."""
    from textual.geometry import Region

    return ["".join(segment.text for segment in strip) for strip in widget.render_lines(Region(0, 0, *widget.size))]


async def test_an_error_is_shown_first_in_the_findings_panel_even_below_long_infos(make_app, workspace: Path) -> None:
    # Two infos whose messages wrap over the panel's rows come before the error in the text (issue 35, point 4).
    source = Path(__file__).parents[1] / "fixtures" / "err" / "CON" / "con131_after_reply.yaml"
    text = source.read_text().replace('  - assert: output.city != ""', '  - assert: output.city != ""\n  - assert: output.nope == 1')
    (workspace / "late_error.contract.yaml").write_text(text, encoding="utf-8")
    app = make_app("late_error.contract.yaml")
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        panel = app.screen.findings
        assert sorted(d.code for d in panel.diagnostics) == ["CON131", "CON131", "EXP201"]
        shown = "\n".join(rows_shown(panel))
        assert "E 21:20 EXP201" in shown, shown
        assert shown.index("EXP201") < shown.index("CON131")  # errors first, then warnings, then infos
        await pilot.press("ctrl+g", "enter")  # the first row is the error, highlighted: Enter goes to it
        await pilot.pause()
        assert app.screen.editor.cursor_location == (20, 19)


async def test_f8_to_a_finding_that_fits_in_the_view_never_scrolls_sideways(make_app, workspace: Path) -> None:
    # A finding at column 42 of a 54-column view, in a file with longer lines (issue 35, point 3): F8 centred the
    # cursor sideways too, so every row lost its first characters, and Home left them 2 columns off.
    source = Path(__file__).parents[1] / "fixtures" / "err" / "CON" / "con131_after_reply.yaml"
    text = source.read_text().replace('  - assert: output.city != ""', '  - assert: output.city != "" and output.nope == 1')
    (workspace / "far_right.contract.yaml").write_text(text, encoding="utf-8")
    app = make_app("far_right.contract.yaml")
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        editor = app.screen.editor
        error = next(d for d in app.screen.findings.diagnostics if d.severity == "error")
        editor.move_cursor((error.line - 2, 0))
        await pilot.press("f8")
        await pilot.pause()
        assert editor.cursor_location == (error.line - 1, error.column - 1)
        gutter = editor.gutter_width
        for row in rows_shown(editor):
            if not row[: gutter - 2].strip():
                continue  # below the last line
            number = int(row[: gutter - 2].strip())
            assert row[gutter:].rstrip() == editor.document[number - 1][: len(row) - gutter].rstrip(), row
        await pilot.press("home")
        await pilot.pause()
        assert rows_shown(editor)[editor.cursor_location[0] - int(editor.scroll_offset.y)][gutter:].startswith("  - assert:")


def underlined(widget) -> str:
    """The underlined characters of a widget as drawn (a button's letter key)."""
    from textual.geometry import Region

    return "".join(segment.text for strip in widget.render_lines(Region(0, 0, *widget.outer_size)) for segment in strip
                   if segment.style is not None and segment.style.underline)


async def test_every_dialog_button_has_a_letter_key_shown_in_its_label(make_app, workspace: Path) -> None:
    # Save / Discard / Cancel had no letter keys (issue 35, point 7).
    from textual.widgets import Button

    before = (workspace / CONTRACT).read_text()
    app = make_app(CONTRACT)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await pilot.press(*"# note", "ctrl+q")
        await pilot.pause()
        assert isinstance(app.screen, Choice)
        assert {str(b.label): underlined(b) for b in app.screen.query(Button)} == {"Save": "S", "Discard": "D", "Cancel": "C"}
        await pilot.press("c")
        await pilot.pause()
        assert app.is_running and not isinstance(app.screen, Choice)
        assert app.screen.editor.text.startswith("# note")
        await pilot.press("ctrl+q")
        await pilot.pause()
        await pilot.press("d")
        await pilot.pause()
    assert not app.is_running
    assert (workspace / CONTRACT).read_text() == before


async def test_a_key_typed_before_a_dialog_was_drawn_never_reaches_it(make_app) -> None:
    # Under load the export dialog came late, and a key typed before it showed replaced its path (issue 35, point 7).
    from textual import events
    from textual.widgets import Input

    from contractstudio.studio.screens.dialogs import PathPrompt

    app = make_app(CONTRACT)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        early = events.Key("x", "x")  # typed now, before the dialog is asked for and drawn
        await pilot.press("f6")
        await pilot.pause()
        assert isinstance(app.screen, PathPrompt)
        field = app.screen.query_one(Input)
        path = field.value
        assert path.endswith(".yaml")
        app.post_message(early)  # read from the terminal only now, as under load
        await pilot.pause()
        await app.keys_handled()
        await pilot.pause()
        assert isinstance(app.screen, PathPrompt) and field.value == path
        await pilot.press("end", "2")  # a key typed once it is shown is taken
        assert field.value == path + "2"


async def test_a_dialog_takes_keys_from_its_first_paint_however_late_the_loop_comes_to_its_callbacks(
        make_app, monkeypatch: pytest.MonkeyPatch) -> None:
    # Issue 35.2's tmux walk: under load an Escape typed 0.3 s after the export dialog showed was dropped, because
    # the dialog counted as drawn only once the loop came to the callbacks after the refresh. Here they never come.
    from textual.widgets import Input

    from contractstudio.studio.keys import Dialog
    from contractstudio.studio.screens.dialogs import PathPrompt

    after_refresh = Dialog.call_after_refresh

    def late(self, callback, *args, **kwargs):  # the callbacks after the paint: not yet, the loop is busy
        if getattr(callback, "__func__", None) is Dialog._drawn:
            return True
        return after_refresh(self, callback, *args, **kwargs)

    monkeypatch.setattr(Dialog, "call_after_refresh", late)
    app = make_app(CONTRACT)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await pilot.press("f6")
        await pilot.pause()
        assert isinstance(app.screen, PathPrompt)  # painted: what the user sees
        path = app.screen.query_one(Input).value
        await pilot.press("end", "2")
        assert isinstance(app.screen, PathPrompt) and app.screen.query_one(Input).value == path + "2"
        await pilot.press("escape")
        assert not isinstance(app.screen, PathPrompt)
