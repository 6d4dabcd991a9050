"""Where the cursor is in a big one-document file is worked out from the lines around it, not from every line below
(issue 35.1: on each key, completion located the cursor by first looking for the next `---` to the end of the file)."""

from __future__ import annotations

from collections.abc import Sequence

from contractstudio.editing.cursor import locate


class Counted(Sequence[str]):
    """Lines that note the highest line read."""

    def __init__(self, lines: list[str]) -> None:
        self.lines, self.furthest = lines, 0

    def __len__(self) -> int:
        return len(self.lines)

    def __getitem__(self, index):  # type: ignore[no-untyped-def]
        if isinstance(index, slice):
            return self.lines[index]
        self.furthest = max(self.furthest, index)
        return self.lines[index]


def test_the_cursor_in_one_entry_of_a_long_list_is_located_without_reading_to_the_end() -> None:
    text = "kind: pipeline\nname: long\nsteps:\n" + "".join(f"  - id: s{n}\n    action: call_model\n" for n in range(5000))
    lines = Counted(text.split("\n"))
    cursor = locate(lines, 5, len("    action: call"))  # in the first step's action
    assert cursor is not None and cursor.kind == "pipeline" and cursor.path[-1] == "action"
    assert lines.furthest < 100
