"""`contractstudio check PATH ... [--format F] [--fail-level L]`."""

from __future__ import annotations

import argparse
import os
import sys

from contractstudio.analysis.check import Context, FileReport, check_file, findings_of, survey
from contractstudio.analysis.loaded_contract import LoadedContract
from contractstudio.analysis.prefix_decidable import prefix_lines
from contractstudio.commands.exits import EXIT_OK, EXIT_PROBLEM, files_refused
from contractstudio.findings.diagnostics import at_least
from contractstudio.reports import diagnostics as report
from contractstudio.safe_text import printable, shown
from contractstudio.trust import Trust, hook_folder, user_api_bases


def structure_lines(reports: list[FileReport]) -> list[str]:
    """A line per contract: its structured-output mode and who enforces its output clauses (check --verbose)."""
    out = []
    for r in reports:
        for doc in r.documents:
            if isinstance(doc, LoadedContract):
                found = doc.structure
                what = found.summary() if found is not None else doc.no_structure()
                out.append(f"{r.path}: contract '{doc.contract.name}': {what}")
                ids = [c.id for c in doc.contract.post]
                out.extend(f"{r.path}: contract '{doc.contract.name}': streamed, {line}"
                           for line in prefix_lines(doc.prefix, ids))
    return out


def run(args: argparse.Namespace) -> int:
    """Analyze, print in the chosen format, exit 1 at or above the fail level or when no file was checked."""
    if (refused := files_refused(args.paths, folders=True)) is not None:  # a FIFO named here would block the scan
        return refused
    trust = Trust.for_command(args.paths, args.trust)  # per folder: named with --trust, or remembered
    reports = []
    api_bases = user_api_bases()  # the user's config, read once for every file (the analysis never reads it)
    for path, found in survey(args.paths, python=True, dialect=args.dialect):
        if not found.ours:  # another tool's file (a Kubernetes manifest), an unreadable .contractstudioignore: not a finding
            print(printable(f"contractstudio: skipped {path}: {found.reason}"), file=sys.stderr)  # the reason names files too
            continue
        reports.append(check_file(path, Context(hooks=hook_folder(path, trust), dialect=args.dialect,
                                                model=getattr(args, "model", None), api_bases=api_bases)))
    diagnostics = findings_of(reports)  # the analyzer decides what counts once
    files = len(reports)
    # Nothing checked fails the run (a mistyped path in CI must not pass), as `test` does when no scenario ran,
    # unless --allow-empty says the folder may legitimately hold nothing of ours. stdout stays what a CI parses.
    if not files:
        where = ", ".join(map(str, args.paths))
        print(printable(f"contractstudio: no file to check in {where}" if args.allow_empty else
                        f"contractstudio: no file to check in {where}: a document needs a top-level kind: "
                        "(contract, agent, pipeline, tools) or the shape of a dialect, a .py file a @contract class "
                        "(--dialect, docs/dialects.md); --allow-empty if the folder may hold none"), file=sys.stderr)
    read_as = {r.path: r.dialect for r in reports}
    if args.format == "text":
        color = not args.no_color and sys.stdout.isatty() and "NO_COLOR" not in os.environ
        texts = {path: text for r in reports for path, text in r.texts.items()}
        print(report.text(diagnostics, texts, files, color, read_as))
        if getattr(args, "verbose", False):
            for line in structure_lines(reports):
                print(shown(line))  # redacted too: a key pasted into --model is never printed
    elif args.format == "json":
        print(report.as_json(diagnostics, files, read_as))
    elif args.format == "jsonl":
        out = report.as_jsonl(diagnostics)
        if out:
            print(out)
    elif args.format == "sarif":
        print(report.as_sarif(diagnostics))
    else:
        out = report.as_github(diagnostics)
        if out:
            print(out)
    if not files and not args.allow_empty:
        return EXIT_PROBLEM
    return EXIT_PROBLEM if at_least(diagnostics, args.fail_level) else EXIT_OK
