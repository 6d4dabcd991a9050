"""The studio's footer: the focused widget's keys, then the mode's, then the global ones; never a key cut in the
middle or run under the palette key, and the other modes' keys at every size."""

from __future__ import annotations

from rich.cells import cell_len
from textual.app import ComposeResult
from textual.screen import Screen
from textual.widgets import Footer

from contractstudio.studio.textual_internals import FooterKey

# Ctrl+Q quits every Textual app and F1 lists it: the first key to leave a footer that is short of room.
FIRST_TO_GO = frozenset({"app.quit"})


class StudioFooter(Footer):
    """Textual's compact footer, showing from the left only the keys whose whole label fits before `^p palette`.

    Textual lists them in the order of the focus chain: the focused widget's (Enter on a list), the mode's, the
    app's. When they do not all fit, the mode's go first from the end, then the focused widget's stay and the
    global ones (F1, the other modes) stay before them; the current mode's own key is never shown (it does nothing
    there). Those left out are in F1's help and the palette; a key cut to `f1 Hel` names nothing a user can press.
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
        active = self.screen.active_bindings
        here = f"mode('{self.app.current_mode}')"
        widths, ranks = [], []
        for key in keys:
            widths.append(cell_len(key.key_display) + (1 + cell_len(key.description) if key.description else 0) + 1)
            found = active.get(key.key)
            if found is None or found.binding.id in FIRST_TO_GO:
                ranks.append(0)
            elif isinstance(found.node, Screen):
                ranks.append(1)  # the mode's
            elif found.node is self.app:
                ranks.append(2)  # global: F1, the other modes
            else:
                ranks.append(3)  # the focused widget's (or a container's around it)
        shown = [key.action != here for key in keys]
        used = sum(w for w, s in zip(widths, shown, strict=True) if s)
        for i in sorted(range(len(keys)), key=lambda i: (ranks[i], -i)):  # least telling first, from the end
            if used <= room:
                break
            if shown[i]:
                shown[i] = False
                used -= widths[i]
        for key, show in zip(keys, shown, strict=True):
            key.display = show
