"""`contractstudio check PATH ... [--format F] [--fail-level L]`."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from contractstudio.analysis.check import Context, check_paths
from contractstudio.commands.exits import EXIT_OK, EXIT_PROBLEM, usage_error
from contractstudio.findings.diagnostics import at_least
from contractstudio.reports import diagnostics as report


def run(args: argparse.Namespace) -> int:
    """Analyze, print in the chosen format, exit 1 at or above the fail level."""
    missing = [p for p in args.paths if not Path(p).exists()]
    if missing:
        return usage_error(f"no such file or folder: {', '.join(missing)}")
    reports = check_paths(args.paths, Context(trusted=args.trust))
    diagnostics = [d for r in reports for d in r.diagnostics]
    files = len(reports)
    if args.format == "text":
        color = not args.no_color and sys.stdout.isatty() and "NO_COLOR" not in os.environ
        print(report.text(diagnostics, {r.path: r.text for r in reports}, files, color))
    elif args.format == "json":
        print(report.as_json(diagnostics, files))
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
    return EXIT_PROBLEM if at_least(diagnostics, args.fail_level) else EXIT_OK
