"""The indexed 'did you mean' (findings/close_names.py) answers as difflib's `get_close_matches(word, names, n=1)`,
the function `did_you_mean` used over every name before (issue 35.1): the same name, or none, on random names and
misspellings of them."""

from __future__ import annotations

import difflib

from hypothesis import given, settings
from hypothesis import strategies as st

from contractstudio.findings.close_names import CloseNames
from contractstudio.findings.diagnostics import did_you_mean

LETTERS = st.sampled_from("ab_01xyz")  # few letters: many names share their letters, and many ratios tie
NAMES = st.lists(st.text(LETTERS, max_size=9), max_size=40)


def oracle(word: str, names: list[str]) -> str | None:
    close = difflib.get_close_matches(word, names, n=1, cutoff=0.6)
    return close[0] if close else None


def misspelt(name: str, edit: tuple[int, int, str]) -> str:
    kind, at, letter = edit
    at = at % (len(name) + 1)
    if kind == 0:
        return name[:at] + letter + name[at:]
    if kind == 1:
        return name[:at] + name[at + 1:]
    return name[:at] + letter + name[at + 1:]


@settings(max_examples=600, deadline=None)
@given(names=NAMES, pick=st.integers(0, 1000), edits=st.lists(st.tuples(st.integers(0, 2), st.integers(0, 20), LETTERS),
                                                                max_size=3), other=st.text(LETTERS, max_size=12))
def test_the_index_answers_as_difflib_over_every_name(names: list[str], pick: int, edits: list[tuple[int, int, str]],
                                                     other: str) -> None:
    word = names[pick % len(names)] if names else other
    for edit in edits:
        word = misspelt(word, edit)
    index = CloseNames(names)
    assert index.closest(word) == oracle(word, names)
    assert index.closest(other) == oracle(other, names)


@settings(max_examples=60, deadline=None)
@given(word=st.text(LETTERS, min_size=190, max_size=230), cut=st.integers(0, 40))
def test_a_long_word_junked_by_difflib_answers_the_same(word: str, cut: int) -> None:
    """difflib junks a word's popular letters from 200 characters on (autojunk): the index scores with the same matcher."""
    names = [word[cut:], word[:-cut or None], word[::-1], word[: len(word) // 2] * 2, "ab" * 100]
    assert CloseNames(names).closest(word) == oracle(word, names)


def test_did_you_mean_takes_the_index_or_the_names_and_ignores_what_is_not_a_string() -> None:
    names = ["b100_dispatch", "b100_route", "b10_dispatch", 7, None]
    for word in ["b100_dispatchx", "b100_dispach", "zzz", "b01_dispatch"]:
        assert did_you_mean(word, CloseNames(names)) == did_you_mean(word, names)
    assert did_you_mean("b100_dispatchx", CloseNames(names)) == "did you mean 'b100_dispatch'?"
    assert did_you_mean("zzz", CloseNames(names)) is None
