"""The results file: one JSON line per finished row, appended as rows finish, so a run can resume.

Each record is written with one `write` of a whole line and flushed, so a
process killed at any moment leaves finished rows whole and at most one partial
last line; `open_for_resume` cuts that line off before appending.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

_LINE_BREAKS = str.maketrans({"\x85": "\\u0085", "\u2028": "\\u2028", "\u2029": "\\u2029"})


class ResultsError(Exception):
    """A results file that cannot be used (for --resume or --baseline)."""


def line_of(record: dict[str, Any]) -> str:
    """A record as one physical JSON line."""
    text = json.dumps(record, ensure_ascii=False, default=str)
    if "\x85" in text or "\u2028" in text or "\u2029" in text:
        text = text.translate(_LINE_BREAKS)
    return text + "\n"


def read_records(path: Path) -> Iterator[dict[str, Any]]:
    """The complete records of a results file, in order (a partial last line is skipped)."""
    try:
        f = open(path, encoding="utf-8", errors="replace")
    except OSError as err:
        raise ResultsError(f"cannot read {path}: {err.strerror or err}") from None
    with f:
        for number, line in enumerate(f, 1):
            if not line.endswith("\n"):
                return  # cut off mid-write: that row was not finished
            if not line.strip():
                continue
            try:
                value = json.loads(line)
            except json.JSONDecodeError:
                raise ResultsError(f"{path}:{number}: not a results record (not JSON)") from None
            if not isinstance(value, dict) or "key" not in value or "outcome" not in value:
                raise ResultsError(f"{path}:{number}: not a results record (no key/outcome)")
            yield value


def _cut_partial_line(path: Path) -> None:
    """Truncate the file after its last newline (the line a killed run was writing)."""
    size = path.stat().st_size
    if size == 0:
        return
    with open(path, "rb+") as f:
        block = 1 << 16
        end = size
        while end > 0:
            start = max(end - block, 0)
            f.seek(start)
            chunk = f.read(end - start)
            at = chunk.rfind(b"\n")
            if at >= 0:
                keep = start + at + 1
                if keep != size:
                    f.truncate(keep)
                return
            end = start
        f.truncate(0)


class ResultsWriter:
    """Appends records to the results file, one flushed line each."""

    def __init__(self, path: Path, *, resume: bool) -> None:
        self.path = path
        if resume and path.exists():
            _cut_partial_line(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        self._file: IO[str] = open(path, "a" if resume else "w", encoding="utf-8")
        self.written = 0

    def write(self, record: dict[str, Any]) -> None:
        self._file.write(line_of(record))
        self._file.flush()
        self.written += 1

    def close(self) -> None:
        try:
            self._file.flush()
            os.fsync(self._file.fileno())
        except OSError:
            pass
        self._file.close()
