"""Fuzzing the whole analyzer with hypothesis: mutated samples and fixtures, never an internal error.

A short run is part of the normal suite; the long run (100,000 inputs by default) is on demand:
    .venv/bin/python -m pytest -m fuzz tests/test_fuzz.py          # FUZZ_EXAMPLES=... to change the count
"""

from __future__ import annotations

import os

import pytest
from conftest import FIXTURES, SAMPLES
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from contractstudio.analysis.check import check_text

SEEDS = [p.read_text(encoding="utf-8", errors="replace") for p in sorted(SAMPLES.rglob("*.yaml")) + sorted(FIXTURES.rglob("*.yaml"))]
SEEDS = [s for s in SEEDS if len(s) < 20_000] or ["kind: tools\nname: t\ntools: []\n"]
YAML_CHARS = list("{}[]:,-?&*!|>'\"#%@`~ \n\t0123456789abcxyz_.") + ["\n  ", ": ", "- ", "kind: ", "---\n", "{{", "}}", "**", "__"]


@st.composite
def mutated(draw: st.DrawFn) -> str:
    text = draw(st.sampled_from(SEEDS))
    for _ in range(draw(st.integers(1, 4))):
        op = draw(st.integers(0, 4))
        n = len(text)
        i = draw(st.integers(0, n))
        if op == 0:  # insert YAML-significant junk
            text = text[:i] + "".join(draw(st.lists(st.sampled_from(YAML_CHARS), min_size=1, max_size=8))) + text[i:]
        elif op == 1:  # delete a range
            j = draw(st.integers(i, min(n, i + 40)))
            text = text[:i] + text[j:]
        elif op == 2:  # duplicate or drop a line
            lines = text.splitlines(keepends=True)
            if lines:
                k = draw(st.integers(0, len(lines) - 1))
                lines.insert(k, lines[k]) if draw(st.booleans()) else lines.pop(k)
                text = "".join(lines)
        elif op == 3:  # replace a word-ish run with arbitrary text
            j = draw(st.integers(i, min(n, i + 12)))
            text = text[:i] + draw(st.text(max_size=12)) + text[j:]
        else:  # splice another seed's tail
            other = draw(st.sampled_from(SEEDS))
            text = text[:i] + other[draw(st.integers(0, len(other))):]
    return text


def analyze(text: str) -> None:
    report = check_text(text, "fuzz.yaml")
    for d in report.diagnostics:
        assert d.line >= 1 and d.column >= 1 and d.end_line >= d.line
        assert d.message


_COMMON = dict(deadline=None, suppress_health_check=list(HealthCheck), database=None, derandomize=True)


@settings(max_examples=300, **_COMMON)
@given(mutated())
def test_fuzz_short(text: str) -> None:
    analyze(text)


@pytest.mark.fuzz
@pytest.mark.timeout(0)
@settings(max_examples=int(os.environ.get("FUZZ_EXAMPLES", "100000")), **{**_COMMON, "derandomize": False})
@given(mutated())
def test_fuzz_long(text: str) -> None:
    analyze(text)
