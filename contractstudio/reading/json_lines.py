"""JSON Lines read within bounds: a line is never held longer than its cap, and each value goes through strict_json.

Datasets, results files, recorded traces and the studio's look at a .jsonl all
read lines here, so a single line of a gigabyte costs at most its cap in memory
(the rest of it is skipped in cap-sized pieces), never the whole line.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from contractstudio.reading.replies import strict_json

_BOM = b"\xef\xbb\xbf"


@dataclass(slots=True)
class Line:
    """One physical line: its number (from 1), byte offset, text (None when over the cap) and whether a newline ended it."""

    number: int
    offset: int
    text: str | None
    ended: bool
    size: int

    def value(self) -> Any:
        """The line's JSON value (strict_json's bounds); ValueError saying why it is refused."""
        if self.text is None:
            raise ValueError(f"the line is longer than the cap ({self.size:,} bytes)")
        return strict_json(self.text)


def lines_of(f: IO[bytes], cap: int, *, errors: str = "replace") -> Iterator[Line]:
    """Every line of a binary stream, decoded as UTF-8 (bad bytes replaced, or `errors="strict"`: UnicodeDecodeError);
    a line over `cap` bytes comes without text."""
    number = offset = 0
    while True:
        data = f.readline(cap + 1)
        if not data:
            return
        number += 1
        if number == 1 and data.startswith(_BOM):
            data = data[len(_BOM):]
            offset += len(_BOM)
        size = len(data)
        ended = data.endswith(b"\n")
        text: str | None = None
        if size > cap:
            while not ended:  # skip the rest of the line in cap-sized pieces, holding none of it
                more = f.readline(cap)
                if not more:
                    break
                size += len(more)
                ended = more.endswith(b"\n")
        else:
            text = data.decode("utf-8", errors=errors)
        yield Line(number, offset, text, ended, size)
        offset += size


FIRST_LINE_CAP = 1 << 20  # enough for any first event or record a listing needs; a longer line is not looked at


def first_json_line(path: Path, cap: int = FIRST_LINE_CAP) -> Any | None:
    """The JSON value of a file's first non-blank line (strict_json's bounds), or None when it cannot be read."""
    try:
        with open(path, "rb") as f:
            for line in lines_of(f, cap):
                if line.text is None or line.text.strip():
                    return line.value()
    except (OSError, ValueError):
        return None
    return None
