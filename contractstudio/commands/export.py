"""`contractstudio export FILE [-o OUT]`: validated YAML, refused (exit 1) while the file has errors."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from contractstudio.analysis.check import Context
from contractstudio.commands.exits import EXIT_OK, EXIT_PROBLEM, usage_error
from contractstudio.export import export_file
from contractstudio.reports import diagnostics as report
from contractstudio.storage.atomic import write_atomic


def run(args: argparse.Namespace) -> int:
    """Export or refuse, naming the errors."""
    source = Path(args.file)
    if not source.is_file():
        return usage_error(f"no such file: {args.file}")
    text, errors = export_file(source, Context(root=source.parent, dialect=args.dialect))
    if text is None:
        print(f"export refused: {args.file} has {len(errors)} error{'s' if len(errors) != 1 else ''}", file=sys.stderr)
        texts = {d.file: Path(d.file).read_text(errors="replace") for d in errors if Path(d.file).is_file()}
        print(report.text(errors, texts, 1), file=sys.stderr)
        return EXIT_PROBLEM
    if args.output:
        write_atomic(Path(args.output), text)
        print(f"exported {args.file} -> {args.output}", file=sys.stderr)
    else:
        sys.stdout.write(text)
    return EXIT_OK
