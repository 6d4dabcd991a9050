"""What a user reads first names keys that work and says what is true (issue 19 point 12)."""

from __future__ import annotations

import shutil
from pathlib import Path

from rich.color import Color
from textual.widgets._footer import FooterKey

from contractstudio.studio.app import StudioApp
from contractstudio.studio.config import load_config
from contractstudio.studio.widgets.files import FileList

from .conftest import settle

ROOT = Path(__file__).resolve().parents[2]


def luminance(color: Color) -> float:
    def channel(c: int) -> float:
        c_ = c / 255
        return c_ / 12.92 if c_ <= 0.03928 else ((c_ + 0.055) / 1.055) ** 2.4

    r, g, b = color.get_truecolor()
    return 0.2126 * channel(r) + 0.7152 * channel(g) + 0.0722 * channel(b)


def contrast(a: Color, b: Color) -> float:
    high, low = sorted((luminance(a), luminance(b)), reverse=True)
    return (high + 0.05) / (low + 0.05)


async def test_the_footer_shows_every_mode_key(make_app) -> None:
    app = make_app("multidoc_qa.contract.yaml")
    async with app.run_test(size=(200, 40)) as pilot:
        await settle(pilot)
        keys = {k.key for k in app.screen.query(FooterKey)}
        assert {"f2", "f3", "f4", "f5"} <= keys


async def test_the_eval_and_debug_hints_name_the_keys_as_pressed(tmp_path: Path) -> None:
    folder = tmp_path / "ws"
    folder.mkdir()
    shutil.copy(ROOT / "samples" / "multidoc_qa.contract.yaml", folder)
    app = StudioApp([folder], config=load_config())
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press("f5")
        await pilot.pause()
        eval_status = str(app.screen.query_one("#eval-status").render())
        assert "r runs it" in eval_status and "R runs" not in eval_status
        await pilot.press("f4")
        await settle(pilot)
        hint = str(app.screen.query_one("#event-body").render())
        assert "s steps, c continues" in hint and "g runs to the end" in hint
        await pilot.press("o")  # open a trace
        await pilot.pause()
        assert "Enter to open" in str(app.screen.query_one("#dialog-body").render())


async def test_a_rename_marks_the_file_unsaved_in_the_list(make_app) -> None:
    app = make_app("rag_router.pipeline.yaml")
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        editor = app.screen.editor
        row = next(i for i, ln in enumerate(editor.document.lines) if ln.strip() == "next: dispatch")
        editor.move_cursor((row, editor.document[row].index("dispatch")))
        await pilot.press("shift+f6")
        await pilot.pause()
        await pilot.press(*["backspace"] * len("dispatch"), *"route_reply", "enter")
        await settle(pilot)
        assert "route_reply" in editor.text
        files = app.screen.query_one(FileList)
        labels = [str(files.get_option_at_index(i).prompt) for i in range(files.option_count)]
        assert any(label.strip().startswith("rag_router") and label.endswith(" *") for label in labels), labels


async def test_yaml_punctuation_is_readable_in_the_light_theme(make_app) -> None:
    app = make_app("multidoc_qa.contract.yaml")
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press("ctrl+t")  # the light studio theme
        await pilot.pause()
        assert not app.current_theme.dark
        editor = app.screen.editor
        background = Color.parse(app.current_theme.surface or app.current_theme.background or "white")
        line = editor.render_line(1)  # `name: multidoc_qa`
        colons = [s for s in line if s.text == ":" and s.style is not None and s.style.color is not None]
        assert colons
        assert contrast(colons[0].style.color, colons[0].style.bgcolor or background) >= 4.5


async def test_the_file_list_toggles_with_a_key_tmux_leaves_alone_and_f1_names_the_touchy_keys(make_app) -> None:
    app = make_app("multidoc_qa.contract.yaml")
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        files = app.screen.query_one(FileList)
        await pilot.press("ctrl+backslash")
        assert not files.display
        await pilot.press("ctrl+backslash")
        assert files.display
        await pilot.press("f1")
        await pilot.pause()
        help_text = str(app.screen.query_one("#help-text").render())
        assert "terminal-sensitive" in help_text and "Ctrl+@" in help_text and "F9" in help_text
