"""An index of many names for 'did you mean': the same answer as `difflib.get_close_matches(word, names, n=1)`, found
by comparing the word with few of them.

difflib scores a name by `SequenceMatcher.ratio()` (2 x matching characters / both lengths) and keeps the best at or
above the cutoff, the greater name on a tie. A ratio is at most its `quick_ratio()`, the same formula over the
letters the two share as multisets; names with the same letters (a pipeline's 44,000 step ids share a few thousand
multisets) share that bound. So the index groups the names by their letters once, and a question computes each
group's bound, then the ratio of the names group by group from the highest bound down, and stops at the first group
whose bound is below the best ratio found: no name after it can beat or tie it.
"""

from __future__ import annotations

from collections.abc import Iterable
from difflib import SequenceMatcher
from typing import Any


def _ratio(matches: int, length: int) -> float:
    return 2.0 * matches / length if length else 1.0  # difflib's own _calculate_ratio: the same float for a bound


class CloseNames:
    """The string names of a collection (any other value is ignored, as `did_you_mean` ignores it), by their letters."""

    def __init__(self, names: Iterable[Any]) -> None:
        groups: dict[str, list[str]] = {}
        for name in names:
            if isinstance(name, str):
                groups.setdefault("".join(sorted(name)), []).append(name)
        self._groups = [(len(letters), _counts(letters), members) for letters, members in groups.items()]

    def closest(self, word: str, cutoff: float = 0.6) -> str | None:
        """The name `difflib.get_close_matches(word, names, n=1, cutoff=cutoff)` gives (None: it gives none)."""
        counts, size = _counts(word), len(word)
        bounds = []
        for length, letters, members in self._groups:
            if _ratio(min(length, size), length + size) < cutoff:
                continue
            shared = sum(min(n, counts.get(ch, 0)) for ch, n in letters.items())
            bound = _ratio(shared, length + size)
            if bound >= cutoff:
                bounds.append((bound, members))
        bounds.sort(key=lambda pair: pair[0], reverse=True)
        matcher = SequenceMatcher()
        matcher.set_seq2(word)  # as difflib: the word is the second sequence (its autojunk applies to it)
        best: tuple[float, str] | None = None
        for bound, members in bounds:
            if best is not None and bound < best[0]:
                break
            for name in members:
                matcher.set_seq1(name)
                score = matcher.ratio()
                if score >= cutoff and (best is None or (score, name) > best):
                    best = (score, name)
        return best[1] if best is not None else None


def _counts(text: str) -> dict[str, int]:
    counts: dict[str, int] = {}
    for ch in text:
        counts[ch] = counts.get(ch, 0) + 1
    return counts
