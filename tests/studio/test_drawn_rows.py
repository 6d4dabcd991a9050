"""What one key draws again: the rows it changed, never the screen (issue 19.6's echo).

TextArea repaints its whole widget whenever the selection is set, which every key does, so every visible row went
through Textual's styles cache again; and its placeholder check joined the whole text for the first row drawn.

No timing here (bench/bench_typing.py measures the echo): these hold what is drawn, and that it is right.
"""

from __future__ import annotations

import pytest
from textual.app import App
from textual.geometry import Region
from textual.widgets import TextArea

from contractstudio.studio.widgets.editor import ContractEditor

from .test_big_files import _big_yaml, counting_joins

SMALL = ("kind: contract\nname: c0\nprompt: |\n  Answer [0] from the text.\npost:\n  - check: len(output.a) >= 1\n"
         "tags: [one,\n  two]\n")
TEXTS = {"small": SMALL, "big": SMALL + "---\n" + _big_yaml()}


class Host(App[None]):
    def __init__(self, text: str) -> None:
        super().__init__()
        self.text = text

    def compose(self):
        yield ContractEditor(self.text)


def shown(editor: ContractEditor) -> list[list[object]]:
    """The editor's rows as the screen has them: through Textual's styles cache (what is not marked dirty is kept)."""
    return [list(strip) for strip in editor.render_lines(Region(0, 0, *editor.size))]


def fresh(editor: ContractEditor) -> list[list[object]]:
    """The editor's rows drawn from nothing."""
    editor._styles_cache.clear()
    editor._line_cache.clear()
    return shown(editor)


