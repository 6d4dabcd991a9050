"""Fuzzing export against the analyzer: what `check` accepts, export writes back byte for byte (never exit 3).

Values are built from the pieces where YAML readers disagree (signs, prefixes, underscores, exponents,
special floats, booleans of YAML 1.1, tags, tabs, a %YAML header); the property is that the analyzer
finds every disagreement itself (YML008): ruamel.yaml reads the same data from every file `check`
calls clean, and export writes it unchanged. The long run: .venv/bin/python -m pytest -m fuzz tests/test_fuzz_export.py
"""

from __future__ import annotations

import os

import pytest
from conftest import FUZZ_SEED
from hypothesis import HealthCheck, given, seed, settings
from hypothesis import strategies as st
from second_reader import ruamel_disagrees

from contractstudio.analysis.check import check_text
from contractstudio.export import export_text

PIECES = ["0", "1", "7", "9", "017", "0b", "0o", "0x", "1F", "_", ".", "e", "E", "+", "-", "e+3", "e3", "inf", "Inf", "nan",
          "NaN", ":", "30", "59", "true", "True", "tRUE", "yes", "n", "N", "off", "null", "~", "2020-01-01", "-99", "T10:00:00",
          "Z", " ", "\t", "a", "#", "9" * 10]
TAGS = ["", "", "", "!!int ", "!!float ", "!!bool ", "!!null ", "!!str ", "!!binary ", "!!timestamp "]
HEADERS = ["", "", "%YAML 1.2\n---\n", "%YAML 1.1\n---\n"]
PLACES = [
    "kind: tools\nname: notes\ndescription: {v}\ntools: []\n",
    "kind: tools\nname: notes\ndescription: x\ntools:\n  - name: a\n    params:\n      p: {{type: str, description: {v}}}\n",
    "kind: tools\nname: notes\ndescription: x\ntools:\n  - name: a\n    params:\n      p:\n        type: float\n        default: {v}\n",
]


@st.composite
def documents(draw: st.DrawFn) -> str:
    value = "".join(draw(st.lists(st.sampled_from(PIECES), min_size=1, max_size=5)))
    return draw(st.sampled_from(HEADERS)) + draw(st.sampled_from(PLACES)).format(v=draw(st.sampled_from(TAGS)) + value)


def agrees(text: str) -> None:
    errors = [d for d in check_text(text, "fuzz.tools.yaml").diagnostics if d.severity == "error"]
    exported, refused = export_text(text, "fuzz.tools.yaml")
    if errors:
        assert exported is None
    else:
        assert ruamel_disagrees(text) is None, "check is clean, yet ruamel.yaml reads it differently"
        assert refused == [] and exported == text, f"check is clean, export says: {[d.message for d in refused]}"


_COMMON = dict(deadline=None, suppress_health_check=list(HealthCheck), database=None, derandomize=False)


@seed(FUZZ_SEED)  # a new seed each run (tests/conftest.py prints it)
@settings(max_examples=400, **_COMMON)
@given(documents())
def test_export_fuzz_short(text: str) -> None:
    agrees(text)


@pytest.mark.fuzz
@pytest.mark.timeout(0)
@settings(max_examples=int(os.environ.get("FUZZ_EXAMPLES", "20000")), **_COMMON)
@given(documents())
def test_export_fuzz_long(text: str) -> None:
    agrees(text)
