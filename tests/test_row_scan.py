"""The rows editing/row_scan.py finds in C are those the cursor's walks tested one row at a time in Python (issue 35.1:
the walks were 150-180 ms a completion in the middle of a 5 MB one-document file)."""

from __future__ import annotations

import re
from collections.abc import Callable

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from contractstudio.editing import cursor, row_scan
from contractstudio.editing.row_scan import (
    CONTENT,
    DOCUMENT_MARKER,
    KIND_KEY,
    first_row_down,
    indented_at_most,
    indented_at_most_but_items,
    item_at,
    rows_down,
    rows_up,
)

PIECES = ["", " ", "  ", "    ", "-", "- ", "-x", "---", "--- #", "----", "kind:", "kind: contract", "key: v", "#c",
          "\t", "\r", " \t", "a", "- - b", "-\r", "-\t", "  -\t", "--- x", "---\t", "\u3000", "|"]
rows_st = st.lists(st.lists(st.sampled_from(PIECES), max_size=4).map("".join), max_size=40)


def _indent(row: str) -> int:
    return len(row) - len(row.lstrip(" "))


def _blank(row: str) -> bool:
    return cursor._blank(row)


def _item(row: str, col: int) -> bool:
    return _indent(row) == col and re.match(r"-(?: +|$)", row[col:]) is not None  # cursor._DASH at `col`


NAIVE = {
    "indented": lambda row, col: _indent(row) <= col and row.lstrip(" ") != "",
    "item": _item,
    "indented, not an item": lambda row, col: _indent(row) <= col and row.lstrip(" ") != "" and not _item(row, col),
    "marker": lambda row, col: cursor._DOC_SEP.match(row) is not None,
    "content": lambda row, col: not _blank(row),
    "kind": lambda row, col: row.startswith("kind:"),
}
PATTERN: dict[str, Callable[[int], re.Pattern[str]]] = {
    "indented": indented_at_most, "item": item_at, "indented, not an item": indented_at_most_but_items,
           "marker": lambda col: DOCUMENT_MARKER, "content": lambda col: CONTENT, "kind": lambda col: KIND_KEY}


@pytest.fixture(autouse=True, params=[3, 2048])
def block(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(row_scan, "BLOCK", request.param)  # blocks of 3 rows: every range crosses blocks
    monkeypatch.setattr(row_scan, "_FIRST_WINDOW", 4 if request.param == 3 else 2048)  # windows of a few rows


@settings(max_examples=300, deadline=None)
@given(rows_st, st.integers(0, 45), st.integers(0, 45))
def test_rows_found_down_are_those_each_row_s_own_test_picks(rows: list[str], one: int, other: int) -> None:
    start, stop = sorted((one, other))
    for what in NAIVE:
        for col in range(5):
            want = [r for r in range(start, min(stop, len(rows))) if NAIVE[what](rows[r], col)]
            assert list(rows_down(rows, start, stop, PATTERN[what](col))) == want, (what, col)
            assert first_row_down(rows, start, stop, PATTERN[what](col)) == (want[0] if want else None)


@settings(max_examples=300, deadline=None)
@given(rows_st, st.integers(0, 45), st.integers(0, 45))
def test_rows_found_up_with_the_items_between_are_those_a_walk_row_by_row_finds(rows: list[str], one: int, other: int) -> None:
    stop, start = sorted((one, other))
    for col in range(5):
        want: list[tuple[int | None, int]] = []
        between = 0
        for r in range(min(start, len(rows)) - 1, stop - 1, -1):
            if NAIVE["indented, not an item"](rows[r], col):
                want.append((r, between))
                between = 0
            elif _item(rows[r], col):
                between += 1
        want.append((None, between))
        assert list(rows_up(rows, stop, start, indented_at_most_but_items(col), item_at(col))) == want, col
        assert [r for r, _ in rows_up(rows, stop, start, indented_at_most(col))][:-1] == [
            r for r in range(min(start, len(rows)) - 1, stop - 1, -1) if NAIVE["indented"](rows[r], col)]


@settings(max_examples=200, deadline=None)
@given(rows_st)
def test_the_documents_start_where_a_row_by_row_reading_says(rows: list[str]) -> None:
    want, content = [], False
    for r, row in enumerate(rows):
        if cursor._DOC_SEP.match(row):
            if content:
                want.append(r)
            content = False
        elif not _blank(row):
            content = True
    assert cursor._document_starts(rows, len(rows)) == want


@settings(max_examples=300, deadline=None)
@given(rows_st, st.integers(0, 45))
def test_a_row_s_document_starts_after_the_nearest_marker_above_it(rows: list[str], row: int) -> None:
    above = [r for r in range(min(row, len(rows))) if cursor._DOC_SEP.match(rows[r])]
    assert row_scan.Rows(rows).document_start(row) == (above[-1] + 1 if above else 0)


edits_st = st.lists(st.tuples(st.sampled_from(["set", "insert", "delete"]), st.integers(0, 45),
                              st.lists(st.sampled_from(PIECES), max_size=3).map("".join)), max_size=6)


@settings(max_examples=200, deadline=None)
@given(rows_st, edits_st, st.integers(0, 45), st.integers(0, 45))
def test_blocks_kept_from_one_lookup_to_the_next_find_what_the_lines_hold_after_each_edit(
        rows: list[str], edits: list[tuple[str, int, str]], one: int, other: int) -> None:
    # the studio keeps the joined blocks of its editor's lines between keys; an edit replaces, adds or removes rows
    # of the same list, and a kept block must never answer for rows it no longer holds
    stop, start = sorted((one, other))
    memo = row_scan.BlockMemo()
    lines = list(rows)
    for what, at, row in [("set", 0, "")] + edits:
        at = min(at, len(lines))
        if what == "set" and at < len(lines):
            lines[at] = row
        elif what == "insert":
            lines.insert(at, row)
        elif what == "delete" and at < len(lines):
            del lines[at]
        kept, fresh = row_scan.Rows(lines, memo), row_scan.Rows(list(lines))
        for col in range(4):
            pattern, items = indented_at_most_but_items(col), item_at(col)
            assert list(rows_up(kept, stop, start, pattern, items)) == list(rows_up(fresh, stop, start, pattern, items))
        assert kept.document_start(start) == fresh.document_start(start)
