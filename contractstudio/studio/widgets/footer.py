"""The studio's footer: the keys that fit whole, never a key cut in the middle or run under the palette key."""

from __future__ import annotations

from rich.cells import cell_len
from textual.app import ComposeResult
from textual.widgets import Footer
from textual.widgets._footer import FooterKey


class StudioFooter(Footer):
    """Textual's compact footer, showing from the left only the keys whose whole label fits before `^p palette`.

    The ones left out are in F1's help and the palette; a key cut to `f1 Hel` names nothing a user can press.
    """

    def __init__(self) -> None:
        super().__init__(compact=True)

    def compose(self) -> ComposeResult:
        yield from super().compose()
        self.call_after_refresh(self.fit)

    def on_resize(self) -> None:
        self.fit()

    def fit(self) -> None:
        """Hide the keys past the room left of the palette key (shown again when the footer grows)."""
        keys = [k for k in self.query(FooterKey) if not k.has_class("-command-palette")]
        palette = [k for k in self.query(FooterKey) if k.has_class("-command-palette")]
        room = self.size.width - sum(cell_len(k.key_display) + cell_len(k.description) + 2 for k in palette)
        used = 0
        for key in keys:
            used += cell_len(key.key_display) + (1 + cell_len(key.description) if key.description else 0) + 1
            key.display = used <= room
