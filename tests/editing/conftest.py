"""Editing-layer tests: texts with a cursor mark (‸) -> the report, the text without the mark, and the position."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest

from contractstudio.analysis.check import FileReport, check_text

MARK = "‸"
SAMPLES = Path(__file__).resolve().parents[2] / "samples"


@dataclass
class Marked:
    text: str
    line: int
    column: int
    report: FileReport


def marked(text: str, report_text: str | None = None, path: str = "doc.yaml") -> Marked:
    """Split a marked text; the report is of `report_text` (an older version of the buffer) or of the text itself."""
    i = text.index(MARK)
    clean = text.replace(MARK, "", 1)
    line = clean.count("\n", 0, i) + 1
    column = i - (clean.rfind("\n", 0, i) + 1) + 1
    return Marked(clean, line, column, check_text(report_text if report_text is not None else clean, path))


def position(text: str, needle: str, offset: int = 0) -> tuple[int, int]:
    """The 1-based position of `needle` (plus offset characters) in a text."""
    i = text.index(needle) + offset
    return text.count("\n", 0, i) + 1, i - (text.rfind("\n", 0, i) + 1) + 1


@pytest.fixture
def sample() -> object:
    def read(name: str) -> str:
        return (SAMPLES / name).read_text(encoding="utf-8")

    return read
