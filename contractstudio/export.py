"""Export: the validated file, byte for byte, once a second YAML reader agrees on what it says.

The analyzer gates the export (a file with errors is refused, naming them). Then ruamel.yaml,
the reader YAML tools build on, loads the text and must read the same data as the analyzer;
where it cannot, or reads something else (`%YAML 1.1` turns `n` into false), the export is
refused with a finding at that place (the analyzer reports the known cases itself, as YML008).
The text is never re-written: comments, quoting, indentation, line endings and a BOM stay the
author's, so an export cannot change what a file says or how it looks.
"""

from __future__ import annotations

import base64
import binascii
import datetime
import warnings
from pathlib import Path
from typing import Any

from contractstudio.analysis.check import Context, check_text
from contractstudio.findings.diagnostics import Diagnostic, Span, at_least, make
from contractstudio.reading.portability import describe, same_value
from contractstudio.reading.source import SourceFile, nearest, read_source
from contractstudio.trust import hook_folder

BOM = "\ufeff"


def export_text(text: str, path: str = "<text>", ctx: Context | None = None) -> tuple[str | None, list[Diagnostic]]:
    """The exported text (the text itself), or None and the findings that refuse the export."""
    report = check_text(text, path, ctx)
    errors = at_least(report.diagnostics, "error")
    if errors:
        return None, errors
    # The YAML as written, not a dialect's native reading of it: that is what a YAML tool sees.
    differences = disagreements(read_source(text, path))
    if differences:
        return None, differences
    return text, []


def export_file(path: Path, ctx: Context | None = None) -> tuple[str | None, list[Diagnostic]]:
    """Export a file from disk (see export_text); a BOM the file starts with is kept."""
    from contractstudio.analysis.check import read_text

    text, problem = read_text(path)
    if text is None:
        return None, [problem] if problem else []
    exported, found = export_text(text, str(path), ctx or Context(hooks=hook_folder(path, False)))
    if exported is not None and _starts_with_bom(path):
        exported = BOM + exported
    return exported, found


def _starts_with_bom(path: Path) -> bool:
    try:
        with path.open("rb") as f:
            return f.read(3) == BOM.encode("utf-8")
    except OSError:
        return False


def disagreements(source: SourceFile) -> list[Diagnostic]:
    """Where ruamel.yaml cannot read the text, or reads other data than the analyzer did (at most one finding)."""
    from ruamel.yaml import YAML  # the export path only: ruamel is slow to import and to parse

    text, path = source.text, source.path
    try:
        with warnings.catch_warnings():  # ruamel warns on stderr about YAML 1.1 forms; the finding says it instead
            warnings.simplefilter("ignore")
            theirs = list(YAML(typ="rt").load_all(text))
    except Exception as err:  # noqa: BLE001 - any failure of the second reader refuses the export, never a crash
        mark = getattr(err, "problem_mark", None) or getattr(err, "context_mark", None)
        line, column = (mark.line + 1, mark.column + 1) if mark is not None else (1, 1)
        lines = str(err).strip().splitlines()
        problem = getattr(err, "problem", None) or (lines[-1] if lines else type(err).__name__)
        return [make("YML008", f"ruamel.yaml, the reader export checks with, cannot read this file: {problem}",
                     path, Span(line, column, line, column + 1))]
    ours = source.documents
    if len(theirs) != len(ours):
        return [make("YML008", f"ruamel.yaml reads {len(theirs)} document(s) here, the analyzer {len(ours)}",
                     path, Span(1, 1, 1, 2))]
    for doc, data in zip(ours, theirs, strict=True):
        where = _first_difference(doc.data, data, ())
        if where is not None:
            node = nearest(doc.root, where)
            span = node.span if node is not None else Span(doc.line, 1, doc.line, 2)
            shown = ".".join(str(p) for p in where) or "the document"
            return [make("YML008", f"ruamel.yaml reads {shown} differently from the analyzer: "
                         f"{_shown(_plain(data, where))} instead of {_shown(_at(doc.data, where))}",
                         path, span, hint="quote the value, or remove the tag or %YAML directive that changes it")]
    return []


def _first_difference(ours: Any, theirs: Any, where: tuple[Any, ...]) -> tuple[Any, ...] | None:
    """The path of the first value the two readers disagree on, or None."""
    if isinstance(ours, dict):
        if not isinstance(theirs, dict) or list(map(_key, ours)) != list(map(_key, theirs)):
            return where
        for (k, v), tv in zip(ours.items(), theirs.values(), strict=True):
            found = _first_difference(v, tv, (*where, k))
            if found is not None:
                return found
        return None
    if isinstance(ours, list):
        if not isinstance(theirs, list) or len(ours) != len(theirs):
            return where
        for i, (v, tv) in enumerate(zip(ours, theirs, strict=True)):
            found = _first_difference(v, tv, (*where, i))
            if found is not None:
                return found
        return None
    return None if _same_scalar(ours, theirs) else where


def _key(value: Any) -> Any:
    return (type(value) is bool, value) if not isinstance(value, str) else value


def _same_scalar(ours: Any, theirs: Any) -> bool:
    from ruamel.yaml.comments import TaggedScalar

    if isinstance(theirs, TaggedScalar):  # an explicit !!str (or `=`), kept as its text
        theirs = theirs.value
    if isinstance(theirs, (datetime.date, datetime.datetime)):
        return isinstance(ours, str)  # a timestamp is text to the analyzer; export keeps the text
    if isinstance(theirs, bytes):
        try:
            return isinstance(ours, str) and base64.b64decode("".join(ours.split()), validate=True) == theirs
        except (binascii.Error, ValueError):
            return False
    return same_value(ours, theirs)


def _at(data: Any, where: tuple[Any, ...]) -> Any:
    for part in where:
        try:
            data = data[part]
        except (KeyError, IndexError, TypeError):
            return None
    return data


def _plain(data: Any, where: tuple[Any, ...]) -> Any:
    for part in where:
        try:
            data = data[part] if not isinstance(data, dict) else next(v for k, v in data.items() if k == part)
        except (IndexError, TypeError, StopIteration):
            return None
    return data


def _shown(value: Any) -> str:
    if isinstance(value, dict):
        return "a mapping"
    if isinstance(value, list):
        return "a list"
    return describe(value)
