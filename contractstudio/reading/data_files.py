"""Every file the tool reads besides documents (folder settings, the user's config, themes, `.contractstudioignore`):
one bounded reader.

A file is asked the path policy first (a FIFO, a device or /proc is refused before it is opened), read up
to a size bound, decoded as UTF-8, then read by the documents' own reader (`reading/source.py: read_value`):
libyaml's event stream built into data iteratively, with the same nesting, alias and tag bounds. No
parser that recurses (PyYAML's composer, C or Python) ever sees the text: a settings file nested 30,000
deep crashed `check` in libyaml's C composer (issue 18).
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from contractstudio.findings.diagnostics import Diagnostic, Span, make
from contractstudio.reading.nodes import Node, nearest
from contractstudio.reading.source import read_one
from contractstudio.storage.paths import input_problem

if TYPE_CHECKING:
    from pydantic import BaseModel

Model = TypeVar("Model", bound="BaseModel")

MAX_DATA_BYTES = 1024 * 1024  # a settings, config or theme file larger than this is a mistake or an attack


def decode(raw: bytes, path: str) -> tuple[str | None, Diagnostic | None]:
    """A file's bytes as UTF-8 text (a BOM dropped), or None and the finding (the CLI and the studio say the same)."""
    try:
        return raw.decode("utf-8-sig"), None
    except UnicodeDecodeError as err:
        line = raw.count(b"\n", 0, err.start) + 1
        return None, make("YML001", f"the file is not UTF-8 text (byte {err.start})", path, Span(line, 1, line, 2))


class UnreadableData(ValueError):
    """A data file that cannot be read within the bounds; `str(err)` names the file and, where known, line and column."""


@dataclass(frozen=True, slots=True)
class DataFile:
    """The value a data file holds, and its nodes (so a value refused later is named at its line and column)."""

    name: str
    data: Any
    root: Node | None = None

    def where(self, loc: tuple[Any, ...]) -> str:
        """`name:line:column` of the value at a key/index path (the nearest one the file has)."""
        node = nearest(self.root, loc, key=True)
        return f"{self.name}:{node.line}:{node.column}" if node is not None else self.name

    def validated(self, model: type[Model]) -> Model:
        """The data checked by a pydantic model; raises UnreadableData at the first value the model refuses."""
        from pydantic import ValidationError

        try:
            return model.model_validate(self.data if self.data is not None else {})
        except ValidationError as err:
            first = err.errors(include_url=False)[0]
            loc = tuple(first["loc"])
            field = ".".join(str(part) for part in loc) or "the file"
            raise UnreadableData(f"{self.where(loc)}: {field}: {first['msg']}") from None


def read_data_file(path: Path, max_bytes: int = MAX_DATA_BYTES) -> DataFile:
    """The one value a YAML (or JSON) data file holds, read within bounds; raises UnreadableData saying where and why."""
    return read_data_text(read_text_file(path, max_bytes), str(path))


def read_data_lines(path: Path, max_bytes: int = MAX_DATA_BYTES) -> list[DataFile]:
    """Each non-blank line of a JSON Lines file as its value (`name:LINE` for messages), read within the same bounds."""
    text = read_text_file(path, max_bytes)
    return [read_data_text(line, f"{path}:{n}") for n, line in enumerate(text.splitlines(), 1) if line.strip()]


def read_text_file(path: Path, max_bytes: int = MAX_DATA_BYTES) -> str:
    """A data file's text: the path policy asked first, at most `max_bytes` read, UTF-8; UnreadableData says why not."""
    raw = read_bounded(path, max_bytes)
    text, finding = decode(raw, str(path))
    if text is None:
        assert finding is not None
        raise UnreadableData(f"{path}:{finding.line}:{finding.column}: {finding.message}")
    return text


def read_bounded(path: Path, max_bytes: int) -> bytes:
    """A data file's bytes (settings, config, theme, `.contractstudioignore`), after the path policy and at most
    `max_bytes`; raises UnreadableData saying why (a FIFO, a device or /proc is never opened, a file swapped for
    one after the check never blocks)."""
    problem = input_problem(path)
    if problem is not None:
        raise UnreadableData(problem)
    try:
        # O_NONBLOCK: a file swapped for a FIFO after the check above still never blocks the open
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
        with os.fdopen(fd, "rb") as f:
            if not stat.S_ISREG(os.fstat(f.fileno()).st_mode):
                raise UnreadableData(f"{path} is not a regular file; only regular files are read")
            raw = f.read(max_bytes + 1)
    except OSError as err:
        raise UnreadableData(f"cannot read {path}: {err.strerror or err}") from None
    if len(raw) > max_bytes:
        raise UnreadableData(f"{path} is larger than {max_bytes:,} bytes; it is not read")
    return raw


def read_data_text(text: str, name: str) -> DataFile:
    """The one value a YAML (or JSON) text holds, read like a document; raises UnreadableData saying where and why."""
    try:
        document = read_one(text, name)
    except ValueError as err:
        raise UnreadableData(str(err)) from None
    return DataFile(name, document.data, document.root) if document is not None else DataFile(name, None)
