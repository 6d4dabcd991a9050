"""The studio's footer: the focused widget's keys, then the mode's, then the global ones; never a key cut in the
middle or run under the palette key, and the other modes' keys at every size."""

from __future__ import annotations

from typing import Any

from rich.cells import cell_len
from textual.app import ComposeResult
from textual.screen import Screen
from textual.widgets import Footer

from contractstudio.studio.textual_internals import FooterKey

# The app's keys that give way first when a footer is short of room, first to go first: Ctrl+Q quits every Textual
# app, and F1's help is also `?` and the palette. The other modes' F-keys are how a user gets anywhere: they stay.
GIVE_WAY_FIRST = ("app.quit", "app.help")


class StudioFooter(Footer):
    """Textual's compact footer, showing from the left only the keys whose whole label fits before `^p palette`.

    Textual lists them in the order of the focus chain: the focused widget's (Enter on a list), the mode's, the
    app's. When they do not all fit, the least telling give way: Ctrl+Q, then F1, then the mode's own keys from
    the end; the focused widget's and the other modes' F-keys stay at every size, and a key that fits again in
    the room the others left is shown. The current mode's own key is never shown (it does nothing there). Those
    left out are in F1's help and the palette; a key cut to `f1 Hel` names nothing a user can press.
    """

    def __init__(self) -> None:
        super().__init__(compact=True)

    def compose(self) -> ComposeResult:
        yield from super().compose()
        self.call_after_refresh(self.fit)

    def on_resize(self) -> None:
        self.fit()

    def fit(self) -> None:
        """Hide what does not fit left of the palette key, least telling first (shown again when the footer grows)."""
        keys = [k for k in self.query(FooterKey) if not k.has_class("-command-palette")]
        palette = [k for k in self.query(FooterKey) if k.has_class("-command-palette")]
        room = self.size.width - sum(cell_len(k.key_display) + cell_len(k.description) + 2 for k in palette)
        room += 1  # the last key's margin (counted in its width below) may lie under the palette key's border
        active = self.screen.active_bindings
        here = f"mode('{self.app.current_mode}')"
        widths = [cell_len(k.key_display) + (1 + cell_len(k.description) if k.description else 0) + 1 for k in keys]
        ranks = [self._rank(active.get(key.key)) for key in keys]
        shown = [key.action != here for key in keys]
        used = sum(w for w, s in zip(widths, shown, strict=True) if s)
        wanted = [i for i in range(len(keys)) if shown[i]]
        for i in sorted(wanted, key=lambda i: (ranks[i], -i)):  # least telling first, from the end
            if used <= room:
                break
            shown[i] = False
            used -= widths[i]
        for i in sorted(wanted, key=lambda i: (-ranks[i], i)):  # most telling first: what fits in the room left
            if not shown[i] and used + widths[i] <= room:
                shown[i] = True
                used += widths[i]
        for key, show in zip(keys, shown, strict=True):
            key.display = show

    def _rank(self, found: Any) -> int:
        """How telling a key is here: 0 and 1 give way first (GIVE_WAY_FIRST), then 2 (the mode's own keys); 3 (the
        other modes' F-keys) and 4 (the focused widget's, or a container's around it) stay."""
        if found is None:
            return 0
        if found.binding.id in GIVE_WAY_FIRST:
            return GIVE_WAY_FIRST.index(found.binding.id)
        if isinstance(found.node, Screen):
            return 2
        return 3 if found.node is self.app else 4
