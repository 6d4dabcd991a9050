"""The project's own regular expressions run in linear time over any text (issue 18.7).

Each compiled pattern of every module is run, as its module runs it (searched, or matched at one place), over
adversarial texts built from its own characters: one character repeated, then one that breaks the match. The
work is counted, not timed (tests/regex_work.py): doubling the text must no more than about double the count.
A quadratic pattern (`[A-Za-z0-9_-]*$` searched at the end of a long line: 26 s at 100,000 characters) counts
four times as much. The texts that cost most are then run through `re` itself at 1 MB.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import re
from typing import Any

import pytest
from regex_work import Work, searched_methods

import contractstudio

SMALL, LARGE = 64, 128  # above every counted repeat of the project's patterns ({50,} at most)
RANK = 16  # the texts are ranked by their work at this length, the costliest measured at SMALL and LARGE
ONE_MB = 1_000_000
COMMON = {"\x01", "\n", " ", "a", "0", "_", "-", ".", ":", "#", "'", '"'}
ENDS = ["", "\x01", "\n", " ", ":", "#", ".", '"']
SEARCHING = {"search", "finditer", "findall", "sub", "subn", "split"}


def _patterns() -> list[tuple[str, re.Pattern[str], bool]]:
    found: dict[str, tuple[str, re.Pattern[str], bool]] = {}
    for info in pkgutil.walk_packages(contractstudio.__path__, "contractstudio."):
        if info.name.endswith("__main__"):
            continue  # running it starts a face
        module = importlib.import_module(info.name)
        try:
            source = inspect.getsource(module)
        except OSError:
            continue
        for name, value in vars(module).items():
            if isinstance(value, re.Pattern) and isinstance(value.pattern, str) and value.pattern not in found:
                used = searched_methods(source, name)
                found[value.pattern] = (f"{info.name}.{name}", value, not used or bool(used & SEARCHING))
    return sorted(found.values(), key=lambda p: p[0])


PATTERNS = _patterns()


def _characters(items: Any, out: set[str]) -> None:
    from re import _constants as C  # type: ignore[attr-defined]

    for op, av in items:
        if op is C.LITERAL:
            out.add(chr(av))
        elif op is C.IN:
            for member, value in av:
                if member is C.LITERAL:
                    out.add(chr(value))
                elif member is C.RANGE:
                    out.add(chr(value[0]))
        elif op is C.SUBPATTERN:
            _characters(av[-1], out)
        elif op is C.BRANCH:
            for alt in av[1]:
                _characters(alt, out)
        elif op in (C.MAX_REPEAT, C.MIN_REPEAT, C.ASSERT, C.ASSERT_NOT):
            _characters(av[-1], out)


def _prefixes(items: Any, out: set[str]) -> None:
    """Runs of literal characters anywhere in the pattern (`sk-`, `for `): texts that get past a pattern's start."""
    from re import _constants as C  # type: ignore[attr-defined]

    run = ""
    for op, av in list(items) + [(None, None)]:
        if op is C.LITERAL:
            run += chr(av)
            continue
        if len(run) >= 2:
            out.add(run)
        run = ""
        if op is C.SUBPATTERN:
            _prefixes(av[-1], out)
        elif op is C.BRANCH:
            for alt in av[1]:
                _prefixes(alt, out)
        elif op in (C.MAX_REPEAT, C.MIN_REPEAT):
            _prefixes(av[-1], out)


def _texts(pattern: re.Pattern[str]) -> list[tuple[str, str, str]]:
    """(prefix, repeated character, breaking end) triples to build texts of any length from."""
    from re import _parser as P  # type: ignore[attr-defined]

    parsed = P.parse(pattern.pattern, pattern.flags)
    own: set[str] = set()
    _characters(parsed, own)
    prefixes: set[str] = set()
    _prefixes(parsed, prefixes)
    # the characters that end or fill most runs, then a few more of the pattern's own (bounded: a pattern of twenty
    # token shapes would otherwise make thousands of texts)
    repeated = sorted(COMMON | set(sorted(own - COMMON)[:6]))
    return [(prefix, c, end) for prefix in ["", *sorted(prefixes)[:3]] for c in repeated for end in ENDS if end != c]


def _text(triple: tuple[str, str, str], n: int) -> str:
    prefix, c, end = triple
    return prefix + c * n + end


@pytest.mark.slow  # about 12 s of CPU for all the patterns together, most of it the two redaction patterns
@pytest.mark.parametrize("name,pattern,search", PATTERNS, ids=[p[0] for p in PATTERNS])
def test_a_pattern_of_the_project_does_linear_work_on_any_text(name: str, pattern: re.Pattern[str], search: bool) -> None:
    work = Work(pattern)
    triples = _texts(pattern)
    ranked = sorted(((work.count(_text(t, RANK), search), t) for t in triples), reverse=True)
    costliest = [t for _, t in ranked[:4]]
    for triple in costliest:  # the costliest texts, doubled
        small, large = work.count(_text(triple, SMALL), search), work.count(_text(triple, LARGE), search)
        assert large <= 2.5 * small, (f"{name} ({'searched' if search else 'matched'}) is not linear on "
                                      f"{_text(triple, 12)!r}...: {small} steps at {SMALL}, {large} at {LARGE}")
    for triple in costliest[:2]:
        text = _text(triple, ONE_MB)
        pattern.search(text) if search else pattern.match(text)  # finishes: 1 MB of the costliest shape


def test_the_counter_tells_the_cursor_words_old_quadratic_pattern_from_a_linear_one() -> None:
    quadratic, linear = Work(re.compile(r"[A-Za-z0-9_\-]*$")), Work(re.compile(r"^[A-Za-z0-9_\-]*"))
    text = {n: "a" * n + " " for n in (SMALL, LARGE)}
    assert quadratic.count(text[LARGE], True) > 3.5 * quadratic.count(text[SMALL], True)
    assert linear.count(text[LARGE], True) <= 2.1 * linear.count(text[SMALL], True)


def test_the_word_at_the_end_of_a_long_line_is_found_by_walking_back() -> None:
    from contractstudio.editing.cursor import locate, word_before

    assert word_before("key: some-value_1") == "some-value_1"
    assert word_before("a b!") == "" and word_before("") == ""
    line = "x: " + "a" * ONE_MB
    cursor = locate(line, 1, len(line) + 1)
    assert cursor is not None and len(cursor.word) == ONE_MB and cursor.role == "value"
