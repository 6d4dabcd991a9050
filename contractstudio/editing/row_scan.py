"""Rows of an editor's lines found by how they begin, searched in C a block of rows at a time.

Where the cursor is (editing/cursor.py) is read from the rows around it, walking up to the rows that open its
mapping or list and down to its siblings. In a 5 MB one-document file the cursor's list can have 44,000 items above
it, and a Python step per row was 150-180 ms on the screen's thread for each completion (issue 35.1). Here the rows
are joined a block at a time (the lines are the editor's: there is no joined text to search), each block once per
`Rows` (one per cursor lookup: the lines change with every key), and a regular expression picks the few rows a walk
must read in Python; the rows it only counts (a list's items) are counted in C. Each pattern is anchored on the
newline before a row and matches within that row and the newline after it.

An editor keeps a `BlockMemo` from one lookup to the next: a key changes one block, and the blocks above the cursor,
joined and searched again on every key, were 12-13 ms of each completion in the middle of a 5 MB one-document file.
A kept block is taken again when its rows are the same objects (an edit replaces the rows it changes; compared in C),
with the rows each pattern found in it.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterator, Sequence
from functools import lru_cache
from typing import overload

BLOCK = 2048  # rows joined at a time (about 60 KB of a typical contract)
_FIRST_WINDOW = 2048  # characters of a block searched first, from its end (then the rest of it)


@lru_cache(maxsize=64)
def indented_at_most(col: int) -> re.Pattern[str]:
    """A row whose first character after at most `col` spaces is not a space: every row indented `col` or less that
    is not blank (a candidate: comments, `---` and rows of blanks and tabs are for the caller to skip)."""
    return re.compile(rf"\n {{0,{col}}}[^ \n]")


@lru_cache(maxsize=64)
def item_at(col: int) -> re.Pattern[str]:
    """A row that opens a list item at `col`: `col` spaces, a dash, then a space or the row's end (cursor._DASH)."""
    return re.compile(rf"\n {{{col}}}-(?= |\n)")


@lru_cache(maxsize=64)
def indented_at_most_but_items(col: int) -> re.Pattern[str]:
    """`indented_at_most(col)` without the rows `item_at(col)` matches."""
    return re.compile(rf"\n(?! {{{col}}}-(?= |\n)) {{0,{col}}}[^ \n]")


DOCUMENT_MARKER = re.compile(r"\n---(?=[ \t\n])")  # cursor._DOC_SEP
KIND_KEY = re.compile(r"\nkind:")  # where reading.kinds.KIND_LINE can match
# A row of content: neither blank nor a comment (cursor._blank): its first character that is not white space is not `#`.
CONTENT = re.compile(r"\n[^\S\n]*[^\s#]")


class _Block:
    """One block of rows joined ("\\n" before each row and after the last), and where each pattern matched in it."""

    __slots__ = ("rows", "text", "found")

    def __init__(self, rows: Sequence[str]) -> None:
        self.rows, self.text = rows, "\n" + "\n".join(rows) + "\n"
        self.found: dict[re.Pattern[str], list[int]] = {}

    def starts(self, pattern: re.Pattern[str]) -> list[int]:
        """The offsets of the newlines where `pattern` matches, the whole block searched once."""
        got = self.found.get(pattern)
        if got is None:
            got = self.found[pattern] = list(map(re.Match.start, pattern.finditer(self.text)))  # no Python step a match
        return got


class BlockMemo:
    """The blocks of one editor's lines, kept between lookups (see the module's docstring)."""

    __slots__ = ("blocks",)

    def __init__(self) -> None:
        self.blocks: dict[int, _Block] = {}


class Rows(Sequence[str]):
    """An editor's lines, with each block of BLOCK rows joined at most once (kept in `memo` from one lookup to the next)."""

    __slots__ = ("lines", "memo", "_checked", "starts")

    def __init__(self, lines: Sequence[str], memo: BlockMemo | None = None) -> None:
        self.lines = lines
        self.memo = BlockMemo() if memo is None else memo
        self._checked: set[int] = set()  # blocks compared with the lines in this lookup
        self.starts: dict[int, int] = {}  # row -> `document_start(row)`, each asked several times a lookup
        for k in [k for k in self.memo.blocks if k * BLOCK >= len(lines)]:
            del self.memo.blocks[k]  # the file grew shorter

    @staticmethod
    def of(lines: Sequence[str]) -> Rows:
        return lines if isinstance(lines, Rows) else Rows(lines)

    def __len__(self) -> int:
        return len(self.lines)

    @overload
    def __getitem__(self, index: int) -> str: ...
    @overload
    def __getitem__(self, index: slice) -> Sequence[str]: ...
    def __getitem__(self, index: int | slice) -> str | Sequence[str]:
        return self.lines[index]

    def document_start(self, row: int) -> int:
        """The first row of the `---` document holding `row`: the one after the nearest `---` above it (or 0)."""
        if row not in self.starts:
            self.starts[row] = 0
            for n, (k, text, first, _, pos, endpos) in enumerate(_pieces(self, 0, row, up=True)):
                if n == 0:  # the cursor's block, likely just edited: searched from its end with rfind, not kept
                    at = text.rfind("\n---", pos, endpos)
                    while at >= 0 and text[at + 4] not in " \t\n":
                        at = text.rfind("\n---", pos, at)
                else:
                    found = self.kept(k).starts(DOCUMENT_MARKER)
                    i = bisect.bisect_left(found, endpos - 1)
                    at = found[i - 1] if i and found[i - 1] >= pos else -1
                if at >= 0:
                    self.starts[row] = first + text.count("\n", pos, at) + 1
                    break
        return self.starts[row]

    def kept(self, k: int) -> _Block:
        """Block k, taken from the memo when its rows are the ones the lines hold now."""
        block = self.memo.blocks.get(k)
        if k not in self._checked:
            rows = self.lines[k * BLOCK : (k + 1) * BLOCK]
            if block is None or block.rows != rows:  # the same row objects: compared by identity, in C
                block = self.memo.blocks[k] = _Block(rows)
            self._checked.add(k)
        assert block is not None
        return block

    def block(self, k: int) -> str:
        return self.kept(k).text

    def opening(self, k: int, row: int) -> int:
        """The offset in block k's text of the newline that opens `row` (a row of the block, or the one after it)."""
        first = k * BLOCK
        if row == first:
            return 0
        if row == min(first + BLOCK, len(self.lines)):
            return len(self.block(k)) - 1
        return sum(map(len, self.lines[first:row])) + row - first


