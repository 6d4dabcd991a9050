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

from contractstudio.evaluation.record_model import Record, RecordProblem, checked_record
from contractstudio.reading.json_lines import lines_of
from contractstudio.runtime.json_text import fast_text, plain_json
from contractstudio.runtime.trace import TraceLines

MAX_RECORD_BYTES = 64 * 1024 * 1024  # a row's input (16 MB at most), output and embedded trace; a longer line is not ours
_LINE_BREAKS = str.maketrans({"\x85": "\\u0085", "\u2028": "\\u2028", "\u2029": "\\u2029"})


class ResultsError(Exception):
    """A results file that cannot be used (for --resume or --baseline)."""


class LinedRecord(dict[str, Any]):
    """A record whose results line was made where its row ran (a worker process, by `line_of`): the writer writes
    that line as it is; the dict is the record without its trace, for the tally, the progress and a baseline."""

    __slots__ = ("line",)

    def __init__(self, fields: dict[str, Any], line: str) -> None:
        super().__init__(fields)
        self.line = line


def line_of(record: dict[str, Any]) -> str:
    """A record as one physical JSON line."""
    text = _fast_text(record)
    if text is None:
        text = json.dumps(record, ensure_ascii=False, default=str, check_circular=False,
                          separators=(",", ":"))  # a record we built: no cycles; compact, as the fast path writes
    if "\x85" in text or "\u2028" in text or "\u2029" in text:
        text = text.translate(_LINE_BREAKS)
    return text + "\n"


def _fast_text(record: dict[str, Any]) -> str | None:
    """The record as JSON by pydantic_core's encoder, or None when it holds anything the stdlib would write with another
    meaning (runtime/json_text.py): those lines take `json.dumps`. A trace made by `Trace.to_dicts` is plain JSON by
    construction and is not walked again. (A float under 1e-4 may be written `0.00001` rather than `1e-05`: the same
    number.)"""
    for key, value in record.items():
        if not (type(key) is str and (type(value) is TraceLines or plain_json(value, exact=False))):
            return None
    return fast_text(record)


def read_records(path: Path, kind: str | None = "contract") -> Iterator[Record]:
    """The complete records of a results file, in order, each the typed results model (a partial last line is
    skipped); the first line that is not a record of `kind` (None: of the first record's kind) raises ResultsError
    with its line."""
    for _number, _offset, record in numbered_records(path, kind):
        yield record


def numbered_records(path: Path, kind: str | None = "contract") -> Iterator[tuple[int, int, Record]]:
    """(line number, byte offset, record) for each complete record of a results file, as read_records checks them."""
    try:
        f = open(path, "rb")
    except OSError as err:
        raise ResultsError(f"cannot read {path}: {err.strerror or err}") from None
    with f:
        for line in lines_of(f, MAX_RECORD_BYTES):
            if not line.ended:
                return  # cut off mid-write: that row was not finished
            if line.text is not None and not line.text.strip():
                continue
            try:
                value = line.value()
            except ValueError as err:
                raise ResultsError(f"{path}:{line.number}: not a results record: {err}") from None
            if kind is None:
                kind = value.get("kind", "contract") if isinstance(value, dict) else "contract"
            try:
                record = checked_record(value, kind)
            except RecordProblem as problem:
                raise ResultsError(f"{path}:{line.number}: {problem}") from None
            yield line.number, line.offset, record


def recorded_trace(results: Path, number: int, rec: Record) -> list[dict[str, Any]] | None:
    """A checked record's trace: embedded, or read from the `trace_file` it names, which must be a regular file
    inside the results file's folder (beside it, or in a traces folder under it) and at most MAX_RECORD_BYTES;
    so a forged record cannot make a replay read /dev/zero, a FIFO, /etc/passwd or /proc/self/environ."""
    if rec.trace is not None:
        return list(rec.trace)
    named = rec.trace_file
    if named is None:
        return None
    from contractstudio.runtime.trace import Trace
    from contractstudio.storage.paths import base_problem

    where = f"{results}:{number}: trace_file {named!r}"
    path = results.parent / named  # a relative name is beside the results file; an absolute one stays as it is
    problem = base_problem(path, [results.parent])
    if problem is not None:
        raise ResultsError(f"{where} is not read: {problem}; a recorded trace is a file beside the results file")
    if path.stat().st_size > MAX_RECORD_BYTES:
        raise ResultsError(f"{where} is not read: it is over {MAX_RECORD_BYTES:,} bytes")
    try:
        return Trace.read(path).to_dicts()
    except (OSError, ValueError) as err:
        raise ResultsError(f"{where}: {err}") from None


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


def replace_problem(path: Path, *, resume: bool, overwrite: bool) -> str | None:
    """Why a run may not start writing `path` (it holds an earlier run's results, and neither `resume` nor `overwrite`
    was asked), or None. The one decision: the CLI's --resume/--overwrite and a library caller's EvalConfig meet here."""
    if resume or overwrite:
        return None
    try:
        held = path.stat().st_size > 0
    except OSError:  # missing (or unreadable: opening it says why)
        return None
    if not held:
        return None
    return (f"{path} exists: pass --resume to continue that run, or --overwrite to replace it "
            "(EvalConfig(resume=True) or EvalConfig(overwrite=True))")


class ResultsWriter:
    """Appends records to the results file, one flushed line each; an earlier run's file is replaced only when
    `overwrite` says so (`replace_problem`)."""

    def __init__(self, path: Path, *, resume: bool, overwrite: bool = False) -> None:
        self.path = path
        if (problem := replace_problem(path, resume=resume, overwrite=overwrite)) is not None:
            raise ResultsError(problem)
        if resume and path.exists():
            _cut_partial_line(path)
        # no folder is made: a missing one is refused before the run, as for every output path (storage/atomic.py)
        self._file: IO[str] = open(path, "a" if resume else "w", encoding="utf-8")
        self.written = 0

    def write(self, record: dict[str, Any]) -> None:
        """Append one record; a full disk raises OSError naming the results file (the lines before it stay whole)."""
        try:
            self._file.write(record.line if isinstance(record, LinedRecord) else line_of(record))
            self._file.flush()
        except OSError as err:
            raise OSError(err.errno, err.strerror or str(err), str(self.path)) from None
        self.written += 1

    def close(self) -> None:
        try:
            self._file.flush()
            os.fsync(self._file.fileno())
        except OSError:
            pass
        self._file.close()
