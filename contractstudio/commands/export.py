"""`contractstudio export FILE [-o OUT]`: validated YAML, refused (exit 1) while the file has errors."""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

from contractstudio.analysis import report
from contractstudio.cli import EXIT_OK, EXIT_PROBLEM, usage_error
from contractstudio.export import export_file


def write_atomically(path: Path, text: str) -> None:
    """Write via a temporary file in the same folder and a rename: never a half-written file."""
    path = path.resolve()
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        if path.exists():
            os.chmod(tmp, path.stat().st_mode & 0o7777)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def run(args: argparse.Namespace) -> int:
    """Export or refuse, naming the errors."""
    source = Path(args.file)
    if not source.is_file():
        return usage_error(f"no such file: {args.file}")
    text, errors = export_file(source)
    if text is None:
        print(f"export refused: {args.file} has {len(errors)} error{'s' if len(errors) != 1 else ''}", file=sys.stderr)
        print(report.text(errors, {str(source): source.read_text(errors='replace')}, 1), file=sys.stderr)
        return EXIT_PROBLEM
    if args.output:
        write_atomically(Path(args.output), text)
        print(f"exported {args.file} -> {args.output}", file=sys.stderr)
    else:
        sys.stdout.write(text)
    return EXIT_OK