@pytest.mark.parametrize("size", TEXTS)
async def test_every_row_on_screen_after_an_edit_or_a_move_is_what_a_fresh_draw_gives(size: str) -> None:
    async with Host(TEXTS[size]).run_test(size=(90, 30)) as pilot:
        editor = pilot.app.query_one(ContractEditor)
        editor.focus()
        steps = [
            lambda: editor.move_cursor((1, 3)),  # the cursor's row and line number move
            lambda: editor.replace("x", (1, 8), (1, 8)),  # a letter
            lambda: editor.replace('"', (1, 7), (1, 7)),  # a quote: the highlighting after it changes
            lambda: editor.replace("", (1, 7), (1, 8)),  # and its removal
            lambda: editor.move_cursor((3, 9)),  # onto a bracket: its match is marked
            lambda: editor.move_cursor((3, 12)),  # off it
            lambda: editor.move_cursor((6, 6)),  # onto a bracket whose match is on the next row
            lambda: editor.move_cursor((5, 2)),  # off it, to a row between neither
            lambda: editor.select_line(4),  # a selection
            lambda: editor.move_cursor((5, 20), select=True),  # grown over another row
            lambda: editor.move_cursor((0, 0)),  # and cleared
            lambda: editor.replace("  - check: true\n", (5, 0), (5, 0)),  # a line added: every row below moves
            lambda: editor.replace("", (5, 0), (6, 0)),  # and removed
            lambda: editor.replace("prompt: plain", (2, 0), (3, 26)),  # lines joined
            lambda: editor.set_findings([]),
            lambda: editor.scroll_to(y=120, animate=False),  # past the big file's highlighted window
            lambda: editor.move_cursor((editor.document.line_count // 2, 0)),  # and further, by the cursor
            lambda: editor.replace('"', editor.cursor_location, editor.cursor_location),  # an edit there
            lambda: editor.scroll_to(y=0, animate=False),  # back at the top
        ]
        for n, step in enumerate(steps):
            step()
            await pilot.pause()
            assert shown(editor) == fresh(editor), f"step {n}"
            # The editor keys its drawn rows as TextArea does (its render_line skips only the placeholder's check):
            # TextArea's own lookup finds every row the editor drew, and draws none again.
            ours = [editor.render_line(y) for y in range(editor.size.height)]
            cached = len(editor._line_cache)
            assert [TextArea.render_line(editor, y) for y in range(editor.size.height)] == ours
            assert len(editor._line_cache) == cached, f"step {n}"


@pytest.mark.parametrize("size", TEXTS)
async def test_a_letter_typed_draws_its_own_row_again_and_no_other(size: str, monkeypatch) -> None:
    async with Host(TEXTS[size]).run_test(size=(90, 30)) as pilot:
        editor = pilot.app.query_one(ContractEditor)
        editor.focus()
        editor.move_cursor((1, 8))
        await pilot.pause()
        drawn: list[int] = []
        draw = ContractEditor.render_line

        def counted(self: ContractEditor, y: int):
            drawn.append(y)
            return draw(self, y)

        monkeypatch.setattr(ContractEditor, "render_line", counted)
        await pilot.press("z")
        await pilot.pause()
        assert editor.document[1] == "name: c0z"
        assert set(drawn) == {1}  # the row typed in, which is also the cursor's


async def test_a_key_typed_into_a_big_file_is_drawn_without_joining_its_text(monkeypatch) -> None:
    async with Host(_big_yaml(200)).run_test(size=(90, 30)) as pilot:
        editor = pilot.app.query_one(ContractEditor)
        editor.focus()
        editor.move_cursor((1, 8))
        await pilot.pause()
        joins = counting_joins(monkeypatch)
        await pilot.press("z")
        await pilot.pause()
        assert editor.document[1] == "name: c0z"
        assert joins[0] == 0  # TextArea's placeholder check asked for the whole text to see whether it was empty


async def test_the_detail_line_shows_what_is_under_the_cursor_without_laying_out_the_screen_again(
        make_app, monkeypatch) -> None:
    # The detail line is one row high: a new text in it changes no size, yet Static.update laid out the whole
    # screen (21 ms in a 5 MB file's studio, in the frame after each analysis shown and each pause of the cursor).
    from textual.screen import Screen

    from .conftest import settle

    app = make_app("multidoc_qa.contract.yaml")
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        # The studio's first count of the workspace files (0.5 s after start, in a worker) redraws the file list, a
        # layout of the screen: under load it could land in the moments measured below. Wait until it has been shown.
        from contractstudio.analysis.check import KNOWN_KINDS

        others = {f.path for f in app.workspace.files if f.kind in KNOWN_KINDS} - {app.buffer.path}
        for _ in range(600):
            if others <= app.counts.keys():
                break
            await pilot.pause(0.05)
        assert others <= app.counts.keys()
        await settle(pilot)
        screen, detail = app.screen, app.screen.query_one("#detail")
        screen.editor.move_cursor((47, 20))  # output.answer
        screen.show_detail()
        await pilot.pause()
        first = str(detail.render())
        assert detail.display and first
        layouts: list[object] = []
        layout = Screen._refresh_layout

        def counted(self: Screen, *args, **kwargs):
            layouts.append(self)
            return layout(self, *args, **kwargs)

        monkeypatch.setattr(Screen, "_refresh_layout", counted)
        screen.editor.move_cursor((49, 20))  # output.coverage_score
        screen.show_detail()
        await pilot.pause()
        assert str(detail.render()) not in ("", first)
        assert layouts == []


async def test_a_big_file_scrolled_before_any_edit_is_highlighted_where_it_is_shown() -> None:
    # The editor forgot the highlighted window its first build made (its __init__ ran after TextArea's, which builds),
    # so scrolling a big file before typing in it showed plain text past the first screenful.
    async with Host(TEXTS["big"] * 4).run_test(size=(90, 30)) as pilot:
        editor = pilot.app.query_one(ContractEditor)
        assert editor.is_large
        editor.scroll_to(y=600, animate=False, immediate=True)
        await pilot.pause()
        shown_rows = range(600, 600 + editor.size.height)
        assert any(editor._highlights.get(row) for row in shown_rows)
        assert shown(editor) == fresh(editor)
