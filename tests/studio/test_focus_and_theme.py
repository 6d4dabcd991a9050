"""Focus stays where the user put it, and every panel's border can be seen in the light theme too (issue 9.17)."""

from __future__ import annotations

from textual.color import Color

from .conftest import settle


async def test_escape_in_the_editor_keeps_the_focus_and_ends_a_selection(make_app) -> None:
    app = make_app("multidoc_qa.contract.yaml")
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        editor = app.screen.editor
        assert editor.has_focus
        await pilot.press("shift+right", "shift+right")
        assert not editor.selection.is_empty
        await pilot.press("escape")
        await pilot.pause()
        assert editor.has_focus and editor.selection.is_empty
        await pilot.press("escape")
        await pilot.press(*"# typed")
        await pilot.pause()
        assert editor.has_focus and editor.text.startswith("ki# typed")  # typed where the selection ended


def contrast(a: Color, b: Color) -> float:
    def luminance(c: Color) -> float:
        def channel(v: int) -> float:
            s = v / 255
            return s / 12.92 if s <= 0.03928 else ((s + 0.055) / 1.055) ** 2.4

        return 0.2126 * channel(c.r) + 0.7152 * channel(c.g) + 0.0722 * channel(c.b)

    hi, lo = sorted((luminance(a), luminance(b)), reverse=True)
    return (hi + 0.05) / (lo + 0.05)


async def test_unfocused_borders_are_visible_in_the_light_theme(make_app) -> None:
    app = make_app("multidoc_qa.contract.yaml")
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        app.theme = "contractstudio-light"
        await pilot.pause()
        for selector in ("#files", "#findings"):
            panel = app.screen.query_one(selector)
            assert not panel.has_focus
            _, color = panel.styles.border_top
            behind = panel.background_colors[0]
            seen = behind.blend(color.with_alpha(1.0), color.a)  # what the terminal draws
            assert contrast(seen, behind) >= 2.0, (selector, seen.hex, behind.hex)
        app.screen.query_one("#findings").focus()
        await pilot.pause()
        _, focused = app.screen.query_one("#findings").styles.border_top
        assert focused.hex == app.current_theme.primary.upper() or focused.hex == Color.parse(app.current_theme.primary).hex
