"""Diagnostics: the finding model of RULES.md, the rule table, suppression and ordering.

The rule table (RULES) is filled where codes are produced: analysis rules declare
theirs with the `@rule` decorator (analysis/rules/), and machinery that emits
codes itself (the YAML reader, the shape validator, the expression checker)
calls `declare` next to the code that emits them.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from contractstudio.findings.close_names import CloseNames

Severity = Literal["error", "warning", "info"]
SEVERITY_RANK: dict[str, int] = {"info": 0, "warning": 1, "error": 2}


@dataclass(frozen=True, slots=True)
class Subject:
    """What a finding (or a related place) is about: a step, type, field, tool, policy, task ... by its name.

    Filled where the finding is made, from the document path it points at, so a face that groups findings
    (the studio's graph marks each step with its worst finding) never guesses from line numbers.
    """

    kind: str  # step, type, field (named Type.field), tool, policy, task, scenario
    name: str


@dataclass(frozen=True, slots=True)
class Related:
    """Another place that explains a diagnostic (e.g. one step of a path)."""

    file: str
    line: int
    column: int
    message: str
    subject: Subject | None = field(default=None, compare=False)

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-ready form."""
        return {"file": self.file, "line": self.line, "column": self.column, "message": self.message}


@dataclass(frozen=True, slots=True)
class Payload:
    """What a quick fix needs of a finding, filled by the rule that raises it (LSP `Diagnostic.data`).

    Fixes read this, never the wording of `message` or `hint`, so rewording a finding cannot lose its fix.
    """

    step: str | None = None  # the step the finding is about
    key: str | None = None  # the key that is missing or wanted
    name: str | None = None  # the expected name: an undeclared type, a missing step
    suggestion: str | None = None  # the name a misspelt one most likely means
    fields: tuple[str, ...] = ()  # required fields that are missing

    def to_data(self) -> dict[str, Any]:
        """JSON-ready form without empty entries (what the language server sends as `data`)."""
        return {k: (list(v) if isinstance(v, tuple) else v) for k in self.__slots__ if (v := getattr(self, k))}


@dataclass(frozen=True, slots=True)
class Diagnostic:
    """One finding about one place in one file (positions 1-based, columns in characters)."""

    code: str
    severity: Severity
    message: str
    file: str
    line: int
    column: int
    end_line: int
    end_column: int
    hint: str | None = None
    related: tuple[Related, ...] = ()
    subject: Subject | None = field(default=None, compare=False)  # not in to_dict: the output formats are unchanged
    payload: Payload | None = field(default=None, compare=False)  # not in to_dict, for the same reason

    @property
    def name(self) -> str:
        """The kebab-case rule name of this diagnostic's code."""
        rule = RULES.get(self.code)
        return rule.name if rule else self.code.lower()

    def sort_key(self) -> tuple[str, int, int, str, str]:
        return (self.file, self.line, self.column, self.code, self.message)

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-ready form with the fields of RULES.md."""
        return {
            "code": self.code,
            "name": self.name,
            "severity": self.severity,
            "message": self.message,
            "file": self.file,
            "line": self.line,
            "column": self.column,
            "end_line": self.end_line,
            "end_column": self.end_column,
            "hint": self.hint,
            "related": [r.to_dict() for r in self.related],
        }


@dataclass(frozen=True, slots=True)
class Rule:
    """A declared code: stable code, kebab-case name, default severity and docs text."""

    code: str
    name: str
    severity: Severity
    summary: str


RULES: dict[str, Rule] = {}


def declare(code: str, name: str, severity: Severity, summary: str) -> Rule:
    """Declare a code once, where it is produced (idempotent for the identical definition) and return it."""
    existing = RULES.get(code)
    new = Rule(code, name, severity, summary)
    if existing is not None and existing != new:
        raise ValueError(f"code {code} declared twice with different meanings")
    RULES[code] = new
    return new


class Suggestion(str):
    """A 'did you mean' hint that carries the name it suggests, so `make` puts it in the payload."""

    name: str


def did_you_mean(name: str, known: Iterable[Any] | CloseNames) -> str | None:
    """A 'did you mean' hint for a misspelt name, or None (the one helper every rule uses). `known` may be an index
    of the names (`CloseNames`, the same answer): a rule asking many times of thousands of names builds one."""
    if isinstance(known, CloseNames):
        found = known.closest(str(name))
        return suggest(found) if found is not None else None
    close = difflib.get_close_matches(str(name), [k for k in known if isinstance(k, str)], n=1, cutoff=0.6)
    return suggest(close[0]) if close else None


def suggest(name: str) -> Suggestion:
    """The 'did you mean' hint naming `name` (for a rule that found the close name itself)."""
    hint = Suggestion(f"did you mean '{name}'?")
    hint.name = name
    return hint


@dataclass(frozen=True, slots=True)
class Span:
    """A 1-based, end-exclusive character span in one file."""

    line: int
    column: int
    end_line: int
    end_column: int


def make(
    code: str,
    message: str,
    file: str,
    span: Span,
    *,
    hint: str | None = None,
    related: Iterable[Related] = (),
    severity: Severity | None = None,
    subject: Subject | None = None,
    payload: Payload | None = None,
) -> Diagnostic:
    """Build a diagnostic of a registered rule at a span (severity defaults to the rule's)."""
    r = RULES[code]
    if isinstance(hint, Suggestion):
        payload = replace(payload or Payload(), suggestion=hint.name)
    return Diagnostic(
        code=code,
        severity=severity or r.severity,
        message=message,
        file=file,
        line=span.line,
        column=span.column,
        end_line=span.end_line,
        end_column=span.end_column,
        hint=hint,
        related=tuple(related),
        subject=subject,
        payload=payload,
    )


_IGNORE = re.compile(r"#\s*contractstudio:\s*ignore\[([A-Z0-9_,\s]+)\]")


def suppressions(text: str) -> dict[int, set[str]]:
    """Map 1-based line -> codes suppressed there by `# contractstudio: ignore[CODE]`.

    A comment suppresses its own line and the line below it, so it can sit on
    the offending line or on its own line just above.
    """
    found: dict[int, set[str]] = {}
    if "contractstudio:" not in text:
        return found
    for number, line in enumerate(text.splitlines(), start=1):
        m = _IGNORE.search(line)
        if not m:
            continue
        codes = {c.strip() for c in m.group(1).split(",") if c.strip()}
        for target in (number, number + 1):
            found.setdefault(target, set()).update(codes)
    return found


def finalize(diagnostics: Iterable[Diagnostic], texts: dict[str, str] | None = None) -> list[Diagnostic]:
    """Drop suppressed and repeated diagnostics and sort by file, line, column, code."""
    texts = texts or {}
    cache: dict[str, dict[int, set[str]]] = {}
    seen: set[tuple[Any, ...]] = set()
    out: list[Diagnostic] = []
    for d in diagnostics:
        if d.file in texts:
            supp = cache.get(d.file)
            if supp is None:
                supp = cache[d.file] = suppressions(texts[d.file])
            if d.code in supp.get(d.line, ()):
                continue
        key = (d.file, d.line, d.column, d.code, d.message)
        if key in seen:
            continue
        seen.add(key)
        out.append(d)
    out.sort(key=Diagnostic.sort_key)
    return out


def at_least(diagnostics: Iterable[Diagnostic], level: str) -> list[Diagnostic]:
    """The diagnostics at or above a severity level (`none` selects nothing)."""
    if level == "none":
        return []
    floor = SEVERITY_RANK[level]
    return [d for d in diagnostics if SEVERITY_RANK[d.severity] >= floor]


def with_file(diagnostics: Iterable[Diagnostic], file: str) -> list[Diagnostic]:
    """Re-home diagnostics to another file name (used when text is analyzed under a display name)."""
    return [replace(d, file=file) for d in diagnostics]


RuleFunction = Callable[..., Iterable[Diagnostic]]


@dataclass(slots=True)
class Counts:
    """Errors / warnings / infos in a set of diagnostics."""

    error: int = 0
    warning: int = 0
    info: int = 0
    files: int = 0
    by_code: dict[str, int] = field(default_factory=dict)

    @classmethod
    def of(cls, diagnostics: Iterable[Diagnostic], files: int = 0) -> Counts:
        c = cls(files=files)
        for d in diagnostics:
            setattr(c, d.severity, getattr(c, d.severity) + 1)
            c.by_code[d.code] = c.by_code.get(d.code, 0) + 1
        return c

    def to_dict(self) -> dict[str, Any]:
        return {"files": self.files, "errors": self.error, "warnings": self.warning, "infos": self.info}
