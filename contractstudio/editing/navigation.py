"""Go to definition, find references and rename, over the occurrence index of editing/symbols.py."""

from __future__ import annotations

import keyword
import os
import re

from contractstudio.analysis.check import FileReport, Loaded
from contractstudio.editing.cursor import document_at
from contractstudio.editing.items import Location, Rename, TextEdit
from contractstudio.editing.symbols import TYPE_WORDS, Occurrence, definition_of, occurrence_at, same_thing
from contractstudio.expressions import allowlist
from contractstudio.findings.diagnostics import Span
from contractstudio.reading.dialects.synth import locate

# What a new name must look like: fields and parameters are read by expressions, so they
# are identifiers; ids and names are written as plain YAML scalars, so nothing that needs quotes.
_IDENTIFIER = re.compile(r"[A-Za-z][A-Za-z0-9_]*\Z")
_PLAIN_ID = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.\-]*\Z")
WHAT = {"step": "step id", "type": "type", "field": "field", "router": "router", "action": "action", "tool": "tool",
        "policy": "policy id", "task": "task id", "param": "parameter"}


def symbol_at(report: FileReport, line: int, column: int) -> tuple[Loaded, Occurrence] | None:
    """The named thing under a position, with its document."""
    loaded = document_at(report, line)
    if loaded is None:
        return None
    occ = occurrence_at(loaded, line, column)
    return (loaded, occ) if occ is not None else None


def definition(report: FileReport, line: int, column: int) -> list[Location]:
    """Where the thing under the cursor is declared (empty for built-ins and undeclared names)."""
    hit = symbol_at(report, line, column)
    if hit is None:
        return []
    loaded, occ = hit
    return [_location(loaded, o.span) for o in same_thing(loaded, occ) if o.definition]


def references(report: FileReport, line: int, column: int, *, include_declaration: bool = True) -> list[Location]:
    """Every place that names the thing under the cursor."""
    hit = symbol_at(report, line, column)
    if hit is None:
        return []
    loaded, occ = hit
    return [_location(loaded, o.span) for o in same_thing(loaded, occ) if include_declaration or not o.definition]


def _location(loaded: Loaded, span: Span) -> Location:
    """A place of the analyzed text as the file it is in: a base's own file and lines for an inherited part."""
    file, span = locate(loaded.source, span) if loaded.source is not None else (loaded.file, span)
    return Location(file, span)


def prepare_rename(report: FileReport, line: int, column: int) -> Occurrence | None:
    """The occurrence a rename at this position would start from (None: nothing to rename here)."""
    hit = symbol_at(report, line, column)
    return hit[1] if hit is not None else None


def rename(report: FileReport, line: int, column: int, new_name: str) -> Rename:
    """Edits that rename the thing under the cursor everywhere it is named, or why not."""
    hit = symbol_at(report, line, column)
    if hit is None:
        return Rename(refused="there is no step, type, field, tool, policy, task, router, action or parameter here")
    loaded, occ = hit
    what = WHAT.get(occ.kind, occ.kind)
    problem = name_problem(occ.kind, new_name)
    if problem:
        return Rename(refused=problem)
    if new_name == occ.name:
        return Rename(refused=f"the {what} is already called '{new_name}'")
    taken = definition_of(loaded, occ.kind, new_name, occ.owner)
    if taken is not None:
        where = taken.span
        owner = f" of {occ.owner}" if occ.owner else ""
        return Rename(refused=f"{what}{owner} '{new_name}' already exists (line {where.line})")
    group = same_thing(loaded, occ)
    if not any(o.definition for o in group):
        return Rename(refused=f"'{occ.name}' is not declared in this document: nothing to rename")
    elsewhere = [(place.file, place.span.line) for place in (_location(loaded, o.span) for o in group) if place.file != loaded.file]
    if elsewhere:  # an inherited step: its declaration and other uses are in the base, which this edit cannot change
        file, line = elsewhere[0]
        return Rename(refused=f"'{occ.name}' is declared in {_shown(file, loaded.file)} (line {line}), which this file "
                              "extends: rename it there")
    lines = loaded.text.split("\n")
    edits = []
    for o in group:
        s = o.span
        if s.line != s.end_line or lines[s.line - 1][s.column - 1 : s.end_column - 1] != occ.name:
            return Rename(refused=f"cannot rename '{occ.name}' at line {s.line}: it is written in a form that cannot be edited safely")
        edits.append(TextEdit(s, new_name))
    return Rename(edits=tuple(edits))


def _shown(file: str, beside: str) -> str:
    """A base's path as written next to the file that extends it."""
    try:
        return os.path.relpath(file, os.path.dirname(beside))
    except ValueError:  # another drive (Windows)
        return file


def name_problem(kind: str, name: str) -> str | None:
    """Why a new name is not acceptable for a thing of this kind, or None."""
    what = WHAT.get(kind, kind)
    if kind in ("field", "param", "type"):
        if not _IDENTIFIER.match(name):
            return f"a {what} name is an identifier (letters, digits, '_'; not starting with a digit or '_'): '{name}'"
        if keyword.iskeyword(name):
            return f"'{name}' is a Python keyword: expressions could not name it"
        if kind == "type" and name in TYPE_WORDS:
            return f"'{name}' is a built-in type word"
        if kind != "type" and (name in allowlist.FUNCTIONS or name in ("input", "output", "act")):
            return f"'{name}' is a name expressions already use"
        return None
    if not _PLAIN_ID.match(name):
        return f"a {what} is letters, digits and '_', '-', '.': '{name}'"
    return None
