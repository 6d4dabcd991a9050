"""`contractstudio export FILE [-o OUT]`: the validated file, refused (exit 1) while it has errors."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from contractstudio.analysis.check import Context
from contractstudio.commands.exits import EXIT_OK, EXIT_PROBLEM, files_refused, usage_error
from contractstudio.export import export_file
from contractstudio.reports import diagnostics as report
from contractstudio.safe_text import printable
from contractstudio.storage.atomic import NotARegularFile, target_problem, write_atomic
from contractstudio.storage.paths import base_problem, project_of
from contractstudio.trust import hook_folder


def run(args: argparse.Namespace) -> int:
    """Export or refuse, naming the errors; the output path is checked before any work."""
    source = Path(args.file)
    if (refused := files_refused([source])) is not None:
        return refused
    if args.output and (problem := target_problem(args.output)):
        return usage_error(f"cannot write the export: {problem}")
    text, errors = export_file(source, Context(hooks=hook_folder(source, False), dialect=args.dialect))
    if text is None:
        print(printable(f"export refused: {args.file} has {len(errors)} error{'s' if len(errors) != 1 else ''}"), file=sys.stderr)
        # excerpts only from files the path policy lets the analysis read: the file and its bases in the project
        workspace = (project_of(source),)
        texts = {d.file: Path(d.file).read_text(errors="replace") for d in errors
                 if base_problem(Path(d.file), workspace) is None}
        print(report.text(errors, texts, 1), file=sys.stderr)
        return EXIT_PROBLEM
    if not args.output:
        sys.stdout.flush()
        sys.stdout.buffer.write(text.encode("utf-8"))  # the file's own bytes, whatever the terminal's encoding
        sys.stdout.buffer.flush()
        return EXIT_OK
    try:
        saved = write_atomic(Path(args.output), text)
    except NotARegularFile as err:
        return usage_error(f"cannot write the export: {err}")
    except OSError as err:
        print(printable(f"contractstudio: could not write {args.output}: {err.strerror or err}"), file=sys.stderr)
        return EXIT_PROBLEM
    for note in saved.notes:
        print(printable(f"note: {note}"), file=sys.stderr)
    print(printable(f"exported {args.file} -> {args.output}"), file=sys.stderr)
    return EXIT_OK
