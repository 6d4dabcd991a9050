"""Diagnostics rendered for people and machines: text, json, jsonl, sarif 2.1.0, github."""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import replace
from typing import Any

from contractstudio import __version__
from contractstudio.findings.diagnostics import RULES, Counts, Diagnostic, Payload
from contractstudio.safe_text import printable, redact_text


def redacted(diagnostics: Iterable[Diagnostic]) -> list[Diagnostic]:
    """The diagnostics with credentials masked in their texts: a message may quote a key or value from the file.

    Every face that shows findings uses it: these formats, and the language server (lsp/convert.py)."""
    return [replace(d, message=redact_text(d.message), hint=redact_text(d.hint) if d.hint else d.hint,
                    related=tuple(replace(r, message=redact_text(r.message)) for r in d.related),
                    payload=_redacted_payload(d.payload)) for d in diagnostics]


def _redacted_payload(payload: Payload | None) -> Payload | None:
    """The fix payload with credentials masked: its names come from the file (a step named like a key)."""
    if payload is None:
        return None
    return replace(payload, step=_masked(payload.step), key=_masked(payload.key), name=_masked(payload.name),
                   suggestion=_masked(payload.suggestion), fields=tuple(redact_text(f) for f in payload.fields))


def _masked(value: str | None) -> str | None:
    return redact_text(value) if value else value


NATIVE = "contractstudio"  # files read in their own format are not listed

_COLORS = {"error": "\x1b[31m", "warning": "\x1b[33m", "info": "\x1b[36m"}
_BOLD, _DIM, _RESET = "\x1b[1m", "\x1b[2m", "\x1b[0m"


def text(diagnostics: list[Diagnostic], texts: dict[str, str], files: int, color: bool = False,
         read_as: dict[str, str] | None = None) -> str:
    """`file:line:col: severity CODE message`, the source line with a caret, the files read in another format, a summary line."""
    lines: list[str] = []
    split: dict[str, list[str]] = {}
    starred: set[tuple[str, int]] = set()  # lines whose credentials YML007 starred out already
    for d in redacted(diagnostics):
        sev = f"{_COLORS[d.severity]}{d.severity}{_RESET}" if color else d.severity
        head = f"{printable(d.file)}:{d.line}:{d.column}: {sev} {d.code} {printable(d.message)}"
        lines.append(f"{_BOLD}{head}{_RESET}" if color else head)
        src = split.get(d.file)
        if src is None and d.file in texts:
            src = split[d.file] = _mask_secrets(texts[d.file].splitlines(), diagnostics, d.file, starred)
        if src and 0 < d.line <= len(src):
            raw = src[d.line - 1].expandtabs(1)
            end = d.end_column if d.end_line == d.line else len(raw) + 1
            # the line as the terminal may show it (redacted, then escaped: the one path of safe_text); the caret
            # counts what redaction and the escapes standing for controls did before it
            mask = (lambda t: t) if (d.file, d.line) in starred else redact_text
            line = printable(mask(raw))
            before, marked = printable(mask(raw[: d.column - 1])), printable(raw[d.column - 1: end - 1])
            width = max(1, min(len(marked), len(line) - len(before)))
            lines.append(f"  {d.line:>4} | {line}")
            caret = " " * len(before) + "^" + "~" * (width - 1)
            lines.append(f"       | {_COLORS[d.severity] if color else ''}{caret}{_RESET if color else ''}")
        if d.hint:
            lines.append(f"       = hint: {printable(d.hint)}")
        for r in d.related:
            lines.append(f"       - {printable(r.file)}:{r.line}:{r.column}: {printable(r.message)}")
    lines += [printable(f"{path}: read as {dialect}") for path, dialect in (read_as or {}).items() if dialect != NATIVE]
    lines.append(summary_line(Counts.of(diagnostics, files)))
    return "\n".join(lines)


def _mask_secrets(src: list[str], diagnostics: list[Diagnostic], file: str, starred: set[tuple[str, int]]) -> list[str]:
    """The source lines with every literal credential (YML007) starred out: a report is no place to copy a key from.

    The lines starred are added to `starred`; every other quoted line is redacted (safe_text) when shown."""
    for d in diagnostics:
        if d.code != "YML007" or d.file != file:
            continue
        for n in range(d.line, min(d.end_line, len(src)) + 1):
            line = src[n - 1]
            start = d.column - 1 if n == d.line else len(line) - len(line.lstrip())
            end = d.end_column - 1 if n == d.end_line else len(line)
            if 0 <= start < end:
                src[n - 1] = line[:start] + "*" * (end - start) + line[end:]
                starred.add((file, n))
    return src


