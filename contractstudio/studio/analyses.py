"""The studio's analyses: one analysis of one version of a text, made in a worker and posted as a message.

Every analysis in the studio (edit, graph, debug, the file list's counts) runs the same way: a method decorated
`@work(thread=True, exclusive=True, group=..., exit_on_error=False)` calls the analyzer and posts its result as a
message; the screen draws it on the UI thread, and a failed worker is shown (never a traceback). The analyzer is
imported inside the worker, so the first screen appears before it loads.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from textual.message import Message

from contractstudio.findings.diagnostics import SEVERITY_RANK, Counts, Diagnostic, Subject

if TYPE_CHECKING:
    from contractstudio.analysis.check import Context, FileReport


@dataclass(frozen=True, slots=True)
class Analysis:
    """One finished analysis of one version of the text."""

    path: Path | None
    text: str
    report: FileReport
    generation: int
    # What the status line says of it: its documents' kinds, in order, each once (None for none), and the counts of
    # its findings. Worked out where it is made, in the worker: over a big file's documents that is 6 ms of the
    # screen's thread per result.
    status: tuple[str | None, Counts] = field(init=False)

    def __post_init__(self) -> None:
        kinds = dict.fromkeys(d.kind for d in self.report.documents if d.kind)
        object.__setattr__(self, "status", (", ".join(kinds) or None, Counts.of(self.report.diagnostics)))

    @property
    def diagnostics(self) -> list[Diagnostic]:
        return self.report.diagnostics


class AnalysisDone(Message):
    """Posted by an analysis worker; the screen keeps it only when it is of the text it shows now."""

    def __init__(self, analysis: Analysis) -> None:
        super().__init__()
        self.analysis = analysis


class SymbolsDone(Message):
    """Posted by the worker that collected an analysis's symbols (editing/live.py `collect_symbols`)."""

    def __init__(self, report: FileReport) -> None:
        super().__init__()
        self.report = report


def analyze(path: Path | None, text: str, context: Context | None, generation: int = 0) -> Analysis:
    """Analyze a text (in a worker: this imports the analyzer on first use)."""
    from contractstudio.analysis.check import check_text

    return Analysis(path, text, check_text(text, str(path) if path else "<text>", context), generation)


def findings_of(diagnostics: list[Diagnostic], subject: Subject) -> list[Diagnostic]:
    """The findings about one step, type, tool ... (as the analyzer said, never guessed from lines)."""
    return [d for d in diagnostics if d.subject == subject]


def worst_by(kind: str, diagnostics: list[Diagnostic]) -> dict[str, str]:
    """The worst severity of the findings about each subject of a kind (each step, ...)."""
    out: dict[str, str] = {}
    for d in diagnostics:
        if d.subject is None or d.subject.kind != kind:
            continue
        old = out.get(d.subject.name)
        if old is None or SEVERITY_RANK[d.severity] > SEVERITY_RANK[old]:
            out[d.subject.name] = d.severity
    return out


def path_of(d: Diagnostic, kind: str = "step") -> list[str]:
    """The subjects a finding's related places name, then its own (PIP201's path through the steps), each once."""
    names: list[str] = []
    for subject in [r.subject for r in d.related] + [d.subject]:
        if subject is not None and subject.kind == kind and subject.name not in names:
            names.append(subject.name)
    return names
