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
from collections.abc import Iterator, Sequence
from itertools import accumulate, repeat
from operator import add
from threading import Lock
from typing import overload

BLOCK = 512  # lines per block: an edit costs about BLOCK + lines / BLOCK steps


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
    def of(cls, text: str) -> LineStarts:
        # Each line's start is the running sum of the lengths before it, a break each: all in C, no loop per line.
        starts = list(accumulate(map(add, map(len, text.split("\n")), repeat(1)), initial=0))
        starts.pop()  # the start of a line after the last one
        if starts[-1] != len(text):
            starts.append(len(text))
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


class Rows(Sequence[str]):
    """A text's rows (cut at "\\n" only), each sliced from the text when asked: no list of 100,000 strings made per
    keystroke (splitting 5 MB into rows cost 27 ms a key in the studio's worker)."""

    __slots__ = ("_text", "_starts", "_whole", "_count")

    def __init__(self, text: str, starts: LineStarts, count: int | None = None) -> None:
        self._text, self._starts = text, starts
        # One row per start, but the last start is the text's end when no line break ends it (no row starts there).
        self._whole = len(starts) if not text or text.endswith("\n") else len(starts) - 1
        self._count = self._whole if count is None else count

    def __len__(self) -> int:
        return self._count

    def first(self, count: int) -> Rows:
        """The first `count` rows, as rows."""
        return Rows(self._text, self._starts, min(count, self._count))

    @overload
    def __getitem__(self, index: int) -> str: ...
    @overload
    def __getitem__(self, index: slice) -> tuple[str, ...]: ...
    def __getitem__(self, index: int | slice) -> str | tuple[str, ...]:
        if isinstance(index, slice):
            start, stop, step = index.indices(self._count)
            if step != 1 or start >= stop:
                return tuple(self[i] for i in range(start, stop, step))
            return tuple(self._text[self._starts[start] : self._end(stop - 1)].split("\n"))
        if index < 0:
            index += self._count
        if not 0 <= index < self._count:
            raise IndexError(index)
        return self._text[self._starts[index] : self._end(index)]

    def _end(self, row: int) -> int:
        """Where a row ends: at its line break, or at the text's end (the last row)."""
        return self._starts[row + 1] - 1 if row + 1 < self._whole else len(self._text)

    def __iter__(self) -> Iterator[str]:
        return iter(self[0 : self._count])

    def __eq__(self, other: object) -> bool:
        return tuple(self) == (tuple(other) if isinstance(other, Rows) else other)

    __hash__ = None  # type: ignore[assignment]


# The line starts of the texts read last (reading/reread.py tells them), by the text's identity: a text's rows are
# then sliced from it (`rows_of`), not split. Each entry holds its text, so an id is never another text's.
_KNOWN: dict[int, tuple[str, LineStarts]] = {}
_KNOWN_MAX = 4
_known_lock = Lock()  # the studio's analysis worker tells, its screen's thread asks


def known(text: str, starts: LineStarts) -> None:
    """`starts` are `text`'s line starts (this very string object's)."""
    with _known_lock:
        _KNOWN.pop(id(text), None)
        _KNOWN[id(text)] = (text, starts)
        while len(_KNOWN) > _KNOWN_MAX:
            del _KNOWN[next(iter(_KNOWN))]


def rows_of(text: str) -> Rows | None:
    """The text's rows from its known line starts; None when they are not known."""
    found = _KNOWN.get(id(text))
    return Rows(text, found[1]) if found is not None and found[0] is text else None