def summary_line(c: Counts) -> str:
    """e.g. '3 files checked: 2 errors, 1 warning, 0 infos'."""
    def n(k: int, word: str) -> str:
        return f"{k} {word}{'' if k == 1 else 's'}"

    return f"{n(c.files, 'file')} checked: {n(c.error, 'error')}, {n(c.warning, 'warning')}, {n(c.info, 'info')}"


def as_json(diagnostics: list[Diagnostic], files: int, read_as: dict[str, str] | None = None) -> str:
    """One object {"diagnostics": [...], "files": [{"path", "dialect"}], "summary": {...}}."""
    out = {"diagnostics": [d.to_dict() for d in redacted(diagnostics)],
           "files": [{"path": path, "dialect": dialect} for path, dialect in (read_as or {}).items()],
           "summary": Counts.of(diagnostics, files).to_dict()}
    return json.dumps(out, indent=2)


def as_jsonl(diagnostics: Iterable[Diagnostic]) -> str:
    """One JSON object per line."""
    return "\n".join(json.dumps(d.to_dict()) for d in redacted(diagnostics))


def _gh_escape(value: str, prop: bool = False) -> str:
    value = printable(value, lines=True)  # an annotation is shown in a log too: no terminal controls
    value = value.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
    return value.replace(":", "%3A").replace(",", "%2C") if prop else value


def as_github(diagnostics: Iterable[Diagnostic]) -> str:
    """GitHub Actions workflow commands (annotations on the pull request)."""
    kind = {"error": "error", "warning": "warning", "info": "notice"}
    out = []
    for d in redacted(diagnostics):
        msg = d.message + (f" (hint: {d.hint})" if d.hint else "")
        out.append(
            f"::{kind[d.severity]} file={_gh_escape(d.file, True)},line={d.line},col={d.column},"
            f"endLine={d.end_line},endColumn={d.end_column},title={d.code}::{_gh_escape(msg)}"
        )
    return "\n".join(out)


def as_sarif(diagnostics: list[Diagnostic]) -> str:
    """A SARIF 2.1.0 log with one run; rules carry their names and docs text."""
    used = sorted({d.code for d in diagnostics})
    rules = [
        {
            "id": code,
            "name": RULES[code].name,
            "shortDescription": {"text": RULES[code].summary},
            "defaultConfiguration": {"level": _sarif_level(RULES[code].severity)},
            # no helpUri: the package ships no docs/rules.md and the project has no site; a link that leads nowhere
            # is worse than none (the summary above is the rule's text in docs/rules.md)
        }
        for code in used
        if code in RULES
    ]
    index = {r["id"]: i for i, r in enumerate(rules)}
    results: list[dict[str, Any]] = []
    for d in redacted(diagnostics):
        result: dict[str, Any] = {
            "ruleId": d.code,
            "level": _sarif_level(d.severity),
            "message": {"text": d.message + (f" Hint: {d.hint}" if d.hint else "")},
            "locations": [_location(d.file, d.line, d.column, d.end_line, d.end_column)],
        }
        if d.code in index:
            result["ruleIndex"] = index[d.code]
        if d.related:
            result["relatedLocations"] = [
                {**_location(r.file, r.line, r.column, r.line, r.column + 1), "id": i, "message": {"text": r.message}}
                for i, r in enumerate(d.related)
            ]
        results.append(result)
    log = {
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [
            {
                "tool": {"driver": {"name": "contractstudio", "version": __version__, "rules": rules}},
                "columnKind": "unicodeCodePoints",
                "results": results,
            }
        ],
    }
    return json.dumps(log, indent=2)


def _sarif_level(severity: str) -> str:
    return {"error": "error", "warning": "warning", "info": "note"}[severity]


def _location(file: str, line: int, col: int, end_line: int, end_col: int) -> dict[str, Any]:
    return {
        "physicalLocation": {
            "artifactLocation": {"uri": file.replace("\\", "/")},
            "region": {"startLine": line, "startColumn": col, "endLine": end_line, "endColumn": max(end_col, col)},
        }
    }
