"""The command palette is derived from the screens' bindings (issue 23.4): no action, key or id can drift apart."""

from __future__ import annotations

from textual.binding import Binding, BindingsMap

from contractstudio.studio.app import StudioApp, studio_scopes
from contractstudio.studio.palette import NOT_IN_PALETTE, PALETTE, palette_actions


def scopes() -> dict[str, list[Binding]]:
    return studio_scopes(StudioApp._merged_bindings or BindingsMap())  # the app class's own keys


def test_every_mode_binding_with_a_key_is_in_the_palette_under_its_id() -> None:
    found = {binding_id for binding_id, _, _, _ in palette_actions(scopes())}
    for scope, bindings in scopes().items():
        if scope == "Dialogs":
            continue  # a dialog's keys answer the dialog; the palette runs on a mode screen
        for binding in bindings:
            if binding.key and binding.id and binding.id not in NOT_IN_PALETTE:  # Textual's own keys carry no id
                assert binding.id in found, f"{scope}: {binding.id} ({binding.key}) is not in the palette"


def test_every_palette_entry_names_a_binding_and_runs_its_action() -> None:
    bound = {b.id: (scope, b) for scope, bindings in scopes().items() for b in bindings}
    assert set(PALETTE) <= set(bound), set(PALETTE) - set(bound)
    for binding_id, _title, _help, action in palette_actions(scopes()):
        scope, binding = bound[binding_id]
        assert action.split(".", 1)[1] == binding.action.removeprefix("app.")
        expected = "app." if scope == "Everywhere" or binding.action.startswith("app.") else "screen."
        assert action.startswith(expected)
