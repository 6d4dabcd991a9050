"""Where the cursor is in a big one-document file is worked out from the lines around it, not from every line below
(issue 35.1: on each key, completion located the cursor by first looking for the next `---` to the end of the file)."""

from __future__ import annotations

from collections.abc import Sequence

from contractstudio.editing.cursor import locate
from contractstudio.editing.row_scan import BLOCK


class Counted(Sequence[str]):
    """Lines that note the highest line read."""

    def __init__(self, lines: list[str]) -> None:
        self.lines, self.furthest, self.reads = lines, 0, 0

    def __len__(self) -> int:
        return len(self.lines)

    def __getitem__(self, index):  # type: ignore[no-untyped-def]
        if isinstance(index, slice):  # a block of rows (searched in C): each row of it is read
            got = self.lines[index]
            start = index.indices(len(self.lines))[0]
            self.furthest = max(self.furthest, start + len(got) - 1)
            self.reads += len(got)
            return got
        self.furthest = max(self.furthest, index)
        self.reads += 1
        return self.lines[index]


def test_the_cursor_in_one_entry_of_a_long_list_is_located_without_reading_to_the_end() -> None:
    text = "kind: pipeline\nname: long\nsteps:\n" + "".join(f"  - id: s{n}\n    action: call_model\n" for n in range(20_000))
    lines = Counted(text.split("\n"))
    cursor = locate(lines, 5, len("    action: call"))  # in the first step's action
    assert cursor is not None and cursor.kind == "pipeline" and cursor.path[-1] == "action"
    assert lines.furthest < BLOCK  # the first block of rows (joined and searched in C): not the 40,000 rows below


def test_the_kind_written_after_a_long_list_is_read_on_the_row_the_last_analysis_found_it() -> None:
    # The 5 MB examples contract has its `kind:` after 32,000 examples: completion and the detail line walked every row
    # down to it, twice a key on the screen's thread (50-70 ms each).
    from contractstudio.analysis.check import check_text

    examples = "".join(f"  - name: ex-{n}\n    input: {{query: q{n}}}\n" for n in range(20_000))
    text = f"examples:\n{examples}kind: contract\nname: c\nprompt: p\ninput: {{query: str}}\noutput: {{answer: str}}\n"
    report = check_text(text, "c.contract.yaml")
    lines = Counted(text.split("\n"))
    cursor = locate(lines, 2, len("  - name: ex"), report)
    assert cursor is not None and cursor.kind == "contract"
    assert lines.reads < 2 * BLOCK + 50  # blocks of rows around the cursor (row_scan.py), and the kind's: not the 40,000 between
    # without an analysis, or once the row no longer says so, the rows are read (in C) as far as the first `kind:`
    walked = Counted(text.split("\n"))
    assert locate(walked, 2, 5).kind == "contract" and walked.reads > 40_000  # type: ignore[union-attr]
    moved = text.replace("kind: contract\n", "name2: x\nkind: pipeline\n")
    assert locate(moved.split("\n"), 2, 5, report).kind == "pipeline"  # type: ignore[union-attr]
    split = text.replace("kind: contract\n", "---\nkind: contract\n")  # a `---` between the cursor and it: another document's
    assert locate(split.split("\n"), 2, 5).kind is None  # type: ignore[union-attr]