def _pieces(rows: Rows, start: int, stop: int, up: bool) -> Iterator[tuple[int, str, int, int, int, int]]:
    """(block, its text, first row, the row after the last, the first row's newline's offset, the offset just past the
    newline after the last row) for the rows in [start, stop), block by block, the lowest first when `up`."""
    stop = min(stop, len(rows))
    if start >= stop:
        return
    blocks = range((stop - 1) // BLOCK, start // BLOCK - 1, -1) if up else range(start // BLOCK, (stop - 1) // BLOCK + 1)
    for k in blocks:
        first, last = max(start, k * BLOCK), min(stop, (k + 1) * BLOCK)
        text = rows.block(k)
        yield k, text, first, last, rows.opening(k, first), rows.opening(k, last) + 1


def rows_up(lines: Sequence[str], stop: int, start: int, pattern: re.Pattern[str],
            counted: re.Pattern[str] | None = None) -> Iterator[tuple[int | None, int]]:
    """The rows in [stop, start) that `pattern` matches, from start - 1 up: (row, how many rows `counted` matches
    between it and the row yielded before), then (None, the count between the last row and `stop`).

    Regular expressions only search forward. The cursor's block (likely just edited) is searched in two windows from
    its end: its last _FIRST_WINDOW characters (what a walk needs is usually a few rows up), then the rest at once.
    The blocks above it are searched whole, once while their rows stay the same (`BlockMemo`)."""
    rows = Rows.of(lines)
    between = 0
    for n, (k, text, _, last, pos, endpos) in enumerate(_pieces(rows, stop, start, up=True)):
        end = endpos - 1  # the newline after the rows left to search
        row, at_row = last, end  # a row and the newline that opens it: rows are counted from there, as needed
        if n:
            block = rows.kept(k)
            found, items = block.starts(pattern), block.starts(counted) if counted is not None else None
            for at in reversed(found[bisect.bisect_left(found, pos) : bisect.bisect_left(found, end)]):
                if items is not None:
                    between += bisect.bisect_left(items, end) - bisect.bisect_left(items, at + 1)
                row -= text.count("\n", at, at_row)
                at_row = at
                yield row, between
                between, end = 0, at
            if items is not None:
                between += bisect.bisect_left(items, end) - bisect.bisect_left(items, pos)
            continue
        lo = max(text.rfind("\n", pos, end - _FIRST_WINDOW), pos) if end - _FIRST_WINDOW > pos else pos
        while True:
            for at in reversed([m.start() for m in pattern.finditer(text, lo, end + 1)]):
                if counted is not None:  # a match sees the newline at `end`, where its row ends
                    between += len(counted.findall(text, at + 1, end + 1))
                row -= text.count("\n", at, at_row)
                at_row = at
                yield row, between
                between, end = 0, at
            if counted is not None:
                between += len(counted.findall(text, lo, end + 1))
            if lo == pos:
                break
            end, lo = lo, pos
    yield None, between


def rows_down(lines: Sequence[str], start: int, stop: int, pattern: re.Pattern[str]) -> Iterator[int]:
    """The rows in [start, stop) that `pattern` matches, from `start` down."""
    for _, text, first, _, pos, endpos in _pieces(Rows.of(lines), start, stop, up=False):
        row, at = first, pos
        for m in pattern.finditer(text, pos, endpos):
            row += text.count("\n", at, m.start())
            at = m.start()
            yield row


def first_row_down(lines: Sequence[str], start: int, stop: int, pattern: re.Pattern[str]) -> int | None:
    """The first row in [start, stop) that `pattern` matches, or None."""
    return next(rows_down(lines, start, stop, pattern), None)
