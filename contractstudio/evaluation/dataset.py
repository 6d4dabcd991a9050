"""Rows of a dataset: JSON Lines, a JSON array or CSV, one input per row, read as a stream.

A row is either the input itself, or an envelope `{"id": ..., "input": {...},
"replies": [...]}` (keys from ENVELOPE_KEYS only) that names the row and
carries scripted replies for offline runs. A row that cannot be read or does not
validate is a `BadRow` with its row number: reported and skipped, never fatal.
"""

from __future__ import annotations

import csv
import hashlib
import json
import random
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from contractstudio.reading.json_lines import lines_of
from contractstudio.reading.replies import (
    MAX_JSON_DEPTH,
    has_surrogate_escape,
    nests_too_deep,
    refuse_lone_surrogates,
    strict_json,
)

ENVELOPE_KEYS = frozenset({"id", "input", "replies", "reply", "meta", "output", "label", "labels"})
VERDICTS = ("pass", "fail")
MAX_JSON_FILE = 256 * 1024 * 1024  # a .json dataset is parsed whole; bigger ones belong in JSON Lines
MAX_ROW_BYTES = 16 * 1024 * 1024  # a line longer than this is not one input; it is reported, not parsed
FORMATS = ("jsonl", "json", "csv")

Validate = Callable[[Any], list[str]]


@dataclass(slots=True)
class Row:
    """One input of the dataset, with its row number, id, digest and (for offline runs) its replies."""

    number: int
    id: str
    value: Any
    digest: str
    replies: list[str] | None = None
    recording: list[dict[str, Any]] | None = None  # trace events to replay, attached by the caller
    meta: dict[str, Any] = field(default_factory=dict)
    labelled: Labelled | None = None  # an output to judge and what a person said of it (eval --judge)

    @property
    def key(self) -> str:
        """The row's identity in a results file: its number and the digest of its input."""
        return f"{self.number}:{self.digest[:16]}"


@dataclass(slots=True)
class Labelled:
    """An output carried by a row and its human labels: the whole output (`label`) and per condition (`labels`)."""

    output: Any
    label: str | None = None  # "pass" | "fail": the whole output is acceptable or not
    labels: dict[str, str] = field(default_factory=dict)  # condition (as written: `coverage_floor` or `post.x`) -> verdict

    @property
    def reply(self) -> str:
        """The output as the model's reply text: a string as it is, anything else as JSON."""
        return self.output if isinstance(self.output, str) else json.dumps(self.output, ensure_ascii=False)


def _labelled(value: dict[str, Any]) -> Labelled | str | None:
    """The envelope's output and labels, a message saying what is wrong with them, or None (no output, no label)."""
    has = [k for k in ("output", "label", "labels") if k in value]
    if not has:
        return None
    if "output" not in value:
        return f"'{has[0]}' labels an output, but the row has no 'output' (the output to judge)"
    label = value.get("label")
    if label is not None and label not in VERDICTS:
        return f"'label' must be \"pass\" or \"fail\" (the whole output acceptable or not), not {json.dumps(label)[:40]}"
    labels = value.get("labels") or {}
    if not isinstance(labels, dict):
        return "'labels' must be an object: {\"condition\": \"pass\" | \"fail\"}"
    for name, verdict in labels.items():
        if verdict not in VERDICTS:
            return f"'labels'.{name[:40]} must be \"pass\" or \"fail\", not {json.dumps(verdict)[:40]}"
    if label is None and not labels:
        return "the row has an 'output' but no 'label' (\"pass\" or \"fail\") and no 'labels' per condition"
    return Labelled(value["output"], label, dict(labels))


@dataclass(slots=True)
class BadRow:
    """A row that cannot be used, and why."""

    number: int
    message: str

    def __str__(self) -> str:
        return f"row {self.number}: {self.message}"


def digest(value: Any) -> str:
    """A stable digest of a JSON value (key order does not matter)."""
    text = json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def format_of(path: Path, given: str | None = None) -> str:
    """jsonl, json or csv: given, or from the file name's suffix (jsonl when unknown)."""
    if given:
        return given
    suffix = path.suffix.lower()
    return {".json": "json", ".csv": "csv", ".tsv": "csv"}.get(suffix, "jsonl")


def _raw_jsonl(path: Path) -> Iterator[tuple[int, Any, str | None]]:
    with open(path, "rb") as f:
        for line in lines_of(f, MAX_ROW_BYTES):  # capped while read: a 1 GB line costs one cap, not 1 GB
            if line.text is None:
                yield line.number, None, f"the line is longer than {MAX_ROW_BYTES:,} bytes"
                continue
            if not line.text.strip():
                continue
            try:
                yield line.number, strict_json(line.text), None
            except ValueError as err:
                yield line.number, None, f"not a JSON value: {err}"


