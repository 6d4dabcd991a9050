"""A list made of pieces of earlier lists: the reader's flat lists of nodes, carried from one reading to the next.

A reading keeps every scalar and every mapping of its document in order, in two flat lists (the secrets rule scans
them; reading/reread.py finds an entry's nodes in them by line). After an edit the new lists are the old ones with
the entry's nodes replaced. Copying 600,000 references into a new list per keystroke cost 30-40 ms of one C call
(each node's count touched, all over memory) in the 5 MB contract of issue 35.1, holding the interpreter the
whole time while the screen's thread waited to draw the key. So a new list shares the old one's pieces: a splice
costs a few steps per piece, and the pieces are copied into one list only when there are many of them.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Iterator, Sequence
from itertools import accumulate, islice
from typing import Any, Generic, TypeVar, overload

T = TypeVar("T")

MAX_PIECES = 64  # each splice of a new place adds up to two pieces; past this many, one list again


class Spliced(Sequence[T], Generic[T]):
    """An immutable sequence: pieces (list, start, stop) of lists nobody changes, one after another."""

    __slots__ = ("_pieces", "_ends")

    def __init__(self, pieces: list[tuple[list[T], int, int]]) -> None:
        self._pieces = [p for p in pieces if p[2] > p[1]]
        self._ends = list(accumulate(stop - start for _, start, stop in self._pieces))  # each piece's end index

    @classmethod
    def of(cls, items: Sequence[T]) -> Spliced[T]:
        """`items` as pieces (a list is shared, not copied: the reader never changes its lists once built)."""
        if isinstance(items, Spliced):
            return items
        return cls([(items if isinstance(items, list) else list(items), 0, len(items))])

    def __len__(self) -> int:
        return self._ends[-1] if self._ends else 0

    @overload
    def __getitem__(self, index: int) -> T: ...
    @overload
    def __getitem__(self, index: slice) -> list[T]: ...
    def __getitem__(self, index: int | slice) -> Any:
        if isinstance(index, slice):
            start, stop, step = index.indices(len(self))
            if step != 1:
                return list(self)[index]
            return [item for items, lo, hi in self._cut(start, stop) for item in items[lo:hi]]
        size = len(self)
        if index < 0:
            index += size
        if not 0 <= index < size:
            raise IndexError(index)
        k = bisect_right(self._ends, index)
        items, start, _ = self._pieces[k]
        return items[start + index - (self._ends[k - 1] if k else 0)]

    def __iter__(self) -> Iterator[T]:
        for items, start, stop in self._pieces:
            yield from islice(items, start, stop)

    def _cut(self, start: int, stop: int) -> list[tuple[list[T], int, int]]:
        """The pieces of indexes [start, stop)."""
        out = []
        begin = 0
        for (items, lo, _hi), end in zip(self._pieces, self._ends, strict=True):
            if end > start and begin < stop:
                out.append((items, lo + max(start - begin, 0), lo + min(stop, end) - begin))
            begin = end
            if begin >= stop:
                break
        return out

    def spliced(self, start: int, stop: int, new: list[T]) -> Spliced[T]:
        """This sequence with items [start, stop) replaced by `new` (which nobody changes afterwards)."""
        pieces = self._cut(0, start) + [(new, 0, len(new))] + self._cut(stop, len(self))
        if len(pieces) > MAX_PIECES:
            whole: list[T] = [item for items, lo, hi in pieces for item in items[lo:hi]]
            pieces = [(whole, 0, len(whole))]
        return Spliced(pieces)
