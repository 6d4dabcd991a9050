"""`contractstudio graph PIPELINE [--format text|mermaid|dot]`: the step graph with routing prefixes on its edges."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from contractstudio.analysis.check import Context, FileReport, check_file
from contractstudio.analysis.step_graph import StepGraph
from contractstudio.commands.exits import EXIT_OK, EXIT_PROBLEM, files_refused, usage_error
from contractstudio.documents.models import Pipeline
from contractstudio.findings.diagnostics import Counts
from contractstudio.reports.graphs import for_terminal, render
from contractstudio.safe_text import printable


def pipelines_of(path: str, dialect: str | None = None) -> tuple[FileReport | None, list[Pipeline], int | None]:
    """Analyze a file for graph/simulate; (report, pipeline models, exit code when it cannot go on)."""
    if (refused := files_refused([path])) is not None:
        return None, [], refused
    report = check_file(Path(path), Context(dialect=dialect))
    kinds = [d.kind for d in report.documents]
    models = [d.model for d in report.documents if isinstance(d.model, Pipeline)]
    if "pipeline" not in kinds:
        shown = ", ".join(str(k) for k in kinds if k) or "no kind"
        return report, [], usage_error(f"{path} is not a pipeline file (kind: {shown}); graph and simulate take a kind: pipeline file")
    errors = Counts.of(report.diagnostics)
    if errors.error or errors.warning:
        print(printable(f"{path}: {errors.error} error(s), {errors.warning} warning(s); run 'contractstudio check {path}' to see them"),
              file=sys.stderr)
    if not models:
        print(printable(f"{path}: the pipeline is too broken to draw"), file=sys.stderr)
        return report, [], EXIT_PROBLEM
    return report, models, None


def run(args: argparse.Namespace) -> int:
    """Draw every pipeline of the file; a file with errors is still drawn as far as it goes (exit 1)."""
    report, models, stop = pipelines_of(args.pipeline, args.dialect)
    if stop is not None:
        return stop
    print(for_terminal("\n\n".join(render(StepGraph.build(m), args.format) for m in models), sys.stdout.encoding))
    assert report is not None
    return EXIT_PROBLEM if Counts.of(report.diagnostics).error else EXIT_OK