def _raw_json(path: Path) -> Iterator[tuple[int, Any, str | None]]:
    if path.stat().st_size > MAX_JSON_FILE:
        raise DatasetError(f"{path}: a JSON dataset is read whole and this one is over {MAX_JSON_FILE:,} bytes; "
                           "write it as JSON Lines (one row per line), which is streamed")
    try:
        # rows are nested one level inside the array (two inside {"rows": [...]}): their own limit stays 200 levels
        text = path.read_text(encoding="utf-8-sig")
        data = json.loads(text, parse_constant=_not_a_number)
    except json.JSONDecodeError as err:
        raise DatasetError(f"{path}:{err.lineno}:{err.colno}: not valid JSON: {err.msg}") from None
    except RecursionError:
        raise DatasetError(f"{path}: not valid JSON: it nests arrays/objects too deeply") from None
    except ValueError as err:  # NaN / Infinity, or a number too long to convert
        raise DatasetError(f"{path}: not valid JSON: {err}") from None
    if isinstance(data, dict) and isinstance(data.get("rows"), list):
        data = data["rows"]
    if not isinstance(data, list):
        raise DatasetError(f"{path}: a JSON dataset is an array of rows (or an object with a 'rows' array)")
    surrogates = has_surrogate_escape(text)
    del text
    for number, value in enumerate(data, 1):
        if nests_too_deep(value):
            yield number, None, f"it nests arrays/objects more than {MAX_JSON_DEPTH} levels deep"
            continue
        if surrogates:
            try:
                refuse_lone_surrogates(value)
            except ValueError as err:
                yield number, None, f"not a JSON value: {err}"
                continue
        yield number, value, None


def _not_a_number(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number (write a number, or null)")


def _cell(text: str) -> Any:
    """A CSV cell: JSON when it holds an object or array, else the text (pydantic converts '3' to an int)."""
    stripped = text.strip()
    if stripped[:1] in ("{", "["):
        try:
            return strict_json(stripped)
        except ValueError:
            return text
    return text


def _raw_csv(path: Path) -> Iterator[tuple[int, Any, str | None]]:
    with open(path, encoding="utf-8-sig", errors="replace", newline="") as f:
        dialect = "excel-tab" if path.suffix.lower() == ".tsv" else "excel"
        reader = csv.reader(f, dialect=dialect)
        try:
            header = next(reader)
        except StopIteration:
            return
        except csv.Error as err:
            raise DatasetError(f"{path}: the CSV header cannot be read: {err}") from None
        header = [h.strip() for h in header]
        number = 0
        while True:
            try:
                cells = next(reader)
            except StopIteration:
                return
            except csv.Error as err:
                number += 1
                yield number, None, f"not a CSV record: {err}"
                continue
            number += 1
            if not cells:  # a blank line: no record
                continue
            if not any(c.strip() for c in cells):  # a record (`""`, `,,`) with nothing in it: said, never dropped silently
                yield number, None, "the record has cells, but every cell is empty"
                continue
            if len(cells) > len(header):
                yield number, None, f"{len(cells)} cells but the header names {len(header)} columns"
                continue
            # an empty cell is an absent field, so the input type's default applies
            yield number, {h: _cell(c) for h, c in zip(header, cells, strict=False) if c != ""}, None


class DatasetError(Exception):
    """The dataset as a whole cannot be read (a missing file, a JSON file that is not an array)."""


def _row(number: int, value: Any, kind: str) -> Row | BadRow:
    """A raw value as a Row: the envelope's parts, or the value itself as the input."""
    replies: list[str] | None = None
    labelled: Labelled | None = None
    row_id = str(number)
    meta: dict[str, Any] = {}
    if isinstance(value, dict) and "input" in value and set(value) <= ENVELOPE_KEYS:
        if value.get("id") not in (None, ""):
            row_id = str(value["id"])
        found = value.get("replies", value.get("reply"))
        if found is not None:
            if isinstance(found, str):
                found = [found]
            if not isinstance(found, list) or not all(isinstance(r, str) for r in found):
                return BadRow(number, "'replies' must be a list of strings (the model's replies, in order)")
            replies = list(found)
        if isinstance(value.get("meta"), dict):
            meta = dict(value["meta"])
        found_label = _labelled(value)
        if isinstance(found_label, str):
            return BadRow(number, found_label)
        labelled = found_label
        value = value["input"]
    if kind == "pipeline" and not isinstance(value, dict):
        return BadRow(number, f"a pipeline row's input is the initial state, an object; got {type(value).__name__}")
    return Row(number, row_id, value, digest(value), replies, None, meta, labelled)


def read_rows(path: Path, validate: Validate | None = None, *, fmt: str | None = None, kind: str = "contract",
              ) -> Iterator[Row | BadRow]:
    """Every row of the file in order, as a Row or a BadRow (a stream: the file is never held whole, but JSON)."""
    if not path.is_file():
        raise DatasetError(f"no such file: {path}")
    chosen = format_of(path, fmt)
    raw = {"jsonl": _raw_jsonl, "json": _raw_json, "csv": _raw_csv}[chosen](path)
    for number, value, problem in raw:
        if problem is not None:
            yield BadRow(number, problem)
            continue
        row = _row(number, value, kind)
        if isinstance(row, Row) and validate is not None:
            errors = validate(row.value)
            if errors:
                more = f" (and {len(errors) - 3} more)" if len(errors) > 3 else ""
                yield BadRow(number, "; ".join(errors[:3]) + more)
                continue
        yield row


def choose(rows: Iterator[Row | BadRow], *, sample: int | None = None, seed: int = 0, limit: int | None = None,
           ) -> Iterator[Row | BadRow]:
    """A seeded sample of `sample` rows (reservoir, kept in file order) and/or the first `limit` rows.

    Bad rows pass through as they are met (a sample reports every bad row of the file).
    """
    if sample is not None:
        rng = random.Random(seed)
        kept: list[Row] = []
        seen = 0
        for item in rows:
            if isinstance(item, BadRow):
                yield item
                continue
            seen += 1
            if len(kept) < sample:
                kept.append(item)
            else:
                j = rng.randrange(seen)
                if j < sample:
                    kept[j] = item
        kept.sort(key=lambda r: r.number)
        rows = iter(kept)
    taken = 0
    for item in rows:
        if isinstance(item, Row):
            if limit is not None and taken >= limit:
                return
            taken += 1
        yield item
