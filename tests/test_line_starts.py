"""The reader's carried structures: line starts kept across edits (reading/line_starts.py) and lists made of pieces
of earlier lists (reading/spliced.py) answer exactly what a list made anew would."""

from __future__ import annotations

from bisect import bisect_right

from hypothesis import given, settings
from hypothesis import strategies as st

from contractstudio.reading import line_starts
from contractstudio.reading.line_starts import LineStarts
from contractstudio.reading.spliced import MAX_PIECES, Spliced

TEXT = st.text(alphabet="ab \n", max_size=400)


def plain_starts(text: str) -> list[int]:
    out = [0] + [i + 1 for i, c in enumerate(text) if c == "\n"]
    if out[-1] != len(text):
        out.append(len(text))
    return out


@given(TEXT, st.sampled_from([1, 2, 7, 8192]))
def test_the_starts_of_a_text_are_each_line_s_first_offset_then_its_length(text: str, piece: int) -> None:
    whole, line_starts._PIECE_ROWS = line_starts._PIECE_ROWS, piece  # rows summed a few at a time, or all at once
    try:
        starts = LineStarts.of(text.split("\n"))
    finally:
        line_starts._PIECE_ROWS = whole
    assert starts.to_list() == plain_starts(text)
    assert [starts[i] for i in range(len(starts))] == plain_starts(text)
    assert [starts.line_of(at) for at in range(len(text) + 1)] == [bisect_right(plain_starts(text), at)
                                                                 for at in range(len(text) + 1)]


@settings(max_examples=300)
@given(text=TEXT, edits=st.lists(st.tuples(st.floats(0, 1), st.floats(0, 1), st.text(alphabet="xy\n", max_size=30)),
                                 max_size=12), block=st.sampled_from([1, 2, 3, 512]))
def test_starts_carried_edit_after_edit_are_the_new_text_s(text: str, edits: list[tuple[float, float, str]], block: int) -> None:
    # What reading/reread.py does: whole lines [first, stop) replaced by new whole lines, never the text's last line.
    old_block = line_starts.BLOCK
    line_starts.BLOCK = block  # small blocks: every edit crosses blocks, and the rebuild after many small ones runs
    try:
        text += "\nend\n"
        starts = LineStarts.of(text.split("\n"))
        for a, b, new in edits:
            lines = len(starts) - 1  # the last start is the text's end (it ends with a break)
            first = int(a * (lines - 1))
            stop = first + int(b * (lines - 1 - first))
            begin, end = starts[first], starts[stop]
            chunk = new if new.endswith("\n") else new + "\n"
            text = text[:begin] + chunk + text[end:]
            breaks = [begin + i + 1 for i, c in enumerate(chunk[:-1]) if c == "\n"]
            starts = starts.replaced(first, stop, [begin, *breaks], len(chunk) - (end - begin))
            assert starts.to_list() == plain_starts(text)
            assert [starts.line_of(at) for at in range(0, len(text) + 1, 7)] == [
                bisect_right(plain_starts(text), at) for at in range(0, len(text) + 1, 7)]
    finally:
        line_starts.BLOCK = old_block


@settings(max_examples=300)
@given(size=st.integers(0, 60), splices=st.lists(st.tuples(st.floats(0, 1), st.floats(0, 1), st.integers(0, 4)), max_size=80))
def test_a_list_spliced_again_and_again_is_the_list_spliced_the_same(size: int, splices: list[tuple[float, float, int]]) -> None:
    plain = list(range(size))
    pieces: Spliced[int] = Spliced.of(plain[:])
    fresh = 1000
    for a, b, n in splices:
        start = int(a * len(plain))
        stop = start + int(b * (len(plain) - start))
        new = list(range(fresh, fresh + n))
        fresh += n
        plain[start:stop] = new
        pieces = pieces.spliced(start, stop, new)
        assert list(pieces) == plain and len(pieces) == len(plain)
        assert [pieces[i] for i in range(-len(plain), len(plain))] == plain + plain
        assert pieces[start : stop + 3] == plain[start : stop + 3] and pieces[::2] == plain[::2]
        assert len(pieces._pieces) <= MAX_PIECES


def test_a_5_mb_text_s_starts_are_listed_a_piece_at_a_time(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    # Issue 35.1: the first edit after a 5 MB file was read listed its line starts in one split and one running sum,
    # each a single call in C: the analysis held the interpreter 15-20 ms and a key typed meanwhile waited for it
    # (the slowest keys in the middle of the one-document files). Now from the rows the analysis split already, summed
    # a piece at a time: between two pieces the screen's thread gets its turn.
    from itertools import accumulate

    sums: list[int] = []

    def counted(*args, **kwargs):  # type: ignore[no-untyped-def]
        sums.append(1)
        return accumulate(*args, **kwargs)

    monkeypatch.setattr(line_starts, "accumulate", counted)  # one running sum per piece (and one for the blocks)
    text = "".join(f"  - name: ex-{n}\n    input: {{query: q{n}}}\n" for n in range(120_000))
    rows = text.split("\n")
    assert LineStarts.of(rows).to_list() == plain_starts(text)
    assert len(sums) > len(rows) // line_starts._PIECE_ROWS >= 16
