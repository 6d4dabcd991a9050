"""Where each line of a text starts, kept from one version of the text to the next at the cost of the edit.

reading/reread.py asks, per keystroke, where a few lines start and which line holds an offset. Listing every
line's start again per keystroke was a Python loop over the whole text: 90 ms of a 5 MB file's 120 ms per key
(issue 35.1, bench/bench_entry_edit.py). So the list is made once per file (in C: split, lengths, running sum)
and then carried: the starts sit in blocks of lines, each block with a bias added to its values, and an edit
rebuilds the one or two blocks it touches and moves the biases of the blocks after it (a few hundred steps
for 160,000 lines). The blocks are never changed in place, so an earlier version stays as it was.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Sequence
from itertools import accumulate, repeat
from operator import add

BLOCK = 512  # lines per block: an edit costs about BLOCK + lines / BLOCK steps
# Rows summed per call in C: a 5 MB text's 200,000 at once held the interpreter 15-20 ms (with its split) in the
# studio's analysis worker while a key waited for it; between pieces other threads get their turn.
_PIECE_ROWS = 8192


class LineStarts:
    """The offset of each line's first character (line n at index n - 1), then the text's length when the text
    does not end with a line break: the sequence `reread` reads (values rise strictly)."""

    __slots__ = ("_blocks", "_bias", "_firsts", "_heads", "_size")

    def __init__(self, blocks: list[list[int]], bias: list[int]) -> None:
        self._blocks, self._bias = blocks, bias
        self._firsts = list(accumulate(map(len, blocks), initial=0))  # the index of each block's first value
        self._size = self._firsts.pop()
        self._heads = list(map(add, (b[0] for b in blocks), bias))  # each block's first value

    @classmethod
    def of(cls, rows: Sequence[str]) -> LineStarts:
        """The starts of a text's rows (the text cut at "\\n": `reading.source.text_rows`, split once per text and
        shared with the analysis that split it)."""
        # Each line's start is the running sum of the lengths before it, a break each: in C, no loop per line, a
        # piece of _PIECE_ROWS rows at a time.
        starts = [0]
        for at in range(0, len(rows), _PIECE_ROWS):
            starts += accumulate(map(add, map(len, rows[at : at + _PIECE_ROWS]), repeat(1)), initial=starts.pop())
        starts.pop()  # the start of a row after the last one
        if rows[-1]:  # the text does not end with a line break: its length comes last
            starts.append(starts[-1] + len(rows[-1]))
        return cls._split(starts)

    @classmethod
    def _split(cls, values: list[int]) -> LineStarts:
        blocks = [values[at : at + BLOCK] for at in range(0, len(values), BLOCK)]
        return cls(blocks, [0] * len(blocks))

    def __len__(self) -> int:
        return self._size

    def __getitem__(self, index: int) -> int:
        if index < 0:
            index += self._size
        if not 0 <= index < self._size:
            raise IndexError(index)
        k = bisect_right(self._firsts, index) - 1
        return self._blocks[k][index - self._firsts[k]] + self._bias[k]

    def line_of(self, offset: int) -> int:
        """The 1-based line that starts at or holds `offset` (0 before the first start)."""
        k = bisect_right(self._heads, offset) - 1
        if k < 0:
            return 0
        return self._firsts[k] + bisect_right(self._blocks[k], offset - self._bias[k])

    def to_list(self) -> list[int]:
        return [v + bias for block, bias in zip(self._blocks, self._bias, strict=True) for v in block]

    def replaced(self, first: int, stop: int, new: list[int], shift: int) -> LineStarts:
        """The starts after an edit: values [first, stop) replaced by `new` (already the new text's offsets) and
        every value from `stop` on moved by `shift` characters. `stop` is below len(self): an edit reaching the
        end is read whole (the last value may then be the text's length, or not)."""
        ka = bisect_right(self._firsts, first) - 1
        kb = bisect_right(self._firsts, stop) - 1  # the block holding the first value kept (moved)
        lo = self._firsts[ka]
        touched = [v + self._bias[k] for k in range(ka, kb + 1) for v in self._blocks[k]]
        merged = touched[: first - lo] + new + [v + shift for v in touched[stop - lo :]]
        blocks = [merged[at : at + BLOCK] for at in range(0, len(merged), BLOCK)]
        after = LineStarts(self._blocks[:ka] + blocks + self._blocks[kb + 1 :],
                           self._bias[:ka] + [0] * len(blocks) + [b + shift for b in self._bias[kb + 1 :]])
        if len(after._blocks) > 2 * (after._size // BLOCK) + 16:  # lines typed one by one leave small blocks behind
            return LineStarts._split(after.to_list())
        return after
